import Foundation
import Logging
import Testing

@testable import TetherCore

/// Records the tokens `onTermination` reports.
private final class TokenRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Int] = []

    func record(_ token: Int) {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(token)
    }

    var tokens: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return recorded.sorted()
    }
}

/// Counts warnings logged by the broadcaster.
private final class WarningCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        defer { lock.unlock() }
        count += 1
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    var logger: Logger {
        Logger(label: "test.broadcaster") { _ in CountingHandler(counter: self) }
    }
}

private struct CountingHandler: LogHandler {
    let counter: WarningCounter
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if event.level == .warning { counter.increment() }
    }
}

private func collect<T: Sendable>(_ stream: AsyncStream<T>) async -> [T] {
    var out: [T] = []
    for await value in stream { out.append(value) }
    return out
}

@Suite("Broadcaster", .timeLimit(.minutes(1)))
struct BroadcasterTests {
    @Test("Every subscriber gets every value", arguments: [1, 2, 5])
    func everySubscriberGetsEveryValue(subscribers: Int) async {
        var broadcaster = Broadcaster<Int>()
        let streams = (0..<subscribers).map { _ in broadcaster.subscribe { _ in } }
        #expect(broadcaster.subscriberCount == subscribers)
        for value in 0..<50 { broadcaster.yield(value) }
        broadcaster.finish()
        for stream in streams {
            #expect(await collect(stream) == Array(0..<50))
        }
        #expect(broadcaster.droppedCount == 0)
    }

    @Test("A subscriber added later sees only later values")
    func lateSubscriber() async {
        var broadcaster = Broadcaster<String>()
        let early = broadcaster.subscribe { _ in }
        broadcaster.yield("a")
        let late = broadcaster.subscribe { _ in }
        broadcaster.yield("b")
        broadcaster.finish()
        #expect(await collect(early) == ["a", "b"])
        #expect(await collect(late) == ["b"])
    }

    @Test(
        "A full buffer drops the oldest values and counts them",
        arguments: [(1, 5), (2, 5), (3, 10), (4, 4), (8, 3)])
    func boundedBufferDropsOldest(bufferSize: Int, sent: Int) async {
        var broadcaster = Broadcaster<Int>(bufferSize: bufferSize)
        let stream = broadcaster.subscribe { _ in }
        for value in 1...sent { broadcaster.yield(value) }
        let dropped = max(0, sent - bufferSize)
        #expect(broadcaster.droppedCount == dropped)
        broadcaster.finish()
        #expect(await collect(stream) == Array((dropped + 1)...sent))
    }

    @Test("Drops are counted per slow subscriber and logged")
    func droppedCountAcrossSubscribers() async {
        let counter = WarningCounter()
        var broadcaster = Broadcaster<Int>(bufferSize: 2)
        let a = broadcaster.subscribe { _ in }
        let b = broadcaster.subscribe { _ in }
        for value in 1...5 { broadcaster.yield(value, logger: counter.logger) }
        #expect(broadcaster.droppedCount == 6)
        #expect(counter.value == 6)
        broadcaster.finish()
        #expect(await collect(a) == [4, 5])
        #expect(await collect(b) == [4, 5])
    }

    @Test("A subscriber that keeps up loses nothing")
    func consumingSubscriberLosesNothing() async {
        var broadcaster = Broadcaster<Int>(bufferSize: 2)
        let stream = broadcaster.subscribe { _ in }
        var iterator = stream.makeAsyncIterator()
        var received: [Int] = []
        for value in 1...10 {
            broadcaster.yield(value)
            if let next = await iterator.next() { received.append(next) }
        }
        #expect(received == Array(1...10))
        #expect(broadcaster.droppedCount == 0)
    }

    @Test("finish ends every stream and removes every subscriber")
    func finishEndsStreams() async {
        var broadcaster = Broadcaster<Int>()
        let a = broadcaster.subscribe { _ in }
        let b = broadcaster.subscribe { _ in }
        async let fromA = collect(a)
        broadcaster.yield(1)
        broadcaster.finish()
        #expect(broadcaster.subscriberCount == 0)
        #expect(await fromA == [1])
        #expect(await collect(b) == [1])
        // Yielding after finish reaches nobody and counts no drop.
        broadcaster.yield(2)
        #expect(broadcaster.droppedCount == 0)
    }

    @Test("finish reports each subscriber's token to onTermination")
    func finishReportsTokens() {
        let recorder = TokenRecorder()
        var broadcaster = Broadcaster<Int>()
        let streams = (0..<3).map { _ in broadcaster.subscribe { recorder.record($0) } }
        broadcaster.finish()
        #expect(recorder.tokens == [0, 1, 2])
        #expect(streams.count == 3)
    }

    @Test("remove stops delivery to that subscriber only")
    func removeStopsDelivery() async {
        let recorder = TokenRecorder()
        var broadcaster = Broadcaster<Int>()
        let removed = broadcaster.subscribe { recorder.record($0) }  // token 0
        let kept = broadcaster.subscribe { _ in }  // token 1
        broadcaster.yield(1)
        broadcaster.remove(0)
        #expect(broadcaster.subscriberCount == 1)
        broadcaster.yield(2)
        broadcaster.yield(3)
        broadcaster.finish()
        #expect(await collect(kept) == [1, 2, 3])
        // The removed stream's continuation is gone, so finish() no longer ends it; read what it
        // had buffered and then end it by cancelling its reader.
        let reader = Task { await collect(removed) }
        reader.cancel()
        #expect(await reader.value == [1])
        // finish() did not report the removed subscriber (only the cancellation did).
        #expect(recorder.tokens == [0])
    }

    @Test("Removing an unknown token changes nothing")
    func removeUnknownToken() async {
        var broadcaster = Broadcaster<Int>()
        let stream = broadcaster.subscribe { _ in }
        broadcaster.remove(42)
        #expect(broadcaster.subscriberCount == 1)
        broadcaster.yield(9)
        broadcaster.finish()
        #expect(await collect(stream) == [9])
    }

    @Test("A cancelled consumer reports its token so its owner can remove it")
    func cancellationReportsToken() async {
        let recorder = TokenRecorder()
        var broadcaster = Broadcaster<Int>()
        _ = broadcaster.subscribe { _ in }  // token 0, kept
        let stream = broadcaster.subscribe { recorder.record($0) }  // token 1
        let reader = Task { await collect(stream) }
        reader.cancel()
        _ = await reader.value
        #expect(recorder.tokens == [1])
        broadcaster.remove(1)
        #expect(broadcaster.subscriberCount == 1)
        broadcaster.finish()
    }
}

@Suite("Broadcaster initial values")
struct BroadcasterInitialValueTests {
    @Test func anInitialValueGoesToTheNewSubscriberOnly() async {
        var broadcaster = Broadcaster<Int>(bufferSize: 8)
        let first = broadcaster.subscribe(initial: 1)
        let second = broadcaster.subscribe(initial: 2)
        broadcaster.yield(3)
        broadcaster.finish()
        var a: [Int] = [], b: [Int] = []
        for await value in first { a.append(value) }
        for await value in second { b.append(value) }
        #expect(a == [1, 3])
        #expect(b == [2, 3])
    }
}
