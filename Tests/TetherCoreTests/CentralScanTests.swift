import Foundation
import Testing
@testable import TetherCore

/// A driver whose scan replays given discoveries: the central's own reporting rules, alone.
private final class ReplayDriver: BLEDriver, @unchecked Sendable {
    let events: AsyncStream<BLEDriverEvent>
    private let continuation: AsyncStream<BLEDriverEvent>.Continuation
    private let discoveries: [DiscoveredPeripheral]
    let name = "replay"
    let supportsAutoReconnect = false

    init(_ discoveries: [DiscoveredPeripheral]) {
        (events, continuation) = AsyncStream.makeStream(of: BLEDriverEvent.self)
        self.discoveries = discoveries
        continuation.yield(.stateChanged(.poweredOn))
    }

    func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) async {
        for discovery in discoveries { continuation.yield(.discovered(discovery)) }
    }
    func stopScan() async {}
    func connect(_ peripheral: PeripheralID, options: ConnectOptions) async {}
    func cancelConnection(_ peripheral: PeripheralID) async {}
    func discoverServices(_ services: [BluetoothUUID]?, on peripheral: PeripheralID) async {}
    func discoverCharacteristics(_ characteristics: [BluetoothUUID]?, for service: BluetoothUUID, on peripheral: PeripheralID) async {}
    func setNotifyValue(_ enabled: Bool, for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {}
    func readValue(for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {}
    func writeValue(_ data: Data, for characteristic: CharacteristicPath, type: WriteType, on peripheral: PeripheralID) async {}
    func readRSSI(on peripheral: PeripheralID) async {}
    func maximumWriteValueLength(for type: WriteType, on peripheral: PeripheralID) async -> Int { 20 }
    func canSendWriteWithoutResponse(on peripheral: PeripheralID) async -> Bool { true }
}

@Suite("Central scan reporting")
struct CentralScanTests {
    @Test func aPeripheralIsReportedAgainOnlyWhenItSaysMore() async throws {
        let id = PeripheralID(UUID())
        let service = BluetoothUUID(UInt16(0x180D))
        let bare = DiscoveredPeripheral(id: id, advertisement: AdvertisementData(), rssi: -60)
        let named = DiscoveredPeripheral(id: id, name: "Strap", advertisement: AdvertisementData(localName: "Strap"), rssi: -61)
        let full = DiscoveredPeripheral(id: id, name: "Strap", advertisement: AdvertisementData(localName: "Strap", serviceUUIDs: [service]), rssi: -58)
        // Only RSSI changes: not news. Fields arriving one by one (BlueZ) or a scan response: news.
        let driver = ReplayDriver([bare, bare, named, named, full, full])
        let central = Central(driver: driver)
        await central.start()
        try await central.requirePoweredOn()
        var seen: [DiscoveredPeripheral] = []
        for await found in try await central.scan(filter: .any, timeout: .seconds(10)) {
            seen.append(found)
            if seen.count == 3 { break }
        }
        #expect(seen.map(\.advertisement) == [bare.advertisement, named.advertisement, full.advertisement])
    }

    @Test func aFilterSeesThePeripheralOnceItsServicesArrive() async throws {
        let id = PeripheralID(UUID())
        let service = BluetoothUUID(UInt16(0xFEAA))
        let nameFirst = DiscoveredPeripheral(id: id, name: "Det", advertisement: AdvertisementData(localName: "Det"), rssi: -50)
        let withService = DiscoveredPeripheral(id: id, name: "Det", advertisement: AdvertisementData(localName: "Det", serviceUUIDs: [service]), rssi: -50)
        let driver = ReplayDriver([nameFirst, withService])
        let central = Central(driver: driver)
        await central.start()
        let found = try await central.discover(filter: ScanFilter(services: [service]), timeout: .seconds(10))
        #expect(found.advertisement.serviceUUIDs == [service])
    }
}
