import TetherTesting
import Foundation
import Logging
@testable import MeshCore
import TetherCore
import TetherSimulator

/// Plays a companion radio behind a `MockTransport`: decodes each frame the session sends and
/// answers with whatever `reply` returns (nothing, for a radio that stays silent).
actor FakeRadio {
    let mock: MockTransport
    private(set) var commands: [MeshCoreCommand] = []
    private var reply: @Sendable (MeshCoreCommand) -> [Data]
    private var task: Task<Void, Never>?
    /// When set, commands are answered (in order) only once the unanswered ones satisfy it:
    /// a radio that proves commands were sent without waiting for replies.
    private let answerWhen: (@Sendable ([MeshCoreCommand]) -> Bool)?
    private var unanswered: [MeshCoreCommand] = []
    /// The most commands that were waiting for an answer at once.
    private(set) var mostUnanswered = 0

    init(mock: MockTransport = MockTransport(streamsEndOnDisconnect: false), reply: @escaping @Sendable (MeshCoreCommand) -> [Data] = FakeRadio.standard,
         answerWhen: (@Sendable ([MeshCoreCommand]) -> Bool)? = nil) async {
        self.mock = mock
        self.reply = reply
        self.answerWhen = answerWhen
        let frames = await mock.sentFrames()
        task = Task { [weak self] in
            for await frame in frames { await self?.answer(frame) }
        }
    }

    func setReply(_ reply: @escaping @Sendable (MeshCoreCommand) -> [Data]) { self.reply = reply }

    /// Command codes received so far.
    var codes: [UInt8] { commands.map(\.code) }

    private func answer(_ frame: Data) async {
        guard let command = try? MeshCoreCommand(decoding: frame) else { return }
        commands.append(command)
        unanswered.append(command)
        mostUnanswered = max(mostUnanswered, unanswered.count)
        if let answerWhen, !answerWhen(unanswered) { return }
        let due = unanswered
        unanswered.removeAll()
        for command in due {
            for out in reply(command) { await mock.simulateReceive(out) }
        }
    }

    // MARK: Standard answers

    static let radioKey = Data((0..<32).map { UInt8($0 + 0x40) })
    static let aliceKey = Data((0..<32).map { UInt8($0 + 0xA0) })
    static let radioClock: UInt32 = 1_767_225_600
    static let alice = MeshContact(publicKey: aliceKey, type: .chat, name: "Alice", lastAdvert: 1_767_225_000, lastModified: 1_767_225_100)

    static func frame(_ frame: MeshCoreFrame) -> Data { frame.encoded() }

    /// A radio that answers the core command set sensibly.
    static let standard: @Sendable (MeshCoreCommand) -> [Data] = { command in
        switch command {
        case .appStart:
            [frame(.selfInfo(SelfInfo(publicKey: radioKey, radioFrequency: 869.525, radioBandwidth: 250, spreadingFactor: 11, codingRate: 5, name: "Base")))]
        case .deviceQuery:
            [frame(.deviceInfo(DeviceInfo(firmwareVersionCode: 13, maxContacts: 100, maxChannels: 2, blePin: 123456, firmwareVersion: "v1.17")))]
        case .getDeviceTime:
            [frame(.currentTime(radioClock))]
        case .setDeviceTime, .setAdvertName, .sendSelfAdvert, .sendChannelTextMessage:
            [frame(.ok(value: nil))]
        case .getContacts:
            [frame(.contactsStart(count: 1)), frame(.contact(alice)), frame(.endOfContacts(lastModified: alice.lastModified))]
        case .getChannel(let index):
            index == 0
                ? [frame(.channelInfo(ChannelInfo(index: 0, name: "Public", secret: Data(repeating: 0x8B, count: 16))))]
                : [frame(.error(.notFound))]
        case .syncNextMessage:
            [frame(.noMoreMessages)]
        case .getBatteryAndStorage:
            [frame(.batteryAndStorage(BatteryAndStorage(millivolts: 4120, usedKilobytes: 12, totalKilobytes: 1024)))]
        case .sendTextMessage:
            [frame(.sent(SentResult(isFlood: false, expectedAck: 0xA1B2_C3D4, suggestedTimeout: 2000)))]
        default:
            [frame(.error(.unsupportedCommand))]
        }
    }
}

/// A session over a `FakeRadio` on a test clock.
struct SessionWorld {
    let time = TestTime()
    var clock: ManualClock { time.clock }
    let radio: FakeRadio
    let session: MeshCoreSession
    /// 2026-01-01 00:00:30 UTC: 30 s ahead of the radio's clock.
    static let now = Date(timeIntervalSince1970: 1_767_225_630)

    init(autoFetch: Bool = true, window: Int? = nil, reply: @escaping @Sendable (MeshCoreCommand) -> [Data] = FakeRadio.standard,
         answerWhen: (@Sendable ([MeshCoreCommand]) -> Bool)? = nil) async {
        SimulationLogging.bootstrapForTests()
        radio = await FakeRadio(reply: reply, answerWhen: answerWhen)
        session = MeshCoreSession(
            transport: radio.mock,
            configuration: .init(autoFetchMessages: autoFetch, maximumCommandsInFlight: window),
            clock: time.clock,
            wallClock: { SessionWorld.now })
    }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Waits (in virtual time) until `condition` holds.
    func until(limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }
}

/// Collects a stream in the background.
actor Collector<Element: Sendable> {
    private(set) var items: [Element] = []

    init(_ stream: AsyncStream<Element>) {
        // The task ends with the stream.
        Task { [weak self] in
            for await item in stream { await self?.append(item) }
        }
    }

    private var waiters: [(satisfied: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    private func append(_ item: Element) {
        items.append(item)
        let ready = waiters.filter { $0.satisfied(items) }
        waiters.removeAll { $0.satisfied(items) }
        for waiter in ready { waiter.continuation.resume() }
    }

    var count: Int { items.count }

    /// Returns once the items collected satisfy `condition` (at once if they do): an event
    /// delivered after the call that caused it is awaited, not polled for. Bounded by the
    /// suite's time limit.
    func until(_ condition: @escaping @Sendable ([Element]) -> Bool) async {
        if condition(items) { return }
        await withCheckedContinuation { waiters.append((condition, $0)) }
    }
}
