import Foundation
import Testing

@testable import TetherCore

private let heartRate = BluetoothUUID(UInt16(0x180D))
private let battery = BluetoothUUID(UInt16(0x180F))
private let nordicUART: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"

private func peripheral(
    localName: String? = nil,
    gapName: String? = nil,
    services: [BluetoothUUID] = [],
    rssi: Int = -50
) -> DiscoveredPeripheral {
    DiscoveredPeripheral(
        id: PeripheralID(UUID(uuidString: "11111111-2222-3333-4444-555555555555")!),
        name: gapName,
        advertisement: AdvertisementData(localName: localName, serviceUUIDs: services),
        rssi: rssi)
}

@Suite("ScanFilter")
struct ScanFilterTests {
    // MARK: Services

    @Test("A service filter needs one of the listed services advertised")
    func serviceMatch() {
        let filter = ScanFilter(services: [heartRate, nordicUART])
        #expect(filter.matches(peripheral(services: [heartRate])))
        #expect(filter.matches(peripheral(services: [battery, nordicUART])))
        #expect(!filter.matches(peripheral(services: [battery])))
        #expect(!filter.matches(peripheral(services: [])))
    }

    @Test("Service matching treats short and long forms as equal")
    func serviceMatchLongForm() {
        let filter = ScanFilter(services: ["0000180D-0000-1000-8000-00805F9B34FB"])
        #expect(filter.matches(peripheral(services: [heartRate])))
    }

    // MARK: Names

    @Test(
        "NameMatch semantics",
        arguments: [
            // exact is case-sensitive
            (ScanFilter.NameMatch.exact("GripFit"), "GripFit", true),
            (.exact("GripFit"), "gripfit", false),
            (.exact("GripFit"), "GripFit 2", false),
            (.exact("GripFit"), "Grip", false),
            // prefix is case-sensitive
            (.prefix("Grip"), "GripFit-1234", true),
            (.prefix("Grip"), "Grip", true),
            (.prefix("Grip"), "gripFit", false),
            (.prefix("Grip"), "MyGripFit", false),
            // contains ignores case
            (.contains("fit"), "GripFit", true),
            (.contains("FIT"), "gripfit", true),
            (.contains("Fit"), "GRIPFIT-01", true),
            (.contains("fit"), "Grip", false),
            // containsAny ignores case and needs one hit
            (.containsAny(["mesh", "ble"]), "PocketMESH", true),
            (.containsAny(["mesh", "BLE"]), "my-ble-device", true),
            (.containsAny(["mesh", "ble"]), "GripFit", false),
            (.containsAny([]), "GripFit", false),
        ] as [(ScanFilter.NameMatch, String, Bool)])
    func nameMatch(condition: ScanFilter.NameMatch, name: String, expected: Bool) {
        #expect(condition.matches(name) == expected)
    }

    @Test(
        "No name never matches a name condition",
        arguments: [
            ScanFilter.NameMatch.exact(""), .prefix(""), .contains("a"), .containsAny(["a"]),
        ])
    func nilNameNeverMatches(condition: ScanFilter.NameMatch) {
        #expect(!condition.matches(nil))
        #expect(!ScanFilter(name: condition).matches(peripheral()))
    }

    @Test("The name is matched against the advertised local name and the GAP name")
    func nameSources() {
        let filter = ScanFilter(name: .prefix("Grip"))
        #expect(filter.matches(peripheral(localName: "GripFit")))
        #expect(filter.matches(peripheral(gapName: "GripFit")))
        #expect(filter.matches(peripheral(localName: "Other", gapName: "GripFit")))
        #expect(filter.matches(peripheral(localName: "GripFit", gapName: "Other")))
        #expect(!filter.matches(peripheral(localName: "Other", gapName: "Another")))
        #expect(!filter.matches(peripheral()))
    }

    // MARK: RSSI

    @Test(
        "minimumRSSI is inclusive",
        arguments: [(-69, true), (-70, true), (-71, false), (-100, false), (-30, true)])
    func minimumRSSI(rssi: Int, expected: Bool) {
        let filter = ScanFilter(minimumRSSI: -70)
        #expect(filter.matches(peripheral(rssi: rssi)) == expected)
    }

    @Test("A weak signal fails even when services and name match, in either/or mode too")
    func rssiOverridesEitherOr() {
        let strict = ScanFilter(services: [heartRate], name: .exact("HR"), minimumRSSI: -60)
        let either = ScanFilter(
            services: [heartRate], name: .exact("HR"), minimumRSSI: -60, matchServicesOrName: true)
        let weak = peripheral(localName: "HR", services: [heartRate], rssi: -61)
        let strong = peripheral(localName: "HR", services: [heartRate], rssi: -60)
        #expect(!strict.matches(weak))
        #expect(!either.matches(weak))
        #expect(strict.matches(strong))
        #expect(either.matches(strong))
    }

    // MARK: Combination

    @Test(
        "Services and name: both by default, either with matchServicesOrName",
        arguments: [
            // (has service, has name, expected AND, expected OR)
            (true, true, true, true),
            (true, false, false, true),
            (false, true, false, true),
            (false, false, false, false),
        ])
    func servicesAndName(hasService: Bool, hasName: Bool, expectedAnd: Bool, expectedOr: Bool) {
        let p = peripheral(
            localName: hasName ? "GripFit" : "Other",
            services: hasService ? [heartRate] : [battery])
        let both = ScanFilter(services: [heartRate], name: .contains("grip"))
        let either = ScanFilter(services: [heartRate], name: .contains("grip"), matchServicesOrName: true)
        #expect(both.matches(p) == expectedAnd)
        #expect(either.matches(p) == expectedOr)
    }

    @Test("matchServicesOrName without a name still requires the service")
    func eitherOrWithoutName() {
        let filter = ScanFilter(services: [heartRate], matchServicesOrName: true)
        #expect(filter.matches(peripheral(services: [heartRate])))
        #expect(!filter.matches(peripheral(localName: "anything", services: [battery])))
    }

    @Test("matchServicesOrName without services still requires the name")
    func eitherOrWithoutServices() {
        let filter = ScanFilter(name: .exact("GripFit"), matchServicesOrName: true)
        #expect(filter.matches(peripheral(localName: "GripFit")))
        #expect(!filter.matches(peripheral(localName: "Other", services: [heartRate])))
    }

    // MARK: Driver services

    @Test("driverServices rules")
    func driverServices() {
        #expect(ScanFilter().driverServices == nil)
        #expect(ScanFilter(name: .exact("x")).driverServices == nil)
        #expect(ScanFilter(name: .exact("x"), matchServicesOrName: true).driverServices == nil)
        #expect(ScanFilter(services: [heartRate]).driverServices == [heartRate])
        #expect(ScanFilter(services: [heartRate, battery], name: .exact("x")).driverServices == [heartRate, battery])
        #expect(ScanFilter(services: [heartRate], minimumRSSI: -70).driverServices == [heartRate])
        // Either/or with a name must see peripherals that advertise no service.
        #expect(ScanFilter(services: [heartRate], name: .exact("x"), matchServicesOrName: true).driverServices == nil)
        // Either/or without a name is just a service filter.
        #expect(ScanFilter(services: [heartRate], matchServicesOrName: true).driverServices == [heartRate])
    }

    // MARK: Any

    @Test(
        "The .any filter accepts everything",
        arguments: [
            peripheral(),
            peripheral(localName: "x", gapName: "y", services: [heartRate, nordicUART], rssi: -127),
            peripheral(rssi: 20),
            peripheral(services: [battery], rssi: -100),
        ])
    func anyAcceptsAll(p: DiscoveredPeripheral) {
        #expect(ScanFilter.any.matches(p))
        #expect(ScanFilter.any == ScanFilter())
        #expect(ScanFilter.any.driverServices == nil)
    }
}

@Suite("AdvertisementData")
struct AdvertisementDataTests {
    @Test(
        "companyIdentifier is the first two bytes, little-endian",
        arguments: [
            (Data([0x4C, 0x00, 0x02, 0x15]), UInt16(0x004C)),  // Apple
            (Data([0x59, 0x00]), UInt16(0x0059)),  // Nordic
            (Data([0x34, 0x12, 0xFF]), UInt16(0x1234)),
            (Data([0xFF, 0xFF]), UInt16(0xFFFF)),
        ])
    func companyIdentifier(data: Data, expected: UInt16) {
        #expect(AdvertisementData(manufacturerData: data).companyIdentifier == expected)
    }

    @Test("companyIdentifier is nil without at least two bytes", arguments: [nil, Data(), Data([0x4C])])
    func companyIdentifierMissing(data: Data?) {
        #expect(AdvertisementData(manufacturerData: data).companyIdentifier == nil)
    }

    @Test("companyIdentifier reads a Data slice from its own start index")
    func companyIdentifierSlice() {
        let slice = Data([0xAA, 0xBB, 0x34, 0x12, 0x99]).dropFirst(2)
        #expect(slice.startIndex == 2)
        #expect(AdvertisementData(manufacturerData: slice).companyIdentifier == 0x1234)
    }
}
