import Foundation
import Testing
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator

@Suite("FlockFinder emulator: emitters and the radio model")
struct EmulatorEmitterTests {
    @Test func macIsLowerCasedAndIsTheIdentity() {
        let emitter = FlockEmitter(mac: "70:C9:4E:AA:BB:CC", kind: .wifiAccessPoint(ssid: "x", channel: 1), distance: 1)
        #expect(emitter.mac == "70:c9:4e:aa:bb:cc")
        #expect(emitter.id == emitter.mac)
        #expect(emitter.isWiFi && emitter.channel == 1)
        #expect(!FlockEmitter.ordinaryBLE().isWiFi && FlockEmitter.ordinaryBLE().channel == nil)
    }

    @Test func distanceIsInterpolatedAlongThePath() {
        let emitter = FlockEmitter(mac: "02:00:00:00:00:01", kind: .wifiProbe(ssid: "", channel: 1), path: [
            .init(at: .seconds(10), distance: 40),
            .init(at: .seconds(2), distance: 100),
            .init(at: .seconds(12), distance: FlockEmitter.outOfRange),
            .init(at: .seconds(20), distance: 5),
        ])
        #expect(emitter.path.map(\.at) == [.seconds(2), .seconds(10), .seconds(12), .seconds(20)])
        #expect(emitter.distance(at: .zero) == 100)
        #expect(emitter.distance(at: .seconds(6)) == 70)
        #expect(emitter.distance(at: .seconds(10)) == 40)
        // Towards or away from "out of range" the earlier value holds until the next waypoint.
        #expect(emitter.distance(at: .seconds(11)) == 40)
        #expect(emitter.distance(at: .seconds(15)) == .infinity)
        #expect(emitter.distance(at: .seconds(20)) == 5)
        #expect(emitter.distance(at: .seconds(99)) == 5)
        #expect(FlockEmitter(mac: "02:00:00:00:00:02", kind: .wifiProbe(ssid: "", channel: 1), path: []).distance(at: .zero) == .infinity)
    }

    @Test func aDriveByComesClosestAtThePassTime() {
        let path = FlockEmitter.driveBy(closest: 5, at: .seconds(10), speed: 20, range: 100)
        let emitter = FlockEmitter.flockCamera(path: path)
        #expect(emitter.distance(at: .seconds(10)) == 5)
        #expect(abs(emitter.distance(at: .seconds(12)) - (25.0 + 1600).squareRoot()) < 1e-9)
        #expect(emitter.distance(at: .zero) >= 100)
        #expect(emitter.distance(at: .seconds(30)) >= 100)
        #expect(path.allSatisfy { $0.at >= .zero })
        let closest = path.min { $0.distance < $1.distance }
        #expect(closest?.at == .seconds(10))
    }

    @Test func theScenarioEmittersMatchTheFirmwareRules() {
        func type(_ emitter: FlockEmitter) -> String? {
            switch emitter.kind {
            case .wifiAccessPoint(let ssid, _), .wifiProbe(let ssid, _):
                FlockFirmwareHeuristics.wifiType(ssid: ssid, mac: emitter.mac)?.name
            case .bleDevice(let name, let services):
                FlockFirmwareHeuristics.bleType(name: name, mac: emitter.mac, serviceUUIDs: services)?.name
            }
        }
        #expect(type(.flockCamera()) == "Flock Safety")
        #expect(type(.flockCamera(ssid: "ordinary")) == "Flock Safety")
        #expect(type(.penguin()) == "Penguin")
        #expect(type(.pigvision()) == "Pigvision")
        #expect(type(.fsExtBattery()) == "Flock Safety")
        #expect(type(.fsExtBattery(mac: "02:00:00:00:00:09")) == "Flock Safety")
        #expect(type(.fsExtBattery(name: "")) == "Flock Safety")
        #expect(type(.raven()) == "Raven (Gunshot Detector)")
        #expect(type(.brandedCamera(name: "Eufy Indoor")) == "Eufy")
        #expect(type(.ordinaryAccessPoint()) == nil)
        #expect(type(.ordinaryBLE()) == nil)
    }

    @Test func theRadioModelFadesWithDistanceAndCutsOffAt80Metres() {
        #expect(FlockFinderEmulator.meanRSSI(distance: 1) == -45)
        #expect(FlockFinderEmulator.meanRSSI(distance: 10) == -70)
        #expect(FlockFinderEmulator.meanRSSI(distance: FlockFinderEmulator.maximumRange) > Double(FlockFinderEmulator.rssiThreshold))
        #expect(Proximity(rssi: Int(FlockFinderEmulator.meanRSSI(distance: 1.5))) == .veryClose)
        #expect(Proximity(rssi: Int(FlockFinderEmulator.meanRSSI(distance: 5))) == .close)
        #expect(Proximity(rssi: Int(FlockFinderEmulator.meanRSSI(distance: 20))) == .medium)
        #expect(Proximity(rssi: Int(FlockFinderEmulator.meanRSSI(distance: 60))) == .far)
    }

    @Test func theSameSeedReplaysTheSameRSSIs() async throws {
        func run() async throws -> [Int] {
            let world = await EmulatorFlockWorld(seed: 99)
            try await world.connect()
            // Streaming first: the noise is drawn per emitter heard, from the first scan after `add`.
            try await world.send(.streamOn)
            await world.add(.flockCamera(path: FlockEmitter.fixed(30)))
            try await world.advance(.seconds(3))
            return Array(await world.log.stream.events("wifi_scan").compactMap { $0["rssi"] as? Int }.prefix(5))
        }
        let first = try await run(), second = try await run()
        #expect(first.count == 5)
        #expect(first == second)
        #expect(Set(first).count > 1)
        // 30 m: −81.9 dBm mean, ±3 dB of noise.
        #expect(first.allSatisfy { (-85)...(-79) ~= $0 })
    }
}
