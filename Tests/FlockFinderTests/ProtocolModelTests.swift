import Foundation
import Testing
import TetherCore

@testable import FlockFinder

@Suite("FlockFinder constants, types, proximity and commands")
struct ProtocolModelTests {
    // MARK: - Constants

    @Test func uuidsMatchTheSpec() {
        #expect(FlockFinderBLEConstants.serviceUUID == BluetoothUUID("4fafc201-1fb5-459e-8fcc-c5c9c331914b"))
        #expect(FlockFinderBLEConstants.detectionUUID == BluetoothUUID("beb5483e-36e1-4688-b7f5-ea07361b26a8"))
        #expect(FlockFinderBLEConstants.commandUUID == BluetoothUUID("beb5483e-36e1-4688-b7f5-ea07361b26a9"))
        #expect(FlockFinderBLEConstants.streamUUID == BluetoothUUID("beb5483e-36e1-4688-b7f5-ea07361b26aa"))
        #expect(FlockFinderBLEConstants.detection
            == CharacteristicPath(service: FlockFinderBLEConstants.serviceUUID, characteristic: FlockFinderBLEConstants.detectionUUID))
        #expect(FlockFinderBLEConstants.command.characteristic == FlockFinderBLEConstants.commandUUID)
        #expect(FlockFinderBLEConstants.stream.characteristic == FlockFinderBLEConstants.streamUUID)
        #expect(Set([FlockFinderBLEConstants.detection, FlockFinderBLEConstants.command, FlockFinderBLEConstants.stream]).count == 3)
        #expect(FlockFinderBLEConstants.advertisedName == "FlockFinder-S3")
        #expect(FlockFinderBLEConstants.deviceNamePatterns == ["flockfinder", "flock", "feather", "esp32", "s3"])
        #expect(FlockFinderBLEConstants.maxPayloadBytes == 1024)
    }

    @Test func namePatternsMatchCaseInsensitively() {
        #expect(FlockFinderBLEConstants.nameMatches("FlockFinder-S3"))
        #expect(FlockFinderBLEConstants.nameMatches("ESP32-Dev"))
        #expect(FlockFinderBLEConstants.nameMatches("Adafruit FEATHER"))
        #expect(!FlockFinderBLEConstants.nameMatches("GripFit"))
        #expect(!FlockFinderBLEConstants.nameMatches(""))
    }

    // MARK: - Types

    @Test func thereAreThirteenKnownTypesWithDistinctNames() {
        #expect(DetectionType.known.count == 13)
        #expect(DetectionType.known.map(\.name) == [
            "Flock Safety", "Verkada", "Lorex", "Reolink", "Axis", "Hikvision", "Dahua",
            "Ring", "Nest", "Arlo", "Wyze", "Eufy", "Unknown",
        ])
        #expect(DetectionType.known.allSatisfy { $0.isKnown })
        #expect(!DetectionType.other("Penguin").isKnown)
    }

    @Test(arguments: DetectionType.known)
    func knownNamesRoundTripCaseInsensitively(_ type: DetectionType) {
        #expect(DetectionType(name: type.name) == type)
        #expect(DetectionType(name: type.name.lowercased()) == type)
        #expect(DetectionType(name: type.name.uppercased()) == type)
        #expect(type.description == type.name)
    }

    @Test func otherNamesAreKeptVerbatim() {
        #expect(DetectionType(name: "Raven (Gunshot Detector)") == .other("Raven (Gunshot Detector)"))
        #expect(DetectionType(name: "pigvision").name == "pigvision")
        #expect(DetectionType(name: "Flock") == .other("Flock"))
        #expect(DetectionType(name: "") == .other(""))
    }

    @Test func typesCodeAsTheirName() throws {
        let types: [DetectionType] = [.flockSafety, .unknown, .other("Penguin")]
        let data = try JSONEncoder().encode(types)
        #expect(String(decoding: data, as: UTF8.self) == #"["Flock Safety","Unknown","Penguin"]"#)
        #expect(try JSONDecoder().decode([DetectionType].self, from: data) == types)
        #expect(try JSONDecoder().decode([DetectionType].self, from: Data(#"["ring"]"#.utf8)) == [.ring])
    }

    @Test func detectionsCodeRoundTrip() throws {
        let detection = Detection(type: .other("Penguin"), rssi: -70, confidence: 0.9, mac: "aa", ssid: "s", deviceUptimeMs: 5)
        let data = try JSONEncoder().encode(detection)
        #expect(try JSONDecoder().decode(Detection.self, from: data) == detection)
    }

    // MARK: - Proximity

    @Test(arguments: [
        (Int.max, Proximity.veryClose), (0, .veryClose), (-29, .veryClose), (-30, .veryClose), (-50, .veryClose),
        (-51, .close), (-60, .close), (-70, .close),
        (-71, .medium), (-85, .medium),
        (-86, .far), (-100, .far), (-101, .far), (Int.min, .far),
    ])
    func proximityBoundariesBelongToTheNearerBand(_ rssi: Int, _ expected: Proximity) {
        #expect(Proximity(rssi: rssi) == expected)
        #expect(Detection(type: .ring, rssi: rssi, confidence: 1).proximity == expected)
    }

    @Test func proximityHasLabelsAndDistances() {
        #expect(Proximity.allCases.map(\.rawValue) == ["veryClose", "close", "medium", "far"])
        #expect(Proximity.allCases.map(\.label) == ["Very close", "Close", "Medium", "Far"])
        #expect(Proximity.allCases.map(\.distance) == ["< 2 m", "2-10 m", "10-30 m", "> 30 m"])
    }

    // MARK: - Commands

    @Test func commandsAreBareUTF8() {
        #expect(FlockCommand.ping.data == Data([0x50, 0x49, 0x4E, 0x47]))
        #expect(FlockCommand.status.data == Data("STATUS".utf8))
        #expect(FlockCommand.reset.data == Data("RESET".utf8))
        #expect(FlockCommand.streamOn.data == Data("stream_on".utf8))
        #expect(FlockCommand.streamOff.data == Data("stream_off".utf8))
        #expect(FlockCommand.allCases.count == 5)
    }

    @Test(arguments: FlockCommand.allCases)
    func commandsDecodeFromTheirBytes(_ command: FlockCommand) {
        #expect(FlockCommand(data: command.data) == command)
        #expect(FlockCommand(data: command.data + Data("\r\n".utf8)) == command)
        #expect(FlockCommand(data: command.data + Data([0])) == command)
    }

    @Test func unknownCommandBytesAreRejected() {
        #expect(FlockCommand(data: Data()) == nil)
        #expect(FlockCommand(data: Data("ping".utf8)) == nil)
        #expect(FlockCommand(data: Data("STREAM_ON".utf8)) == nil)
        #expect(FlockCommand(data: Data(" PING".utf8)) == nil)
        #expect(FlockCommand(data: Data([0xFF, 0x50])) == nil)
        #expect(FlockCommand(data: Data("\n".utf8)) == nil)
    }
}
