import Foundation
import Testing
@testable import TetherBlueZ
import TetherCore
import TetherDBus

/// BlueZ's vocabulary ↔ Tether's model, without a bus.
@Suite("BlueZ mapping")
struct MappingTests {
    @Test(arguments: [
        ("org.bluez.Error.NotPermitted", "Read not permitted", DriverError.att(.readNotPermitted)),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .att(.writeNotPermitted)),
        ("org.bluez.Error.NotPermitted", "Not paired", .att(.insufficientAuthentication)),
        ("org.bluez.Error.NotAuthorized", "", .att(.insufficientAuthorization)),
        ("org.bluez.Error.InvalidArguments", "Invalid offset", .att(.invalidOffset)),
        ("org.bluez.Error.InvalidArguments", "Invalid Length", .att(.invalidAttributeValueLength)),
        ("org.bluez.Error.InvalidOffset", "", .att(.invalidOffset)),
        ("org.bluez.Error.InvalidValueLength", "", .att(.invalidAttributeValueLength)),
        ("org.bluez.Error.NotSupported", "", .att(.requestNotSupported)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e", .att(.unlikelyError)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x05", .att(.insufficientAuthentication)),
        ("org.bluez.Error.Failed", "operation failed with att error: 0X0F", .att(.insufficientEncryption)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80", .att(ATTError(0x80))),
        ("org.bluez.Error.Failed", "Not connected", .peripheralDisconnected),
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", .connectionFailed("le-connection-abort-by-local")),
        ("org.bluez.Error.NotConnected", "", .peripheralDisconnected),
        ("org.bluez.Error.NotReady", "Resource Not Ready", .bluetoothUnavailable(.poweredOff)),
        ("org.bluez.Error.AuthenticationFailed", "", .encryptionFailed),
        ("org.bluez.Error.AuthenticationCanceled", "", .encryptionFailed),
        ("org.freedesktop.DBus.Error.ServiceUnknown", "", .bluetoothUnavailable(.resetting)),
        ("org.freedesktop.DBus.Error.UnknownObject", "", .invalidHandle),
    ] as [(String, String, DriverError)])
    func errorRepliesMapToDriverErrors(_ name: String, _ message: String, _ expected: DriverError) {
        #expect(BlueZMapping.driverError(name: name, message: message) == expected)
    }

    @Test func pairingErrorsArePairingFailures() {
        for (name, message) in [("org.bluez.Error.NotPermitted", "Not paired"), ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0f"),
                                ("org.bluez.Error.NotAuthorized", ""), ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e")] {
            guard case .att(let att) = BlueZMapping.driverError(name: name, message: message) else {
                Issue.record("\(name) \(message) is not an ATT error")
                continue
            }
            #expect(att.isPairingFailure, "\(name) \(message)")
        }
    }

    @Test func unknownErrorsKeepTheirText() {
        let error = BlueZMapping.driverError(name: "org.bluez.Error.Weird", message: "it broke")
        #expect(error == .other("org.bluez.Error.Weird: it broke"))
    }

    @Test func retryableConnectFailures() {
        #expect(BlueZMapping.isRetryableConnectFailure(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        #expect(BlueZMapping.isRetryableConnectFailure(name: "org.bluez.Error.InProgress", message: ""))
        #expect(BlueZMapping.isRetryableConnectFailure(name: "org.freedesktop.DBus.Error.NoReply", message: ""))
        #expect(!BlueZMapping.isRetryableConnectFailure(name: "org.bluez.Error.NotReady", message: ""))
        #expect(!BlueZMapping.isRetryableConnectFailure(name: "org.freedesktop.DBus.Error.UnknownObject", message: ""))
    }

    @Test func flagsMapToPropertiesAndBack() {
        let all = ["broadcast", "read", "write-without-response", "write", "notify", "indicate", "authenticated-signed-writes"]
        let properties = BlueZMapping.properties(flags: all + ["encrypt-read", "reliable-write", "extended-properties"])
        #expect(properties == [.broadcast, .read, .writeWithoutResponse, .write, .notify, .indicate, .authenticatedSignedWrites, .extendedProperties])
        #expect(BlueZMapping.flags(for: [.read, .notify]) == ["read", "notify"])
        #expect(BlueZMapping.properties(flags: BlueZMapping.flags(for: [.write, .writeWithoutResponse, .indicate])) == [.write, .writeWithoutResponse, .indicate])
    }

    @Test func peripheralIDsAreStableAndReversible() throws {
        let id = try #require(BlueZMapping.peripheralID(adapterIndex: 3, address: "AA:BB:CC:01:02:03"))
        #expect(id == BlueZMapping.peripheralID(adapterIndex: 3, address: "aa:bb:cc:01:02:03"))
        #expect(id != BlueZMapping.peripheralID(adapterIndex: 4, address: "AA:BB:CC:01:02:03"))
        let back = try #require(BlueZMapping.address(of: id))
        #expect(back.adapterIndex == 3)
        #expect(back.address == "AA:BB:CC:01:02:03")
        #expect(BlueZMapping.address(of: PeripheralID(UUID())) == nil)
        #expect(BlueZMapping.peripheralID(adapterIndex: 0, address: "not an address") == nil)
        #expect(BlueZMapping.peripheralID(adapterIndex: 0, address: "AA:BB:CC:01:02") == nil)
        #expect(BlueZMapping.adapterIndex("hci12") == 12)
        #expect(BlueZMapping.adapterIndex("usb0") == nil)
    }

    @Test func deviceProperitesBecomeAnAdvertisement() {
        let properties: [String: DBusValue] = [
            "Name": .string("GripFit-7"),
            "UUIDs": .strings(["6e400001-b5a3-f393-e0a9-e50e24dcca9e", "not-a-uuid"]),
            "ManufacturerData": .dictionary(key: .uint16, value: .variant, [
                DBusDictionaryEntry(.uint16(0x0059), .variant(.bytes(Data([1, 2, 3])))),
            ]),
            "ServiceData": .dictionary(key: .string, value: .variant, [
                DBusDictionaryEntry(.string("0000feaa-0000-1000-8000-00805f9b34fb"), .variant(.bytes(Data([9])))),
            ]),
            "TxPower": .int16(-4),
        ]
        let advertisement = BlueZMapping.advertisement(from: properties)
        #expect(advertisement.localName == "GripFit-7")
        #expect(advertisement.serviceUUIDs == [BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")])
        #expect(advertisement.manufacturerData == Data([0x59, 0x00, 1, 2, 3]))
        #expect(advertisement.companyIdentifier == 0x0059)
        #expect(advertisement.serviceData[BluetoothUUID(UInt16(0xFEAA))] == Data([9]))
        #expect(advertisement.txPowerLevel == -4)
    }

    @Test func manufacturerDataKeyedByStringsIsReadToo() {
        // bluezoo (unpatched) types ManufacturerData as a{sv}.
        let properties: [String: DBusValue] = [
            "ManufacturerData": .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("89"), .variant(.bytes(Data([7]))))]),
        ]
        #expect(BlueZMapping.advertisement(from: properties).manufacturerData == Data([89, 0, 7]))
    }

    @Test func aReadsEchoIsDroppedAndNotificationsAroundItKept() {
        let read = Data("value".utf8), other = Data("other".utf8)
        #expect(BlueZMapping.notifications(heldDuringRead: [read], reply: read).isEmpty)
        #expect(BlueZMapping.notifications(heldDuringRead: [other, read], reply: read) == [other])
        // A notification equal to the value, then the echo: one of them is a notification.
        #expect(BlueZMapping.notifications(heldDuringRead: [read, other, read], reply: read) == [read, other])
        // No echo (a BlueZ without the cache write): everything is a notification.
        #expect(BlueZMapping.notifications(heldDuringRead: [other], reply: read) == [other])
        #expect(BlueZMapping.notifications(heldDuringRead: [], reply: read).isEmpty)
    }

    @Test func attCodesAreFoundInBlueZMessages() {
        #expect(BlueZMapping.attCode(in: "Operation failed with ATT error: 0x0e") == 0x0E)
        #expect(BlueZMapping.attCode(in: "ATT error: 12") == 0x12)
        #expect(BlueZMapping.attCode(in: "no code here") == nil)
        #expect(BlueZMapping.attCode(in: "ATT error: 0x") == nil)
    }

    @Test func aConnectWaitsUntilTheLastLinkHasSettled() {
        let down = ContinuousClock.now
        let settle = Duration.milliseconds(500)
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: nil, now: down, settle: settle) == nil)
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: down, now: down, settle: settle) == settle)
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: down, now: down + .milliseconds(120), settle: settle) == .milliseconds(380))
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: down, now: down + settle, settle: settle) == nil)
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: down, now: down + .seconds(3), settle: settle) == nil)
        #expect(BlueZMapping.reconnectDelay(lastLinkDown: down, now: down, settle: .zero) == nil)
    }
}
