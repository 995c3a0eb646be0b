import Foundation
import Testing

@testable import TetherCore

@Suite("BluetoothUUID")
struct BluetoothUUIDTests {
    // MARK: Parsing

    @Test(
        "16-bit strings parse to the Base-UUID alias",
        arguments: [
            ("180A", UInt16(0x180A)),
            ("0x180A", UInt16(0x180A)),
            ("0X180A", UInt16(0x180A)),
            ("180a", UInt16(0x180A)),
            ("0xfeed", UInt16(0xFEED)),
            ("0000", UInt16(0x0000)),
            ("FFFF", UInt16(0xFFFF)),
        ])
    func parses16Bit(text: String, value: UInt16) throws {
        let uuid = try #require(BluetoothUUID(string: text))
        #expect(uuid == BluetoothUUID(value))
        #expect(uuid.shortValue == value)
        #expect(uuid.isBaseAlias)
        #expect(uuid.low == 0x8000_0080_5F9B_34FB)
        #expect(uuid.high == UInt64(value) << 32 | 0x0000_1000)
    }

    @Test(
        "32-bit strings parse to the Base-UUID alias",
        arguments: [
            ("12345678", UInt32(0x1234_5678)),
            ("0x12345678", UInt32(0x1234_5678)),
            ("abcdef01", UInt32(0xABCD_EF01)),
            ("0xDeadBeef", UInt32(0xDEAD_BEEF)),
        ])
    func parses32Bit(text: String, value: UInt32) throws {
        let uuid = try #require(BluetoothUUID(string: text))
        #expect(uuid == BluetoothUUID(value))
        #expect(uuid.isBaseAlias)
        #expect(uuid.shortValue == nil)
        #expect(uuid.high >> 32 == UInt64(value))
    }

    @Test("A 32-bit string whose value fits 16 bits is the 16-bit alias")
    func thirtyTwoBitThatFitsSixteen() throws {
        let uuid = try #require(BluetoothUUID(string: "0000FEED"))
        #expect(uuid == BluetoothUUID(UInt16(0xFEED)))
        #expect(uuid.shortValue == 0xFEED)
        #expect(uuid.uuidString == "FEED")
    }

    @Test(
        "128-bit dashed strings parse in any case",
        arguments: [
            "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
            "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
            "6E400001-b5a3-F393-e0A9-E50E24dcca9E",
        ])
    func parses128Bit(text: String) throws {
        let uuid = try #require(BluetoothUUID(string: text))
        #expect(uuid.high == 0x6E40_0001_B5A3_F393)
        #expect(uuid.low == 0xE0A9_E50E_24DC_CA9E)
        #expect(!uuid.isBaseAlias)
        #expect(uuid.shortValue == nil)
    }

    @Test("Surrounding spaces are ignored")
    func trimsWhitespace() {
        #expect(BluetoothUUID(string: " 180A ") == BluetoothUUID(UInt16(0x180A)))
    }

    @Test("A short UUID equals its Base-UUID long form")
    func shortEqualsLong() throws {
        let short = try #require(BluetoothUUID(string: "180A"))
        let long = try #require(BluetoothUUID(string: "0000180A-0000-1000-8000-00805F9B34FB"))
        let longLower = try #require(BluetoothUUID(string: "0000180a-0000-1000-8000-00805f9b34fb"))
        #expect(short == long)
        #expect(short == longLower)
        #expect(long.shortValue == 0x180A)
        let literal: BluetoothUUID = "0000180A-0000-1000-8000-00805F9B34FB"
        #expect(literal == BluetoothUUID(UInt16(0x180A)))
    }

    @Test("A 32-bit UUID equals its Base-UUID long form")
    func thirtyTwoEqualsLong() throws {
        let short = try #require(BluetoothUUID(string: "12345678"))
        let long = try #require(BluetoothUUID(string: "12345678-0000-1000-8000-00805F9B34FB"))
        #expect(short == long)
    }

    @Test(
        "Invalid strings return nil",
        arguments: [
            "",
            "0x",
            "18A",  // 3 digits
            "180AB",  // 5 digits
            "0x180",  // 3 digits after prefix
            "1234567",  // 7 digits
            "123456789",  // 9 digits
            "180G",  // non-hex
            "XYZW",
            "+18A",  // sign accepted by UInt16(radix:) but not hex
            "-18A",
            "+1234567",
            "12 4",
            "0000180A-0000-1000-8000-00805F9B34F",  // 35 chars
            "0000180A-0000-1000-8000-00805F9B34FBA",  // 37 chars
            "0000180A00000-1000-8000-00805F9B34FB",  // missing dash
            "0000180-A0000-1000-8000-00805F9B34FB",  // dash moved left
            "0000180A-00001000-8000-0-0805F9B34FB",  // dashes in wrong places
            "0000180A-0000-1000-800000805F9B34FB-",  // trailing dash
            "0000180A-0000-1000-8000-00805F9B34FG",  // non-hex in 128-bit
            "0000180A-0000-1000-8000-+0805F9B34FB",  // sign in 128-bit
            "0000180A00001000800000805F9B34FB",  // 32 hex digits without dashes
            "{0000180A-0000-1000-8000-00805F9B34FB}",
        ])
    func rejectsInvalid(text: String) {
        #expect(BluetoothUUID(string: text) == nil)
    }

    // MARK: Printing

    @Test(
        "uuidString is canonical upper case",
        arguments: [
            ("180a", "180A"),
            ("0x2a37", "2A37"),
            ("0000180a-0000-1000-8000-00805f9b34fb", "180A"),
            ("0001", "0001"),
            ("abcdef01", "ABCDEF01"),
            ("00123456", "00123456"),
            ("00123456-0000-1000-8000-00805F9B34FB", "00123456"),
            ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"),
            ("00000001-0000-0000-0000-000000000001", "00000001-0000-0000-0000-000000000001"),
            // Base low half but a different high suffix: not an alias.
            ("0000180A-0000-1001-8000-00805F9B34FB", "0000180A-0000-1001-8000-00805F9B34FB"),
        ])
    func canonicalString(input: String, expected: String) throws {
        let uuid = try #require(BluetoothUUID(string: input))
        #expect(uuid.uuidString == expected)
        #expect(uuid.description == expected)
        #expect("\(uuid)" == expected)
    }

    @Test(
        "longString is always the dashed 36-character form",
        arguments: [
            ("180a", "0000180A-0000-1000-8000-00805F9B34FB"),
            ("abcdef01", "ABCDEF01-0000-1000-8000-00805F9B34FB"),
            ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"),
        ])
    func longString(input: String, expected: String) throws {
        let uuid = try #require(BluetoothUUID(string: input))
        #expect(uuid.longString == expected)
        #expect(uuid.longString.count == 36)
        #expect(BluetoothUUID(string: uuid.longString) == uuid)
    }

    @Test("Zero and all-ones values print with leading zeros and full width")
    func extremesPrint() {
        let zero = BluetoothUUID(high: 0, low: 0)
        #expect(zero.uuidString == "00000000-0000-0000-0000-000000000000")
        let ones = BluetoothUUID(high: .max, low: .max)
        #expect(ones.uuidString == "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    }

    // MARK: Bytes

    @Test("data is the shortest big-endian form")
    func dataShortestForm() throws {
        #expect(BluetoothUUID(UInt16(0x180A)).data == Data([0x18, 0x0A]))
        #expect(BluetoothUUID(UInt32(0x1234_5678)).data == Data([0x12, 0x34, 0x56, 0x78]))
        let long = try #require(BluetoothUUID(string: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(long.data == Data([0x6E, 0x40, 0x00, 0x01, 0xB5, 0xA3, 0xF3, 0x93,
                                   0xE0, 0xA9, 0xE5, 0x0E, 0x24, 0xDC, 0xCA, 0x9E]))
    }

    @Test("bytes128 is the full big-endian value")
    func bytes128Value() {
        #expect(BluetoothUUID(UInt16(0x180A)).bytes128 == [
            0x00, 0x00, 0x18, 0x0A, 0x00, 0x00, 0x10, 0x00,
            0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB,
        ])
        #expect(BluetoothUUID(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10).bytes128
            == Array(1...16))
    }

    @Test(
        "data, bytes128 and init(bytes:) round trip",
        arguments: [
            "180A", "2A37", "0000", "FFFF", "12345678", "FFFFFFFF", "00010000",
            "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ])
    func bytesRoundTrip(text: String) throws {
        let uuid = try #require(BluetoothUUID(string: text))
        #expect(BluetoothUUID(bytes: uuid.data) == uuid)
        #expect(BluetoothUUID(bytes: uuid.bytes128) == uuid)
        #expect(uuid.bytes128.count == 16)
        #expect([2, 4, 16].contains(uuid.data.count))
    }

    @Test("init(bytes:) reads big-endian and works on slices")
    func initBytesBigEndian() {
        #expect(BluetoothUUID(bytes: [0x18, 0x0A]) == BluetoothUUID(UInt16(0x180A)))
        #expect(BluetoothUUID(bytes: [0x12, 0x34, 0x56, 0x78]) == BluetoothUUID(UInt32(0x1234_5678)))
        let framed = Data([0xAA, 0x2A, 0x37, 0xBB])
        #expect(BluetoothUUID(bytes: framed.dropFirst().dropLast()) == BluetoothUUID(UInt16(0x2A37)))
    }

    @Test("init(bytes:) rejects lengths other than 2, 4 and 16", arguments: [0, 1, 3, 5, 8, 15, 17, 32])
    func initBytesRejectsLength(count: Int) {
        #expect(BluetoothUUID(bytes: [UInt8](repeating: 0x11, count: count)) == nil)
    }

    // MARK: Foundation UUID

    @Test(
        "Foundation UUID round trip",
        arguments: [
            "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
            "0000180A-0000-1000-8000-00805F9B34FB",
            "00000000-0000-0000-0000-000000000000",
        ])
    func foundationRoundTrip(text: String) throws {
        let foundation = try #require(UUID(uuidString: text))
        let uuid = BluetoothUUID(foundation)
        #expect(uuid.longString == text)
        #expect(uuid.foundationUUID == foundation)
        #expect(BluetoothUUID(uuid.foundationUUID) == uuid)
    }

    @Test("A short UUID converts to the Base-UUID Foundation UUID")
    func shortToFoundation() {
        #expect(BluetoothUUID(UInt16(0x180A)).foundationUUID.uuidString == "0000180A-0000-1000-8000-00805F9B34FB")
    }

    // MARK: Codable

    @Test(
        "Codable round trip encodes the canonical string",
        arguments: [
            ("180a", "180A"),
            ("abcdef01", "ABCDEF01"),
            ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"),
        ])
    func codableRoundTrip(input: String, encoded: String) throws {
        let uuid = try #require(BluetoothUUID(string: input))
        let json = try JSONEncoder().encode([uuid])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(encoded)\"]")
        let decoded = try JSONDecoder().decode([BluetoothUUID].self, from: json)
        #expect(decoded == [uuid])
    }

    @Test("Decoding accepts any valid spelling")
    func decodeLongSpelling() throws {
        let json = Data(#"["0000180a-0000-1000-8000-00805f9b34fb", "0x2A37"]"#.utf8)
        let decoded = try JSONDecoder().decode([BluetoothUUID].self, from: json)
        #expect(decoded == [BluetoothUUID(UInt16(0x180A)), BluetoothUUID(UInt16(0x2A37))])
    }

    @Test("Decoding rejects bad strings", arguments: ["\"\"", "\"180G\"", "\"12345\"", "\"not-a-uuid\"", "42"])
    func decodeRejects(jsonValue: String) {
        let json = Data("[\(jsonValue)]".utf8)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothUUID].self, from: json)
        }
    }

    // MARK: Hashable / Comparable

    @Test("Short and long forms hash together")
    func hashableConsistency() throws {
        let short = try #require(BluetoothUUID(string: "180A"))
        let long = try #require(BluetoothUUID(string: "0000180A-0000-1000-8000-00805F9B34FB"))
        let set: Set<BluetoothUUID> = [short, long, BluetoothUUID(UInt16(0x180A)), BluetoothUUID(UInt32(0x180A))]
        #expect(set.count == 1)
        #expect(short.hashValue == long.hashValue)
        let dict: [BluetoothUUID: Int] = [short: 1]
        #expect(dict[long] == 1)
        let other: Set<BluetoothUUID> = [short, BluetoothUUID(UInt16(0x180B))]
        #expect(other.count == 2)
    }

    @Test("Ordering follows the 128-bit value")
    func comparable() {
        let a = BluetoothUUID(UInt16(0x1800))
        let b = BluetoothUUID(UInt16(0x180A))
        let c = BluetoothUUID(high: 0x0000_180A_0000_1000, low: 0x8000_0080_5F9B_34FC)
        #expect(a < b)
        #expect(b < c)
        #expect(!(b < b))
        #expect([c, a, b].sorted() == [a, b, c])
    }
}
