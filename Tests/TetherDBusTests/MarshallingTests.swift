import Foundation
import PropertyBased
import Testing

@testable import TetherDBus

/// Marshals `values` one after another from offset 0, as a message body would be.
private func encode(_ values: DBusValue...) throws -> [UInt8] {
    var writer = DBusWriter()
    for value in values { try writer.append(value) }
    return writer.bytes
}

/// Reads `types` back from `bytes` (little-endian unless told), requiring every byte be used.
private func decode(_ bytes: [UInt8], _ types: DBusType..., bigEndian: Bool = false) throws -> [DBusValue] {
    var reader = DBusReader(bytes: bytes, bigEndian: bigEndian)
    var values: [DBusValue] = []
    for type in types { values.append(try reader.read(type)) }
    guard reader.isAtEnd else { throw TestFailure("\(bytes.count - reader.offset) bytes left over") }
    return values
}

private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("Marshalling: byte layouts and round trips")
struct MarshallingTests {
    // MARK: Basic types

    @Test func fixedWidthIntegersAreLittleEndian() throws {
        #expect(try encode(.byte(0xAB)) == [0xAB])
        #expect(try encode(.int16(-2)) == [0xFE, 0xFF])
        #expect(try encode(.uint16(0x0102)) == [0x02, 0x01])
        #expect(try encode(.int32(-1)) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try encode(.uint32(0x0102_0304)) == [0x04, 0x03, 0x02, 0x01])
        #expect(try encode(.int64(Int64.min)) == [0, 0, 0, 0, 0, 0, 0, 0x80])
        #expect(try encode(.uint64(0x0102_0304_0506_0708)) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(try encode(.unixFD(3)) == [3, 0, 0, 0])
    }

    @Test func doublesAreIEEE754() throws {
        #expect(try encode(.double(1.0)) == [0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(try encode(.double(-2.5)) == [0, 0, 0, 0, 0, 0, 0x04, 0xC0])
    }

    @Test func booleansAreFourBytesZeroOrOne() throws {
        #expect(try encode(.boolean(false)) == [0, 0, 0, 0])
        #expect(try encode(.boolean(true)) == [1, 0, 0, 0])
        #expect(try decode([1, 0, 0, 0], .boolean) == [.boolean(true)])
        #expect(try decode([0, 0, 0, 0], .boolean) == [.boolean(false)])
    }

    @Test func stringsAndPathsHaveALengthAndANul() throws {
        #expect(try encode(.string("abc")) == [3, 0, 0, 0] + ascii("abc") + [0])
        #expect(try encode(.string("")) == [0, 0, 0, 0, 0])
        // "é" is two UTF-8 bytes: the length counts bytes.
        #expect(try encode(.string("é")) == [2, 0, 0, 0, 0xC3, 0xA9, 0])
        #expect(try encode(.objectPath("/a")) == [2, 0, 0, 0] + ascii("/a") + [0])
    }

    @Test func signaturesHaveAOneByteLength() throws {
        #expect(try encode(.signature("a{sv}")) == [5] + ascii("a{sv}") + [0])
        #expect(try encode(.signature("")) == [0, 0])
    }

    @Test func valuesAreAlignedToTheirSize() throws {
        #expect(try encode(.byte(1), .int16(2)) == [1, 0, 2, 0])
        #expect(try encode(.byte(1), .uint32(2)) == [1, 0, 0, 0, 2, 0, 0, 0])
        #expect(try encode(.byte(1), .int64(2)) == [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
        #expect(try encode(.byte(1), .string("a")) == [1, 0, 0, 0, 1, 0, 0, 0, 0x61, 0])
        // Signatures and variants are 1-aligned.
        #expect(try encode(.byte(1), .signature("s")) == [1, 1, 0x73, 0])
    }

    // MARK: Containers

    @Test func structuresAlignToEight() throws {
        // (yx): the structure starts 8-aligned, and so does the int64 after the byte.
        #expect(try encode(.structure([.byte(5), .int64(9)])) == [5, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0])
        // A byte before it pushes the structure to offset 8.
        #expect(try encode(.byte(1), .structure([.byte(2)])) == [1, 0, 0, 0, 0, 0, 0, 0, 2])
    }

    @Test func arrayLengthCountsElementBytesNotPadding() throws {
        // as ["a", "bc"]: the second string pads to 12; the length (15) counts that padding
        // between elements but not the padding before the first element.
        #expect(try encode(.strings(["a", "bc"])) ==
                [15, 0, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 2, 0, 0, 0, 0x62, 0x63, 0])
    }

    @Test func emptyArrayOfInt64StillPadsToEight() throws {
        #expect(try encode(.array(.int64, [])) == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(try encode(.array(.int32, [])) == [0, 0, 0, 0])
        #expect(try encode(.array(.int64, [.int64(1)])) == [8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        // Read back: the padding after the length is consumed even for an empty array.
        #expect(try decode([0, 0, 0, 0, 0, 0, 0, 0], .array(.int64)) == [.array(.int64, [])])
        #expect(try decode([0, 0, 0, 0, 0, 0, 0, 0], .dictionary(key: .string, value: .variant))
                == [.dictionary(key: .string, value: .variant, [])])
    }

    @Test func byteArrays() throws {
        #expect(try encode(.bytes(Data([1, 2, 3]))) == [3, 0, 0, 0, 1, 2, 3])
        // `.array(.byte, …)` is accepted and marshals the same; it decodes as `.bytes`.
        #expect(try encode(.array(.byte, [.byte(1), .byte(2), .byte(3)])) == [3, 0, 0, 0, 1, 2, 3])
        #expect(try decode([3, 0, 0, 0, 1, 2, 3], .array(.byte)) == [.bytes(Data([1, 2, 3]))])
    }

    @Test func dictionaryEntriesAlignToEight() throws {
        let dictionary = DBusValue.properties(["k": .byte(3), "l": .boolean(true)])
        var expected: [UInt8] = [0, 0, 0, 0] // length, patched below
        expected += [0, 0, 0, 0] // padding to the first entry at 8
        expected += [1, 0, 0, 0, 0x6B, 0] // "k" at 8...13
        expected += [1, 0x79, 0, 3] // variant "y" 3 at 14...17
        expected += [0, 0, 0, 0, 0, 0] // padding: the next entry starts at 24
        expected += [1, 0, 0, 0, 0x6C, 0] // "l" at 24...29
        expected += [1, 0x62, 0] // variant signature "b" at 30...32
        expected += [0, 0, 0, 1, 0, 0, 0] // padding to 36, then true
        expected[0] = UInt8(expected.count - 8) // 32: from the first entry to the end
        #expect(try encode(dictionary) == expected)
        #expect(expected[0] == 32)
    }

    @Test func variantsCarryTheirSignature() throws {
        // Signature "q" (3 bytes), one byte of padding, then the uint16.
        #expect(try encode(.variant(.uint16(7))) == [1, 0x71, 0, 0, 7, 0])
        #expect(try encode(.variant(.strings([]))) == [2, 0x61, 0x73, 0, 0, 0, 0, 0])
        #expect(try encode(.variant(.variant(.byte(1)))) == [1, 0x76, 0, 1, 0x79, 0, 1])
        #expect(try decode([1, 0x71, 0, 0, 7, 0], .variant) == [.variant(.uint16(7))])
    }

    @Test func bigEndianValuesDecode() throws {
        var wire = Wire(bigEndian: true)
        wire.integer(UInt16(0x0102))
        wire.integer(UInt32(0x0304_0506))
        wire.integer(Int64(-3))
        wire.integer(Double(1.5).bitPattern)
        wire.string("hé")
        wire.uint32(8) // ai of two elements
        wire.integer(Int32(-7))
        wire.integer(Int32(9))
        let values = try decode(wire.bytes, .uint16, .uint32, .int64, .double, .string, .array(.int32), bigEndian: true)
        #expect(values == [.uint16(0x0102), .uint32(0x0304_0506), .int64(-3), .double(1.5), .string("hé"),
                           .array(.int32, [.int32(-7), .int32(9)])])
    }

    // MARK: Encoding errors

    @Test func encoderRejectsValuesThatAreNotD_Bus() {
        func rejects(_ value: DBusValue, _ comment: Comment) {
            var writer = DBusWriter()
            #expect(throws: DBusEncodingError.self, comment) { try writer.append(value) }
        }
        rejects(.string("a\u{0}b"), "NUL inside a string")
        rejects(.signature("a{vs}"), "invalid signature value")
        rejects(.signature(String(repeating: "y", count: 256)), "signature too long")
        rejects(.array(.int32, [.int32(1), .string("x")]), "element of the wrong type")
        rejects(.dictionary(key: .variant, value: .string, []), "non-basic key")
        rejects(.dictionary(key: .string, value: .int32, [DBusDictionaryEntry(.string("a"), .uint32(1))]),
                "entry of the wrong type")
        rejects(.structure([]), "empty structure")
        var deep = DBusValue.byte(0)
        for _ in 0..<200 { deep = .variant(deep) }
        rejects(deep, "nesting too deep")
    }

    // MARK: Round trips

    @Test func arbitraryValuesRoundTrip() async {
        await propertyCheck(count: 1_000, input: RandomDBus.bodies) { body in
            var writer = DBusWriter()
            do {
                for value in body { try writer.append(value) }
                var reader = DBusReader(bytes: writer.bytes, bigEndian: false)
                var decoded: [DBusValue] = []
                for value in body { decoded.append(try reader.read(value.type)) }
                #expect(reader.isAtEnd)
                #expect(decoded == body)
            } catch {
                Issue.record("\(error) for \(body)")
            }
        }
    }

    @Test func valueAccessorsLookThroughVariants() {
        let value = DBusValue.variant(.variant(.string("x")))
        #expect(value.unwrapped == .string("x"))
        #expect(value.string == "x")
        #expect(DBusValue.variant(.uint64(UInt64.max)).integer == nil)
        #expect(DBusValue.variant(.int16(-3)).integer == -3)
        #expect(DBusValue.array(.byte, [.byte(1), .byte(2)]).bytes == Data([1, 2]))
        #expect(DBusValue.bytes(Data([7])).arrayElements == [.byte(7)])
        #expect(DBusValue.strings(["a", "b"]).stringArray == ["a", "b"])
        #expect(DBusValue.properties(["b": .int32(2), "a": .boolean(true)]).stringKeyedDictionary
                == ["a": .boolean(true), "b": .int32(2)])
        #expect(DBusValue.structure([.byte(1)]).structureFields == [.byte(1)])
        #expect(DBusValue.objectPath("/x").objectPath == "/x")
        #expect(DBusValue.boolean(true).bool == true)
        #expect(DBusValue.int32(1).string == nil)
    }
}
