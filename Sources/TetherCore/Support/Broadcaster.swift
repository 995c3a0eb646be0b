import Logging

/// Fans values out to any number of `AsyncStream` subscribers, each with a bounded buffer.
///
/// Not thread-safe by itself: it lives inside an actor, which serializes access. A subscriber
/// that falls more than `bufferSize` values behind loses the oldest ones; the loss is logged
/// and counted rather than letting memory grow without bound.
public struct Broadcaster<Element: Sendable>: Sendable {
    private var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
    private var nextToken = 0
    private let bufferSize: Int
    /// Values dropped because a subscriber was too slow.
    public private(set) var droppedCount = 0

    /// Creates a broadcaster whose subscribers buffer at most `bufferSize` values.
    public init(bufferSize: Int = 1024) {
        self.bufferSize = bufferSize
    }

    /// The number of live subscribers.
    public var subscriberCount: Int { continuations.count }

    /// Adds a subscriber. `onTermination` is called (from any thread) with the token to remove.
    public mutating func subscribe(initial: Element? = nil, onTermination: @escaping @Sendable (Int) -> Void) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferSize))
        if let initial { continuation.yield(initial) }
        let token = nextToken
        nextToken += 1
        continuations[token] = continuation
        continuation.onTermination = { _ in onTermination(token) }
        return stream
    }

    /// Adds a subscriber that is dropped lazily, at the first value sent after its stream ends
    /// (for owners that cannot hop back to remove it).
    /// `initial`, when given, goes to this subscriber only (for example the current state).
    public mutating func subscribe(initial: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferSize))
        if let initial { continuation.yield(initial) }
        continuations[nextToken] = continuation
        nextToken += 1
        return stream
    }

    /// Removes a subscriber that went away.
    public mutating func remove(_ token: Int) {
        continuations[token] = nil
    }

    /// Sends a value to every subscriber.
    public mutating func yield(_ value: Element, logger: Logger? = nil) {
        var ended: [Int] = []
        for (token, continuation) in continuations {
            switch continuation.yield(value) {
            case .dropped:
                droppedCount += 1
                logger?.warning("A slow subscriber dropped a value", metadata: ["dropped": "\(droppedCount)"])
            case .terminated:
                ended.append(token)
            case .enqueued:
                break
            @unknown default:
                break
            }
        }
        for token in ended { continuations[token] = nil }
    }

    /// Ends every subscriber's stream.
    public mutating func finish() {
        let all = continuations.values
        continuations.removeAll()
        for continuation in all { continuation.finish() }
    }
}
