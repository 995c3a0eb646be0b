import Foundation
import PropertyBased
import Testing

@testable import TetherDBus

/// Decodes `bytes` and reports whether it threw; the decoder's typed throws guarantee that
/// anything thrown is a `DBusDecodingError`.
private func rejects(_ bytes: [UInt8], unixFDs: [Int32] = []) -> Bool {
    do {
        _ = try DBusMessage.decode(bytes, unixFDs: unixFDs)
        return false
    } catch {
        return !error.reason.isEmpty
    }
}

/// Decodes `bytes`; nil when rejected. A message that is accepted must be one the encoder
/// takes back, and stable from then on (decode ∘ encode is the identity on its bytes).
@discardableResult
private func decodeChecked(
    _ bytes: [UInt8], unixFDs: [Int32] = [], sourceLocation: SourceLocation = #_sourceLocation
) -> DBusMessage? {
    guard let decoded = try? DBusMessage.decode(bytes, unixFDs: unixFDs) else { return nil }
    do {
        let again = try decoded.encoded(serial: decoded.serial)
        let redecoded = try DBusMessage.decode(again, unixFDs: decoded.unixFDs)
        #expect(try redecoded.encoded(serial: redecoded.serial) == again, sourceLocation: sourceLocation)
    } catch {
        Issue.record("accepted input does not re-encode: \(error); \(decoded)", sourceLocation: sourceLocation)
    }
    return decoded
}

/// A message rich enough that corruption reaches every part of the decoder.
private let sample: DBusMessage = {
    var message = DBusMessage.methodCall(
        destination: "org.example.Peer", path: "/org/example/obj_1", interface: "org.example.Iface", member: "Do",
        body: [
            .string("héllo"), .objectPath("/a/b"), .signature("a{sv}(ii)"), .boolean(true), .double(0.25),
            .properties(["Name": .string("x"), "Level": .int32(-3), "Flags": .strings(["a", "b"]), "Raw": .bytes(Data([1, 2]))]),
            .array(.structure([.byte, .int64]), [.structure([.byte(1), .int64(2)]), .structure([.byte(3), .int64(4)])]),
            .variant(.variant(.uint16(9))), .unixFD(0),
        ])
    message.sender = ":1.2"
    message.unixFDs = [3]
    return message
}()

@Suite("Malformed input never crashes and always throws DBusDecodingError")
struct MalformedInputTests {
    @Test func everyTruncationIsRejected() throws {
        let bytes = try sample.encoded(serial: 5)
        #expect(!rejects(bytes, unixFDs: [3]), "the sample itself is valid")
        for length in 0..<bytes.count {
            #expect(rejects(Array(bytes.prefix(length)), unixFDs: [3]), "truncated to \(length) of \(bytes.count) bytes")
        }
    }

    @Test func everyBodyTruncationIsRejectedEvenWithAConsistentLength() throws {
        // Truncate inside the body and fix up the announced body length, so the framing is
        // consistent and only the values' own bounds checks can notice.
        let bytes = try sample.encoded(serial: 5)
        let bodyLength = Int(UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24)
        let bodyStart = bytes.count - bodyLength
        for cut in 0..<bodyLength {
            var truncated = Array(bytes.prefix(bodyStart + cut))
            withUnsafeBytes(of: UInt32(cut).littleEndian) { truncated.replaceSubrange(4..<8, with: $0) }
            #expect(rejects(truncated, unixFDs: [3]), "body cut to \(cut) of \(bodyLength) bytes")
        }
    }

    @Test func randomTruncationsOfRandomMessagesAreRejected() async {
        await propertyCheck(count: 300, input: RandomDBus.messages, Gen.int(in: 0...10_000)) { message, position in
            guard let bytes = try? message.encoded(serial: 3) else {
                Issue.record("cannot encode \(message)")
                return
            }
            let length = position % bytes.count
            #expect(rejects(Array(bytes.prefix(length)), unixFDs: message.unixFDs))
        }
    }

    @Test func randomByteFlipsNeverCrash() async {
        let flips = Gen.int(in: 0...100_000).array(of: 1...6)
        let rejected = Locked(0)
        let runs = Locked(0)
        await propertyCheck(count: 5_000, input: RandomDBus.messages, flips, Gen.uint8()) { message, positions, xor in
            guard var bytes = try? message.encoded(serial: 3) else {
                Issue.record("cannot encode \(message)")
                return
            }
            for position in positions { bytes[position % bytes.count] ^= (xor == 0 ? 0x80 : xor) }
            runs.withLock { $0 += 1 }
            if decodeChecked(bytes, unixFDs: message.unixFDs) == nil { rejected.withLock { $0 += 1 } }
        }
        #expect(runs.value == 5_000)
        // Most corruption is caught (a flip inside a string or a number is not corruption D-Bus can see).
        #expect(rejected.value > 2_500)
    }

    @Test func randomByteFlipsOfTheSampleNeverCrash() async throws {
        let bytes = try sample.encoded(serial: 5)
        await propertyCheck(count: 5_000, input: Gen.int(in: 0...(bytes.count - 1)), Gen.uint8(in: 1...255)) { position, xor in
            var corrupted = bytes
            corrupted[position] ^= xor
            decodeChecked(corrupted, unixFDs: [3])
        }
    }

    @Test func arbitraryBytesWithAValidFixedHeaderNeverCrash() async {
        // Random bytes behind a header that frames them exactly, to reach the field parser.
        await propertyCheck(count: 3_000, input: Gen.uint8().array(of: 0...300), Gen.uint8(in: 1...4)) { tail, kind in
            let fieldsLength = UInt32(tail.count)
            var bytes: [UInt8] = [UInt8(ascii: "l"), kind, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0]
            withUnsafeBytes(of: fieldsLength.littleEndian) { bytes += $0 }
            bytes += tail
            while bytes.count % 8 != 0 { bytes.append(0) }
            decodeChecked(bytes)
        }
    }

    // MARK: Specific hostile inputs

    @Test func hugeArrayLengthIsRejected() {
        #expect(rejects(Wire.signal(signature: "ai", body: [0xFF, 0xFF, 0xFF, 0xFF])))
        #expect(rejects(Wire.signal(signature: "ay", body: [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4])))
        #expect(rejects(Wire.signal(signature: "a{sv}", body: [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0])))
        // Within the 64 MiB rule but beyond the data.
        #expect(rejects(Wire.signal(signature: "ay", body: [0x10, 0, 0, 0, 1])))
    }

    @Test func bodyLengthBeyondTheMessageIsRejected() {
        let bytes = Wire.message(kind: 4, fields: [(1, .objectPath("/")), (2, .string("a.b")), (3, .string("M")),
                                                   (8, .signature("u"))],
                                 body: [1, 0, 0, 0], announcedBodyLength: 0xFFFF_FFF0)
        #expect(rejects(bytes))
        let short = Wire.message(kind: 4, fields: [(1, .objectPath("/")), (2, .string("a.b")), (3, .string("M")),
                                                   (8, .signature("u"))],
                                 body: [1, 0, 0, 0], announcedBodyLength: 8)
        #expect(rejects(short))
    }

    @Test func headerFieldsLengthBeyondTheMessageIsRejected() throws {
        var bytes = try DBusMessage.signal(path: "/", interface: "a.b", member: "M").encoded(serial: 1)
        bytes.replaceSubrange(12..<16, with: [0xF0, 0xFF, 0xFF, 0xFF])
        #expect(rejects(bytes))
    }

    @Test func invalidUTF8IsRejected() {
        #expect(rejects(Wire.signal(signature: "s", body: [2, 0, 0, 0, 0xC3, 0x28, 0])))
        #expect(rejects(Wire.signal(signature: "s", body: [1, 0, 0, 0, 0xFF, 0])))
        // An overlong encoding of "/" and a UTF-16 surrogate.
        #expect(rejects(Wire.signal(signature: "s", body: [2, 0, 0, 0, 0xC0, 0xAF, 0])))
        #expect(rejects(Wire.signal(signature: "s", body: [3, 0, 0, 0, 0xED, 0xA0, 0x80, 0])))
        #expect(!rejects(Wire.signal(signature: "s", body: [2, 0, 0, 0, 0xC3, 0xA9, 0])), "valid é")
    }

    @Test func stringsMustEndWithOneNul() {
        #expect(rejects(Wire.signal(signature: "s", body: [2, 0, 0, 0, 0x61, 0x62])), "no terminator")
        #expect(rejects(Wire.signal(signature: "su", body: [1, 0, 0, 0, 0x61, 0x62, 0, 0, 1, 0, 0, 0])),
                "a non-NUL where the terminator belongs")
        #expect(rejects(Wire.signal(signature: "s", body: [3, 0, 0, 0, 0x61, 0, 0x62, 0])), "a NUL inside")
        #expect(rejects(Wire.signal(signature: "g", body: [1, 0x73])), "signature without terminator")
        #expect(rejects(Wire.signal(signature: "o", body: [3, 0, 0, 0, 0x2F, 0x61, 0x2F, 0])), "invalid path value")
        #expect(rejects(Wire.signal(signature: "g", body: [2, 0x61, 0x7B, 0])), "invalid signature value")
    }

    @Test func booleansOtherThanZeroOrOneAreRejected() {
        #expect(rejects(Wire.signal(signature: "b", body: [2, 0, 0, 0])))
        #expect(rejects(Wire.signal(signature: "b", body: [0, 1, 0, 0])))
        #expect(!rejects(Wire.signal(signature: "b", body: [1, 0, 0, 0])))
    }

    @Test func variantSignatureMustHoldExactlyOneType() {
        // "ii" then two int32s: a variant of two types.
        #expect(rejects(Wire.signal(signature: "v", body: [2, 0x69, 0x69, 0, 1, 0, 0, 0, 2, 0, 0, 0])))
        #expect(rejects(Wire.signal(signature: "v", body: [0, 0])), "a variant of no type")
        #expect(!rejects(Wire.signal(signature: "v", body: [1, 0x69, 0, 0, 1, 0, 0, 0])))
    }

    @Test func deeplyNestedVariantsAreRejectedWithoutOverflowingTheStack() {
        var body: [UInt8] = []
        for _ in 0..<200 { body += [1, UInt8(ascii: "v"), 0] }
        body += [1, UInt8(ascii: "y"), 0, 7]
        #expect(rejects(Wire.signal(signature: "v", body: body)))
        // 100 000 levels: still a thrown error, not a crash.
        var deeper: [UInt8] = []
        deeper.reserveCapacity(300_010)
        for _ in 0..<100_000 { deeper += [1, UInt8(ascii: "v"), 0] }
        deeper += [1, UInt8(ascii: "y"), 0, 7]
        #expect(rejects(Wire.signal(signature: "v", body: deeper)))
    }

    @Test func moderatelyNestedVariantsStillDecode() throws {
        var body: [UInt8] = []
        for _ in 0..<20 { body += [1, UInt8(ascii: "v"), 0] }
        body += [1, UInt8(ascii: "y"), 0, 7]
        let message = try DBusMessage.decode(Wire.signal(signature: "v", body: body))
        #expect(message.body.first?.unwrapped == .byte(7))
    }

    @Test func arrayElementsMustFitTheArrayLength() {
        // Length 3, but an int32 element is 4 bytes.
        #expect(rejects(Wire.signal(signature: "ai", body: [3, 0, 0, 0, 1, 0, 0, 0])))
        // A dictionary entry that overruns its array.
        #expect(rejects(Wire.signal(signature: "a{yy}u", body: [1, 0, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0, 0])))
    }

    @Test func trailingBodyBytesAreRejected() {
        #expect(rejects(Wire.signal(signature: "y", body: [1, 2])))
        #expect(rejects(Wire.signal(signature: "", body: [0])))
    }

    @Test func invalidHeaderSignatureIsRejected() {
        let bytes = Wire.message(kind: 4, fields: [
            (1, .objectPath("/")), (2, .string("a.b")), (3, .string("M")), (8, .signature("a{vs}")),
        ], body: [0, 0, 0, 0])
        #expect(rejects(bytes))
        let tooDeep = Wire.message(kind: 4, fields: [
            (1, .objectPath("/")), (2, .string("a.b")), (3, .string("M")),
            (8, .signature(String(repeating: "a", count: 40) + "y")),
        ], body: [0, 0, 0, 0])
        #expect(rejects(tooDeep))
    }

    @Test func headerFieldsArrayOfTheWrongShapeIsRejected() {
        // A header field whose variant holds a structure instead of a string.
        let bytes = Wire.message(kind: 4, fields: [
            (1, .objectPath("/")), (2, .string("a.b")),
            (3, .raw(signature: "(i)") { wire in wire.pad(to: 8); wire.uint32(1) }),
        ], body: [])
        #expect(rejects(bytes))
    }

    @Test func frameLengthRejectsLengthsAboveTheMaximum() throws {
        var header: [UInt8] = [UInt8(ascii: "l"), 4, 0, 1]
        header += [0x00, 0x00, 0x10, 0x00] // body 1 MiB
        header += [1, 0, 0, 0, 16, 0, 0, 0]
        #expect(throws: DBusDecodingError.self) { try DBusMessage.frameLength(prefix: header, maximumLength: 1024) }
        #expect(try DBusMessage.frameLength(prefix: header, maximumLength: 2 << 20) == 32 + (1 << 20))
        var maximal = header
        maximal.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        maximal.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: DBusDecodingError.self) {
            try DBusMessage.frameLength(prefix: maximal, maximumLength: DBusConnection.defaultMaximumMessageSize)
        }
        var badOrder = header
        badOrder[0] = 0
        #expect(throws: DBusDecodingError.self) { try DBusMessage.frameLength(prefix: badOrder, maximumLength: .max) }
        var badVersion = header
        badVersion[3] = 0
        #expect(throws: DBusDecodingError.self) { try DBusMessage.frameLength(prefix: badVersion, maximumLength: .max) }
    }

    @Test func arbitraryBytesNeverCrash() async {
        await propertyCheck(count: 3_000, input: Gen.uint8().array(of: 0...200)) { bytes in
            decodeChecked(bytes)
            if let length = try? DBusMessage.frameLength(prefix: bytes, maximumLength: 1 << 20) {
                #expect(length >= DBusMessage.fixedHeaderLength && length <= 1 << 20)
            }
        }
    }
}
