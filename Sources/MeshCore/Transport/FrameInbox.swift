import Foundation

/// Frames waiting for the one reader of a transport's frame stream.
///
/// Bounded without loss: when ``capacity`` frames wait, the producer (the link's read loop)
/// parks until the reader has taken half of them, and stops reading the link meanwhile. Not
/// thread-safe by itself: it lives inside an actor, which serializes access and creates the
/// continuations it parks.
struct FrameInbox {
    /// The most frames that wait before the producer must.
    let capacity: Int

    private var frames: [Data] = []
    private var head = 0
    private var subscription = 0
    private var reader: (subscription: Int, continuation: CheckedContinuation<Data?, Never>)?
    private var producer: CheckedContinuation<Bool, Never>?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Frames waiting now.
    var count: Int { frames.count - head }
    /// True when the producer must wait before appending.
    var isFull: Bool { count >= capacity }

    /// Starts a new reader; the previous reader's stream ends.
    mutating func subscribe() -> Int {
        subscription += 1
        if let reader {
            self.reader = nil
            reader.continuation.resume(returning: nil)
        }
        return subscription
    }

    /// True while `subscription` is the current reader.
    func isCurrent(_ subscription: Int) -> Bool { subscription == self.subscription }

    /// Hands `frame` to a parked reader, or queues it. The caller checks ``isFull`` first.
    mutating func append(_ frame: Data) {
        if let reader {
            self.reader = nil
            reader.continuation.resume(returning: frame)
        } else {
            frames.append(frame)
        }
    }

    /// The oldest waiting frame for the current reader, or nil.
    mutating func take(_ subscription: Int) -> Data? {
        guard subscription == self.subscription, head < frames.count else { return nil }
        let frame = frames[head]
        head += 1
        if head == frames.count {
            frames.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= frames.count {
            frames.removeFirst(head)
            head = 0
        }
        if count <= capacity / 2, let producer {
            self.producer = nil
            producer.resume(returning: true)
        }
        return frame
    }

    /// Parks the current reader until a frame arrives; a stale or replaced reader gets nil.
    mutating func park(_ subscription: Int, _ continuation: CheckedContinuation<Data?, Never>) {
        guard subscription == self.subscription else {
            continuation.resume(returning: nil)
            return
        }
        if let frame = take(subscription) {
            continuation.resume(returning: frame)
            return
        }
        reader?.continuation.resume(returning: nil)
        reader = (subscription, continuation)
    }

    /// Ends a parked reader (its task was cancelled).
    mutating func endReader(_ subscription: Int) {
        guard let reader, reader.subscription == subscription else { return }
        self.reader = nil
        reader.continuation.resume(returning: nil)
    }

    /// Parks the producer until there is room; it gets false when the link it reads is gone.
    mutating func parkProducer(_ continuation: CheckedContinuation<Bool, Never>) {
        guard isFull else {
            continuation.resume(returning: true)
            return
        }
        producer?.resume(returning: false)
        producer = continuation
    }

    /// Tells a parked producer to stop: its link is closed or replaced.
    mutating func releaseProducer() {
        producer?.resume(returning: false)
        producer = nil
    }

    /// Drops every waiting frame (a new connection starts clean) and releases the producer.
    mutating func removeAll() {
        frames.removeAll()
        head = 0
        releaseProducer()
    }
}
