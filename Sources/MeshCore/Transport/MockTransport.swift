import Foundation
import TetherCore

/// TetherCore's mock, named here too so a file that imports only MeshCore (as PocketMesh's
/// guide does) finds it. Unlike MeshCore's earlier mock it ends its streams on disconnect unless
/// created with `streamsEndOnDisconnect: false`, and refuses sends while disconnected with
/// `BLEError.notConnected`, as the BLE transport does.
public typealias MockTransport = TetherCore.MockTransport

/// TetherCore's ``TetherCore/MockTransport`` is MeshCore's test transport too (PocketMesh's
/// `MockTransport`): the session sends frames on it and the test plays the radio. Create it with
/// `MockTransport(streamsEndOnDisconnect: false)` to keep frames flowing across a disconnect, as
/// a BLE transport that may reconnect does.
///
/// ```swift
/// let mock = MockTransport(streamsEndOnDisconnect: false)
/// let session = MeshCoreSession(transport: mock)
/// await mock.simulateReceive(selfInfoFrame)
/// ```
extension MockTransport: MeshTransport, MeshLinkReporting {
    /// The link's changes as ``MeshLinkEvent``s.
    public func linkEvents() -> AsyncStream<MeshLinkEvent> {
        let changes = linkChanges()
        return AsyncStream(bufferingPolicy: .bufferingNewest(64)) { continuation in
            let forwarder = Task {
                for await change in changes {
                    switch change {
                    case .connected: continuation.yield(.connected)
                    case .reconnecting: continuation.yield(.reconnecting)
                    case .reconnected: continuation.yield(.reconnected)
                    case .disconnected(let reason): continuation.yield(.disconnected(reason: reason))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarder.cancel() }
        }
    }

    /// Delivers OK (`00`).
    public func simulateOK() { simulateReceive(Data([0x00])) }

    /// Delivers OK with a 32-bit value (`00` + u32 LE).
    public func simulateOK(value: UInt32) {
        simulateReceive(Data([0x00, UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                              UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]))
    }

    /// Delivers ERR with `code` (`01 code`).
    public func simulateError(code: UInt8) { simulateReceive(Data([0x01, code])) }
}
