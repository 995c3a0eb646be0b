import Foundation
import Testing
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator

@Suite("FlockFinder emulator: detections", .timeLimit(.minutes(3)))
struct EmulatorDetectionTests {
    @Test func advertisesAsFlockFinderS3WithTheService() async throws {
        let world = await EmulatorFlockWorld()
        let central = world.central
        let found = try await world.run {
            try await central.discover(filter: ScanFilter(services: [FlockFinderBLEConstants.serviceUUID]), timeout: .seconds(5))
        }
        #expect(found.id == world.id)
        #expect(found.name == "FlockFinder-S3")
        #expect(found.advertisement.localName == FlockFinderBLEConstants.advertisedName)
        try await world.connect()
        #expect(await world.radio.mtu(of: world.id) == 185)
    }

    @Test func drivingPastAFlockCameraYieldsOneDetectionWithTheFirmwareJSON() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.streamOn)
        // 20 m/s past a camera 5 m from the road: about 8 s within 80 m, under the 10 s cooldown.
        let camera = FlockEmitter.flockCamera(path: FlockEmitter.driveBy(closest: 5, at: .seconds(10), speed: 20))
        let start = world.now
        await world.add(camera)
        try await world.advance(.seconds(22))

        let detections = await world.log.detections
        try #require(detections.count == 1)
        let sent = try #require(await world.emulator { $0.detectionsSent.first })
        let ts = try #require(sent.deviceUptimeMs)
        let expected = "{\"type\":\"Flock Safety\",\"mac\":\"70:c9:4e:3a:21:07\",\"ssid\":\"Flock-3A2107\","
            + "\"rssi\":\(sent.rssi),\"confidence\":0.9,\"ts\":\(ts)}"
        #expect(detections[0].text == expected)
        #expect(detections[0].value == sent.firmwareJSON())
        // ts is uptime in ms (time since the radio started); the camera comes within 80 m
        // 4 s before the pass, 6 s after it was added.
        let heardAt = Duration.milliseconds(Int64(ts))
        #expect(heardAt >= start + .seconds(6) && heardAt < start + .seconds(8))
        #expect(detections[0].at >= heardAt && detections[0].at < heardAt + .milliseconds(200))
        #expect(sent.proximity == .far)

        // The stream shows the car approaching and leaving: far, then close, then far again.
        let rssis = await world.log.stream.events("wifi_scan")
            .filter { $0["mac"] as? String == camera.mac }
            .compactMap { $0["rssi"] as? Int }
        #expect(rssis.count >= 12)
        let peak = try #require(rssis.indices.max { rssis[$0] < rssis[$1] })
        #expect(peak > 3 && peak < rssis.count - 4)
        #expect(Proximity(rssi: rssis[peak]) == .close)
        #expect(Proximity(rssi: rssis[0]) == .far && Proximity(rssi: rssis[rssis.count - 1]) == .far)
        let rising = rssis[..<peak].enumerated().filter { $0.offset > 0 }.map { rssis[$0.offset] - rssis[$0.offset - 1] }
        let falling = rssis[peak...].enumerated().filter { $0.offset > 0 }.map { rssis[peak + $0.offset] - rssis[peak + $0.offset - 1] }
        #expect(rising.reduce(0, +) >= 15 && falling.reduce(0, +) <= -15)
        #expect(await world.emulator { $0.counters.wifi } == 1)
    }

    @Test func aSlowerDriveIsReportedAgainOnceTheCooldownHasPassed() async throws {
        let world = await EmulatorFlockWorld(cooldown: .seconds(4))
        try await world.connect()
        await world.add(.flockCamera(path: FlockEmitter.driveBy(closest: 8, at: .seconds(10), speed: 10)))
        try await world.advance(.seconds(22))
        let sent = await world.emulator { $0.detectionsSent }
        // About 16 s in range with a 4 s cooldown: the RSSI of successive reports tracks the pass.
        #expect(sent.count >= 4 && sent.count <= 5)
        let gaps = zip(sent, sent.dropFirst()).map { ($1.deviceUptimeMs ?? 0) - ($0.deviceUptimeMs ?? 0) }
        #expect(gaps.allSatisfy { $0 >= 4_000 && $0 <= 4_500 })
        let rssis = sent.map(\.rssi)
        #expect(rssis.max()! > rssis.first! + 10 && rssis.max()! > rssis.last! + 10)
    }

    @Test func aStationaryCameraIsReportedOncePerCooldown() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.flockCamera(path: FlockEmitter.fixed(10)))
        try await world.advance(.seconds(25))
        let sent = await world.emulator { $0.detectionsSent }
        #expect(sent.count == 3)
        let stamps = sent.compactMap(\.deviceUptimeMs)
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $1 - $0 == 10_000 })
        #expect(await world.log.detections.count == 3)
    }

    @Test func eachEmitterHasItsOwnCooldown() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.flockCamera(), .penguin(), .raven(), .ordinaryAccessPoint())
        try await world.advance(.seconds(3))
        let sent = await world.emulator { $0.detectionsSent }
        #expect(Set(sent.map(\.type.name)) == ["Flock Safety", "Penguin", "Raven (Gunshot Detector)"])
        #expect(sent.count == 3)
        #expect(await world.emulator { ($0.counters.wifi, $0.counters.ble) } == (2, 1))
    }

    @Test func bleDetectionsCarryTheNameAndConfidence085() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.brandedCamera(name: "Ring Doorbell Pro", mac: "A4:83:E7:AB:CD:EF"))
        let received = try await world.detections(atLeast: 1)
        let object = try #require(received[0].object)
        #expect(object["type"] as? String == "Ring")
        #expect(object["mac"] as? String == "a4:83:e7:ab:cd:ef")
        #expect(object["ssid"] as? String == "Ring Doorbell Pro")
        #expect(received[0].text?.contains("\"confidence\":0.85,") == true)
        #expect(Array(object.keys).sorted() == ["confidence", "mac", "rssi", "ssid", "ts", "type"])
    }

    @Test func anUnnamedRavenSendsAnEmptySSID() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.raven())
        let received = try await world.detections(atLeast: 1)
        #expect(received[0].text?.hasPrefix("{\"type\":\"Raven (Gunshot Detector)\",\"mac\":\"12:34:56:ab:cd:ef\",\"ssid\":\"\",\"rssi\":") == true)
    }

    @Test func emittersBeyondRangeOrOnAnEmptyPathAreNeverHeard() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(
            .flockCamera(mac: "70:c9:4e:00:00:01", path: FlockEmitter.fixed(81)),
            .flockCamera(mac: "70:c9:4e:00:00:02", path: FlockEmitter.fixed(FlockEmitter.outOfRange)),
            .flockCamera(mac: "70:c9:4e:00:00:03", path: []))
        try await world.advance(.seconds(3))
        #expect(await world.log.detections.isEmpty)
        #expect(await world.log.stream.events("wifi_scan").isEmpty)
        #expect(await world.emulator { $0.counters.wifi } == 0)
    }

    @Test func nothingIsNotifiedWithoutASubscriptionButTheFirmwareStillCounts() async throws {
        let world = await EmulatorFlockWorld(subscribe: [])
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(.flockCamera(), .raven())
        try await world.advance(.seconds(3))
        #expect(await world.emulator { ($0.counters.wifi, $0.counters.ble) } == (1, 1))
        #expect(await world.emulator { $0.detectionsSent.isEmpty && $0.streamEventsSent.isEmpty })
        #expect(await world.emulator { $0.notificationsDropped } == 0)
        #expect(await world.log.detections.isEmpty)
        #expect(await world.log.stream.isEmpty)
    }

    @Test func streamSubscriptionAloneGetsNoDetections() async throws {
        let world = await EmulatorFlockWorld(subscribe: [FlockFinderBLEConstants.stream])
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(.flockCamera())
        try await world.advance(.seconds(2))
        #expect(await world.log.detections.isEmpty)
        #expect(await !world.log.stream.events("wifi_scan").isEmpty)
        #expect(await world.emulator { $0.counters.wifi } == 1)
    }

    @Test func theDeviceScansBeforeAnyoneConnects() async throws {
        let world = await EmulatorFlockWorld()
        let timeline = world.radio.timeline
        await world.emulator { $0.powerOn(timeline) }
        await world.add(.flockCamera())
        try await world.advance(.seconds(2))
        #expect(await (3...4).contains(world.emulator { $0.scansCompleted }))
        #expect(await world.emulator { $0.counters.wifi } == 1)
        #expect(await world.emulator { $0.detectionsSent.isEmpty })
        #expect(await (2_000..<2_050).contains(world.emulator { $0.uptimeMs }))
        // Connecting does not restart the clock or the cooldown.
        try await world.connect()
        try await world.advance(.seconds(2))
        #expect(await world.log.detections.isEmpty)
        #expect(await world.emulator { $0.counters.wifi } == 1)
    }

    @Test func theLinkTruncatesAJSONLongerThanMTUMinus3() async throws {
        let world = await EmulatorFlockWorld(centralMaximumMTU: 64)
        try await world.connect()
        await world.add(.flockCamera())
        let received = try await world.detections(atLeast: 1)
        let sent = try #require(await world.emulator { $0.detectionsSent.first })
        #expect(received.count == 1)
        #expect(received[0].value == sent.firmwareJSON().prefix(61))
        #expect(received[0].object == nil)
    }
}
