import Foundation
import TetherCore

/// A ``MeshTransport`` for unit tests: records every frame sent and lets the test play the
/// radio's side (PocketMesh's `MockTransport`).
///
/// ```swift
/// let mock = MockTransport()
/// let session = MeshCoreSession(transport: mock)
/// await mock.simulateReceive(selfInfoFrame)
/// ```
public actor MockTransport: MeshTransport, MeshLinkReporting {
    /// Every frame sent, in order.
    public private(set) var sentData: [Data] = []
    /// True between ``connect()`` and ``disconnect()`` (or ``simulateLinkLoss(reason:)``).
    public private(set) var isConnected = false
    /// How many times ``connect()`` succeeded.
    public private(set) var connectCount = 0
    /// When set, ``connect()`` throws it.
    public private(set) var connectError: (any Error)?
    /// When set, ``send(_:)`` throws it.
    public private(set) var sendError: (any Error)?

    private var received = Broadcaster<Data>(bufferSize: 4096)
    private var sent = Broadcaster<Data>(bufferSize: 4096)
    private var link = Broadcaster<MeshLinkEvent>(bufferSize: 64)

    /// Creates a disconnected mock.
    public init() {}

    /// Frames the test plays with ``simulateReceive(_:)`` and the helpers.
    public var receivedData: AsyncStream<Data> {
        received.subscribe { [weak self] token in Task { await self?.removeReceiver(token) } }
    }

    /// Connects (or throws ``connectError``).
    public func connect() async throws {
        if let connectError { throw connectError }
        isConnected = true
        connectCount += 1
        link.yield(.connected)
    }

    /// Disconnects. Streams stay open, as on a BLE transport that may reconnect.
    public func disconnect() async {
        guard isConnected else { return }
        isConnected = false
        link.yield(.disconnected(reason: nil))
    }

    /// Records `data`; throws ``MeshTransportError/notConnected`` before ``connect()``.
    public func send(_ data: Data) async throws {
        guard isConnected else { throw MeshTransportError.notConnected }
        if let sendError { throw sendError }
        sentData.append(data)
        sent.yield(data)
    }

    /// Link changes (connect, disconnect, simulated loss and return).
    public func linkEvents() -> AsyncStream<MeshLinkEvent> {
        link.subscribe { [weak self] token in Task { await self?.removeLinkObserver(token) } }
    }

    /// Frames as they are sent, for tests that answer each command.
    public func sentFrames() -> AsyncStream<Data> {
        sent.subscribe { [weak self] token in Task { await self?.removeSentObserver(token) } }
    }

    // MARK: Playing the radio

    /// Delivers `data` as one frame from the radio.
    public func simulateReceive(_ data: Data) { received.yield(data) }

    /// Delivers OK (`00`).
    public func simulateOK() { simulateReceive(Data([0x00])) }

    /// Delivers OK with a 32-bit value (`00` + u32 LE).
    public func simulateOK(value: UInt32) {
        simulateReceive(Data([0x00, UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                              UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]))
    }

    /// Delivers ERR with `code` (`01 code`).
    public func simulateError(code: UInt8) { simulateReceive(Data([0x01, code])) }

    /// Forgets the frames sent so far.
    public func clearSentData() { sentData.removeAll() }

    /// Makes ``connect()`` throw `error` (nil: succeed).
    public func setConnectError(_ error: (any Error)?) { connectError = error }

    /// Makes ``send(_:)`` throw `error` (nil: succeed).
    public func setSendError(_ error: (any Error)?) { sendError = error }

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

    private func removeReceiver(_ token: Int) { received.remove(token) }
    private func removeSentObserver(_ token: Int) { sent.remove(token) }
    private func removeLinkObserver(_ token: Int) { link.remove(token) }
}
