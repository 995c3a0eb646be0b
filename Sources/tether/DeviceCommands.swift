import ArgumentParser
import TetherCore
import TetherSimulator
import TetherWorld

/// The command line's side of each device in the ``DeviceCatalog``: its command group and its
/// chapter of `tether demo`, in the order the demo tells them. The root command's subcommands
/// and the demo are built from this list; a test checks that every catalog entry has one.
struct CLIDevice: Sendable {
    /// The catalog's entry.
    let entry: DeviceEntry
    /// `tether <id> …` (nil: the device has no commands of its own).
    let commands: (any AsyncParsableCommand.Type)?
    /// Its chapter of the demo.
    let demoChapter: @Sendable (DemoContext) async throws -> Void
}

/// What a demo chapter drives: the simulated world and the timeline it prints.
struct DemoContext: Sendable {
    let central: Central
    let radio: VirtualRadio
    let emulators: DefaultWorld.Emulators
    let timeline: DemoTimeline
}

enum CLIDevices {
    static let all: [CLIDevice] = [
        CLIDevice(entry: DeviceCatalog.echo, commands: nil) {
            try await DemoStory(central: $0.central, radio: $0.radio, timeline: $0.timeline).run()
        },
        CLIDevice(entry: DeviceCatalog.gripFit, commands: GripFitCommands.self) {
            try await GripFitDemoChapter(central: $0.central, radio: $0.radio, emulator: $0.emulators.gripFit, timeline: $0.timeline).run()
        },
        CLIDevice(entry: DeviceCatalog.kiro, commands: KiroCommands.self) {
            try await KiroDemoChapter(central: $0.central, radio: $0.radio, emulator: $0.emulators.kiro, timeline: $0.timeline).run()
        },
        CLIDevice(entry: DeviceCatalog.tybe, commands: TybeCommands.self) {
            try await TybeDemoChapter(central: $0.central, bridge: $0.emulators.tybe, timeline: $0.timeline).run()
        },
        CLIDevice(entry: DeviceCatalog.flock, commands: FlockCommands.self) {
            try await FlockDemoChapter(central: $0.central, emulator: $0.emulators.flock, timeline: $0.timeline).run()
        },
        CLIDevice(entry: DeviceCatalog.mesh, commands: MeshCommands.self) {
            try await MeshDemoChapter(central: $0.central, radio: $0.radio, emulators: $0.emulators, timeline: $0.timeline).run()
        },
    ]

    /// The device command groups, for the root command.
    static var commandGroups: [any ParsableCommand.Type] { all.compactMap(\.commands) }
}
