import Foundation
import Testing
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator

/// One emitter and what the firmware should make of it.
struct EmulatorHeuristicCase: Sendable, CustomTestStringConvertible {
    let label: String
    let emitter: FlockEmitter
    /// The expected type name, nil when the firmware must stay silent.
    let type: String?

    var testDescription: String { label }

    static func wifi(_ label: String, ssid: String, mac: String = "02:00:00:00:00:01", probe: Bool = false, _ type: String?) -> Self {
        let kind: FlockEmitter.Kind = probe ? .wifiProbe(ssid: ssid, channel: 3) : .wifiAccessPoint(ssid: ssid, channel: 3)
        return Self(label: label, emitter: FlockEmitter(mac: mac, kind: kind, distance: 12), type: type)
    }

    static func ble(_ label: String, name: String = "", mac: String = "02:00:00:00:00:02", services: [UInt16] = [], _ type: String?) -> Self {
        let kind = FlockEmitter.Kind.bleDevice(name: name, serviceUUIDs: services.map { BluetoothUUID($0) })
        return Self(label: label, emitter: FlockEmitter(mac: mac, kind: kind, distance: 6), type: type)
    }

    static let all: [Self] = [
        wifi("SSID flock lower case", ssid: "flock-lot-7", "Flock Safety"),
        wifi("SSID FLOCK upper case", ssid: "FLOCK CAM", "Flock Safety"),
        wifi("SSID FS Ext Battery any case", ssid: "my fs ext BATTERY", "Flock Safety"),
        wifi("SSID Penguin", ssid: "PENGUIN-22", "Penguin"),
        wifi("SSID Pigvision", ssid: "pigvision_4", "Pigvision"),
        wifi("probe request for a Flock SSID", ssid: "Flock-ABCDEF", probe: true, "Flock Safety"),
        wifi("Flock WiFi OUI, plain SSID", ssid: "cam", mac: "D8:F3:BC:10:20:30", "Flock Safety"),
        wifi("FS Ext Battery OUI, plain SSID", ssid: "x", mac: "b4:e3:f9:10:20:30", "Flock Safety"),
        wifi("Penguin SSID wins over a Flock OUI", ssid: "Penguin", mac: "70:c9:4e:00:00:09", "Penguin"),
        Self(label: "flockCamera()", emitter: .flockCamera(), type: "Flock Safety"),
        Self(label: "penguin()", emitter: .penguin(), type: "Penguin"),
        Self(label: "pigvision()", emitter: .pigvision(), type: "Pigvision"),
        Self(label: "fsExtBattery()", emitter: .fsExtBattery(), type: "Flock Safety"),
        Self(label: "raven()", emitter: .raven(), type: "Raven (Gunshot Detector)"),
        ble("Raven 0x3500 alone", services: [0x3500], "Raven (Gunshot Detector)"),
        ble("Raven 0x1819 among others", name: "unit", services: [0x180F, 0x1819], "Raven (Gunshot Detector)"),
        ble("Flock OUI over BLE", mac: "08:3A:88:01:02:03", "Flock Safety"),
        ble("FS Ext Battery OUI over BLE", mac: "cc:cc:cc:01:02:03", "Flock Safety"),
        ble("name FS Ext Battery", name: "FS Ext Battery", "Flock Safety"),
        ble("name Flock", name: "flock-relay", "Flock Safety"),
        ble("name Ring", name: "Ring Doorbell Pro", "Ring"),
        ble("name Nest", name: "Nest Cam", "Nest"),
        ble("name Arlo", name: "ARLO_PRO_4", "Arlo"),
        ble("name Wyze", name: "wyze cam v3", "Wyze"),
        Self(label: "ordinaryAccessPoint()", emitter: .ordinaryAccessPoint(), type: nil),
        Self(label: "ordinaryBLE()", emitter: .ordinaryBLE(), type: nil),
        wifi("SSID Flick", ssid: "Flick", nil),
        wifi("hidden SSID, ordinary OUI", ssid: "", nil),
        ble("brand inside a word", name: "Spring Speaker", nil),
        ble("Heart Rate service", name: "HRM", services: [0x180D], nil),
        ble("anonymous advertiser", nil),
    ]
}

@Suite("FlockFinder emulator: firmware heuristics", .timeLimit(.minutes(3)))
struct EmulatorHeuristicsTests {
    @Test(arguments: EmulatorHeuristicCase.all)
    func theFirmwareClassifiesWhatItHears(_ scenario: EmulatorHeuristicCase) async throws {
        let world = await EmulatorFlockWorld()
        try await world.connect()
        try await world.send(.streamOn)
        await world.add(scenario.emitter)
        try await world.advance(.seconds(2))

        // Heard either way: the stream reports every emitter in range.
        let heard = await world.log.stream.objects.filter { $0["mac"] as? String == scenario.emitter.mac }
        #expect(heard.count >= 3)
        let detections = await world.log.detections
        guard let type = scenario.type else {
            #expect(detections.isEmpty)
            #expect(await world.emulator { $0.counters.wifi + $0.counters.ble } == 0)
            return
        }
        try #require(detections.count == 1)
        let object = try #require(detections[0].object)
        #expect(object["type"] as? String == type)
        #expect(object["mac"] as? String == scenario.emitter.mac)
        #expect(object["confidence"] as? Double == (scenario.emitter.isWiFi ? 0.9 : 0.85))
        let counters = await world.emulator { [$0.counters.wifi, $0.counters.ble] }
        #expect(counters == (scenario.emitter.isWiFi ? [1, 0] : [0, 1]))
    }

    @Test func everyFlockAndBatteryOUIIsAWiFiHit() {
        let all = FlockFirmwareHeuristics.flockWiFiOUIs + FlockFirmwareHeuristics.fsExtBatteryOUIs
        #expect(all.count == 18)
        for oui in all {
            #expect(FlockFirmwareHeuristics.wifiType(ssid: "linksys", mac: oui + ":12:34:56") == .flockSafety)
            #expect(FlockFirmwareHeuristics.wifiType(ssid: "linksys", mac: oui.uppercased() + ":AB:CD:EF") == .flockSafety)
            #expect(FlockFirmwareHeuristics.bleType(name: "", mac: oui + ":12:34:56", serviceUUIDs: []) == .flockSafety)
        }
        #expect(FlockFirmwareHeuristics.wifiType(ssid: "linksys", mac: "70:c9:4f:12:34:56") == nil)
    }

    @Test func everyRavenServiceUUIDIsAHitOnItsOwn() {
        let shorts: [UInt16] = [0x180A, 0x3100, 0x3200, 0x3300, 0x3400, 0x3500, 0x1809, 0x1819]
        for short in shorts {
            let type = FlockFirmwareHeuristics.bleType(name: "", mac: "02:00:00:00:00:00", serviceUUIDs: [BluetoothUUID(short)])
            #expect(type?.name == "Raven (Gunshot Detector)")
        }
        #expect(FlockFirmwareHeuristics.bleType(name: "", mac: "02:00:00:00:00:00", serviceUUIDs: [BluetoothUUID(UInt16(0x3600))]) == nil)
    }

    @Test func ssidPatternsMatchInAnyCase() {
        for ssid in ["flock", "FLOCK", "xFlOcKx", "FS EXT BATTERY", "fs ext battery 2"] {
            #expect(FlockFirmwareHeuristics.wifiType(ssid: ssid, mac: "02:00:00:00:00:00") == .flockSafety)
        }
        #expect(FlockFirmwareHeuristics.wifiType(ssid: "penguin", mac: "02:00:00:00:00:00")?.name == "Penguin")
        #expect(FlockFirmwareHeuristics.wifiType(ssid: "PIGVISION", mac: "02:00:00:00:00:00")?.name == "Pigvision")
        #expect(FlockFirmwareHeuristics.wifiType(ssid: "FS Ext", mac: "02:00:00:00:00:00") == nil)
    }

    @Test func brandNamesGiveTheirKnownType() {
        for brand in FlockFirmwareHeuristics.cameraBrands {
            let type = FlockFirmwareHeuristics.bleType(name: "\(brand) Cam 2", mac: "02:00:00:00:00:00", serviceUUIDs: [])
            #expect(type == DetectionType(name: brand))
            #expect(type?.isKnown == true)
        }
        #expect(FlockFirmwareHeuristics.bleType(name: "Earring", mac: "02:00:00:00:00:00", serviceUUIDs: []) == nil)
    }
}
