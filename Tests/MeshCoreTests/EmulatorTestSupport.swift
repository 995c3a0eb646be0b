import Foundation
import Testing

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator
import TetherTesting

/// A mesh on a test clock with one radio ("Base") driven directly with command frames, an app
/// attached, and the scripted nodes the tests talk to.
struct EmulatorMesh {
    static let epoch: UInt32 = 1_767_225_600
    let clock = ManualClock()
    let time: TestTime
    let network: MeshNetwork
    let radio: CompanionRadio

    /// Nodes: Alice (1 hop), Echo (2 hops, echo bot), Far (4 hops). The radio knows all three.
    init(configuration: CompanionRadio.Configuration = CompanionRadio.Configuration(), introduce: Bool = true) async {
        SimulationLogging.bootstrapForTests()
        time = TestTime(clock: clock)
        let network = MeshNetwork(clock: clock, seed: 5, startEpoch: Self.epoch)
        self.network = network
        radio = await { @SimulationActor in
            let radio = network.addRadio(name: "Base", hops: 1, configuration: configuration)
            network.addNode(name: "Alice", hops: 1)
            network.addNode(name: "Echo", hops: 2, echoBot: true)
            network.addNode(name: "Far", hops: 4)
            if introduce { network.introduceAll(to: radio) }
            radio.appConnected()
            return radio
        }()
    }

    /// Sends one encoded command and returns every frame the radio then has for the app.
    func send(_ command: MeshCoreCommand) async throws -> [Data] {
        await sendRaw(try command.encoded())
    }

    /// Sends raw bytes as one frame and drains the outbox.
    func sendRaw(_ frame: Data) async -> [Data] {
        let radio = self.radio
        return await { @SimulationActor in
            radio.receive(frame)
            return radio.drainOutputs()
        }()
    }

    /// Sends one command and decodes the replies.
    func frames(_ command: MeshCoreCommand) async throws -> [MeshCoreFrame] {
        try await send(command).map { try MeshCoreFrame(decoding: $0) }
    }

    /// Everything the radio has for the app now, decoded.
    func drain() async throws -> [MeshCoreFrame] {
        let radio = self.radio
        let frames = await { @SimulationActor in radio.drainOutputs() }()
        return try frames.map { try MeshCoreFrame(decoding: $0) }
    }

    /// Runs `body` on the simulation actor.
    func sim<T: Sendable>(_ body: @escaping @SimulationActor () -> T) async -> T {
        await { @SimulationActor in body() }()
    }

    /// Lets `duration` of virtual time pass, running every mesh event due.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// The key of a member.
    func key(_ name: String) -> Data { network.key(for: name) }

    /// A SEND_TXT_MSG to `name`.
    func directMessage(to name: String, _ text: String, timestamp: UInt32 = EmulatorMesh.epoch, attempt: UInt8 = 0, textType: MeshTextType = .plain) -> MeshCoreCommand {
        .sendTextMessage(MeshCoreCommand.TextMessage(
            textType: textType, attempt: attempt, timestamp: timestamp, destinationPrefix: Data(key(name).prefix(6)), text: text))
    }
}

/// Formats bytes as spaced hex for failure messages.
func emulatorHex(_ data: Data) -> String { data.map { String(format: "%02X", $0) }.joined(separator: " ") }

/// Awaits `operation`, failing after `seconds` of real time (a safety net against hangs, not a
/// timing assertion).
func withSafetyTimeout<T: Sendable>(_ seconds: Double = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let seconds = Patience.seconds(seconds)
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw EmulatorTestTimeout(seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

struct EmulatorTestTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no answer within the \(seconds) s safety timeout" }
}
