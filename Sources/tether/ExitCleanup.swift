import Dispatch
import Foundation

/// What must happen before the process exits, however it exits: BlueZ keeps a link up after
/// its client dies, so drivers disconnect on the way out; a raw terminal is restored.
///
/// `Tether.main` runs the cleanup when the command returns or fails. Registering with
/// `handlingSignals` also makes SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) run
/// it, then exit with 130, 143 or 129;
/// a second signal during the cleanup exits at once.
final class ExitCleanup: @unchecked Sendable {
    static let shared = ExitCleanup()

    private let lock = NSLock()
    private var actions: [(token: Int, action: @Sendable () async -> Void)] = []
    private var nextToken = 0
    private var signalSources: [any DispatchSourceSignal] = []
    private var signalled = false
    private var cleanup: Task<Void, Never>?
    private var interruptHandler: (@Sendable () -> Void)?

    /// Registers `action` (run once, in reverse order of registration). Returns a token for
    /// ``remove(_:)``.
    @discardableResult
    func add(handlingSignals: Bool = false, _ action: @escaping @Sendable () async -> Void) -> Int {
        let token = lock.withLock { () -> Int in
            nextToken += 1
            actions.append((nextToken, action))
            return nextToken
        }
        if handlingSignals { installSignalHandlers() }
        return token
    }

    /// Unregisters an action that is no longer needed.
    func remove(_ token: Int) {
        lock.withLock { actions.removeAll { $0.token == token } }
    }

    /// Runs every registered action once, newest first, giving up after `seconds`. Callers
    /// that arrive while it runs (a signal during the normal exit) wait for the same run.
    func run(seconds: Double = 5) async {
        let task = lock.withLock { () -> Task<Void, Never> in
            if let cleanup { return cleanup }
            let pending = actions.reversed().map(\.action)
            actions.removeAll()
            let task = Task {
                guard !pending.isEmpty else { return }
                let finished = await resultWithin(seconds) {
                    for action in pending { await action() }
                    return true
                }
                if finished == nil {
                    FileHandle.standardError.write(Data("tether: gave up disconnecting after \(Int(seconds)) s\n".utf8))
                }
            }
            cleanup = task
            return task
        }
        await task.value
    }

    private func installSignalHandlers() {
        lock.withLock {
            guard signalSources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { [self] in interrupted(by: signalNumber) }
                source.resume()
                signalSources.append(source)
            }
        }
    }

    /// Runs `body` with Ctrl-C (SIGINT) calling `onInterrupt` instead of ending the program
    /// (SIGTERM and SIGHUP still end it). Installs the signal handling if it is not yet.
    func whileInterruptible<T>(_ onInterrupt: @escaping @Sendable () -> Void, _ body: () async throws -> T) async rethrows -> T {
        installSignalHandlers()
        lock.withLock { interruptHandler = onInterrupt }
        defer { lock.withLock { interruptHandler = nil } }
        return try await body()
    }

    private func interrupted(by signalNumber: Int32) {
        if signalNumber == SIGINT, let handler = lock.withLock({ interruptHandler }) {
            handler()
            return
        }
        let first = lock.withLock { () -> Bool in
            defer { signalled = true }
            return !signalled
        }
        guard first else { _exit(128 + signalNumber) }
        Task {
            await run(seconds: 3)
            fflush(nil)
            exit(128 + signalNumber)
        }
    }
}
