import Foundation
import TetherCore
import Testing

@testable import Tybe

@Suite struct ProtocolStatusConfigTests {
    @Test func gattIdentity() {
        #expect(TybeGATT.serviceUUID == BluetoothUUID(string: "74796265-0000-0001-8000-00805f9b34fb"))
        #expect(TybeGATT.textInput == CharacteristicPath(service: TybeGATT.serviceUUID, characteristic: "74796265-0010-0001-8000-00805F9B34FB"))
        #expect(TybeGATT.status.characteristic == "74796265-0020-0001-8000-00805F9B34FB")
        #expect(TybeGATT.config.characteristic == "74796265-0030-0001-8000-00805F9B34FB")
        #expect(TybeGATT.control.characteristic == "74796265-0040-0001-8000-00805F9B34FB")
        #expect(Set(TybeGATT.allCharacteristics).count == 4)
        #expect(TybeGATT.allCharacteristics.allSatisfy { $0.service == TybeGATT.serviceUUID })
        #expect(TybeGATT.defaultBridgeName == "Tybe Zephyr Dev")
        #expect(TybeGATT.statusProperties.contains(.notify))
        #expect(TybeGATT.textInputProperties.contains(.writeWithoutResponse))
    }

    @Test func statusEncodeDecode() throws {
        let status = TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 42, errorCode: 0)
        #expect(status.bytes == Data([0x07, 42, 0, 0]))
        #expect(TybeStatus(status.bytes) == status)
        #expect(status.error == .ok && status.errorDescription == nil && status.isOK)

        let busy = try #require(TybeStatus(Data([0x01, 0xFF, 0x05, 0x00])))
        #expect(busy.bridgeReady && !busy.ackReceived && !busy.dongleLinked)
        #expect(busy.seq == 255 && busy.error == .busy)
        #expect(busy.errorDescription == TybeStatusCode.busy.description)

        // Unknown flag bits and the reserved byte are ignored.
        let noisy = try #require(TybeStatus(Data([0xFC, 1, 0, 0x99])))
        #expect(!noisy.bridgeReady && !noisy.ackReceived && noisy.dongleLinked)
        #expect(noisy.bytes == Data([0x04, 1, 0, 0]))

        let unknown = try #require(TybeStatus(Data([0x01, 0, 0x7F, 0])))
        #expect(unknown.error == nil)
        #expect(unknown.errorDescription == "unknown error 0x7F")

        #expect(TybeStatus(error: .invalidKey).errorCode == 0x06)
    }

    @Test(arguments: [0, 1, 2, 3, 5, 10])
    func statusRejectsWrongLengths(count: Int) {
        #expect(TybeStatus(Data(repeating: 1, count: count)) == nil)
    }

    @Test func everyStatusFlagCombinationRoundTrips() {
        for flags in UInt8(0)...7 {
            let status = TybeStatus(Data([flags, flags, flags, 0]))!
            #expect(status.flags == flags)
            #expect(status.bytes == Data([flags, flags, flags, 0]))
        }
    }

    @Test func statusCodes() {
        let expected: [(TybeStatusCode, UInt8, String)] = [
            (.ok, 0x00, "OK"), (.malformedFrame, 0x01, "MALFORMED_FRAME"), (.unknownOpcode, 0x02, "UNKNOWN_OPCODE"),
            (.duplicateSeq, 0x03, "DUPLICATE_SEQ"), (.dongleNoAck, 0x04, "DONGLE_NO_ACK"), (.busy, 0x05, "BUSY"),
            (.invalidKey, 0x06, "INVALID_KEY"), (.internalError, 0xFF, "INTERNAL"),
        ]
        #expect(TybeStatusCode.allCases.count == expected.count)
        for (code, raw, name) in expected {
            #expect(code.rawValue == raw)
            #expect(code.name == name)
            #expect(TybeStatusCode(rawValue: raw) == code)
        }
        #expect(Set(TybeStatusCode.allCases.map(\.description)).count == expected.count)
        for code in TybeStatusCode.allCases {
            #expect(code.description.count > 2)
            #expect(code.description.hasSuffix("."))
            let status = TybeStatus(errorCode: code.rawValue)
            #expect(status.errorDescription == (code == .ok ? nil : code.description))
        }
        #expect(TybeStatusCode.busy.description.contains("again"))
        #expect(TybeStatusCode.unknownOpcode.description.contains("before it were sent"))
        for raw in UInt8(0x07)...0xFE {
            #expect(TybeStatus(errorCode: raw).errorDescription == "unknown error 0x\(String(format: "%02X", raw))")
        }
    }

    @Test func configEncodeDecode() throws {
        let bytes = Data([1, 0, 3, 12, 0xE7, 0xE7, 0xE7, 0xE7, 0xC1, 40])
        let config = try #require(TybeConfig(bytes))
        #expect(config.protocolVersion == 1)
        #expect(config.firmwareVersion == "0.3.12")
        #expect(config.esbAddress == [0xE7, 0xE7, 0xE7, 0xE7, 0xC1])
        #expect(config.esbChannel == 40)
        #expect(config.bytes == bytes)
        let built = TybeConfig(firmwareMajor: 0, firmwareMinor: 3, firmwarePatch: 12, esbAddress: [0xE7, 0xE7, 0xE7, 0xE7, 0xC1], esbChannel: 40)
        #expect(built == config)
        // Slices parse too.
        #expect(TybeConfig((Data([0xFF]) + bytes)[1...]) == config)
    }

    @Test(arguments: [0, 1, 4, 9, 11, 20])
    func configRejectsWrongLengths(count: Int) {
        #expect(TybeConfig(Data(repeating: 1, count: count)) == nil)
    }

    @Test func channelWrites() throws {
        #expect(try TybeConfig.channelWrite(0) == Data([0]))
        #expect(try TybeConfig.channelWrite(100) == Data([100]))
        #expect(try TybeConfig.channelWrite(42) == Data([42]))
        for bad in [-1, 101, 255, 256, Int.max, Int.min] {
            #expect(throws: TybeConfigError.channelOutOfRange) { try TybeConfig.channelWrite(bad) }
        }
        #expect(TybeConfig.parseChannelWrite(Data([100])) == 100)
        #expect(TybeConfig.parseChannelWrite(Data([0])) == 0)
        #expect(TybeConfig.parseChannelWrite(Data([101])) == nil)
        #expect(TybeConfig.parseChannelWrite(Data()) == nil)
        #expect(TybeConfig.parseChannelWrite(Data([1, 2])) == nil)
    }

    @Test func control() {
        #expect(TybeControl.requestStatus == Data([0x01]))
        #expect(TybeControl.isRequestStatus(Data([0x01])))
        #expect(TybeControl.isRequestStatus(Data([0xAA, 0x01])[1...]))
        #expect(!TybeControl.isRequestStatus(Data([0x02])))
        #expect(!TybeControl.isRequestStatus(Data()))
        #expect(!TybeControl.isRequestStatus(Data([0x01, 0x01])))
    }
}
