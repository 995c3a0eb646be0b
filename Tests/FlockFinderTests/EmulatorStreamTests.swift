import Foundation
import Testing
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator

@Suite("FlockFinder emulator: stream and commands", .timeLimit(.minutes(3)))
struct EmulatorStreamTests {
    @Test func streamRunsFromStreamOnToStreamOff() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.ordinaryAccessPoint(), .ordinaryBLE())
        try await world.advance(.seconds(2))
        #expect(await world.log.stream.isEmpty)
        #expect(await world.emulator { $0.streaming } == false)

        try await world.send(.streamOn)
        #expect(await world.emulator { $0.streaming })
        try await world.advance(.seconds(3))
        try await world.send(.streamOff)
        #expect(await world.emulator { $0.streaming } == false)
        try await world.advance(.milliseconds(200))
        let count = await world.log.stream.count
        try await world.advance(.seconds(3))
        #expect(await world.log.stream.count == count)

        let stream = await world.log.stream
        let channels = stream.events("channel")
        #expect(channels.count >= 6 && channels.count <= 7)
        // One wifi_scan and one ble_scan per scan, after that scan's channel event.
        #expect(stream.events("wifi_scan").count == channels.count)
        #expect(stream.events("ble_scan").count == channels.count)
        #expect(stream.objects.first?["evt"] as? String == "channel")
        #expect(await world.emulator { $0.streamEventsSent.count } == stream.count)
        #expect(await world.log.detections.isEmpty)
    }

    @Test func streamEventsAreTheFirmwareJSON() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(
            .ordinaryAccessPoint(mac: "A4:2B:B0:11:22:33", ssid: "HomeNetwork-2G", channel: 6),
            FlockEmitter(mac: "de:ad:be:ef:00:01", kind: .wifiProbe(ssid: "Flock-probe", channel: 11), distance: 3),
            .ordinaryBLE(mac: "f4:f5:d8:01:02:03", name: "Pixel Buds"),
            .ordinaryBLE(mac: "f4:f5:d8:01:02:04", name: "", serviceUUIDs: []))
        try await world.advance(.seconds(2))

        let sent = await world.emulator { $0.streamEventsSent }
        let texts = await world.log.stream.compactMap(\.text)
        #expect(texts == sent.map { String(decoding: $0.firmwareJSON(), as: UTF8.self) })
        let beacon = try #require(sent.first { if case .wifiScan(_, "a4:2b:b0:11:22:33", _, _, _, _) = $0 { true } else { false } })
        guard case let .wifiScan(_, _, rssi, _, _, ts) = beacon else { Issue.record("not a wifi_scan"); return }
        #expect(texts.contains("{\"evt\":\"wifi_scan\",\"ssid\":\"HomeNetwork-2G\",\"mac\":\"a4:2b:b0:11:22:33\",\"rssi\":\(rssi),\"ch\":6,\"type\":\"beacon\",\"ts\":\(ts)}"))
        #expect(texts.contains { $0.hasPrefix("{\"evt\":\"wifi_scan\",\"ssid\":\"Flock-probe\",\"mac\":\"de:ad:be:ef:00:01\",") && $0.contains(",\"ch\":11,\"type\":\"probe\",") })
        #expect(texts.contains { $0.hasPrefix("{\"evt\":\"ble_scan\",\"name\":\"Pixel Buds\",\"mac\":\"f4:f5:d8:01:02:03\",") && $0.contains(",\"svc\":true,") })
        #expect(texts.contains { $0.hasPrefix("{\"evt\":\"ble_scan\",\"name\":\"\",\"mac\":\"f4:f5:d8:01:02:04\",") && $0.contains(",\"svc\":false,") })
        // The probe for a Flock SSID is also a detection.
        #expect(await world.log.detections.count == 1)
    }

    @Test func theSnifferHopsChannelsOneToThirteenEachScan() async throws {
        let world = await EmulatorFlockWorld(scanInterval: .milliseconds(200))
        try await world.connect()
        try await world.send(.streamOn)
        try await world.advance(.seconds(7))
        let events = await world.log.stream.events("channel")
        let channels = events.compactMap { $0["ch"] as? Int }
        let stamps = events.compactMap { $0["ts"] as? Int }
        #expect(channels.count >= 30)
        #expect(zip(channels, channels.dropFirst()).allSatisfy { $1 == $0 % 13 + 1 })
        #expect(Set(channels) == Set(1...13))
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $1 - $0 == 200 })
    }

    @Test func listeningOnTheCurrentChannelOnlyHearsAnAccessPointOncePerHopCycle() async throws {
        let world = await EmulatorFlockWorld()
        await world.emulator { $0.listensOnCurrentChannelOnly = true }
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(.flockCamera(channel: 6), .raven())
        try await world.advance(.seconds(14))
        let stream = await world.log.stream.objects
        let wifi = stream.filter { $0["evt"] as? String == "wifi_scan" }
        #expect(wifi.count >= 2 && wifi.count <= 3)
        // Each beacon arrives right after the hop to channel 6.
        for (index, event) in stream.enumerated() where event["evt"] as? String == "wifi_scan" {
            #expect(stream[..<index].last { $0["evt"] as? String == "channel" }?["ch"] as? Int == 6)
        }
        // BLE does not hop: the Raven is heard on every scan.
        #expect(stream.filter { $0["evt"] as? String == "ble_scan" }.count >= 26)
        // The camera is reported only from scans on its channel.
        let hopsToSix = Set(stream.filter { $0["evt"] as? String == "channel" && $0["ch"] as? Int == 6 }.compactMap { $0["ts"] as? Int })
        let flock = await world.emulator { $0.detectionsSent.filter { $0.type == .flockSafety } }
        #expect(!flock.isEmpty)
        #expect(flock.allSatisfy { hopsToSix.contains(Int($0.deviceUptimeMs ?? 0)) })
    }

    @Test func pingIsAnsweredWithAPongStatusEvenWhenNotStreaming() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.ping)
        let reply = try await world.streamEvent { $0["evt"] as? String == "status" }
        let ts = await world.emulator { $0.streamEventsSent.first?.ts }
        #expect(reply.text == "{\"evt\":\"status\",\"msg\":\"pong\",\"ts\":\(ts ?? 0)}")
        #expect(await world.emulator { $0.streaming } == false)
        try await world.advance(.seconds(2))
        #expect(await world.log.stream.count == 1)
    }

    @Test func statusReportsTheCounters() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.flockCamera(), .fsExtBattery(), .raven())
        try await world.detections(atLeast: 3)
        try await world.send(.status)
        let reply = try await world.streamEvent { $0["evt"] as? String == "status" }
        let message = try #require(reply.object?["msg"] as? String)
        #expect(message.hasPrefix("wifi=1 ble=2 ch="))
        #expect(message.hasSuffix(" streaming=off"))
    }

    @Test func resetClearsTheCounters() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        let leaving = [FlockEmitter.Waypoint(at: .zero, distance: 10), FlockEmitter.Waypoint(at: .seconds(2), distance: FlockEmitter.outOfRange)]
        await world.add(.flockCamera(path: leaving), .raven(path: leaving))
        try await world.advance(.seconds(3))
        #expect(await world.emulator { [$0.counters.wifi, $0.counters.ble] } == [1, 1])
        try await world.send(.reset)
        #expect(await world.emulator { [$0.counters.wifi, $0.counters.ble] } == [0, 0])
        try await world.send(.status)
        let reply = try await world.streamEvent { $0["evt"] as? String == "status" }
        #expect((reply.object?["msg"] as? String)?.hasPrefix("wifi=0 ble=0 ") == true)
        #expect(await world.log.detections.count == 2)
    }

    @Test func resetClearsTheCooldowns() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.flockCamera(path: FlockEmitter.fixed(10)))
        try await world.detections(atLeast: 1)
        try await world.advance(.seconds(2))
        #expect(await world.log.detections.count == 1)
        try await world.send(.reset)
        // Reported again at the next scan instead of 10 s after the first report.
        let received = try await world.detections(atLeast: 2, limit: .seconds(1))
        #expect(received[1].at - received[0].at < .seconds(4))
        #expect(await world.emulator { $0.counters.wifi } == 1)
    }

    @Test func unknownCommandsAreAcceptedAndIgnored() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.write(Data("reboot".utf8))
        try await world.write(Data("STREAM_ON".utf8))
        try await world.write(Data([0xFF, 0x00]))
        try await world.send(.streamOn)
        try await world.advance(.seconds(1))
        #expect(await world.emulator { $0.commandsReceived.prefix(2) } == ["reboot", "STREAM_ON"])
        #expect(await world.emulator { $0.commandsReceived.count } == 4)
        #expect(await world.emulator { $0.streaming })
        #expect(await world.log.stream.events("status").isEmpty)
    }

    @Test func streamingAndScanningSurviveADisconnection() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.streamOn)
        let connection = world.connection
        try await world.run { await connection.disconnect() }
        #expect(await world.emulator { $0.streaming })
        let before = await world.emulator { $0.scansCompleted }
        try await world.advance(.seconds(2))
        #expect(await world.emulator { $0.scansCompleted } >= before + 3)
    }
}
