import Foundation
@testable import TetherCore
@testable import TetherSimulator
import TetherTesting
@testable import Tybe
@testable import TybeEmulator

/// One status notification as the client received it, stamped with virtual time.
struct EmulatorStatusEntry: Sendable {
    let at: Duration
    let status: TybeStatus
}

/// Every status notification the client received, across connections.
actor EmulatorStatusLog {
    private(set) var entries: [EmulatorStatusEntry] = []
    func append(_ entry: EmulatorStatusEntry) { entries.append(entry) }
    var count: Int { entries.count }
}

/// A Tybe bridge (with its dongle and host) on a virtual radio, a central connected to it
/// through a `ConnectionStateMachine`, and a test clock.
struct EmulatorWorld {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let central: Central
    let bridge: TybeBridgeEmulator
    let connection: ConnectionStateMachine
    let log = EmulatorStatusLog()
    let id = PeripheralID(UUID(uuidString: "74796265-0000-4000-8000-0000000000B1")!)

    init(queueCapacity: Int = 16, inputSource: TybeHost.InputSource = .english) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 5)
        time = TestTime(clock: clock, radio: radio)
        bridge = TybeBridgeEmulator(queueCapacity: queueCapacity, dongle: TybeDongle(host: TybeHost(inputSource: inputSource)))
        await radio.add(bridge.makePeripheral(id: id))
        central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        connection = await central.connection(to: id, configuration: ConnectionConfiguration(
            services: [TybeGATT.serviceUUID],
            requiredCharacteristics: TybeGATT.allCharacteristics,
            notifyCharacteristics: [TybeGATT.status]))
    }

    var now: Duration { radio.timeline.now }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Lets `duration` of virtual time pass.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Advances virtual time until `condition` holds.
    func until(limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    /// Connects (discovering the service and subscribing to Status) and starts logging the
    /// status notifications of this connection.
    func connect() async throws {
        let stream = await connection.notifications(for: TybeGATT.status)
        let log = self.log, timeline = radio.timeline
        Task {
            for await value in stream {
                guard let status = TybeStatus(value) else { continue }
                await log.append(EmulatorStatusEntry(at: timeline.now, status: status))
            }
        }
        let connection = self.connection
        try await run { try await connection.connect() }
    }

    /// Disconnects from the central's side.
    func disconnect() async throws {
        let connection = self.connection
        try await run { await connection.disconnect() }
        try await until { await !self.radio.isConnected(self.id) }
    }

    /// Writes `value` to a characteristic (Text Input by default).
    func write(_ value: Data, to path: CharacteristicPath = TybeGATT.textInput, type: WriteType = .withoutResponse) async throws {
        let connection = self.connection
        try await run { try await connection.write(value, to: path, type: type) }
    }

    /// Reads a characteristic.
    func read(_ path: CharacteristicPath) async throws -> Data {
        let connection = self.connection
        return try await run { try await connection.read(path) }
    }

    /// Waits for the first status received at index `from` or later that matches `predicate`.
    @discardableResult
    func status(from index: Int = 0, limit: Duration = .seconds(30), where predicate: @escaping @Sendable (TybeStatus) -> Bool = { _ in true }) async throws -> EmulatorStatusEntry {
        let log = self.log
        return try await time.first(limit: limit, what: "status") {
            await log.entries.dropFirst(index).first { predicate($0.status) }
        }
    }

    /// Sends a frame of `strokes` and waits for the status that answers it.
    @discardableResult
    func send(seq: UInt8, _ strokes: [KeyStroke], type: WriteType = .withoutResponse) async throws -> TybeStatus {
        try await send(frameBytes: Self.frame(seq: seq, strokes), type: type)
    }

    /// Writes raw frame bytes and waits for the status that answers them: the first one after
    /// the write with the frame's seq that carries an ACK or an error (heartbeats carry neither
    /// until the frame is acknowledged).
    @discardableResult
    func send(frameBytes: Data, type: WriteType = .withoutResponse) async throws -> TybeStatus {
        let start = await log.count
        let seq = frameBytes.first ?? 0
        try await write(frameBytes, type: type)
        return try await status(from: start) { $0.seq == seq && ($0.ackReceived || !$0.isOK) }.status
    }

    /// Sends `text` (planned and chunked like a client does) one frame at a time, waiting for
    /// each frame's status; returns them.
    func type(_ text: String, startingSeq: UInt8 = 1, maxFrameBytes: Int = 182) async throws -> [TybeStatus] {
        var statuses: [TybeStatus] = []
        for frame in TybeFrameBuilder.frames(for: text, startingSeq: startingSeq, maxFrameBytes: maxFrameBytes).frames {
            statuses.append(try await send(frameBytes: frame.bytes))
        }
        return statuses
    }

    /// Waits until the bridge's queue is empty (every accepted key typed or lost).
    func drain() async throws {
        let bridge = self.bridge
        try await until { await bridge.queuedFrames == 0 }
    }

    /// Runs `body` on the bridge.
    func bridge<T: Sendable>(_ body: @escaping @SimulationActor (TybeBridgeEmulator) -> T) async -> T {
        let bridge = self.bridge
        return await { @SimulationActor in body(bridge) }()
    }

    /// What the host's text field shows.
    var hostText: String {
        get async { await bridge { $0.dongle.host.text } }
    }

    /// A Text Input frame carrying `strokes` as KEY opcodes.
    static func frame(seq: UInt8, _ strokes: [KeyStroke]) -> Data {
        TybeFrame(seq: seq, opcodes: TybeOpcode.encode(strokes)).bytes
    }

    /// A Text Input frame with raw opcode bytes (and a correct length byte).
    static func frame(seq: UInt8, opcodes: [UInt8]) -> Data {
        Data([seq, UInt8(opcodes.count)] + opcodes)
    }
}
