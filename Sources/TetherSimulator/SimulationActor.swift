/// The one executor every virtual radio, peripheral and emulator runs on.
///
/// Putting the whole virtual world on a single global actor makes it behave like firmware on
/// one core: handlers run to completion without interleaving, so a simulation is
/// deterministic under a test clock.
@globalActor
public actor SimulationActor {
    /// The shared instance.
    public static let shared = SimulationActor()
}
