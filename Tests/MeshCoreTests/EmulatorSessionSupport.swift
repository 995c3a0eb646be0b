import Foundation
import TetherCore
import TetherSimulator
import TetherTesting

@testable import MeshCore
@testable import MeshCoreEmulator

/// A `MeshCoreSession` talking to the emulated radio of an ``EmulatorMesh`` through a
/// `MockTransport`: every command frame goes to the radio, every frame it has for the app
/// (replies and pushes, in order) comes back. Virtual time, no BLE.
struct EmulatorSession {
    let mesh: EmulatorMesh
    let mock: MockTransport
    let session: MeshCoreSession
    let events: Collector<MeshCoreEvent>

    init(configuration: CompanionRadio.Configuration = CompanionRadio.Configuration(), introduce: Bool = true) async {
        let mesh = await EmulatorMesh(configuration: configuration, introduce: introduce)
        self.mesh = mesh
        let mock = MockTransport(streamsEndOnDisconnect: false)
        self.mock = mock
        session = MeshCoreSession(
            transport: mock, configuration: .init(autoFetchMessages: false), clock: mesh.clock,
            wallClock: { Date(timeIntervalSince1970: TimeInterval(EmulatorMesh.epoch)) })
        events = Collector(await session.events())
        let (outgoing, continuation) = AsyncStream<Data>.makeStream()
        let radio = mesh.radio
        await { @SimulationActor in
            radio.outputHandler = { for frame in radio.drainOutputs() { continuation.yield(frame) } }
        }()
        let sent = await mock.sentFrames()
        // One task each way keeps both directions in order.
        Task { for await frame in sent { await { @SimulationActor in radio.receive(frame) }() } }
        Task { for await frame in outgoing { await mock.simulateReceive(frame) } }
    }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await mesh.time.run(limit: .seconds(300), operation)
    }

    /// Starts the session (APP_START and DEVICE_QUERY).
    func start() async throws {
        let session = self.session
        _ = try await run {
            try await session.start()
            return try await session.deviceQuery()
        }
    }

    /// The refusal code of a command that failed, nil if it did not fail that way.
    static func refusal(_ error: any Error) -> MeshCoreErrorCode? {
        if case MeshCoreError.commandFailed(_, let code) = error { code } else { nil }
    }
}
