import Foundation

/// What a device client needs from a link: connect, notifications per characteristic, writes
/// and reads. ``ConnectionStateMachine`` is the production implementation; ``MockTransport``
/// records traffic for unit tests.
///
/// It generalises PocketMesh's `MeshTransport` (`receivedData`, `isConnected`, `connect`,
/// `disconnect`, `send`) to several characteristics.
public protocol DeviceTransport: Sendable {
    /// True when data can flow.
    var isConnected: Bool { get async }
    /// Connects (and discovers and subscribes).
    func connect() async throws
    /// Disconnects.
    func disconnect() async
    /// Values a characteristic notifies. Arm it before the write that provokes a reply.
    func notifications(for characteristic: CharacteristicPath) async -> AsyncStream<Data>
    /// Writes a value (split to the link's maximum write length).
    func write(_ data: Data, to characteristic: CharacteristicPath, type: WriteType) async throws
    /// Reads a value.
    func read(_ characteristic: CharacteristicPath) async throws -> Data
}

extension ConnectionStateMachine: DeviceTransport {}
