import Foundation
import Observation

/// A bound passed while waiting for an observed value.
public struct ObservationTimedOut: Error, CustomStringConvertible {
    /// What was waited for.
    public let what: String
    /// Says what did not happen in time.
    public var description: String { "\(what): not within the bound" }
}

/// The value `read` returns once `condition` holds for it, waiting on the changes of the
/// `@Observable` state `read` reads (no polling), at most `seconds` of real time.
@MainActor
public func observedValue<T>(_ seconds: Double, _ what: String, _ read: () -> T, until condition: (T) -> Bool) async throws -> T {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let value = withObservationTracking { read() } onChange: { changed.yield() }
        if condition(value) { return value }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            changed.finish()
        }
        var iterator = changes.makeAsyncIterator()
        let next: Void? = await iterator.next()
        timer.cancel()
        guard next != nil else { throw ObservationTimedOut(what: what) }
    }
}
