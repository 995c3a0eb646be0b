#if os(macOS) || os(Linux)
import Foundation
import GripFit
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import Testing
import TetherCore
import TetherSimulator
@testable import TetherStudio

/// A studio on a simulated radio with the echo peripheral, in real time (the server is real).
struct StudioWorld {
    let radio: VirtualRadio
    let central: Central
    let hub: StudioHub
    static let echoID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-00000000057D")!)

    init(outboxCapacity: Int = 512, maximumClients: Int = 16) async {
        radio = VirtualRadio(clock: ContinuousClock(), seed: 3)
        await radio.add(EchoPeripheral.makePeripheral(id: Self.echoID, distance: 1.5))
        central = Central(driver: await SimulatedDriver(radio: radio), clock: ContinuousClock())
        await central.start()
        hub = StudioHub(central: central, driverName: "simulator", outboxCapacity: outboxCapacity, maximumClients: maximumClients)
        await hub.start()
    }

    var app: some ApplicationProtocol { StudioServer.makeApplication(host: "127.0.0.1", port: 0, hub: hub) }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what): not within the bound" }
}

/// Runs `body`, failing if it takes longer than `seconds` (real time).
func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard case .some(.some(let value)) = try await group.next() else { throw TimedOut(what: what) }
        return value
    }
}

/// The JSON object of one message.
func object(_ message: WebSocketMessage?) -> [String: Any]? {
    guard case .text(let text)? = message, let data = text.data(using: .utf8) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

@Suite("Tether Studio: protocol")
struct StudioProtocolTests {
    @Test func requestsAreReadAndBadOnesSayWhy() throws {
        let id = StudioWorld.echoID
        #expect(try StudioRequest.decode(#"{"type":"scan","on":true}"#) == .scan(true))
        #expect(try StudioRequest.decode(#"{"type":"connect","id":"\#(id)"}"#) == .connect(id))
        #expect(try StudioRequest.decode(#"{"type":"disconnect","id":"\#(id)"}"#) == .disconnect(id))
        #expect(throws: StudioProtocolError("a request needs \"on\"")) { try StudioRequest.decode(#"{"type":"scan"}"#) }
        #expect(throws: StudioProtocolError("a request needs \"type\"")) { try StudioRequest.decode(#"{"on":true}"#) }
        #expect(throws: StudioProtocolError("\"type\": unknown request type")) { try StudioRequest.decode(#"{"type":"format-disk"}"#) }
        #expect(throws: StudioProtocolError("\"id\": not a peripheral identifier")) { try StudioRequest.decode(#"{"type":"connect","id":"x"}"#) }
        #expect(throws: StudioProtocolError("not a JSON object")) { try StudioRequest.decode("[1,2]") }
        #expect(throws: StudioProtocolError("not a JSON object")) { try StudioRequest.decode("not json") }
        #expect(throws: StudioProtocolError("a request longer than 65536 bytes")) {
            try StudioRequest.decode(#"{"type":"scan","on":true,"pad":""# + String(repeating: "x", count: 70_000) + #""}"#)
        }
    }

    @Test func eventsHaveOneShapePerTypeWithNullForWhatIsMissing() throws {
        let peripheral = StudioPeripheral(id: StudioWorld.echoID, name: nil, device: nil, rssi: nil, rssiHistory: [-60, nil],
                                          services: [], connectable: true)
        let json = StudioEvent.peripheral(peripheral).json
        #expect(json == #"{"connectable":true,"device":null,"id":"\#(StudioWorld.echoID)","name":null,"rssi":null,"rssiHistory":[-60,null],"services":[],"type":"peripheral"}"#)
        #expect(StudioEvent.phase(StudioWorld.echoID, .connected(StudioWorld.echoID)).json.contains(#""dot":"green""#))
        #expect(StudioEvent.phase(StudioWorld.echoID, .discoveringServices(StudioWorld.echoID)).json.contains(#""dot":"yellow""#))
        #expect(StudioEvent.phase(StudioWorld.echoID, .idle).json.contains(#""dot":"red""#))
        // A device's text is data, never markup: it travels as a JSON string.
        let hostile = StudioPeripheral(id: StudioWorld.echoID, name: "<script>alert(1)</script>\"", device: nil, rssi: -40,
                                       rssiHistory: [], services: [], connectable: true)
        let decoded = try JSONSerialization.jsonObject(with: Data(StudioEvent.peripheral(hostile).json.utf8)) as? [String: Any]
        #expect(decoded?["name"] as? String == "<script>alert(1)</script>\"")
    }

    @Test func onLoopbackOnlyThisMachinesNamesAreAnswered() {
        let loopback = StudioHosts.serving("127.0.0.1")
        #expect(loopback.allows(authority: "127.0.0.1:8080"))
        #expect(loopback.allows(authority: "localhost:8080"))
        #expect(loopback.allows(authority: "LOCALHOST"))
        #expect(loopback.allows(authority: "[::1]:8080"))
        #expect(loopback.allows(authority: "127.0.0.2:8080"))
        // DNS rebinding: a page at attacker.example, its name now resolving to 127.0.0.1.
        #expect(!loopback.allows(authority: "attacker.example:8080"))
        #expect(!loopback.allows(authority: "127.0.0.1.attacker.example:8080"))
        #expect(!loopback.allows(authority: "127.evil.example"))
        #expect(!loopback.allows(authority: nil))
        #expect(!loopback.allows(authority: "[::1"))
        // Bound elsewhere (--allow-remote), any name.
        #expect(StudioHosts.serving("0.0.0.0").allows(authority: "studio.lan:8080"))
        #expect(StudioHosts.isLoopback("[::1]") && StudioHosts.isLoopback("127.9.9.9") && !StudioHosts.isLoopback("127.1"))
    }

    @Test func onlyTheStudiosOwnPageMayOpenTheSocket() {
        #expect(StudioOrigin.isAllowed("http://127.0.0.1:8080", authority: "127.0.0.1:8080"))
        #expect(StudioOrigin.isAllowed("http://LOCALHOST:8080", authority: "localhost:8080"))
        #expect(StudioOrigin.isAllowed("http://[::1]:9000", authority: "[::1]:9000"))
        #expect(StudioOrigin.isAllowed("http://example.lan", authority: "example.lan"))
        #expect(!StudioOrigin.isAllowed("http://evil.example", authority: "127.0.0.1:8080"))
        #expect(!StudioOrigin.isAllowed("http://127.0.0.1:8081", authority: "127.0.0.1:8080"))
        #expect(!StudioOrigin.isAllowed("null", authority: "127.0.0.1:8080"))
        #expect(!StudioOrigin.isAllowed("file://", authority: "127.0.0.1:8080"))
        #expect(!StudioOrigin.isAllowed("http://127.0.0.1:8080", authority: nil))
        // A client that is not a browser (the WebSocket library) names the socket.
        #expect(StudioOrigin.isAllowed("ws://localhost", authority: "localhost:8080"))
    }
}

@Suite("Tether Studio: server", .timeLimit(.minutes(1)))
struct StudioServerTests {
    @Test func thePageAndItsFilesAreServedAndNothingElse() async throws {
        let world = await StudioWorld()
        try await world.app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                // Not framed by other sites, not sniffed, scripts only from the studio.
                #expect(response.headers[.init("X-Frame-Options")!] == "DENY")
                #expect(response.headers[.init("X-Content-Type-Options")!] == "nosniff")
                #expect(response.headers[.init("Content-Security-Policy")!]?.contains("frame-ancestors 'none'") == true)
                #expect(String(buffer: response.body).contains("<title>Tether Studio</title>"))
            }
            // Every script the page loads is served, and none writes text as HTML.
            let page = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
            let scripts = page.matches(of: /<script src="([a-z]+\.js)">/).map { String($0.output.1) }
            #expect(scripts.contains("studio.js") && scripts.contains("gripfit.js") && scripts.contains("flock.js"))
            for name in scripts {
                try await client.execute(uri: "/" + name, method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/javascript") == true)
                    let script = String(buffer: response.body)
                    for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                        #expect(!script.contains(sink), "\(name) uses \(sink)")
                    }
                }
            }
            try await client.execute(uri: "/favicon.svg", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/studio.css", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/missing.js", method: .get) { #expect($0.status == .notFound) }
            // The page's folder is the root: nothing above it (the resource bundle's own files).
            try await client.execute(uri: "/../Web/index.html", method: .get) { #expect($0.status != .ok) }
            try await client.execute(uri: "/%2e%2e/Web/index.html", method: .get) { #expect($0.status != .ok) }
            try await client.execute(uri: "/", method: .post) { #expect($0.status != .ok) }
        }
        await world.hub.stop()
    }

    @Test func aPageIsGreetedThenScansAndSeesThePeripheral() async throws {
        let world = await StudioWorld()
        let id = StudioWorld.echoID.description
        try await world.app.test(.live) { client in
            let close = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await within(10, "hello, then the echo peripheral") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    let hello = object(try await messages.next())
                    #expect(hello?["type"] as? String == "hello")
                    #expect(hello?["driver"] as? String == "simulator")
                    try await outbound.write(.text(#"{"type":"scan","on":true}"#))
                    var scanning = false, seen: [String: Any]?
                    while seen == nil, let message = object(try await messages.next()) {
                        if message["type"] as? String == "scanning", message["on"] as? Bool == true { scanning = true }
                        if message["type"] as? String == "peripheral", message["id"] as? String == id { seen = message }
                    }
                    #expect(scanning)
                    #expect(seen?["name"] as? String == "Tether Echo")
                    #expect(seen?["device"] as? String == "echo")
                    #expect((seen?["rssi"] as? Int).map { $0 < 0 } == true)
                    try await outbound.write(.text(#"{"type":"scan","on":false}"#))
                    while let message = object(try await messages.next()) {
                        if message["type"] as? String == "scanning", message["on"] as? Bool == false { break }
                    }
                }
            }
            #expect(close?.closeCode == .normalClosure)
        }
        await world.hub.stop()
    }

    @Test func aPageConnectsAndTheDotsGoRedYellowGreenAndBack() async throws {
        let world = await StudioWorld()
        let id = StudioWorld.echoID.description
        try await world.app.test(.live) { client in
            _ = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await within(10, "the connection's phases") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    // Only a peripheral seen can be connected to.
                    try await outbound.write(.text(#"{"type":"connect","id":"\#(id)"}"#))
                    while let message = object(try await messages.next()) {
                        if message["type"] as? String == "refused" {
                            #expect((message["reason"] as? String)?.contains("scan first") == true)
                            break
                        }
                    }
                    try await outbound.write(.text(#"{"type":"scan","on":true}"#))
                    while let message = object(try await messages.next()) {
                        if message["type"] as? String == "peripheral", message["id"] as? String == id { break }
                    }
                    try await outbound.write(.text(#"{"type":"scan","on":false}"#))
                    try await outbound.write(.text(#"{"type":"connect","id":"\#(id)"}"#))
                    // Pressed twice (or by two pages): one connection, one watcher.
                    try await outbound.write(.text(#"{"type":"connect","id":"\#(id)"}"#))
                    var dots: [String] = []
                    while dots.last != "green", let message = object(try await messages.next()) {
                        if message["type"] as? String == "phase", message["id"] as? String == id, let dot = message["dot"] as? String {
                            if dots.last != dot { dots.append(dot) }
                        }
                    }
                    #expect(dots == ["red", "yellow", "green"] || dots == ["yellow", "green"])
                    try await outbound.write(.text(#"{"type":"disconnect","id":"\#(id)"}"#))
                    while let message = object(try await messages.next()) {
                        if message["type"] as? String == "phase", message["id"] as? String == id, message["dot"] as? String == "red" { break }
                    }
                }
            }
            #expect(await !world.radio.isConnected(StudioWorld.echoID))
        }
        await world.hub.stop()
    }

    @Test func aBadRequestIsRefusedAndTheSocketStays() async throws {
        let world = await StudioWorld()
        try await world.app.test(.live) { client in
            _ = try await client.ws("/ws") { inbound, outbound, _ in
                try await within(10, "refusals") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    try await outbound.write(.text("{nonsense"))
                    try await outbound.write(.binary(ByteBuffer(bytes: [1, 2, 3])))
                    var reasons: [String] = []
                    while reasons.count < 2, let message = object(try await messages.next()) {
                        if message["type"] as? String == "refused", let reason = message["reason"] as? String { reasons.append(reason) }
                    }
                    #expect(reasons == ["not a JSON object", "binary messages are not part of the studio protocol"])
                    // Still served.
                    try await outbound.write(.text(#"{"type":"scan","on":true}"#))
                    while let message = object(try await messages.next()) {
                        if message["type"] as? String == "scanning", message["on"] as? Bool == true { break }
                    }
                }
            }
        }
    }

    @Test func aPageFromAnotherOriginIsRefused() async throws {
        let world = await StudioWorld()
        _ = try await world.app.test(.live) { client in
            // The client names itself (ws://localhost) and adds the page's origin: both must pass.
            await #expect(throws: WebSocketClientError.webSocketUpgradeFailed) {
                try await client.ws("/ws", configuration: .init(additionalHeaders: [.origin: "http://evil.example"])) { _, _, _ in }
            }
        }
        await world.hub.stop()
    }

    @Test func theRadiosStateAndAFailedScanReachThePage() async throws {
        let world = await StudioWorld()
        try await world.app.test(.live) { client in
            _ = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await within(20, "bluetooth and error messages") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    _ = try await message(from: &messages) { $0["type"] as? String == "hello" }
                    await world.radio.setCentralState(.poweredOff)
                    _ = try await message(from: &messages) { $0["type"] as? String == "bluetooth" && $0["state"] as? String == "poweredOff" }
                    // A scan with the radio off fails: the page is told why, for no peripheral.
                    try await outbound.write(.text(#"{"type":"scan","on":true}"#))
                    let error = try await message(from: &messages) { $0["type"] as? String == "error" }
                    #expect(error["id"] is NSNull)
                    #expect((error["message"] as? String)?.isEmpty == false)
                    _ = try await message(from: &messages) { $0["type"] as? String == "scanning" && $0["on"] as? Bool == false }
                    await world.radio.setCentralState(.poweredOn)
                    _ = try await message(from: &messages) { $0["type"] as? String == "bluetooth" && $0["state"] as? String == "poweredOn" }
                }
            }
        }
        await world.hub.stop()
    }

    @Test func thePageIsToldWhatTheStudioForgets() async throws {
        let world = await StudioWorld()
        // More peripherals than the studio remembers.
        for index in 0..<(StudioHub.maximumPeripherals + 4) {
            let id = PeripheralID(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012X", index))!)
            await world.radio.add(EchoPeripheral.makePeripheral(id: id, distance: 2))
        }
        try await world.app.test(.live) { client in
            _ = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await within(30, "a forgotten peripheral") {
                    var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                    try await outbound.write(.text(#"{"type":"scan","on":true}"#))
                    let forgotten = try await message(from: &messages) { $0["type"] as? String == "forgotten" }
                    #expect((forgotten["id"] as? String).flatMap(UUID.init(uuidString:)) != nil)
                    try await outbound.write(.text(#"{"type":"scan","on":false}"#))
                }
            }
        }
        // Full, not over: more were seen than it keeps.
        #expect(await world.hub.peripheralCount == StudioHub.maximumPeripherals)
        await world.hub.stop()
    }

    @MainActor
    @Test func exportsAreServedWithTheirNamesAndBadOnesRefused() async throws {
        let world = await StudioWorld()
        let screen = GripFitScreen(central: world.central, store: InMemoryGripSessionStore())
        let screens = StudioScreens([screen], hub: world.hub)
        await screens.start()
        try await world.app.test(.live) { client in
            try await client.execute(uri: "/export/gripfit/sessions.csv", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(response.headers[.contentDisposition] == #"attachment; filename="gripfit-sessions.csv""#)
                #expect(response.headers[.cacheControl] == "no-store")
                #expect(String(buffer: response.body) == "id,started_at,duration_s,max_force,average_force,samples\n")
            }
            let stranger = UUID()
            try await client.execute(uri: "/export/gripfit/\(stranger.uuidString).csv", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body) == "no saved session \(stranger)\n")
            }
            try await client.execute(uri: "/export/toaster/x.csv", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/export/gripfit/a%20b.csv", method: .get) { #expect($0.status == .badRequest) }
            // Another name for this machine's address (DNS rebinding): not answered.
            let foreign = TestClient(host: "127.0.0.1", port: try #require(client.port))
            foreign.connect()
            let response: TestClient.Response
            do {
                response = try await foreign.execute(TestClient.Request("/export/gripfit/sessions.csv", method: .get, authority: "evil.example"))
            } catch {
                try? await foreign.shutdown()
                throw error
            }
            try await foreign.shutdown()
            #expect(response.status == .forbidden)
        }
        await screens.stop()
        await world.hub.stop()
    }

    @Test func aMessageOverTheLimitClosesTheSocket() async throws {
        let world = await StudioWorld()
        try await world.app.test(.live) { client in
            let close = try await client.ws("/ws", configuration: .init(maxFrameSize: 1 << 20)) { inbound, outbound, _ in
                try await outbound.write(.text(String(repeating: "x", count: StudioServer.maximumMessage + 1)))
                try await within(10, "the close") { for try await _ in inbound {} }
            }
            #expect(close?.closeCode == .messageTooLarge)
        }
        await world.hub.stop()
    }
}

@Suite("Tether Studio: hub")
struct StudioHubTests {
    @Test func aPageThatDoesNotReadIsDroppedNotBuffered() async throws {
        let world = await StudioWorld(outboxCapacity: 4)
        let joined = await world.hub.join()
        let page = try #require(joined)
        // Never drained: hello and the scan state fill part of the outbox; scanning adds more.
        for _ in 0..<3 { await world.hub.handle(#"{"type":"scan","on":true}"#, from: page) ; await world.hub.handle(#"{"type":"scan","on":false}"#, from: page) }
        #expect(await world.hub.wasTooSlow(page))
        // What it held is released: its writer is told there is nothing more.
        #expect(await world.hub.next(for: page) == nil)
        // Counted until its socket ends, so a page that never reads cannot be opened again and again.
        #expect(await world.hub.clientCount == 1)
        await world.hub.leave(page)
        #expect(await world.hub.clientCount == 0)
        await world.hub.stop()
    }

    @Test func aScreensStatesWaitingForAPageAreCoalescedToTheNewest() async throws {
        let world = await StudioWorld(outboxCapacity: 8)
        let joined = await world.hub.join()
        let page = try #require(joined)
        // The greeting and the radio's state (in it or just after): then nothing comes unasked.
        var poweredOn = false
        while true {
            let waiting = await world.hub.waitingCount(for: page)
            if poweredOn, waiting == 0 { break }
            guard let text = await world.hub.next(for: page) else { break }
            if text.contains("poweredOn") { poweredOn = true }
        }
        // Far more states than the outbox holds: one place, the newest, in the order it first came.
        for index in 0..<1_000 { await world.hub.publishScreen("counter", #"{"n":\#(index)}"#) }
        await world.hub.publishScreen("other", #"{"o":1}"#)
        await world.hub.publishScreen("counter", #"{"n":"last"}"#)
        #expect(await !world.hub.wasTooSlow(page))
        #expect(await world.hub.next(for: page) == #"{"n":"last"}"#)
        #expect(await world.hub.next(for: page) == #"{"o":1}"#)
        // A writer waiting gets the next message as it comes; a cancelled wait ends with nil.
        async let next = world.hub.next(for: page)
        await world.hub.publishScreen("counter", #"{"n":"live"}"#)
        #expect(await next == #"{"n":"live"}"#)
        let waiting = Task { await world.hub.next(for: page) }
        waiting.cancel()
        #expect(await waiting.value == nil)
        // A page opened now is greeted with each screen's newest state.
        let second = try #require(await world.hub.join())
        let greeting = try await within(10, "the greeting") { () -> [String] in
            var greeting: [String] = []
            while greeting.last != #"{"o":1}"#, let text = await world.hub.next(for: second) { greeting.append(text) }
            return greeting
        }
        #expect(greeting.suffix(2) == [#"{"n":"live"}"#, #"{"o":1}"#])
        await world.hub.leave(second)
        await world.hub.leave(page)
        await world.hub.stop()
    }

    @Test func pagesBeyondTheLimitAreRefused() async throws {
        let world = await StudioWorld(maximumClients: 2)
        #expect(await world.hub.join() != nil)
        #expect(await world.hub.join() != nil)
        #expect(await world.hub.join() == nil)
        await world.hub.stop()
    }
}
#endif
