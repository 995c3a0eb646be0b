#if os(Linux)
import Foundation
import Logging
import TetherCore
import TetherDBus

/// How a ``BlueZDriver`` finds its bus and adapter, and how it pairs.
public struct BlueZDriverConfiguration: Sendable {
    /// The adapter to use (`hci0`); nil picks the first powered one (else the first).
    public var adapter: String?
    /// The bus to use; nil is the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else
    /// `unix:path=/run/dbus/system_bus_socket`).
    public var busAddress: String?
    /// The pairing agent to register; nil registers none (another agent, such as a desktop's,
    /// answers).
    public var agent: BlueZPairingAgent?
    /// The wait before re-issuing a `Connect` that BlueZ ended by itself (the driver keeps
    /// trying until the connection is cancelled, as CoreBluetooth does).
    public var connectRetryDelay: Duration
    /// How long after a link to a device went down the driver waits before asking bluetoothd
    /// to connect to it again. The kernels tear the old link down after bluetoothd reports
    /// `Connected=false`, and the peer's kernel turns its advertising off and on again at that
    /// moment. With BlueZ's virtual controllers (`btvirt`) a connection attempt that meets the
    /// gap fails at once, and Linux 6.1 takes that failure for success: the attempt, and every
    /// later one to that device, then hangs until the adapter is powered off. A real controller
    /// keeps trying instead, so there this costs a quick reconnection at most this long.
    /// Zero connects at once.
    public var reconnectSettleTime: Duration
    /// Bound on each D-Bus call to bluetoothd (a `Connect` may legitimately take long).
    public var callTimeout: Duration
    /// The environment to read `DBUS_SYSTEM_BUS_ADDRESS` from.
    public var environment: [String: String]
    /// The longest value a write may carry (``BlueZDriver/maximumWriteValueLength(for:on:)``
    /// never says more), 1…512. ATT allows 512; a peripheral served by bluetoothd 5.66–5.68
    /// refuses 511 and 512 (its server counts the handle into the value: fixed in 5.69), so
    /// for such peripherals (a Linux box running `tether emulate`, say) use 510.
    public var maximumValueLength: Int
    /// Whether to send writes without response through a socket from bluetoothd
    /// (`AcquireWrite`) when the bus can pass descriptors (a Unix socket, not TCP) and the
    /// characteristic takes only writes without response (while the socket is held bluetoothd
    /// refuses every `WriteValue` to it): no D-Bus message per value, and a full socket holds
    /// the writes back until bluetoothd catches up.
    public var acquireWriteSockets: Bool
    /// Whether to take notifications through a socket from bluetoothd (`AcquireNotify`) on a
    /// bus that passes descriptors: no D-Bus signal per value. Off by default: bluetoothd
    /// before 5.84 never answers an `AcquireNotify` whose subscription fails on the air (the
    /// link dropping meanwhile, a peripheral refusing it), and then refuses every later
    /// subscription to that characteristic until the device is removed, and crashes on a later
    /// `StopNotify` (BlueZ commit 476ae809a). Refusals (indications, another program's
    /// subscription) fall back to `StartNotify`.
    public var acquireNotifySockets: Bool

    /// Creates a configuration.
    public init(
        adapter: String? = nil, busAddress: String? = nil, agent: BlueZPairingAgent? = BlueZPairingAgent(),
        connectRetryDelay: Duration = .milliseconds(500), reconnectSettleTime: Duration = .milliseconds(500),
        callTimeout: Duration = .seconds(30),
        environment: [String: String] = ProcessInfo.processInfo.environment, maximumValueLength: Int = 512,
        acquireWriteSockets: Bool = true, acquireNotifySockets: Bool = false
    ) {
        self.acquireWriteSockets = acquireWriteSockets
        self.acquireNotifySockets = acquireNotifySockets
        self.reconnectSettleTime = max(.zero, reconnectSettleTime)
        self.maximumValueLength = min(512, max(1, maximumValueLength))
        self.adapter = adapter
        self.busAddress = busAddress
        self.agent = agent
        self.connectRetryDelay = connectRetryDelay
        self.callTimeout = callTimeout
        self.environment = environment
    }
}

/// The driver's view of the radio: a `CentralState` and, when it is not powered on, why.
public struct BlueZStatus: Sendable, Hashable, CustomStringConvertible {
    /// The state reported to the core.
    public var state: CentralState
    /// Why the radio is not usable (`no Bluetooth adapter`, `bluetoothd is not running` …).
    public var reason: String?
    /// The adapter in use (`hci0`).
    public var adapter: String?
    /// Its address.
    public var address: String?
    /// The IO capability of the pairing agent registered with bluetoothd (nil: none).
    public var agent: String?

    /// Creates a status.
    public init(state: CentralState, reason: String? = nil, adapter: String? = nil, address: String? = nil, agent: String? = nil) {
        self.state = state
        self.reason = reason
        self.adapter = adapter
        self.address = address
        self.agent = agent
    }

    /// `poweredOn (hci0 00:AA:01:00:00:00)` or `unsupported: bluetoothd is not running`.
    public var description: String {
        if let reason { return "\(state): \(reason)" }
        if let adapter { return "\(state) (\(adapter)\(address.map { " " + $0 } ?? ""))" }
        return state.rawValue
    }
}

/// The Linux driver: `BLEDriver` over BlueZ's D-Bus API (`org.bluez`).
///
/// Speaks D-Bus itself (`TetherDBus`): no library is loaded and nothing is needed at build
/// time. Every BlueZ signal and reply is handled on one queue in bus order, so a read's reply
/// is never reordered against the notifications that preceded it. A connection is reported
/// only once `ServicesResolved` is true; writes without response are paced by BlueZ's replies
/// (nothing is dropped); a read's echo as a `Value` change is not delivered twice; notify
/// sessions are stopped on disconnect (BlueZ would otherwise re-enable them on reconnect).
///
/// When the radio cannot be used the state says so and ``status()`` says why: no bus, no
/// bluetoothd, no adapter, access denied. bluetoothd restarting is `resetting`, and every
/// link is reported lost.
public final class BlueZDriver: BLEDriver, @unchecked Sendable {
    public let events: AsyncStream<BLEDriverEvent>
    public let name = "bluez"
    /// BlueZ reconnects by itself only for bonded HID-like profiles; Tether's reconnect policy
    /// does the work.
    public let supportsAutoReconnect = false

    private let engine: Task<BlueZCentral?, Never>
    private let continuation: AsyncStream<BLEDriverEvent>.Continuation
    private let initialFailure = LockedBox<BlueZStatus?>(nil)

    /// Creates the driver and starts connecting to bluetoothd in the background; the first
    /// event is the radio's state.
    public init(configuration: BlueZDriverConfiguration = BlueZDriverConfiguration(), logger: Logger = Logger(label: "tether.bluez")) {
        let (events, continuation) = AsyncStream.makeStream(of: BLEDriverEvent.self)
        self.events = events
        self.continuation = continuation
        let failure = initialFailure
        engine = Task {
            let address: DBusAddress
            do throws(DBusError) {
                address = try DBusAddress.systemBus(override: configuration.busAddress, environment: configuration.environment)
            } catch {
                let status = BlueZStatus(state: .unsupported, reason: "bad D-Bus address: \(error.message)")
                failure.value = status
                logger.error("\(status)")
                continuation.yield(.stateChanged(.unsupported))
                return nil
            }
            let connection: DBusConnection
            do throws(DBusError) {
                connection = try await DBusConnection.connect(to: address, label: "tether.bluez", logger: logger)
            } catch {
                let denied = error.name == DBusError.accessDenied || error.message.contains("Permission denied")
                let status = BlueZStatus(
                    state: denied ? .unauthorized : .unsupported,
                    reason: denied ? "not allowed on the system bus (\(error.message))"
                        : "no D-Bus system bus at \(address) (\(error.message))")
                failure.value = status
                logger.error("\(status)")
                continuation.yield(.stateChanged(status.state))
                return nil
            }
            let central = BlueZCentral(connection: connection, configuration: configuration, logger: logger) {
                continuation.yield($0)
            }
            await central.start()
            return central
        }
    }

    /// The engine, once started (tests look at its lifetime).
    func engineForTesting() async -> BlueZCentral? { await engine.value }

    /// The radio's state and, when it is not usable, why.
    public func status() async -> BlueZStatus {
        guard let central = await engine.value else {
            return initialFailure.value ?? BlueZStatus(state: .unsupported, reason: "the driver did not start")
        }
        return await central.onQueue { central.status }
    }

    /// Waits until the driver knows the radio's state (connected to the bus and read
    /// bluetoothd's tree, or failed to), then returns it.
    public func ready() async -> BlueZStatus { await status() }

    /// Returns once every signal bluetoothd sent before this call has been handled (a
    /// `Peer.Ping` round trip to bluetoothd: its reply comes after them on the same socket).
    /// For tests and tools that need a point of quiescence.
    public func synchronize() async {
        guard let central = await engine.value else { return }
        await central.synchronize()
    }

    /// Disconnects what this driver connected, stops scanning, unregisters the agent and
    /// closes the bus connection. The event stream then finishes.
    public func shutdown() async {
        if let central = await engine.value { await central.shutdown() }
        continuation.finish()
    }

    public func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) async {
        await engine.value?.perform { $0.scan(services: services, allowDuplicates: allowDuplicates) }
    }

    public func stopScan() async {
        await engine.value?.perform { $0.stopScan() }
    }

    public func connect(_ peripheral: PeripheralID, options: ConnectOptions) async {
        guard let central = await engine.value else {
            continuation.yield(.failedToConnect(peripheral, .bluetoothUnavailable(initialFailure.value?.state ?? .unsupported)))
            return
        }
        central.perform { $0.connect(peripheral) }
    }

    public func cancelConnection(_ peripheral: PeripheralID) async {
        guard let central = await engine.value else {
            continuation.yield(.disconnected(peripheral, error: nil, isReconnecting: false))
            return
        }
        central.perform { $0.cancelConnection(peripheral) }
    }

    public func discoverServices(_ services: [BluetoothUUID]?, on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.discoverServices(services, on: peripheral) }
    }

    public func discoverCharacteristics(_ characteristics: [BluetoothUUID]?, for service: BluetoothUUID, on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.discoverCharacteristics(characteristics, for: service, on: peripheral) }
    }

    public func setNotifyValue(_ enabled: Bool, for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.enqueue(.notify(enabled), on: characteristic, of: peripheral) }
    }

    public func readValue(for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.enqueue(.read, on: characteristic, of: peripheral) }
    }

    public func writeValue(_ data: Data, for characteristic: CharacteristicPath, type: WriteType, on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.enqueue(.write(data, type), on: characteristic, of: peripheral) }
    }

    public func readRSSI(on peripheral: PeripheralID) async {
        await engine.value?.perform { $0.readRSSI(on: peripheral) }
    }

    public func maximumWriteValueLength(for type: WriteType, on peripheral: PeripheralID) async -> Int {
        guard let central = await engine.value else { return 20 }
        return await central.onQueue { central.maximumWriteValueLength(for: type, on: peripheral) }
    }

    public func canSendWriteWithoutResponse(on peripheral: PeripheralID) async -> Bool {
        guard let central = await engine.value else { return false }
        return await central.onQueue { central.canSendWriteWithoutResponse(on: peripheral) }
    }

    /// Pairs (and bonds) with a connected peripheral now, through this driver's agent
    /// (``BlueZDriverConfiguration/agent``): its PIN or passkey source answers if the device
    /// asks for a passkey. Returns once bluetoothd reports the pairing done (at once if the
    /// device is already paired).
    ///
    /// Without it BlueZ pairs by itself when the peripheral refuses an operation for lack of
    /// encryption, as CoreBluetooth does, but then bluetoothd asks the *default* agent, which
    /// may belong to another program (a desktop's, or a peripheral hosted in the same
    /// bluetoothd); pairing explicitly makes this driver's agent the one asked.
    /// - Throws: `DriverError/peripheralDisconnected` when not connected,
    ///   `DriverError/encryptionFailed` when the pairing failed or was refused (the message of
    ///   bluetoothd is logged), `DriverError/connectionTimeout` when nobody answered in time,
    ///   `DriverError/other(_:)` when a pairing is already under way,
    ///   `DriverError/bluetoothUnavailable(_:)` when the driver has no bus.
    public func pair(_ peripheral: PeripheralID) async throws(DriverError) {
        guard let central = await engine.value else { throw .bluetoothUnavailable(initialFailure.value?.state ?? .unsupported) }
        let result: Result<Void, DriverError> = await withCheckedContinuation { continuation in
            central.perform { $0.pair(peripheral) { continuation.resume(returning: $0) } }
        }
        try result.get()
    }
}

/// A value shared between threads under a lock.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension LockedBox where Value == Int {
    /// Subtracts one and returns the result.
    func decrement() -> Int {
        lock.withLock {
            stored -= 1
            return stored
        }
    }
}
#endif
