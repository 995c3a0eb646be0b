import TetherCore
import TetherSimulator
import Tybe

/// The Tybe USB dongle: an ESB (Enhanced ShockBurst) receiver that acknowledges the bridge's
/// radio packets and types their keys on its USB host as a HID boot keyboard.
///
/// A packet reaches the dongle `radioLatency` after the bridge sends it, and the ESB
/// acknowledgement returns in the same transaction. Each key then takes `keyInterval` (the
/// key-down and key-up reports at the USB polling rate). Unplugged, the dongle neither
/// acknowledges nor types: packets sent to it are lost, and keys still being typed when it is
/// pulled are lost too.
@SimulationActor
public final class TybeDongle {
    /// The computer the dongle is plugged into.
    public nonisolated let host: TybeHost
    /// One-way radio time from the bridge to the dongle.
    public let radioLatency: Duration
    /// Time the dongle takes per key on USB.
    public let keyInterval: Duration
    /// True while the dongle is in the host's USB port.
    public private(set) var isPlugged = true
    /// Radio packets acknowledged (frames and pings).
    public private(set) var packetsAcknowledged = 0

    /// ESB retransmits a packet this many times before the sender gives up (nRF default: 3).
    static let retransmits = 3

    /// Creates a dongle, plugged into `host`.
    public nonisolated init(host: TybeHost = TybeHost(), radioLatency: Duration = .milliseconds(2), keyInterval: Duration = .milliseconds(8)) {
        self.host = host
        self.radioLatency = radioLatency
        self.keyInterval = keyInterval
    }

    /// Pulls the dongle out of the USB port: it stops acknowledging and typing.
    public func unplug() { isPlugged = false }

    /// Plugs the dongle back in; it acknowledges the next packet.
    public func plug() { isPlugged = true }

    // MARK: Radio (used by the bridge)

    /// One ESB transaction: returns true when the dongle acknowledged, after `radioLatency`;
    /// false after the retransmits ran out.
    func transmit(on timeline: Timeline) async -> Bool {
        try? await timeline.sleep(for: radioLatency)
        if isPlugged {
            packetsAcknowledged += 1
            return true
        }
        try? await timeline.sleep(for: radioLatency * Self.retransmits)
        return false
    }

    /// Types what an acknowledged packet carried, one key per `keyInterval`; returns when done
    /// (the dongle's one-packet buffer is free again).
    func type(_ actions: [TybeOpcode], on timeline: Timeline) async {
        for action in actions {
            try? await timeline.sleep(for: keyInterval)
            // Pulled mid-packet: the rest of the keys are lost with the USB link.
            guard isPlugged else { continue }
            switch action {
            case .key(let stroke):
                host.press(stroke)
            case .toggleInputSource:
                // The reserved opcode maps to the Korean keyboard's 한/영 (LANG1) key.
                host.press(KeyStroke(.lang1))
            }
        }
    }
}
