import Foundation

/// A ``DeviceTransport`` for unit tests of device clients: records what the client sends and
/// lets the test play what the device would answer.
///
/// It also has the byte-pipe shape of PocketMesh's `MeshTransport` (`receivedData`, `send`,
/// `sentData`, `simulateReceive`, `clearSentData`) on a default characteristic.
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

    /// The characteristic `send(_:)` writes to.
    public nonisolated let defaultWriteCharacteristic: CharacteristicPath
    /// The characteristic `receivedData` and `simulateReceive(_:)` use.
    public nonisolated let defaultNotifyCharacteristic: CharacteristicPath

    /// Every write, in order.
    public private(set) var writes: [Write] = []
    /// Values `read(_:)` returns, per characteristic.
    public var readValues: [CharacteristicPath: Data] = [:]
    /// When set, `connect()` throws it.
    public var connectError: BLEError?
    /// When set, writes throw it.
    public var writeError: BLEError?
    /// True between `connect()` and `disconnect()`.
    public private(set) var isConnected = false
    /// How many times `connect()` succeeded.
    public private(set) var connectCount = 0

    private var broadcasters: [CharacteristicPath: Broadcaster<Data>] = [:]
    private var writeObservers = Broadcaster<Write>(bufferSize: 1024)

    private static let placeholder = CharacteristicPath(service: BluetoothUUID(UInt16(0xFFFF)), characteristic: BluetoothUUID(UInt16(0xFFFF)))

    /// Creates a mock; the default characteristics serve the single-pipe API.
    public init(
        writeCharacteristic: CharacteristicPath? = nil,
        notifyCharacteristic: CharacteristicPath? = nil
    ) {
        self.defaultWriteCharacteristic = writeCharacteristic ?? Self.placeholder
        self.defaultNotifyCharacteristic = notifyCharacteristic ?? Self.placeholder
    }

    /// Every payload written, in order (the `MeshTransport` view).
    public var sentData: [Data] { writes.map(\.data) }

    /// Connects (or throws `connectError`).
    public func connect() async throws {
        if let connectError { throw connectError }
        isConnected = true
        connectCount += 1
    }

    /// Disconnects and ends every notification stream.
    public func disconnect() async {
        isConnected = false
        // Keep the broadcasters: their token counters must not restart, or a late removal of
        // an old stream would unsubscribe a new one.
        for key in broadcasters.keys { broadcasters[key]?.finish() }
    }

    /// Notifications on `characteristic`, fed by `simulateReceive(_:on:)`.
    public func notifications(for characteristic: CharacteristicPath) -> AsyncStream<Data> {
        var broadcaster = broadcasters[characteristic] ?? Broadcaster<Data>()
        let stream = broadcaster.subscribe { [weak self] token in
            Task { await self?.remove(characteristic, token) }
        }
        broadcasters[characteristic] = broadcaster
        return stream
    }

    private func remove(_ path: CharacteristicPath, _ token: Int) { broadcasters[path]?.remove(token) }

    /// The default notify characteristic's stream (the `MeshTransport` view).
    public var receivedData: AsyncStream<Data> { notifications(for: defaultNotifyCharacteristic) }

    /// Records a write (or throws `writeError`, or `notConnected`).
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

    private func removeWriteObserver(_ token: Int) { writeObservers.remove(token) }

    /// Delivers `data` as a notification on `characteristic` (default: the default notify one).
    public func simulateReceive(_ data: Data, on characteristic: CharacteristicPath? = nil) {
        broadcasters[characteristic ?? defaultNotifyCharacteristic]?.yield(data)
    }

    /// Forgets recorded writes.
    public func clearSentData() { writes.removeAll() }

    /// Sets the value `read(_:)` returns for a characteristic.
    public func setReadValue(_ value: Data?, for characteristic: CharacteristicPath) { readValues[characteristic] = value }
    /// Sets (or clears) the error `connect()` throws.
    public func setConnectError(_ error: BLEError?) { connectError = error }
    /// Sets (or clears) the error writes throw.
    public func setWriteError(_ error: BLEError?) { writeError = error }
}
