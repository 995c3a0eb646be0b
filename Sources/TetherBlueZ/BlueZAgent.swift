#if os(Linux)
import Foundation
import Logging
import TetherDBus

/// A pairing agent (`org.bluez.Agent1`) that answers bluetoothd's pairing requests without a
/// user interface.
///
/// Without a PIN it declares `NoInputNoOutput` and accepts Just Works (without an agent, LE
/// Secure Connections pairing fails with "No agent available"). With a PIN — MeshCore radios
/// show a 6-digit passkey to be typed on the phone — it declares `KeyboardDisplay` and answers
/// `RequestPasskey`/`RequestPinCode` with it.
public struct BlueZPairingAgent: Sendable {
    /// The PIN or passkey to give when asked; nil accepts Just Works only.
    public var pin: String?

    /// Creates an agent.
    public init(pin: String? = nil) { self.pin = pin }

    /// The IO capability registered with `AgentManager1.RegisterAgent`.
    public var capability: String { pin == nil ? "NoInputNoOutput" : "KeyboardDisplay" }

    /// The agent's interface for a ``DBusObjectTree``. `accepts` says whether a device is one
    /// this app is connecting to (runs on the connection's queue): requests about any other
    /// device are rejected, so a nearby stranger cannot pair through a running Tether.
    func interface(logger: Logger, accepts: @escaping @Sendable (DBusObjectPath) -> Bool) -> DBusInterface {
        let pin = self.pin
        let rejected = "org.bluez.Error.Rejected"
        /// Answers `call` with `answer()` when its device is one of ours, else rejects it.
        @Sendable func forOurDevice(_ call: DBusIncomingCall, _ answer: () -> Void) {
            guard let device = call.message.body.first?.objectPath, accepts(device) else {
                logger.notice("rejected a pairing request from \(call.message.body.first?.string ?? "an unknown device"): not a device this app connects to")
                return call.fail(rejected, "not a device this application is connecting to")
            }
            answer()
        }
        return DBusInterface(name: BlueZ.agentInterface, methods: [
            "Release": { call in call.reply() },
            "Cancel": { call in
                logger.info("bluetoothd cancelled a pairing request")
                call.reply()
            },
            "RequestPinCode": { call in
                forOurDevice(call) {
                    guard let pin else {
                        logger.warning("a device asked for a PIN; give one with --pin")
                        return call.fail(rejected, "no PIN configured")
                    }
                    call.reply([.string(pin)])
                }
            },
            "RequestPasskey": { call in
                forOurDevice(call) {
                    guard let pin, let passkey = UInt32(pin), passkey <= 999_999 else {
                        logger.warning("a device asked for a passkey; give its 6-digit PIN with --pin")
                        return call.fail(rejected, "no numeric passkey configured")
                    }
                    call.reply([.uint32(passkey)])
                }
            },
            "DisplayPinCode": { call in
                logger.notice("pairing PIN: \(call.message.body.count > 1 ? call.message.body[1].string ?? "?" : "?")")
                call.reply()
            },
            "DisplayPasskey": { call in
                logger.notice("pairing passkey: \(call.message.body.count > 1 ? call.message.body[1].integer.map { String(format: "%06d", $0) } ?? "?" : "?")")
                call.reply()
            },
            "RequestConfirmation": { call in forOurDevice(call) { call.reply() } },
            "RequestAuthorization": { call in forOurDevice(call) { call.reply() } },
            "AuthorizeService": { call in forOurDevice(call) { call.reply() } },
        ])
    }
}
#endif
