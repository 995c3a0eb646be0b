import Testing
import TetherSimulator
@testable import KiroEmulator

@Suite("Kiro emulator: changes of its panel")
@SimulationActor
struct EmulatorChangeTests {
    /// What the panel shows changes, with or without an event to the app, and says so (a
    /// missing signal would leave the iteration waiting, ended by the time limit).
    @Test(.timeLimit(.minutes(1)))
    func everyChangeOfThePanelIsSignalled() async {
        let emulator = KiroEmulator()
        var changes = emulator.changes().makeAsyncIterator()
        emulator.show(.overview)
        #expect(await changes.next() != nil)
        #expect(emulator.page == .overview)
        emulator.sleep()
        #expect(await changes.next() != nil)
        emulator.lowBattery(9)
        #expect(await changes.next() != nil)
        #expect(emulator.renderText().contains("9%"))
    }
}
