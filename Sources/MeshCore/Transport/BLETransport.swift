import Foundation
import Logging
import TetherCore

/// The BLE transport to a MeshCore radio (PocketMesh's `iOSBLETransport` role) on the core's
/// `TetherCore/ConnectionStateMachine`.
///
/// One bare frame per write (with response, serialized, 5 s timeout) and per notification on
/// the Nordic UART Service. Discovery may take 40 s to leave room for the pairing dialog (radios
/// bond with a PIN); ATT errors 5/8/14/15 surface as `TetherCore/BLEError/pairingFailed(_:)`.
/// After a link loss the connection reconnects by itself (through the OS where the driver
/// offers auto-reconnect); ``receivedData`` keeps flowing across reconnections, and the
/// reconnection handler runs once the link is usable again.
public actor BLETransport: MeshTransport, MeshLinkReporting {
    /// Timeouts and reconnection for the BLE link.
    public struct Configuration: Sendable {
        /// Connection request timeout (default 10 s).
        public var connectionTimeout: Duration
        /// Service discovery timeout, long enough for a pairing dialog (default 40 s).
        public var serviceDiscoveryTimeout: Duration
        /// Per-write timeout (default 5 s).
        public var writeTimeout: Duration
        /// Reconnection after an unexpected drop (default: the OS reconnects where it can,
        /// otherwise 1 s doubling to 30 s, without end).
        public var reconnectPolicy: ReconnectPolicy

        /// Creates a configuration with PocketMesh's defaults.
        public init(
            connectionTimeout: Duration = .seconds(10),
            serviceDiscoveryTimeout: Duration = .seconds(40),
            writeTimeout: Duration = .seconds(5),
            reconnectPolicy: ReconnectPolicy = ReconnectPolicy(schedule: ReconnectPolicy.persistent.schedule, useOSAutoReconnect: true)
        ) {
            self.connectionTimeout = connectionTimeout
            self.serviceDiscoveryTimeout = serviceDiscoveryTimeout
            self.writeTimeout = writeTimeout
            self.reconnectPolicy = reconnectPolicy
        }
    }

    /// The radio this transport talks to.
    public nonisolated let peripheral: PeripheralID
    /// The underlying connection (phases, RSSI, events).
    public nonisolated let connection: ConnectionStateMachine

    /// 2: the ESP32 firmware queues 4 frames each way (the nRF52's 12) and drops what does not
    /// fit, and its pushes need room in the same outgoing queue as the replies.
    public nonisolated var maximumCommandsInFlight: Int { 2 }

    private var link = Broadcaster<MeshLinkEvent>(bufferSize: 64)
    private var reported = Reported.down
    private var lastReason: String?
    private var eventsTask: Task<Void, Never>?
    private let logger = Logger(label: "tether.meshcore.ble")

    private enum Reported { case down, up, reconnecting }

    /// Creates a transport to `peripheral` on `central`.
    public init(central: Central, peripheral: PeripheralID, configuration: Configuration = Configuration()) async {
        self.peripheral = peripheral
        self.connection = await central.connection(to: peripheral, configuration: DeviceProfile.meshCore.connectionConfiguration(
            connectionTimeout: configuration.connectionTimeout,
            discoveryTimeout: configuration.serviceDiscoveryTimeout,
            writeTimeout: configuration.writeTimeout,
            reconnectPolicy: configuration.reconnectPolicy))
        let events = await connection.events()
        eventsTask = Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
    }

    /// Finds the first radio advertising a `MeshCore` name (or the NUS service) within `timeout`.
    public static func discover(on central: Central, name: String? = nil, timeout: Duration = .seconds(10)) async throws -> DiscoveredPeripheral {
        var filter = MeshCoreBLE.scanFilter
        if let name {
            filter = ScanFilter(name: .exact(name))
        }
        return try await central.discover(filter: filter, timeout: timeout)
    }

    /// Frames notified by the radio, one per notification; survives reconnections.
    public var receivedData: AsyncStream<Data> {
        get async { await connection.notifications(for: MeshCoreBLE.notifyCharacteristic) }
    }

    /// True while the link is up and subscribed.
    public var isConnected: Bool {
        get async { await connection.isConnected }
    }

    /// Connects, discovers the NUS characteristics and subscribes (throws `TetherCore/BLEError`).
    public func connect() async throws {
        try await connection.connect()
    }

    /// Disconnects and stops reconnecting.
    public func disconnect() async {
        await connection.disconnect()
    }

    /// Writes one frame with response; throws ``MeshTransportError/frameTooLarge(_:)`` for
    /// frames the radio cannot take.
    public func send(_ data: Data) async throws {
        guard data.count <= MeshCoreFrameLimits.maximumFrameSize else { throw MeshTransportError.frameTooLarge(data.count) }
        try await connection.write(data, to: MeshCoreBLE.writeCharacteristic, type: .withResponse)
    }

    /// Picks up a link the OS kept for us after a relaunch (state restoration).
    public func restore() async {
        // Until it comes back the link counts as returning, so a restoration that fails is
        // reported as a disconnection rather than never reported at all.
        if reported == .down { reported = .reconnecting }
        await connection.restore()
    }

    /// Link changes derived from the connection's events.
    public func linkEvents() -> AsyncStream<MeshLinkEvent> {
        link.subscribe { [weak self] token in Task { await self?.removeLinkObserver(token) } }
    }

    // MARK: PocketMesh's handlers

    /// Called with the radio's identifier once an automatic reconnection made the link usable.
    public func setReconnectionHandler(_ handler: @escaping @Sendable (UUID) -> Void) async {
        await connection.setReconnectionHandler { handler($0.uuid) }
    }

    /// Called when the link drops unexpectedly.
    public func setDisconnectionHandler(_ handler: @escaping @Sendable (UUID, (any Error)?) -> Void) async {
        await connection.setDisconnectionHandler { handler($0.uuid, $1) }
    }

    /// Called when the link dropped and the OS (or the policy) is reconnecting; the radio's app
    /// session is invalid until the reconnection handler runs.
    public func setAutoReconnectingHandler(_ handler: @escaping @Sendable (UUID) -> Void) async {
        await connection.setAutoReconnectingHandler { handler($0.uuid) }
    }

    /// Called on every Bluetooth state change.
    public func setBluetoothStateChangeHandler(_ handler: @escaping @Sendable (CentralState) -> Void) async {
        await connection.setBluetoothStateChangeHandler(handler)
    }

    /// Called when Bluetooth powers on.
    public func setBluetoothPoweredOnHandler(_ handler: @escaping @Sendable () -> Void) async {
        await connection.setBluetoothPoweredOnHandler(handler)
    }

    // MARK: Link events

    private func handle(_ event: ConnectionEvent) {
        switch event {
        case .connected:
            report(.up, as: .connected)
        case .reconnected:
            report(.up, as: reported == .up ? .connected : .reconnected)
        case .phaseChanged(.autoReconnecting):
            if reported == .up { report(.reconnecting, as: .reconnecting) }
        case .phaseChanged(.idle):
            report(.down, as: .disconnected(reason: lastReason))
            lastReason = nil
        case .disconnected(_, let error):
            lastReason = error?.localizedDescription
        case .failed(let error):
            lastReason = error.localizedDescription
        default:
            break
        }
    }

    private func report(_ state: Reported, as event: MeshLinkEvent) {
        guard state != reported else { return }
        reported = state
        logger.debug("Link \(event)")
        link.yield(event)
    }

    private func removeLinkObserver(_ token: Int) { link.remove(token) }
}

/// PocketMesh's name for the production BLE transport.
public typealias iOSBLETransport = BLETransport
