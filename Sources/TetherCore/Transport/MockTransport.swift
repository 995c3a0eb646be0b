import Foundation

/// The one test double of a device link: a ``DeviceTransport`` that records what a client
/// sends and lets the test play the device's side, its link included.
///
/// It also has the byte-pipe shape of PocketMesh's `MeshTransport` (`receivedData`, `send`,
/// `sentData`, `simulateReceive`, `clearSentData`) on a default characteristic, so MeshCore's
/// session runs on it unchanged (MeshCore adds the radio's replies, `simulateOK()`…).
///
/// ```swift
/// let mock = MockTransport(notifyCharacteristic: NordicUARTService.tx)
/// let stream = await mock.notifications(for: NordicUARTService.tx)
/// try await mock.connect()
/// await mock.simulateReceive(Data("R:1234\n".utf8))
/// ```
public actor MockTransport: DeviceTransport {
    /// One recorded write.
    public struct Write: Sendable, Equatable {
        /// The bytes written.
        public let data: Data
        /// The characteristic written to.
        public let characteristic: CharacteristicPath
        /// The write type.
        public let type: WriteType
    }

    /// A change of the mock's link, as ``linkChanges()`` reports it.
    public enum LinkChange: Sendable, Equatable {
        /// ``connect()`` succeeded.
        case connected
        /// The link dropped and the transport is bringing it back by itself.
        case reconnecting
        /// The link came back by itself.
        case reconnected
        /// The link is down and stays down (``disconnect()`` has no reason).
        case disconnected(reason: String?)
    }

    /// The characteristic `send(_:)` writes to.
    public nonisolated let defaultWriteCharacteristic: CharacteristicPath
    /// The characteristic `receivedData` and `simulateReceive(_:)` use.
    public nonisolated let defaultNotifyCharacteristic: CharacteristicPath
    /// Whether ``disconnect()`` ends the notification streams (as a ``ConnectionStateMachine``
    /// that will not reconnect does) or keeps them open (as a transport that may reconnect, such
    /// as MeshCore's over BLE, does).
    public nonisolated let streamsEndOnDisconnect: Bool

    /// Every write, in order.
    public private(set) var writes: [Write] = []
    /// Values `read(_:)` returns, per characteristic.
    public var readValues: [CharacteristicPath: Data] = [:]
    /// When set, `connect()` throws it.
    public private(set) var connectError: (any Error)?
    /// When set, writes throw it.
    public private(set) var writeError: (any Error)?
    /// True between `connect()` and `disconnect()` (or a simulated link loss).
    public private(set) var isConnected = false
    /// How many times `connect()` succeeded.
    public private(set) var connectCount = 0

    private var broadcasters: [CharacteristicPath: Broadcaster<Data>] = [:]
    private var writeObservers = Broadcaster<Write>(bufferSize: 4096)
    private var link = Broadcaster<LinkChange>(bufferSize: 64)
    private static let notificationBuffer = 4096

    private static let placeholder = CharacteristicPath(service: BluetoothUUID(UInt16(0xFFFF)), characteristic: BluetoothUUID(UInt16(0xFFFF)))

    /// Creates a disconnected mock; the default characteristics serve the single-pipe API.
    public init(
        writeCharacteristic: CharacteristicPath? = nil,
        notifyCharacteristic: CharacteristicPath? = nil,
        streamsEndOnDisconnect: Bool = true
    ) {
        self.defaultWriteCharacteristic = writeCharacteristic ?? Self.placeholder
        self.defaultNotifyCharacteristic = notifyCharacteristic ?? Self.placeholder
        self.streamsEndOnDisconnect = streamsEndOnDisconnect
    }

    /// Every payload written, in order (the `MeshTransport` view).
    public var sentData: [Data] { writes.map(\.data) }

    /// Connects (or throws `connectError`).
    public func connect() async throws {
        if let connectError { throw connectError }
        isConnected = true
        connectCount += 1
        link.yield(.connected)
    }

    /// Disconnects; ends every notification stream unless ``streamsEndOnDisconnect`` is false.
    public func disconnect() async {
        let wasConnected = isConnected
        isConnected = false
        if wasConnected { link.yield(.disconnected(reason: nil)) }
        guard streamsEndOnDisconnect else { return }
        // Keep the broadcasters: their token counters must not restart, or a late removal of
        // an old stream would unsubscribe a new one.
        for key in broadcasters.keys { broadcasters[key]?.finish() }
    }

    /// Notifications on `characteristic`, fed by `simulateReceive(_:on:)`.
    public func notifications(for characteristic: CharacteristicPath) -> AsyncStream<Data> {
        var broadcaster = broadcasters[characteristic] ?? Broadcaster<Data>(bufferSize: Self.notificationBuffer)
        let stream = broadcaster.subscribe { [weak self] token in
            Task { await self?.remove(characteristic, token) }
        }
        broadcasters[characteristic] = broadcaster
        return stream
    }

    private func remove(_ path: CharacteristicPath, _ token: Int) { broadcasters[path]?.remove(token) }

    /// The default notify characteristic's stream (the `MeshTransport` view).
    public var receivedData: AsyncStream<Data> { notifications(for: defaultNotifyCharacteristic) }

    /// Records a write (or throws `writeError`, or ``BLEError/notConnected``).
    public func write(_ data: Data, to characteristic: CharacteristicPath, type: WriteType) async throws {
        guard isConnected else { throw BLEError.notConnected }
        if let writeError { throw writeError }
        let write = Write(data: data, characteristic: characteristic, type: type)
        writes.append(write)
        writeObservers.yield(write)
    }

    /// Writes to the default write characteristic with response (the `MeshTransport` view).
    public func send(_ data: Data) async throws {
        try await write(data, to: defaultWriteCharacteristic, type: .withResponse)
    }

    /// Returns `readValues[characteristic]`, or throws `readFailed`.
    public func read(_ characteristic: CharacteristicPath) async throws -> Data {
        guard isConnected else { throw BLEError.notConnected }
        guard let value = readValues[characteristic] else { throw BLEError.readFailed(.other("no value set in the mock")) }
        return value
    }

    /// A stream of writes as they happen, for tests that answer each command.
    public func writeStream() -> AsyncStream<Write> {
        writeObservers.subscribe { [weak self] token in
            Task { await self?.removeWriteObserver(token) }
        }
    }

    /// The payloads of ``writeStream()`` (the `MeshTransport` view: frames as they are sent).
    public func sentFrames() -> AsyncStream<Data> {
        let writes = writeStream()
        return AsyncStream(bufferingPolicy: .bufferingNewest(4096)) { continuation in
            let forwarder = Task {
                for await write in writes { continuation.yield(write.data) }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarder.cancel() }
        }
    }

    private func removeWriteObserver(_ token: Int) { writeObservers.remove(token) }

    /// The link's changes from now on.
    public func linkChanges() -> AsyncStream<LinkChange> {
        link.subscribe { [weak self] token in Task { await self?.removeLinkObserver(token) } }
    }

    private func removeLinkObserver(_ token: Int) { link.remove(token) }

    /// Delivers `data` as a notification on `characteristic` (default: the default notify one).
    public func simulateReceive(_ data: Data, on characteristic: CharacteristicPath? = nil) {
        broadcasters[characteristic ?? defaultNotifyCharacteristic]?.yield(data)
    }

    /// The link drops; with `reconnecting` the transport announces it is bringing it back.
    public func simulateLinkLoss(reconnecting: Bool = false, reason: String? = "link lost") {
        isConnected = false
        link.yield(reconnecting ? .reconnecting : .disconnected(reason: reason))
    }

    /// The link comes back by itself (as after an OS auto-reconnect).
    public func simulateReconnection() {
        isConnected = true
        link.yield(.reconnected)
    }

    /// Forgets recorded writes.
    public func clearSentData() { writes.removeAll() }

    /// Sets the value `read(_:)` returns for a characteristic.
    public func setReadValue(_ value: Data?, for characteristic: CharacteristicPath) { readValues[characteristic] = value }
    /// Sets (or clears) the error `connect()` throws.
    public func setConnectError(_ error: (any Error)?) { connectError = error }
    /// Sets (or clears) the error writes (and `send`) throw.
    public func setWriteError(_ error: (any Error)?) { writeError = error }
    /// Sets (or clears) the error `send` throws (the `MeshTransport` name of ``setWriteError(_:)``).
    public func setSendError(_ error: (any Error)?) { writeError = error }
}
