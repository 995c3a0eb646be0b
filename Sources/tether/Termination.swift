import Dispatch
import Foundation

/// SIGINT, SIGTERM or (optionally) the end of standard input, whichever comes first; the
/// handlers are installed at creation, so a signal that arrives early is not lost.
final class Termination: @unchecked Sendable {
    private let stream: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private var sources: [any DispatchSourceSignal] = []

    init(stdin: Bool) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        self.stream = stream
        self.continuation = continuation
        for (signalNumber, name) in [(SIGINT, "interrupted"), (SIGTERM, "terminated")] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            sources.append(source)
        }
        if stdin {
            Thread.detachNewThread {
                // Blocking reads on a thread of its own; empty data means end of file.
                while !FileHandle.standardInput.availableData.isEmpty {}
                continuation.yield("standard input closed")
            }
        }
    }

    /// Ends the wait from elsewhere (the host gave up), with `reason`.
    func trigger(_ reason: String) {
        continuation.yield(reason)
    }

    /// Waits for the first of them and returns what it was.
    /// Ends the wait however it ends (a reason, or the waiting task cancelled): the signals get
    /// their default action back, so a second Ctrl-C, or a SIGTERM after the wait, ends the
    /// process at once.
    func wait() async -> String {
        defer { restore() }
        for await reason in stream { return reason }
        return "stopped"
    }

    private let restored = NSLock()
    private var isRestored = false

    /// Gives SIGINT and SIGTERM their default action back (idempotent).
    func restore() {
        restored.lock()
        defer { restored.unlock() }
        guard !isRestored else { return }
        isRestored = true
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
