import Foundation
import Testing
import TetherTesting
@testable import TetherCore
@testable import TetherSimulator
@testable import Tybe
@testable import TybeEmulator

/// The problems a client reported, collected as they come.
actor ProblemLog {
    private(set) var texts: [String] = []
    /// The statuses the client reported: news, or a repeat.
    private(set) var statuses: [(news: Bool, status: TybeStatus)] = []

    static func collecting(from client: TybeClient) async -> ProblemLog {
        let log = ProblemLog()
        let events = await client.events()
        Task {
            for await event in events {
                switch event {
                case .problem(let text): await log.append(text)
                case .status(let status): await log.append(news: true, status)
                case .statusRepeated(let status): await log.append(news: false, status)
                default: break
                }
            }
        }
        return log
    }

    private func append(_ text: String) { texts.append(text) }
    private func append(news: Bool, _ status: TybeStatus) { statuses.append((news, status)) }
}

/// A bridge, dongle and host on a virtual radio, and a client, on a test clock.
struct TybeWorld {
    let time: TestTime
    let clock = ManualClock()
    let radio: VirtualRadio
    let bridge: TybeBridgeEmulator
    let client: TybeClient
    let id = PeripheralID(UUID(uuidString: "74796265-0000-4000-8000-0000000000AA")!)

    init(mtu: Int = 185, host: TybeHost.InputSource = .english, queueCapacity: Int = 16) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 9)
        time = TestTime(clock: clock, radio: radio)
        bridge = TybeBridgeEmulator(queueCapacity: queueCapacity, dongle: TybeDongle(host: TybeHost(inputSource: host)))
        let peripheral = bridge.makePeripheral(id: id)
        await { @SimulationActor in peripheral.linkParameters.preferredMTU = mtu }()
        await radio.add(peripheral)
        let central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        client = TybeClient(central: central, clock: clock)
    }

    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    var hostText: String {
        get async {
            let host = bridge.dongle.host
            return await { @SimulationActor in host.text }()
        }
    }

    /// Waits (in virtual time) until the host shows `text`.
    func waitForHost(_ text: String) async throws {
        let host = bridge.dongle.host
        try await time.until { await ({ @SimulationActor in host.text }()) == text }
    }
}

@Suite("Tybe client through the bridge emulator", .timeLimit(.minutes(3)))
struct TybeClientTests {
    @Test func connectSendsNoFrameAndSubscribesToStatusAtOnce() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        try await world.advance(.milliseconds(100))
        #expect(await world.bridge.framesReceived == 0)
        let status = try #require(await client.lastStatus)
        #expect(status.bridgeReady)
        #expect(await client.linkState == .connected)
    }

    @Test func composeTypesKoreanAndASCIIOnAKoreanHost() async throws {
        let world = await TybeWorld(host: .korean)
        let client = world.client
        let result = try await world.run { try await client.compose("안녕하세요 hello") }
        try await world.waitForHost("안녕하세요 ㅗ디ㅣㅐ")
        #expect(result.plan.untypeable.isEmpty)
        #expect(result.statuses.allSatisfy { $0.errorCode == 0 && $0.ackReceived })
    }

    @Test func composeTypesASCIIOnAnEnglishHost() async throws {
        let world = await TybeWorld()
        let client = world.client
        let text = "Hello, World! 1+1=2 (ok) ~`|\\\"'"
        _ = try await world.run { try await client.compose(text) }
        try await world.waitForHost(text)
    }

    @Test(arguments: [23, 27, 64, 185, 247])
    func framesFitTheLinkAndArriveInOrder(mtu: Int) async throws {
        let world = await TybeWorld(mtu: mtu)
        let client = world.client
        let text = String(repeating: "abcdefghij", count: 30)
        let result = try await world.run { try await client.compose(text) }
        try await world.waitForHost(text)
        let limit = min(255, mtu - 3)
        let frames = TybeFrameBuilder.chunk(opcodes: result.plan.opcodes, startingSeq: 0, maxFrameBytes: limit)
        #expect(result.statuses.count == frames.count)
        #expect(frames.allSatisfy { $0.bytes.count <= limit })
    }

    @Test func untypeableCharactersAreReportedNotDropped() async throws {
        let world = await TybeWorld()
        let client = world.client
        let result = try await world.run { try await client.compose("a😀b中c") }
        #expect(result.plan.untypeable.map(\.character) == ["😀", "中"])
        try await world.waitForHost("abc")
    }

    @Test func keyboardModeSendsOneFramePerKeyWithoutResponse() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        for character in "hi!" {
            let stroke = try #require(AsciiKeymap.keystroke(for: character))
            try await world.run { try await client.send(stroke) }
        }
        try await world.waitForHost("hi!")
        #expect(await world.bridge.framesReceived == 3)
    }

    /// A terminal paste: every key at once. It used to lose the keys the bridge refused as BUSY.
    static let paste = "The quick brown fox jumps over 13 dogs."

    static func keystrokes(_ text: String) throws -> [KeyStroke] {
        try text.map { try #require(AsciiKeymap.keystroke(for: $0)) }
    }

    @Test func aPastedBurstOfKeysArrivesWholeWithinTheWindow() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        let strokes = try Self.keystrokes(Self.paste)
        try await world.run { for stroke in strokes { try await client.send(stroke) } }
        try await world.waitForHost(Self.paste)
        #expect(await client.busyResends == 0, "the window keeps the bridge's queue from filling")
        #expect(await world.bridge.statusesSent.allSatisfy { $0.errorCode != TybeStatusCode.busy.rawValue })
    }

    /// The bridge says a frame's status again every 2 s: once as news, then as repeats.
    @Test func theBridgesRepeatsAreToldApartFromNews() async throws {
        let world = await TybeWorld()
        let client = world.client
        let log = await ProblemLog.collecting(from: client)
        let statuses = try await world.run { try await client.compose("ok") }.statuses
        #expect(statuses.count == 1)
        let seq = try #require(statuses.first?.seq)
        try await world.advance(.milliseconds(6_500))
        let ofFrame = await log.statuses.filter { $0.status.seq == seq && $0.status.ackReceived }
        #expect(ofFrame.filter(\.news).count == 1)
        #expect(ofFrame.filter { !$0.news }.count >= 3)
        #expect(ofFrame.first?.news == true)
    }

    @Test func keysRefusedAsBusyAreSentAgainInOrder() async throws {
        // A bridge with a queue shorter than the client's window: BUSY happens.
        let world = await TybeWorld(queueCapacity: 2)
        let client = world.client
        let problems = await ProblemLog.collecting(from: client)
        try await world.run { try await client.connect() }
        let strokes = try Self.keystrokes(Self.paste)
        try await world.run { for stroke in strokes { try await client.send(stroke) } }
        try await world.waitForHost(Self.paste)
        try await world.advance(.milliseconds(500))
        #expect(await client.busyResends > 0)
        let busySent = await world.bridge.statusesSent.filter { $0.errorCode == TybeStatusCode.busy.rawValue }
        #expect(!busySent.isEmpty)
        // Each BUSY answers a frame: news, even for a frame refused twice under the same seq.
        let busySeen = await problems.statuses.filter { $0.status.errorCode == TybeStatusCode.busy.rawValue }
        #expect(busySeen.count == busySent.count && busySeen.allSatisfy(\.news))
        #expect(await client.unansweredKeyCount == 0)
        let reported = await problems.texts
        #expect(reported.isEmpty, "\(reported)")
    }

    @Test func aLinkLostDuringAPasteReportsTheKeysNotSent() async throws {
        let world = await TybeWorld()
        let client = world.client
        let problems = await ProblemLog.collecting(from: client)
        try await world.run { try await client.connect() }
        let strokes = try Self.keystrokes(Self.paste)
        try await world.run { for stroke in strokes.prefix(5) { try await client.send(stroke) } }
        await world.radio.peripheralDisconnect(world.id)
        // Keys typed while the link is down: the client reports what it could not send.
        try await world.run { for stroke in strokes.dropFirst(5) { try? await client.send(stroke) } }
        try await world.advance(.seconds(1))
        #expect(await client.unansweredKeyCount == 0)
        let reported = await problems.texts
        #expect(reported.contains { $0.contains("not confirmed by the bridge") || $0.contains("dropped") }, "\(reported)")
    }

    @Test func aKeyWhoseStatusNeverComesDropsTheLinkAndIsReported() async throws {
        let world = await TybeWorld()
        let client = world.client
        let problems = await ProblemLog.collecting(from: client)
        try await world.run { try await client.connect() }
        await world.radio.inject(FaultRule(.writeWithoutResponse, on: TybeGATT.textInput, action: .noResponse, count: 1))
        let stroke = try #require(AsciiKeymap.keystroke(for: "q"))
        try await world.run { try await client.send(stroke) }
        try await world.advance(.seconds(4))
        #expect(await client.linkState == .failed)
        let reported = await problems.texts
        #expect(reported.contains { $0.contains("no status for frame") }, "\(reported)")
        #expect(reported.contains { $0.contains("1 key(s) not confirmed") }, "\(reported)")
    }

    @Test func seqWrapsAcrossManyFrames() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        let stroke = try #require(AsciiKeymap.keystroke(for: "x"))
        for _ in 0..<260 {
            try await world.run { try await client.send(stroke) }
            // A fast typist, not a flood: the bridge's queue never fills.
            try await world.advance(.milliseconds(20))
        }
        try await world.waitForHost(String(repeating: "x", count: 260))
        // 260 frames: seq went 0…255 then 0…3 without a duplicate being reported.
        #expect(await world.bridge.lastSeq == 3)
        #expect(await world.bridge.statusesSent.allSatisfy { $0.errorCode != TybeStatusCode.duplicateSeq.rawValue })
    }

    @Test func aBridgeWhoseHeartbeatStopsIsDroppedAfterAPeriodAndTheStatusTimeout() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        let events = await client.events()
        let bridge = world.bridge
        await { @SimulationActor in bridge.sendsHeartbeats = false }()
        let start = world.radio.timeline.now
        let problem = try await world.run { () -> String? in
            for await event in events { if case .problem(let text) = event { return text } }
            return nil
        }
        #expect(problem?.hasPrefix("no status notification for") == true, "\(problem ?? "")")
        #expect(await client.linkState == .failed)
        // The last heartbeat came at most 2 s before the switch; 2 s + the 3 s status timeout after it.
        let waited = world.radio.timeline.now - start
        #expect(waited >= .seconds(3) && waited <= .milliseconds(5_050), "\(waited)")
    }

    @Test func cancellingAComposeLeavesTheLinkUp() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        // The status of the first frame never comes: the compose waits for it.
        await world.radio.inject(FaultRule(.writeWithoutResponse, on: TybeGATT.textInput, action: .noResponse, count: 1))
        let compose = Task { try await client.compose("wait") }
        await world.time.settle()
        compose.cancel()
        let outcome = try await world.run { () -> String in
            do { _ = try await compose.value; return "finished" } catch is CancellationError { return "cancelled" } catch { return "\(error)" }
        }
        #expect(outcome == "cancelled")
        #expect(await client.linkState == .connected, "a cancelled wait is no reason to drop the bridge")
        _ = try await world.run { try await client.compose("next") }
        try await world.waitForHost("next")
    }

    @Test func aMissingStatusDropsTheLinkAndTheNextActionReconnects() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        await world.radio.inject(FaultRule(.writeWithoutResponse, on: TybeGATT.textInput, action: .noResponse, count: 1))
        let failure = try await world.run { () -> TybeClientError? in
            do { _ = try await client.compose("lost"); return nil } catch let error as TybeClientError { return error }
        }
        #expect(failure == .statusTimeout(seq: 0))
        #expect(await client.linkState == .failed)
        _ = try await world.run { try await client.compose("back") }
        try await world.waitForHost("back")
        #expect(await client.linkState == .connected)
    }

    @Test func connectsMadeWhileALinkOpensShareItAndReportNoProblem() async throws {
        let world = await TybeWorld()
        let client = world.client
        let problems = await ProblemLog.collecting(from: client)
        try await world.run {
            async let first: Void = client.connect()
            async let second: Void = client.connect()
            async let third: Void = client.connect()
            _ = try await (first, second, third)
        }
        try await world.advance(.seconds(1))
        #expect(await client.linkState == .connected)
        #expect(await problems.texts.isEmpty)
        _ = try await world.run { try await client.compose("one link") }
        try await world.waitForHost("one link")
    }

    @Test func aResetWhileTheLinkOpensLeavesItIdle() async throws {
        let world = await TybeWorld()
        let client = world.client
        let problems = await ProblemLog.collecting(from: client)
        let opening = Task { try await client.connect() }
        try await world.time.until { await client.linkState == .connecting }
        await client.reset()
        let outcome = try await world.run { () -> Bool in (try? await opening.value) != nil }
        #expect(!outcome)
        try await world.advance(.seconds(1))
        #expect(await client.linkState == .idle)
        #expect(await problems.texts.isEmpty)
        #expect(await !world.radio.isConnected(world.id))
    }

    @Test func bridgeErrorsAreReportedWithoutDisconnecting() async throws {
        let world = await TybeWorld()
        let client = world.client
        try await world.run { try await client.connect() }
        await { @SimulationActor in world.bridge.dongle.unplug() }()
        let result = try await world.run { try await client.compose("x") }
        #expect(result.statuses.first?.error == .dongleNoAck)
        #expect(await client.linkState == .connected)
    }

    @Test @MainActor func viewModelFollowsTheDonglePillAndCounts() async throws {
        let world = await TybeWorld()
        let client = world.client
        let model = TybeViewModel(store: MemorySettings())
        let events = await client.events()
        let follower = Task { @MainActor in for await event in events { model.apply(event) } }
        defer { follower.cancel() }
        let plan = try await world.run { try await client.compose("ok") }.plan
        model.typed(plan.keystrokes)
        try await world.time.until { await MainActor.run(body: { model.dongle }) == .linked }
        #expect(model.link == .connected && model.bridge == .ok)
        #expect(model.keyCount == 2 && model.frameCount == 1 && model.errorCount == 0)
        #expect(model.lastKey == "k" && model.recentKeys == ["o", "k"])
        await { @SimulationActor in world.bridge.dongle.unplug() }()
        let start = world.radio.timeline.now
        try await world.time.until { await MainActor.run(body: { model.dongle }) == .noAck }
        // The linked flag is sticky for ~4 s after the last ACK.
        #expect(world.radio.timeline.now - start >= .seconds(3))
    }
}

/// Settings kept in memory for tests.
final class MemorySettings: TybeSettingsStore, @unchecked Sendable {
    private let lock = NSLock()
    private var saved = TybeSettings()
    func load() -> TybeSettings { lock.withLock { saved } }
    func save(_ settings: TybeSettings) throws { lock.withLock { saved = settings } }
}

@Suite("Tybe view model", .timeLimit(.minutes(1)))
@MainActor
struct TybeViewModelTests {
    @Test func settingsPersistAcrossLaunches() throws {
        let path = NSTemporaryDirectory() + "tybe-settings-\(UUID().uuidString)/settings.json"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let first = TybeViewModel(store: FileTybeSettingsStore(path: path))
        #expect(first.settings.bridgeName == "Tybe Zephyr Dev")
        first.settings.bridgeName = "Desk Bridge"
        first.settings.showLogByDefault = true
        let second = TybeViewModel(store: FileTybeSettingsStore(path: path))
        #expect(second.settings.bridgeName == "Desk Bridge")
        #expect(second.showLog)
    }

    @Test func aSettingsSaveThatFailsIsLoggedNotLost() throws {
        let directory = NSTemporaryDirectory() + "tybe-settings-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A file where the settings' folder should be: the save cannot create it.
        #expect(FileManager.default.createFile(atPath: directory, contents: Data("x".utf8)))
        let model = TybeViewModel(store: FileTybeSettingsStore(path: directory + "/settings.json"))
        model.settings.bridgeName = "Desk Bridge"
        #expect(model.settingsSaveError != nil)
        #expect(model.log.last?.level == .error && model.log.last?.message.hasPrefix("settings could not be saved: ") == true)
        try FileManager.default.removeItem(atPath: directory)
        model.settings.bridgeName = "Desk Bridge 2"
        #expect(model.settingsSaveError == nil)
        #expect(TybeViewModel(store: FileTybeSettingsStore(path: directory + "/settings.json")).settings.bridgeName == "Desk Bridge 2")
    }

    /// The bridge's repeats (told apart by the client) move the pills and nothing else.
    @Test func theBridgesRepeatsMoveThePillsOnly() {
        let model = TybeViewModel(store: MemorySettings())
        let acked = TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 7, errorCode: 0)
        model.apply(.frameSent(seq: 7, keys: 1))
        model.apply(.status(acked))
        for _ in 0..<30 { model.apply(.statusRepeated(acked)) }
        #expect(model.log.map(\.message) == ["frame 7 sent (1 key)", "frame 7 acknowledged"])
        // The dongle pulled: the heartbeat's linked flag still reaches the pill.
        model.apply(.statusRepeated(TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: false, seq: 7, errorCode: 0)))
        #expect(model.dongle == .noAck && model.log.count == 2)
        let busy = TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: true, seq: 8, errorCode: TybeStatusCode.busy.rawValue)
        model.apply(.status(busy))
        model.apply(.statusRepeated(busy))
        #expect(model.errorCount == 1 && model.bridge == .error("BUSY"))
        // A heartbeat of a frame the bridge took: the bridge pill is OK again.
        model.apply(.statusRepeated(acked))
        #expect(model.bridge == .ok && model.errorCount == 1)
    }

    @Test func logIsBoundedAndClearable() {
        let model = TybeViewModel(store: MemorySettings())
        for index in 0..<700 { model.apply(.problem("p\(index)")) }
        #expect(model.log.count == TybeViewModel.logLimit)
        #expect(model.log.last?.message == "p699" && model.log.last?.level == .error)
        model.clearLog()
        #expect(model.log.isEmpty)
    }

    @Test func recentKeysKeepTheLastTwentyWithSpecLabels() throws {
        let model = TybeViewModel(store: MemorySettings())
        model.typed((0..<25).map { _ in KeyStroke(.a) } + [KeyStroke(.enter), KeyStroke(.c, [.leftCtrl]), KeyStroke(.space), KeyStroke(.arrowLeft)])
        #expect(model.recentKeys.count == TybeViewModel.recentLimit)
        #expect(model.recentKeys.suffix(4) == ["↩", "⌃c", "␣", "←"])
        #expect(model.lastKey == "←")
    }

    @Test func bridgeErrorsCountAndTurnThePillRed() throws {
        let model = TybeViewModel(store: MemorySettings())
        model.apply(.status(TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: true, seq: 4, errorCode: TybeStatusCode.busy.rawValue)))
        #expect(model.errorCount == 1)
        #expect(model.bridge == .error("BUSY"))
        #expect(model.log.last?.level == .warn)
        model.apply(.status(TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: false, seq: 5, errorCode: 0)))
        #expect(model.bridge == .ok && model.dongle == .noAck)
    }
}

@Suite("Terminal key decoding")
struct TerminalKeyDecoderTests {
    @Test func decodesKeysArrowsControlAltAndQuit() {
        var decoder = TerminalKeyDecoder()
        let out = decoder.push([UInt8(ascii: "a"), UInt8(ascii: "A"), 0x0D, 0x09, 0x7F, 0x1B, UInt8(ascii: "["), UInt8(ascii: "D"), 0x03, 0x1B, UInt8(ascii: "x"), 0x1D])
        #expect(out == [
            .key(KeyStroke(.a)), .key(KeyStroke(.a, .leftShift)), .key(KeyStroke(.enter)), .key(KeyStroke(.tab)),
            .key(KeyStroke(.backspace)), .key(KeyStroke(.arrowLeft)), .key(KeyStroke(.c, .leftCtrl)),
            .key(KeyStroke(.x, .leftAlt)), .quit,
        ])
    }

    @Test func aLoneEscapeWaitsThenFlushesAsEscape() {
        var decoder = TerminalKeyDecoder()
        #expect(decoder.push([0x1B]).isEmpty)
        #expect(decoder.flush() == [.key(KeyStroke(.escape))])
        // Split escape sequences still decode.
        #expect(decoder.push([0x1B, UInt8(ascii: "[")]).isEmpty)
        #expect(decoder.push([UInt8(ascii: "A")]) == [.key(KeyStroke(.arrowUp))])
    }

    /// F5 typed "5~" on the host and Ctrl-Left ";5D": a sequence is one key, or nothing.
    @Test(arguments: [
        ("\u{1B}[15~", KeyStroke(.f5)), ("\u{1B}[24~", KeyStroke(.f12)), ("\u{1B}OP", KeyStroke(.f1)),
        ("\u{1B}[1;2Q", KeyStroke(.f2, .leftShift)), ("\u{1B}[H", KeyStroke(.home)), ("\u{1B}[1~", KeyStroke(.home)),
        ("\u{1B}[4~", KeyStroke(.end)), ("\u{1B}OF", KeyStroke(.end)), ("\u{1B}[5~", KeyStroke(.pageUp)),
        ("\u{1B}[6~", KeyStroke(.pageDown)), ("\u{1B}[3~", KeyStroke(.delete)), ("\u{1B}[2~", KeyStroke(.insert)),
        ("\u{1B}[1;5D", KeyStroke(.arrowLeft, .leftCtrl)), ("\u{1B}[1;3A", KeyStroke(.arrowUp, .leftAlt)),
        ("\u{1B}[3;5~", KeyStroke(.delete, .leftCtrl)), ("\u{1B}[Z", KeyStroke(.tab, .leftShift)),
        ("\u{1B}OA", KeyStroke(.arrowUp)),
    ])
    func sequencesBecomeTheirKeys(input: String, stroke: KeyStroke) {
        var decoder = TerminalKeyDecoder()
        #expect(decoder.push(Array(input.utf8)) == [.key(stroke)])
        // The same bytes one at a time.
        var slow = TerminalKeyDecoder()
        #expect(input.utf8.flatMap { slow.push([$0]) } == [.key(stroke)])
    }

    @Test func sequencesWithoutAKeyAreIgnoredWholeAndTypingGoesOn() {
        var decoder = TerminalKeyDecoder()
        // Bracketed paste markers, a focus report, an unknown ~ number, then ordinary typing.
        let out = decoder.push(Array("\u{1B}[200~\u{1B}[I\u{1B}[99~x".utf8))
        #expect(out == [.ignored(Array("\u{1B}[200~".utf8)), .ignored(Array("\u{1B}[I".utf8)),
                        .ignored(Array("\u{1B}[99~".utf8)), .key(KeyStroke(.x))])
    }

    @Test func anEndlessSequenceIsNotHeldForever() {
        var decoder = TerminalKeyDecoder()
        let out = decoder.push([0x1B, UInt8(ascii: "[")] + Array(repeating: UInt8(ascii: "1"), count: 100))
        #expect(out.count == 1)
        #expect(decoder.push(Array("a".utf8)) == [.key(KeyStroke(.a))])
    }
}
