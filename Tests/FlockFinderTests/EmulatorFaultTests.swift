import Foundation
import Testing
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator

@Suite("FlockFinder emulator: faults", .timeLimit(.minutes(3)))
struct EmulatorFaultTests {
    @Test func aTruncatedDetectionIsAPrefixOfTheLastDetectionsJSON() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.add(.flockCamera())
        try await world.detections(atLeast: 1)
        await world.emulator { $0.sendTruncatedDetection() }
        let received = try await world.detections(atLeast: 2)
        let full = received[0].value
        #expect(received[1].value.count == full.count * 2 / 3)
        #expect(full.starts(with: received[1].value))
        #expect(received[1].object == nil)
        #expect(received[1].text?.hasPrefix("{\"type\":\"Flock Safety\",") == true)
        // A fault is not a detection the firmware made.
        #expect(await world.emulator { $0.detectionsSent.count } == 1)
    }

    @Test func aTruncatedDetectionBeforeAnyRealOneIsStillAFlockPrefix() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.emulator { $0.sendTruncatedDetection() }
        let received = try await world.detections(atLeast: 1)
        #expect(received[0].text?.hasPrefix("{\"type\":\"Flock Safety\",\"mac\":\"") == true)
        #expect(received[0].object == nil)
    }

    @Test func garbageIsNeitherUTF8NorJSON() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.emulator { $0.sendGarbage() }
        await world.emulator { $0.sendGarbage() }
        let received = try await world.detections(atLeast: 2)
        for entry in received {
            #expect(entry.value.first == 0xFF)
            #expect((12...40).contains(entry.value.count))
            #expect(entry.text == nil)
            #expect(entry.object == nil)
        }
        #expect(received[0].value != received[1].value)
    }

    @Test func aBurstArrivesAsThatManyNotificationsBackToBack() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        let start = world.now
        await world.emulator { $0.burst(20) }
        let received = try await world.detections(atLeast: 20)
        #expect(received.count == 20)
        // Four notifications per 30 ms connection event: all within about 150 ms.
        #expect(received.last!.at - start <= .milliseconds(200))
        let objects = received.objects
        #expect(objects.count == 20)
        #expect(objects.allSatisfy { $0["type"] as? String == "Flock Safety" && $0["confidence"] as? Double == 0.9 })
        let macs = objects.compactMap { $0["mac"] as? String }
        #expect(Set(macs).count == 20)
        #expect(macs.allSatisfy { FlockFirmwareHeuristics.flockWiFiOUIs.contains(String($0.prefix(8))) })
        #expect(Set(objects.compactMap { $0["ts"] as? Int }).count == 1)
        #expect(await world.emulator { $0.counters.wifi } == 20)
        #expect(await world.emulator { $0.detectionsSent.map { $0.firmwareJSON() } } == received.map(\.value))
    }

    @Test func aBurstBeyondTheNotificationQueueIsCutShort() async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        await world.emulator { $0.burst(100) }
        try await world.advance(.seconds(1))
        // NimBLE-style: the link queues 64 notifications; the rest fail and are counted.
        #expect(await world.log.detections.count == 64)
        #expect(await world.emulator { $0.notificationsDropped } == 36)
        #expect(await world.emulator { $0.detectionsSent.count } == 64)
        #expect(await world.emulator { $0.counters.wifi } == 100)
    }

    @Test func faultsAreSilentWithoutASubscription() async throws {
        let world = await EmulatorFlockWorld(subscribe: [])
        try await world.connect()
        await world.emulator { emulator in
            emulator.sendGarbage()
            emulator.sendTruncatedDetection()
            emulator.burst(3)
        }
        try await world.advance(.seconds(1))
        #expect(await world.log.detections.isEmpty)
        #expect(await world.emulator { $0.notificationsDropped } == 0)
    }
}
