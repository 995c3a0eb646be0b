import FlockFinder
import Foundation
import TetherCore
import TetherWorld
import TetherSimulator
import FlockFinderEmulator
import FlockFinderStorage

/// The demo's FlockFinder chapter: a drive past a Flock camera and a Raven sensor, detections
/// stored, a CSV export.
struct FlockDemoChapter {
    let central: Central
    let emulator: FlockFinderEmulator
    let timeline: DemoTimeline

    func run() async throws {
        print("\nFlockFinder — surveillance camera detector\n")
        let store = try DetectionStore.inMemory()
        await FlockScenario.drive(emulator)
        timeline.step("Driving past a Flock Safety camera, a Penguin camera, a Raven sensor and a home router (9 s)")
        let outcome = try await FlockStory(central: central, store: store, json: false).watch(seconds: 9, stream: false, timeline: timeline)
        let types = Set(outcome.detections.map(\.detection.type.name))
        for expected in ["Flock Safety", "Raven (Gunshot Detector)"] where !types.contains(expected) {
            throw CLIError("no \(expected) detection during the drive (saw \(types.sorted()))")
        }
        let counts = try await store.countsByType()
        timeline.ok("\(outcome.detections.count) detection(s) stored: " + counts.sorted { $0.key.name < $1.key.name }.map { "\($0.key.name) \($0.value)" }.joined(separator: ", "))
        timeline.step("CSV export")
        print(try await store.exportCSV())
        timeline.ok("exported")
    }
}
