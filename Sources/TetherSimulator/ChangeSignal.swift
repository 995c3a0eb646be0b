import TetherCore

/// Tells observers that an emulator's state changed, so a screen follows it without polling.
///
/// The signal carries no value: an observer reads the state it shows when it hears one. An
/// observer that is behind hears one signal for all it missed, so nothing is buffered whatever
/// the emulator does.
@SimulationActor
public final class ChangeSignal {
    private var observers = Broadcaster<Void>(bufferSize: 1)

    /// Creates a signal with no observers.
    public nonisolated init() {}

    /// The changes from now on, until the observer stops iterating.
    public func changes() -> AsyncStream<Void> {
        observers.subscribe { [weak self] token in
            // An observer that stopped is forgotten now, not at the next change.
            Task { @SimulationActor in self?.observers.remove(token) }
        }
    }

    /// Tells every observer that the state changed.
    public func send() {
        observers.yield(())
    }
}
