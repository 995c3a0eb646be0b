#if os(Linux)
import Foundation
import Logging
import TetherDBus

/// A pairing agent (`org.bluez.Agent1`) that answers bluetoothd's pairing requests without a
/// user interface, or through the app's own.
///
/// Without a PIN or a passkey source it declares `NoInputNoOutput` and accepts Just Works
/// (without an agent, LE Secure Connections pairing fails with "No agent available"). With a
/// PIN — MeshCore radios show a 6-digit passkey to be typed on the phone — or a passkey source
/// (the app asks its user to read the passkey off the device) it declares `KeyboardOnly` and
/// answers `RequestPasskey`/`RequestPinCode` with it: it only ever types (with a display too,
/// the kernel would pick numeric comparison against a device with a screen, which nobody here
/// compares). A peripheral declares `DisplayOnly` (``displayOnly(_:)``): the kernel picks the
/// passkey and the agent shows it.
public struct BlueZPairingAgent: Sendable {
    /// The PIN or passkey to give when asked; nil accepts Just Works only (unless ``passkey``).
    public var pin: String?
    /// Asked for the passkey a device shows (its Bluetooth address as the argument) when no
    /// ``pin`` is set; nil declines. The pairing fails if no answer comes within the kernel's
    /// 30 s pairing timeout.
    public var passkey: (@Sendable (_ device: String) async -> UInt32?)?
    /// Told a passkey to show the user (the device's address, the six digits), when the other
    /// side types it in: a ``displayOnly(_:)`` agent's.
    public var display: (@Sendable (_ device: String, _ passkey: String) -> Void)?
    private var declaredCapability: String?
    /// A peripheral's agent: refuses service authorisations (BR/EDR profiles are none of its
    /// business), and with `DisplayOnly` refuses unauthenticated (Just Works) pairing too.
    package var forPeripheral = false

    /// Creates an agent that types `pin` when asked (nil: Just Works only).
    public init(pin: String? = nil) { self.pin = pin }

    /// Creates an agent that asks `passkey` for the passkey a device shows.
    public init(passkey: @escaping @Sendable (_ device: String) async -> UInt32?) {
        self.passkey = passkey
    }

    /// An agent that can only show a passkey (`DisplayOnly`): a peripheral's, when centrals
    /// must type what it shows (authenticated pairing).
    public static func displayOnly(_ display: @escaping @Sendable (_ device: String, _ passkey: String) -> Void) -> BlueZPairingAgent {
        var agent = BlueZPairingAgent()
        agent.display = display
        agent.declaredCapability = "DisplayOnly"
        agent.forPeripheral = true
        return agent
    }

    /// A peripheral's agent for Just Works pairing (`NoInputNoOutput`).
    package static func justWorksPeripheral() -> BlueZPairingAgent {
        var agent = BlueZPairingAgent()
        agent.forPeripheral = true
        return agent
    }

    /// The IO capability registered with `AgentManager1.RegisterAgent`.
    public var capability: String {
        declaredCapability ?? (pin == nil && passkey == nil ? "NoInputNoOutput" : "KeyboardOnly")
    }

    /// The agent's interface for a ``DBusObjectTree``. `accepts` says whether a device is one
    /// this app is connecting to, or connected to it (runs on the connection's queue): requests
    /// about any other device are rejected, so a nearby stranger cannot pair through a running
    /// Tether.
    package func interface(logger: Logger, accepts: @escaping @Sendable (DBusObjectPath) -> Bool) -> DBusInterface {
        let pin = self.pin, source = self.passkey, display = self.display
        let peripheral = forPeripheral, displayOnly = declaredCapability == "DisplayOnly"
        let rejected = "org.bluez.Error.Rejected"
        /// Answers `call` with `answer()` when its device is one of ours, else rejects it.
        @Sendable func forOurDevice(_ call: DBusIncomingCall, _ answer: () -> Void) {
            guard let device = call.message.body.first?.objectPath, accepts(device) else {
                logger.notice("rejected a pairing request from \(call.message.body.first?.string ?? "an unknown device"): not a device this app connects to")
                return call.fail(rejected, "not a device this application is connecting to")
            }
            answer()
        }
        @Sendable func address(_ call: DBusIncomingCall) -> String {
            Self.address(of: call.message.body.first?.objectPath)
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
                    if let pin {
                        guard let passkey = UInt32(pin), passkey <= 999_999 else {
                            logger.warning("a device asked for a passkey and the PIN is not 6 digits")
                            return call.fail(rejected, "no numeric passkey configured")
                        }
                        return call.reply([.uint32(passkey)])
                    }
                    guard let source else {
                        logger.warning("a device asked for a passkey; give its 6-digit PIN with --pin")
                        return call.fail(rejected, "no numeric passkey configured")
                    }
                    let device = address(call)
                    Task {
                        if let passkey = await source(device), passkey <= 999_999 {
                            call.reply([.uint32(passkey)])
                        } else {
                            call.fail(rejected, "no passkey given")
                        }
                    }
                }
            },
            "DisplayPinCode": { call in
                forOurDevice(call) {
                    let code = call.message.body.count > 1 ? call.message.body[1].string ?? "?" : "?"
                    logger.notice("pairing PIN for \(address(call)): \(code.prefix(16).filter { $0.isASCII && $0.isNumber })")
                    display?(address(call), String(code.prefix(16).filter { $0.isASCII && $0.isNumber }))
                    call.reply()
                }
            },
            "DisplayPasskey": { call in
                forOurDevice(call) {
                    // Called again for every digit the other side types (the third argument):
                    // shown once.
                    let entered = call.message.body.count > 2 ? call.message.body[2].integer ?? 0 : 0
                    if entered == 0, call.message.body.count > 1, let passkey = call.message.body[1].integer, (0...999_999).contains(passkey) {
                        let text = String(format: "%06d", passkey)
                        logger.notice("pairing passkey for \(address(call)): \(text)")
                        display?(address(call), text)
                    }
                    call.reply()
                }
            },
            "RequestConfirmation": { call in
                forOurDevice(call) {
                    // A DisplayOnly peripheral demands a typed passkey: anything less is refused.
                    guard !displayOnly else { return call.fail(rejected, "this peripheral requires passkey entry") }
                    call.reply()
                }
            },
            "RequestAuthorization": { call in
                forOurDevice(call) {
                    guard !displayOnly else { return call.fail(rejected, "this peripheral requires passkey entry") }
                    call.reply()
                }
            },
            "AuthorizeService": { call in
                forOurDevice(call) {
                    guard !peripheral else { return call.fail(rejected, "a hosted peripheral authorises no profiles") }
                    call.reply()
                }
            },
        ])
    }

    /// `AA:BB:…` from `/org/bluez/hciN/dev_AA_BB_…`.
    static func address(of device: DBusObjectPath?) -> String {
        guard let element = device?.lastElement, element.hasPrefix("dev_") else { return "an unknown device" }
        return element.dropFirst(4).replacingOccurrences(of: "_", with: ":")
    }
}
#endif
