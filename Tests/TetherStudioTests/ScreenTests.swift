#if os(macOS) || os(Linux)
import FlockFinder
import FlockFinderEmulator
import FlockFinderStorage
import Foundation
import GripFit
import GripFitEmulator
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import Observation
import Testing
import TetherCore
import TetherSimulator
@testable import TetherStudio
import TetherTesting
import TetherWorld

/// A screen with nothing behind it: a counter, the actions it ran, and a gate that holds an
/// action until opened.
@Observable
@MainActor
final class CounterScreen: StudioScreen {
    let device = "counter"
    var count = 0
    var performed: [String] = []
    @ObservationIgnored var gate: CheckedContinuation<Void, Never>?
    var waiting = false

    struct State: Encodable { var count: Int; var performed: [String]; var waiting: Bool }

    func start() async {}
    func stop() async {}
    func state() -> State { State(count: count, performed: performed, waiting: waiting) }

    func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        switch action.name {
        case "add":
            count += try action.integer("by", in: 1...10)
        case "hold":
            waiting = true
            await withCheckedContinuation { gate = $0 }
        case "fail":
            throw StudioProtocolError("it failed on purpose")
        default:
            throw action.unknown
        }
        performed.append(action.name)
    }

    func open() {
        gate?.resume()
        gate = nil
    }

    func export(_ name: String) async throws(StudioProtocolError) -> StudioExport {
        guard name == "count.txt" else { throw StudioProtocolError("only count.txt") }
        return StudioExport(fileName: "count.txt", contentType: "text/plain", body: Data("\(count)\n".utf8))
    }
}

struct Expired: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what): not within the bound" }
}

/// The screen's state once `condition` holds, waiting on its changes (not polling), at most
/// `seconds` of real time.
@MainActor
func until<S: StudioScreen>(_ screen: S, _ seconds: Double = 15, _ what: String, _ condition: (S.State) -> Bool) async throws -> S.State {
    try await observedValue(seconds, what, { screen.state() }, until: condition)
}

extension StudioScreen {
    /// Carries out the page's request `name` with `arguments` on this screen.
    func perform(_ name: String, _ arguments: [String: StudioValue] = [:]) async throws(StudioProtocolError) {
        try await perform(StudioAction(device: device, name: name, arguments: arguments))
    }
}

/// Messages of one socket until one satisfies `match`.
func message(from messages: inout WebSocketInboundMessageStream.AsyncIterator, where match: ([String: Any]) -> Bool) async throws -> [String: Any] {
    while let message = object(try await messages.next()) {
        if match(message) { return message }
    }
    throw Expired(what: "the socket ended first")
}

@Suite("Tether Studio: device screens")
struct StudioScreensTests {
    @Test func actionRequestsCarryTheirArgumentsAndBadOnesSayWhy() throws {
        let request = try StudioRequest.decode(#"{"type":"action","device":"gripfit","action":"rate","ms":50,"note":"x","deep":[1,{"a":null}]}"#)
        #expect(request == .action(StudioAction(device: "gripfit", name: "rate", arguments: [
            "ms": .number(50), "note": .string("x"), "deep": .array([.number(1), .object(["a": .null])]),
        ])))
        #expect(throws: StudioProtocolError("a request needs \"device\"")) { try StudioRequest.decode(#"{"type":"action","action":"tare"}"#) }
        #expect(throws: StudioProtocolError("a request needs \"action\"")) { try StudioRequest.decode(#"{"type":"action","device":"gripfit"}"#) }
        #expect(throws: StudioProtocolError.self) {
            try StudioRequest.decode(#"{"type":"action","device":"gripfit","action":"\#(String(repeating: "a", count: 65))"}"#)
        }
        // Nesting as deep as 64 KiB allows is refused, not a crash.
        let deep = String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)
        #expect(throws: StudioProtocolError.self) { try StudioRequest.decode(#"{"type":"action","device":"d","action":"a","x":"# + deep + "}") }

        let action = StudioAction(device: "gripfit", name: "rate", arguments: ["ms": .number(5000), "half": .number(2.5), "on": .string("yes")])
        #expect(throws: StudioProtocolError("\"ms\" must be 20…1000")) { try action.integer("ms", in: 20...1000) }
        #expect(throws: StudioProtocolError("\"half\" must be a whole number")) { try action.integer("half", in: 0...10) }
        #expect(throws: StudioProtocolError("rate needs \"on\" (true or false)")) { try action.flag("on") }
        #expect(throws: StudioProtocolError("rate needs \"id\" (text)")) { try action.uuid("id") }
        #expect(action.unknown == StudioProtocolError("the gripfit screen has no action \"rate\""))
    }

    @MainActor
    @Test func aScreenPublishesAtOnceAndAfterChangesAndRunsActionsInOrder() async throws {
        let world = await StudioWorld()
        let counter = CounterScreen()
        let screens = StudioScreens([counter], hub: world.hub, publishInterval: .milliseconds(20))
        await screens.start()
        try await world.app.test(.live) { client in
            _ = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await within(10, "the counter's states") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    let hello = try await message(from: &messages) { $0["type"] as? String == "hello" }
                    #expect(hello["screens"] as? [String] == ["counter"])
                    // The state published at start reaches a page that opens later.
                    let first = try await message(from: &messages) { $0["type"] as? String == "screen" }
                    #expect(first["device"] as? String == "counter")
                    #expect((first["state"] as? [String: Any])?["count"] as? Int == 0)
                    for by in [1, 2, 3] {
                        try await outbound.write(.text(#"{"type":"action","device":"counter","action":"add","by":\#(by)}"#))
                    }
                    let sixth = try await message(from: &messages) { (($0["state"] as? [String: Any])?["count"] as? Int) == 6 }
                    #expect((sixth["state"] as? [String: Any])?["performed"] as? [String] == ["add", "add", "add"])
                    // A failure, a bad argument, an unknown action and an unknown screen are told to the page.
                    try await outbound.write(.text(#"{"type":"action","device":"counter","action":"fail"}"#))
                    let failed = try await message(from: &messages) { $0["type"] as? String == "actionFailed" }
                    #expect(failed["message"] as? String == "it failed on purpose")
                    #expect(failed["action"] as? String == "fail")
                    try await outbound.write(.text(#"{"type":"action","device":"counter","action":"add","by":11}"#))
                    let range = try await message(from: &messages) { $0["type"] as? String == "actionFailed" }
                    #expect(range["message"] as? String == "\"by\" must be 1…10")
                    try await outbound.write(.text(#"{"type":"action","device":"counter","action":"explode"}"#))
                    let unknown = try await message(from: &messages) { $0["type"] as? String == "actionFailed" }
                    #expect(unknown["message"] as? String == "the counter screen has no action \"explode\"")
                    try await outbound.write(.text(#"{"type":"action","device":"toaster","action":"on"}"#))
                    let noScreen = try await message(from: &messages) { $0["type"] as? String == "actionFailed" }
                    #expect(noScreen["message"] as? String == "no toaster screen: the studio has counter")
                }
            }
        }
        await screens.stop()
        await world.hub.stop()
    }

    @MainActor
    @Test func aScreenTakesABoundedNumberOfWaitingActions() async throws {
        let world = await StudioWorld()
        let counter = CounterScreen()
        let screens = StudioScreens([counter], hub: world.hub)
        await screens.start()
        #expect(screens.submit(StudioAction(device: "counter", name: "hold"), from: 1) == nil)
        _ = try await until(counter, 5, "the hold under way") { $0.waiting }
        for _ in 0..<StudioScreens.actionQueueCapacity {
            #expect(screens.submit(StudioAction(device: "counter", name: "add", arguments: ["by": .number(1)]), from: 1) == nil)
        }
        #expect(screens.submit(StudioAction(device: "counter", name: "add", arguments: ["by": .number(1)]), from: 1)
                == "the counter screen has \(StudioScreens.actionQueueCapacity) actions waiting: try again shortly")
        counter.open()
        let done = try await until(counter, 5, "every queued action") { $0.count == StudioScreens.actionQueueCapacity }
        #expect(done.performed.count == StudioScreens.actionQueueCapacity + 1)
        await screens.stop()
        #expect(screens.submit(StudioAction(device: "counter", name: "add"), from: 1) == "the counter screen is not running")
        await world.hub.stop()
    }

    @MainActor
    @Test func exportsAreServedAndBadNamesRefused() async throws {
        let world = await StudioWorld()
        let counter = CounterScreen()
        counter.count = 41
        let screens = StudioScreens([counter], hub: world.hub)
        await screens.start()
        try await world.app.test(.router) { client in
            try await client.execute(uri: "/export/counter/count.txt", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "41\n")
                #expect(response.headers[.contentDisposition] == "attachment; filename=\"count.txt\"")
                #expect(response.headers[.contentType] == "text/plain")
                #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff")
            }
            try await client.execute(uri: "/export/counter/other.txt", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body) == "only count.txt\n")
            }
            try await client.execute(uri: "/export/toaster/x.csv", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/export/counter/%3Cscript%3E", method: .get) { #expect($0.status == .badRequest) }
        }
        await screens.stop()
        await world.hub.stop()
    }
}

/// The default world's GripFit and FlockFinder on a simulated radio (real time).
@MainActor
struct DeviceScreenWorld {
    let radio: VirtualRadio
    let emulators: DefaultWorld.Emulators
    let central: Central

    init() async {
        (radio, emulators) = await DefaultWorld.make(clock: ContinuousClock())
        central = Central(driver: await SimulatedDriver(radio: radio), clock: ContinuousClock())
        await central.start()
    }
}

@Suite("Tether Studio: the GripFit screen")
struct GripFitScreenTests {
    @MainActor
    @Test func scanConnectReadTareRecordAndExport() async throws {
        let world = await DeviceScreenWorld()
        let store = InMemoryGripSessionStore()
        let screen = GripFitScreen(central: world.central, store: store, emulator: world.emulators.gripFit)
        await screen.start()
        try await screen.perform("scan", ["on": .bool(true)])
        let found = try await until(screen, 10, "a GripFit found") { !$0.devices.isEmpty }
        #expect(found.devices.first?.name.contains("GRIPFIT") == true)
        #expect(found.simulated)
        try await screen.perform("connect", ["id": .string(found.devices[0].id)])
        let live = try await until(screen, 10, "readings on the chart") { $0.connection == "connected" && $0.chart.count >= 5 }
        #expect(live.dot == "green")
        #expect(live.firmware != nil)
        // The chart's points are [seconds, force, raw], oldest first, with raw = force uncalibrated.
        #expect(live.chart.allSatisfy { $0.count == 3 && $0[1] == $0[2] })
        #expect(zip(live.chart, live.chart.dropFirst()).allSatisfy { $0[0] <= $1[0] })

        await world.emulators.gripFit.setProfile(.idle)
        try await screen.perform("tare")
        #expect(screen.model.commandError == nil)
        let tared = try await until(screen, 10, "readings near zero after tare") { ($0.latest?[1]).map { abs($0) < 2_000 } == true }
        #expect(abs(tared.latest![0]) < 2_000)

        try await screen.perform("record", ["on": .bool(true)])
        try await screen.perform("simulateSqueeze", ["peak": .number(300_000)])
        let squeezed = try await until(screen, 10, "a squeeze seen") { ($0.lastSqueeze?.peak ?? 0) > 250_000 }
        #expect(squeezed.recording && squeezed.recordingSamples > 10)
        #expect((squeezed.bestPeak ?? 0) > 250_000)
        try await screen.perform("record", ["on": .bool(false)])
        let saved = screen.state()
        #expect(saved.sessions.count == 1)
        #expect(saved.lastSaved?.maxForce == saved.sessions.first?.maxForce)
        let id = try #require(saved.sessions.first?.id)

        try await screen.perform("select", ["id": .string(id)])
        let selected = screen.state()
        #expect(selected.selected?.id == id)
        #expect(selected.selectedCurve.count == min(saved.sessions[0].samples, GripFitScreen.curvePoints))
        let csv = String(decoding: try await screen.export("\(id).csv").body, as: UTF8.self)
        let lines = csv.split(separator: "\n")
        #expect(lines.first == "offset_s,raw,force")
        #expect(lines.count == saved.sessions[0].samples + 1)
        let all = String(decoding: try await screen.export("sessions.csv").body, as: UTF8.self)
        #expect(all.contains(id))
        await #expect(throws: StudioProtocolError("GripFit exports sessions.csv or <session id>.csv")) { try await screen.export("x.txt") }

        // Calibrated: force = slope × (raw − offset), raw unchanged.
        try await screen.perform("calibrate", ["slope": .number(0.001), "zeroOffset": .number(0)])
        let calibrated = try await until(screen, 10, "calibrated readings") { state in
            state.chart.last.map { abs($0[1] - $0[2] * 0.001) < 1e-6 && $0[2] != 0 } == true
        }
        #expect(calibrated.calibration?["slope"] == 0.001)

        try await screen.perform("delete", ["id": .string(id)])
        #expect(screen.state().sessions.isEmpty)
        #expect(screen.state().selected == nil)
        await screen.stop()
    }

    @MainActor
    @Test func badActionsSayWhyAndChangeNothing() async throws {
        let world = await DeviceScreenWorld()
        let screen = GripFitScreen(central: world.central, store: InMemoryGripSessionStore())
        await screen.start()
        await #expect(throws: StudioProtocolError("\"ms\" must be 20…1000")) { try await screen.perform("rate", ["ms": .number(5)]) }
        await #expect(throws: StudioProtocolError("\"id\" is not an identifier")) { try await screen.perform("connect", ["id": .string("nope")]) }
        let stranger = UUID().uuidString
        await #expect(throws: StudioProtocolError("no GripFit \(stranger) was found: scan first")) {
            try await screen.perform("connect", ["id": .string(stranger)])
        }
        await #expect(throws: StudioProtocolError("\"slope\" must not be 0")) {
            try await screen.perform("calibrate", ["slope": .number(0), "zeroOffset": .number(0)])
        }
        // Not the simulator's: no squeezing by button.
        await #expect(throws: StudioProtocolError("a real GripFit is squeezed by hand")) {
            try await screen.perform("simulateSqueeze", ["peak": .number(300_000)])
        }
        await #expect(throws: StudioProtocolError("no saved session \(stranger)")) { try await screen.perform("select", ["id": .string(stranger)]) }
        // Tare with no GripFit: the view model says why.
        try await screen.perform("tare", [:])
        #expect(screen.state().commandError == GripFitCommandError.notConnected.errorDescription)
        #expect(screen.state().simulated == false)
        await screen.stop()
    }

    @MainActor
    @Test func aLongSessionsCurveIsThinnedToItsLimitKeepingItsEnds() {
        let samples = (0..<10_000).map { GripSample(offset: Double($0) / 10, raw: Int32($0), force: Double($0)) }
        let curve = GripFitScreen.curve(samples)
        #expect(curve.count == GripFitScreen.curvePoints)
        #expect(curve.first == [0, 0])
        #expect(curve.last == [999.9, 9_999])
        #expect(GripFitScreen.curve(Array(samples.prefix(3))).count == 3)
    }
}

@Suite("Tether Studio: the FlockFinder screen")
struct FlockFinderScreenTests {
    @MainActor
    @Test func aDriveByIsDetectedStoredMappedAndExported() async throws {
        let world = await DeviceScreenWorld()
        let drive = SimulatedDrive()
        let store = try DetectionStore.inMemory(minimumConfidence: 0.5, locationProvider: drive)
        let screen = FlockFinderScreen(central: world.central, store: store, emulator: world.emulators.flock, drive: drive)
        await screen.start()
        try await screen.perform("scan", ["on": .bool(true)])
        // The client connects to the first detector that advertises the service.
        let connected = try await until(screen, 15, "the detector connected") { $0.connection == "Connected" }
        #expect(connected.dot == "green")
        #expect(connected.simulated)
        try await screen.perform("simulateDriveBy")
        let seen = try await until(screen, 20, "three kinds of camera detected and stored") {
            Set($0.live.map(\.type)).count >= 3 && Set($0.history.map(\.type)).count >= 3
                && $0.storedCounts.values.reduce(0, +) == $0.history.count
        }
        #expect(seen.live.contains { $0.type == "Flock Safety" })
        #expect(seen.live.allSatisfy { !$0.proximity.isEmpty && (0...1).contains($0.confidence) })
        #expect(seen.history.allSatisfy { $0.latitude != nil && $0.longitude != nil })
        // The list's filter hides what is below it; the counts stay.
        try await screen.perform("filter", ["minimum": .number(1)])
        let filtered = screen.state()
        #expect(filtered.live.isEmpty)
        #expect(filtered.minimumConfidence == 1)
        #expect(filtered.countsByType.values.reduce(0, +) >= seen.countsByType.values.reduce(0, +))

        let csv = String(decoding: try await screen.export("detections.csv").body, as: UTF8.self)
        #expect(csv.split(whereSeparator: \.isNewline).count >= 4)
        let json = try await screen.export("detections.json")
        #expect(try DetectionStore.decodeJSONExport(json.body).count >= 3)

        try await screen.perform("stream", ["on": .bool(true)])
        let streaming = try await until(screen, 10, "debug stream lines") { $0.streaming && !$0.stream.isEmpty }
        #expect(streaming.stream.allSatisfy { !$0.evt.isEmpty })

        try await screen.perform("threshold", ["minimum": .number(0.9)])
        #expect(screen.state().recordingThreshold == 0.9)
        await #expect(throws: StudioProtocolError("\"command\" must be PING, STATUS or RESET")) {
            try await screen.perform("command", ["command": .string("REBOOT")])
        }
        try await screen.perform("command", ["command": .string("STATUS")])
        try await screen.perform("clear")
        #expect(screen.state().live.isEmpty)
        await screen.stop()
    }
}
#endif
