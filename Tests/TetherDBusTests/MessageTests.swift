import Foundation
import PropertyBased
import Testing

@testable import TetherDBus

@Suite("Messages: header layout, rules and round trips")
struct MessageTests {
    @Test func signalHeaderLayout() throws {
        let message = DBusMessage.signal(path: "/", interface: "a.b", member: "C")
        let bytes = try message.encoded(serial: 1)
        var expected: [UInt8] = [0x6C, 4, 0, 1] // 'l', signal, no flags, version 1
        expected += [0, 0, 0, 0] // body length
        expected += [1, 0, 0, 0] // serial
        expected += [42, 0, 0, 0] // header fields array length (16 ..< 58)
        expected += [1, 1, 0x6F, 0, 1, 0, 0, 0, 0x2F, 0] // PATH: variant "o" "/" (16 ..< 26)
        expected += [0, 0, 0, 0, 0, 0] // pad to 32
        expected += [2, 1, 0x73, 0, 3, 0, 0, 0] + Array("a.b".utf8) + [0] // INTERFACE (32 ..< 44)
        expected += [0, 0, 0, 0] // pad to 48
        expected += [3, 1, 0x73, 0, 1, 0, 0, 0, 0x43, 0] // MEMBER (48 ..< 58)
        expected += [0, 0, 0, 0, 0, 0] // header padded to 64; no body
        #expect(bytes == expected)
        #expect(try DBusMessage.frameLength(prefix: bytes, maximumLength: 64) == 64)
        var decoded = try DBusMessage.decode(bytes)
        #expect(decoded.serial == 1)
        decoded.serial = 0
        #expect(decoded == message)
    }

    @Test func methodCallWithBodyLayout() throws {
        var message = DBusMessage.methodCall(destination: "d.e", path: "/p", interface: nil, member: "M", body: [.uint32(7)])
        message.flags = [.noReplyExpected, .noAutoStart]
        let bytes = try message.encoded(serial: 0x0102_0304)
        #expect(Array(bytes[0..<4]) == [0x6C, 1, 3, 1])
        #expect(Array(bytes[4..<8]) == [4, 0, 0, 0], "body length")
        #expect(Array(bytes[8..<12]) == [4, 3, 2, 1], "serial")
        #expect(bytes.count % 8 == 4, "the header is padded to 8 and the body is 4 bytes")
        #expect(Array(bytes.suffix(4)) == [7, 0, 0, 0])
        // The SIGNATURE field (8) carries "u".
        let signatureField: [UInt8] = [8, 1, 0x67, 0, 1, 0x75, 0]
        #expect(bytes.indices.contains { Array(bytes[$0...].prefix(7)) == signatureField })
        let decoded = try DBusMessage.decode(bytes)
        #expect(decoded.kind == .methodCall)
        #expect(decoded.flags == [.noReplyExpected, .noAutoStart])
        #expect(decoded.serial == 0x0102_0304)
        #expect(decoded.destination == "d.e")
        #expect(decoded.interface == nil)
        #expect(decoded.body == [.uint32(7)])
        #expect(decoded.signature == "u")
    }

    @Test func handMadeBigEndianMessageDecodes() throws {
        var body = Wire(bigEndian: true)
        body.uint32(0x0102_0304)
        body.string("hi")
        body.pad(to: 8)
        body.integer(Int64(-2))
        let bytes = Wire.message(
            bigEndian: true, kind: 2, serial: 0x0A0B_0C0D,
            fields: [(5, .uint32(0x1122_3344)), (6, .string(":1.5")), (8, .signature("usx"))], body: body.bytes)
        #expect(Array(bytes[4..<8]) == [0, 0, 0, 24], "big-endian body length")
        let message = try DBusMessage.decode(bytes)
        #expect(message.kind == .methodReturn)
        #expect(message.serial == 0x0A0B_0C0D)
        #expect(message.replySerial == 0x1122_3344)
        #expect(message.destination == ":1.5")
        #expect(message.body == [.uint32(0x0102_0304), .string("hi"), .int64(-2)])
        #expect(try DBusMessage.frameLength(prefix: bytes, maximumLength: 1024) == bytes.count)
    }

    @Test func handMadeLittleEndianSignalDecodes() throws {
        var body = Wire()
        body.byte(9)
        body.pad(to: 8)
        body.integer(Int64(5)) // (yx)
        let bytes = Wire.signal(signature: "(yx)", body: body.bytes)
        let message = try DBusMessage.decode(bytes)
        #expect(message.path == "/t")
        #expect(message.interface == "t.I")
        #expect(message.member == "M")
        #expect(message.body == [.structure([.byte(9), .int64(5)])])
    }

    @Test func unknownHeaderFieldsAreIgnored() throws {
        let bytes = Wire.message(kind: 4, fields: [
            (1, .objectPath("/t")), (2, .string("t.I")), (3, .string("M")), (200, .string("future")),
        ], body: [])
        #expect(try DBusMessage.decode(bytes).member == "M")
    }

    // MARK: Header field rules

    @Test func encoderEnforcesRequiredHeaderFields() {
        func rejects(_ message: DBusMessage, _ comment: Comment) {
            #expect(throws: DBusEncodingError.self, comment) { try message.encoded(serial: 1) }
        }
        rejects(DBusMessage(kind: .methodCall, member: "M"), "call without a path")
        rejects(DBusMessage(kind: .methodCall, path: "/"), "call without a member")
        rejects(DBusMessage(kind: .signal, path: "/", member: "M"), "signal without an interface")
        rejects(DBusMessage(kind: .signal, path: "/", interface: "a.b"), "signal without a member")
        rejects(DBusMessage(kind: .error, replySerial: 1), "error without a name")
        rejects(DBusMessage(kind: .error, errorName: "a.b"), "error without a reply serial")
        rejects(DBusMessage(kind: .methodReturn), "reply without a reply serial")
        #expect(throws: DBusEncodingError.self, "serial 0 is reserved") {
            try DBusMessage.signal(path: "/", interface: "a.b", member: "M").encoded(serial: 0)
        }
    }

    @Test func decoderEnforcesRequiredHeaderFields() {
        func rejects(kind: UInt8, _ fields: [(UInt8, Wire.FieldValue)], _ comment: Comment) {
            let bytes = Wire.message(kind: kind, fields: fields, body: [])
            #expect(throws: DBusDecodingError.self, comment) { try DBusMessage.decode(bytes) }
        }
        rejects(kind: 1, [(3, .string("M"))], "call without a path")
        rejects(kind: 1, [(1, .objectPath("/"))], "call without a member")
        rejects(kind: 4, [(1, .objectPath("/")), (3, .string("M"))], "signal without an interface")
        rejects(kind: 3, [(5, .uint32(1))], "error without a name")
        rejects(kind: 3, [(4, .string("a.b"))], "error without a reply serial")
        rejects(kind: 2, [], "reply without a reply serial")
        rejects(kind: 0, [(5, .uint32(1))], "invalid message type 0")
        rejects(kind: 5, [(5, .uint32(1))], "unknown message type 5")
        rejects(kind: 2, [(5, .string("1"))], "reply serial of the wrong type")
        rejects(kind: 1, [(1, .string("/")), (3, .string("M"))], "path of type s")
        rejects(kind: 1, [(1, .objectPath("/a/")), (3, .string("M"))], "invalid path")
        rejects(kind: 2, [(5, .uint32(1)), (6, .objectPath("/x"))], "destination of type o")
        rejects(kind: 2, [(5, .uint32(1)), (8, .string("u"))], "signature of type s")
        rejects(kind: 2, [(5, .uint32(1)), (9, .string("1"))], "fd count of type s")
    }

    @Test func decoderRejectsBadFixedHeaders() throws {
        let valid = try DBusMessage.signal(path: "/", interface: "a.b", member: "M").encoded(serial: 1)
        func rejects(_ patch: (inout [UInt8]) -> Void, _ comment: Comment) {
            var bytes = valid
            patch(&bytes)
            #expect(throws: DBusDecodingError.self, comment) { try DBusMessage.decode(bytes) }
        }
        rejects({ $0[0] = UInt8(ascii: "x") }, "unknown byte order")
        rejects({ $0[3] = 2 }, "protocol version 2")
        rejects({ $0.replaceSubrange(8..<12, with: [0, 0, 0, 0]) }, "serial 0")
        rejects({ $0.append(0) }, "a byte beyond the announced length")
    }

    // MARK: File descriptors

    @Test func fdIndicesMustBeCoveredByAttachedDescriptors() throws {
        var message = DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M", body: [.unixFD(1)])
        message.unixFDs = [10]
        #expect(throws: DBusEncodingError.self) { try message.encoded(serial: 1) }
        message.body = [.structure([.unixFD(0), .variant(.array(.unixFD, [.unixFD(1)]))])]
        #expect(throws: DBusEncodingError.self, "an index inside a variant inside an array counts") {
            try message.encoded(serial: 1)
        }
        message.unixFDs = [10, 11]
        let bytes = try message.encoded(serial: 1)
        // The header announces two descriptors; fewer arriving is an error, extra ones are not taken.
        #expect(throws: DBusDecodingError.self) { try DBusMessage.decode(bytes, unixFDs: [10]) }
        #expect(throws: DBusDecodingError.self) { try DBusMessage.decode(bytes) }
        let decoded = try DBusMessage.decode(bytes, unixFDs: [20, 21, 22])
        #expect(decoded.unixFDs == [20, 21])
        #expect(decoded.body == message.body)
    }

    @Test func decodedFDIndexBeyondTheAnnouncedCountIsRejected() throws {
        // The header announces one descriptor but the body refers to index 1.
        let bytes = Wire.signal(signature: "h", body: [1, 0, 0, 0], extraFields: [(9, .uint32(1))])
        #expect(throws: DBusDecodingError.self) { try DBusMessage.decode(bytes, unixFDs: [5]) }
        let fine = Wire.signal(signature: "h", body: [0, 0, 0, 0], extraFields: [(9, .uint32(1))])
        #expect(try DBusMessage.decode(fine, unixFDs: [5]).unixFDs == [5])
    }

    // MARK: Framing

    @Test func frameLengthNeedsSixteenBytesAndRespectsTheMaximum() throws {
        let bytes = try DBusMessage.methodCall(destination: "a.b", path: "/", interface: nil, member: "M",
                                               body: [.bytes(Data(count: 100))]).encoded(serial: 1)
        #expect(try DBusMessage.frameLength(prefix: bytes.prefix(16), maximumLength: 4096) == bytes.count)
        #expect(throws: DBusDecodingError.self) { try DBusMessage.frameLength(prefix: bytes.prefix(15), maximumLength: 4096) }
        #expect(throws: DBusDecodingError.self) { try DBusMessage.frameLength(prefix: bytes, maximumLength: bytes.count - 1) }
        var huge = bytes
        huge.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: DBusDecodingError.self) {
            try DBusMessage.frameLength(prefix: huge, maximumLength: DBusConnection.defaultMaximumMessageSize)
        }
    }

    // MARK: Round trips

    @Test func arbitraryMessagesRoundTrip() async {
        await propertyCheck(count: 1_000, input: RandomDBus.messages) { message in
            do {
                let bytes = try message.encoded(serial: 77)
                #expect(try DBusMessage.frameLength(prefix: bytes, maximumLength: .max) == bytes.count)
                let decoded = try DBusMessage.decode(bytes, unixFDs: message.unixFDs)
                var expected = message
                expected.serial = 77
                #expect(decoded == expected)
                // Re-encoding gives the same bytes.
                #expect(try decoded.encoded(serial: 77) == bytes)
            } catch {
                Issue.record("\(error) for \(message)")
            }
        }
    }

    @Test func replyAndErrorConstructors() {
        var call = DBusMessage.methodCall(destination: "x.y", path: "/o", interface: "i.j", member: "M")
        call.serial = 12
        call.sender = ":1.9"
        let reply = DBusMessage.methodReturn(to: call, body: [.string("ok")])
        #expect(reply.kind == .methodReturn)
        #expect(reply.replySerial == 12)
        #expect(reply.destination == ":1.9")
        let error = DBusMessage.error(to: call, name: "a.b.Error", message: "text")
        #expect(error.errorName == "a.b.Error")
        #expect(error.errorMessage == "text")
        #expect(DBusError(reply: error) == DBusError(name: "a.b.Error", message: "text"))
        #expect(DBusError(reply: error).description == "a.b.Error: text")
        #expect(DBusError(name: "a.b", message: "").description == "a.b")
    }

    @Test func matchRules() {
        let rule = DBusMatchRule(sender: ":1.4", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                 pathNamespace: "/org/bluez", arg0: "it's")
        #expect(rule.description == "type='signal',sender=':1.4',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'")
        var signal = DBusMessage.signal(path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
                                        member: "PropertiesChanged", body: [.string("it's")])
        signal.sender = ":1.4"
        #expect(rule.matches(signal))
        var other = signal
        other.sender = ":1.5"
        #expect(!rule.matches(other))
        other = signal
        other.path = "/org/bluez2"
        #expect(!rule.matches(other))
        other = signal
        other.body = [.string("x")]
        #expect(!rule.matches(other))
        other = signal
        other.kind = .methodCall
        #expect(!rule.matches(other))
        // A well-known sender matches a unique-named message (the bus resolved the name) …
        let byName = DBusMatchRule(sender: "org.bluez")
        #expect(byName.matches(signal))
        // … but not a message whose sender is another well-known name.
        other = signal
        other.sender = "org.other"
        #expect(!byName.matches(other))
        #expect(DBusMatchRule(kind: nil).description == "")
    }
}
