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
    func wait() async -> String {
        for await reason in stream {
            for source in sources { source.cancel() }
            // A second Ctrl-C while stopping ends the process at once.
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
            return reason
        }
        return "stopped"
    }
}
