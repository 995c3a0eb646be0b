#if os(Linux)
import Foundation
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherSimulator
import TetherTesting
import Testing
import Tybe
import TybeEmulator

/// The Tybe client (`TybeClient` on a `Central` over ``BlueZDriver``) against the bridge
/// emulator (with its dongle and host) served by ``BlueZPeripheralHost``, in real time: the
/// flows of `TybeClientTests` and `EmulatorBridgeTests`, through BlueZ's D-Bus API (bluezoo).
@Suite("Tybe over BlueZ", .timeLimit(.minutes(2)))
struct TybeFlowTests {
    // MARK: Compose mode

    @Test func composeTypesASCIIOnAnEnglishHost() async throws {
        try await TybeFlow.run { flow in
            let text = "Hello, World! 1+1=2 (ok) ~`|\\\"'"
            let result = try await flow.compose(text)
            #expect(result.plan.untypeable.isEmpty)
            #expect(!result.statuses.isEmpty)
            #expect(result.statuses.allSatisfy { $0.isOK && $0.ackReceived && $0.dongleLinked })
            try await flow.waitForHost(text)
            #expect(await flow.client.linkState == .connected)
        }
    }

    @Test func composeTypesKoreanAndASCIIOnAKoreanHost() async throws {
        try await TybeFlow.run(host: .korean) { flow in
            let text = "안녕하세요 괜찮아요, 읽어요! 뷁 닭 값 123"
            let result = try await flow.compose(text)
            #expect(result.plan.untypeable.isEmpty)
            #expect(result.statuses.allSatisfy { $0.isOK && $0.ackReceived })
            try await flow.waitForHost(text)
            // The planner never toggles the input source: ASCII letters on a Korean host are jamo.
            let more = try await flow.compose(" hello")
            #expect(more.statuses.allSatisfy { $0.isOK && $0.ackReceived })
            try await flow.waitForHost(text + " ㅗ디ㅣㅐ")
        }
    }

    // MARK: Keyboard mode

    @Test func keyboardModeSendsOneFramePerKeyWithoutResponse() async throws {
        try await TybeFlow.run { flow in
            try await flow.connect()
            let start = flow.events.count
            let strokes = try "hi!".map { try #require(AsciiKeymap.keystroke(for: $0)) }
            for stroke in strokes {
                let client = flow.client
                try await within(10, "sending \(stroke)") { try await client.send(stroke) }
            }
            // Each frame is acknowledged by its own status, in order.
            for seq in UInt8(0)..<3 {
                let status = try await flow.status("the ACK of frame \(seq)", from: start) { $0.seq == seq && $0.ackReceived }
                #expect(status.isOK)
            }
            try await flow.waitForHost("hi!")
            #expect(await flow.bridge { $0.framesReceived } == 3)
            // On the wire: one write command per key, each a one-KEY frame.
            try await flow.activity.next("the third Text Input write", nth: 3, where: TybeFlow.isTextInputWrite)
            let writes = flow.textInputWrites
            #expect(writes.map(\.type) == [.withoutResponse, .withoutResponse, .withoutResponse])
            #expect(writes.map(\.data) == strokes.enumerated().map { TybeFrame(seq: UInt8($0.offset), opcodes: TybeOpcode.encode([$0.element])).bytes })
        }
    }

    // MARK: Status

    @Test func theClientSeesTheBridgesStatusFrames() async throws {
        try await TybeFlow.run { flow in
            try await flow.connect()
            // The bridge greets the subscription: ready, dongle found by the probe, nothing sent yet.
            let greeting = try await flow.status("the greeting status") { _ in true }
            #expect(greeting == TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: true, seq: 0, errorCode: 0))

            // Control 0x01 asks for a status.
            var mark = flow.events.count
            let client = flow.client
            try await within(10, "requesting a status") { try await client.requestStatus() }
            let answered = try await flow.status("a status after Control 0x01", from: mark) { _ in true }
            #expect(answered.bridgeReady && answered.isOK && answered.dongleLinked)
            try await flow.activity.next("the Control write") {
                if case .write(TybeGATT.control, let value, _) = $0 { value == Data([0x01]) } else { false }
            }

            // Unasked: the heartbeat (every 2 s) keeps coming while nothing is sent.
            mark = flow.events.count
            let heartbeat = try await flow.status("a heartbeat", from: mark, within: 8) { _ in true }
            #expect(heartbeat.bridgeReady && heartbeat.isOK)

            // A bridge error is a status, not a link failure: the dongle is pulled, a frame fails.
            await flow.bridge { $0.dongle.unplug() }
            let result = try await flow.compose("x")
            #expect(result.statuses.map(\.error) == [.dongleNoAck])
            #expect(result.statuses.first?.ackReceived == false)
            #expect(await flow.client.linkState == .connected)
            #expect(await flow.client.lastStatus?.bridgeReady == true)

            // Every status the bridge sent reached the client, unchanged and in order (the last
            // one may still be on its way).
            let seen = flow.statuses
            let sent = await flow.bridge { $0.statusesSent }
            #expect(seen.count >= 4)
            #expect(Array(sent.prefix(seen.count)) == seen)
        }
    }

    // MARK: MTU

    @Test func composeChunksToTheMaximumWriteLengthBlueZReports() async throws {
        try await TybeFlow.run { flow in
            try await flow.connect()
            let reported = await flow.pair.driver.maximumWriteValueLength(for: .withoutResponse, on: flow.pair.remoteID)
            // A frame is at most 255 bytes (a one-byte length); BlueZ's limit comes from the link's MTU.
            let limit = min(255, reported)
            #expect(reported >= 20)
            let text = String(repeating: "abcdefghij", count: 30)
            let result = try await flow.compose(text)
            let expected = TybeFrameBuilder.chunk(opcodes: result.plan.opcodes, startingSeq: 0, maxFrameBytes: limit)
            #expect(expected.count > 1)
            // The first frame is as full as the limit allows (whole 3-byte KEY opcodes).
            #expect((expected.first?.bytes.count ?? 0) > limit - 3)
            #expect(result.statuses.map(\.seq) == expected.map(\.seq))
            #expect(result.statuses.allSatisfy { $0.isOK && $0.ackReceived })
            // What went through BlueZ: exactly those frames, as write commands within the limit.
            try await flow.activity.next("Text Input write \(expected.count)", nth: expected.count, where: TybeFlow.isTextInputWrite)
            let writes = flow.textInputWrites
            #expect(writes.map(\.data) == expected.map(\.bytes))
            #expect(writes.allSatisfy { $0.type == .withoutResponse && $0.data.count <= limit })
            try await flow.waitForHost(text)
            #expect(await flow.bridge { $0.framesReceived } == expected.count)
        }
    }

    // MARK: Link

    @Test func aMissingStatusDropsTheLinkAndTheNextActionReconnects() async throws {
        try await TybeFlow.run(statusTimeout: .seconds(3)) { flow in
            try await flow.connect()
            // The bridge never sees the next frame, so its status never comes (3 s timeout).
            await flow.pair.radio.inject(FaultRule(.writeWithoutResponse, on: TybeGATT.textInput, action: .noResponse, count: 1))
            let client = flow.client
            let failure = try await within(15, "the status timeout") { () -> TybeClientError? in
                do {
                    _ = try await client.compose("lost")
                    return nil
                } catch let error as TybeClientError {
                    return error
                }
            }
            #expect(failure == .statusTimeout(seq: 0))
            #expect(await client.linkState == .failed)
            // The next action reconnects through BlueZ (discovery by name, a new link).
            let result = try await flow.compose("back")
            #expect(result.statuses.allSatisfy { $0.isOK && $0.ackReceived })
            try await flow.waitForHost("back")
            #expect(await client.linkState == .connected)
            let links = flow.events.all.compactMap { if case .link(let state) = $0 { state } else { nil } }
            #expect(links == [.connecting, .connected, .failed, .connecting, .connected])
            #expect(await flow.bridge { $0.framesReceived } == 1, "the lost frame never reached the bridge")
        }
    }
}

/// A Tybe bridge (dongle, host) hosted on a fresh pair of bluezoo adapters, and a client.
private struct TybeFlow: Sendable {
    let pair: BlueZPair
    let bridgeEmulator: TybeBridgeEmulator
    let client: TybeClient
    /// The client's events.
    let events: MeshFlowRecorder<TybeClientEvent>
    /// What the central did, as the peripheral host saw it on the D-Bus side.
    let activity: MeshFlowRecorder<BlueZPeripheralActivity>

    /// Builds the flow on a rig of its own (see ``meshFlowPrivateRig()``), runs `body` and closes
    /// everything, whatever `body` does. The bridge has a name of its own all the same (the
    /// client discovers it by name).
    /// `statusTimeout`: generous by default (these flows run in real time beside a busy test
    /// suite); the status-timeout test sets the client's own 3 s.
    static func run(host: TybeHost.InputSource = .english, statusTimeout: Duration = Patience.duration(.seconds(10)),
                    _ body: (TybeFlow) async throws -> Void) async throws {
        let name = meshFlowUniqueName("Tybe Flow ")
        let bridge = TybeBridgeEmulator(name: name, dongle: TybeDongle(host: TybeHost(inputSource: host)))
        let id = PeripheralID(UUID())
        let rig = try await meshFlowPrivateRig()
        let pair: BlueZPair
        do {
            pair = try await BlueZPair.make(rig: rig, recordingEvents: false) { radio in
                radio.add(bridge.makePeripheral(id: id))
                return id
            }
        } catch {
            rig.stop()
            throw error
        }
        let activity = MeshFlowRecorder(pair.host.activity)
        let central = await pair.makeCentral()
        let client = TybeClient(central: central, bridgeName: name, clock: ContinuousClock(), statusTimeout: statusTimeout)
        let events = MeshFlowRecorder(await client.events())
        let flow = TybeFlow(pair: pair, bridgeEmulator: bridge, client: client, events: events, activity: activity)
        do {
            try await body(flow)
        } catch {
            await flow.close()
            throw error
        }
        await flow.close()
    }

    func close() async {
        await client.reset()
        await pair.close()
        pair.rig.stop()
    }

    /// Opens the link (discovery by name, connection, Status subscribed), bounded.
    func connect() async throws {
        let client = self.client
        try await within(20, "the client did not connect to the bridge") { try await client.connect() }
        #expect(await client.linkState == .connected)
    }

    /// Composes `text` (connecting first if needed), bounded.
    func compose(_ text: String) async throws -> (plan: TybePlan, statuses: [TybeStatus]) {
        let client = self.client
        return try await within(30, "composing \(text.debugDescription)") { try await client.compose(text) }
    }

    /// The first status event (news or a repeat) at `from` or later that matches `predicate`.
    func status(_ what: String, from: Int = 0, within seconds: Double = 10,
                where predicate: @escaping @Sendable (TybeStatus) -> Bool) async throws -> TybeStatus {
        let event = try await events.next(what, from: from, within: seconds) { Self.status(of: $0).map(predicate) ?? false }
        guard let status = Self.status(of: event) else { throw BlueZTestError("unreachable") }
        return status
    }

    /// Every status the client received (news and repeats), in order.
    var statuses: [TybeStatus] { events.all.compactMap(Self.status(of:)) }

    @Sendable static func status(of event: TybeClientEvent) -> TybeStatus? {
        switch event {
        case .status(let status), .statusRepeated(let status): status
        default: nil
        }
    }

    @Sendable static func isTextInputWrite(_ activity: BlueZPeripheralActivity) -> Bool {
        if case .write(TybeGATT.textInput, _, _) = activity { true } else { false }
    }

    /// The Text Input writes the host received from BlueZ, in order.
    var textInputWrites: [(data: Data, type: WriteType)] {
        activity.all.compactMap { if case .write(TybeGATT.textInput, let data, let type) = $0 { (data, type) } else { nil } }
    }

    /// Runs `body` on the bridge.
    func bridge<T: Sendable>(_ body: @escaping @SimulationActor (TybeBridgeEmulator) -> T) async -> T {
        let bridge = bridgeEmulator
        return await { @SimulationActor in body(bridge) }()
    }

    /// What the host's text field shows.
    var hostText: String {
        get async { await bridge { $0.dongle.host.text } }
    }

    /// Waits until the host shows exactly `text` (typing runs after each frame's status).
    func waitForHost(_ text: String) async throws {
        let bridge = bridgeEmulator
        do {
            try await meshFlowEventually("the host typing \(text.debugDescription)") {
                await { @SimulationActor in bridge.dongle.host.text }() == text
            }
        } catch {
            throw BlueZTestError("\(error); the host shows \(await hostText.debugDescription)")
        }
    }
}
#endif
