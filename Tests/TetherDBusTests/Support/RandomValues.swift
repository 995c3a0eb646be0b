import Foundation
import PropertyBased

@testable import TetherDBus

/// Random D-Bus types, values and messages for the property tests.
enum RandomDBus {
    /// Characters for strings: ASCII, punctuation, 2-, 3- and 4-byte UTF-8 (never NUL).
    static let characters: [Character] = Array("abcXYZ019 _-./:;'\"\\\n\t\u{01}\u{7F}éß€한日😀🚨")
    static let pathCharacters: [Character] = Array("abcdefXYZ0123456789_")

    static let basicTypes: [DBusType] = [
        .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath,
        .signature, .unixFD,
    ]

    /// How many descriptors random messages carry (`h` values index below this).
    static let fdCount = 4

    static func basicType(_ rng: inout some RandomNumberGenerator) -> DBusType {
        basicTypes.randomElement(using: &rng)!
    }

    /// A complete type nested at most `depth` containers deep.
    static func type(depth: Int, _ rng: inout some RandomNumberGenerator) -> DBusType {
        guard depth > 0, Int.random(in: 0..<3, using: &rng) > 0 else { return basicType(&rng) }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return .variant
        case 1: return .array(type(depth: depth - 1, &rng))
        case 2: return .array(.byte)
        case 3: return .dictionary(key: basicType(&rng), value: type(depth: depth - 1, &rng))
        default: return .structure((0..<Int.random(in: 1...3, using: &rng)).map { _ in type(depth: depth - 1, &rng) })
        }
    }

    static func string(_ rng: inout some RandomNumberGenerator, maximumLength: Int = 12) -> String {
        String((0..<Int.random(in: 0...maximumLength, using: &rng)).map { _ in characters.randomElement(using: &rng)! })
    }

    static func objectPath(_ rng: inout some RandomNumberGenerator) -> DBusObjectPath {
        let elements = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
            String((0..<Int.random(in: 1...6, using: &rng)).map { _ in pathCharacters.randomElement(using: &rng)! })
        }
        return DBusObjectPath("/" + elements.joined(separator: "/"))!
    }

    /// A valid signature of zero to three complete types.
    static func signature(_ rng: inout some RandomNumberGenerator) -> String {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in type(depth: 3, &rng).signature }.joined()
    }

    static func double(_ rng: inout some RandomNumberGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return [0, -0.0, 1, -1, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude].randomElement(using: &rng)!
        case 1: return Double.random(in: -1e6...1e6, using: &rng)
        default:
            // Any bit pattern but NaN (NaN != NaN would make equality useless).
            let value = Double(bitPattern: UInt64.random(in: .min ... .max, using: &rng))
            return value.isNaN ? 0.5 : value
        }
    }

    /// A value of `type`; variants hold values of types at most `depth` deep.
    static func value(of type: DBusType, depth: Int, _ rng: inout some RandomNumberGenerator) -> DBusValue {
        switch type {
        case .byte: return .byte(UInt8.random(in: .min ... .max, using: &rng))
        case .boolean: return .boolean(Bool.random(using: &rng))
        case .int16: return .int16(Int16.random(in: .min ... .max, using: &rng))
        case .uint16: return .uint16(UInt16.random(in: .min ... .max, using: &rng))
        case .int32: return .int32(Int32.random(in: .min ... .max, using: &rng))
        case .uint32: return .uint32(UInt32.random(in: .min ... .max, using: &rng))
        case .int64: return .int64(Int64.random(in: .min ... .max, using: &rng))
        case .uint64: return .uint64(UInt64.random(in: .min ... .max, using: &rng))
        case .double: return .double(double(&rng))
        case .string: return .string(string(&rng))
        case .objectPath: return .objectPath(objectPath(&rng))
        case .signature: return .signature(signature(&rng))
        case .unixFD: return .unixFD(UInt32.random(in: 0..<UInt32(fdCount), using: &rng))
        case .variant:
            let inner = self.type(depth: max(depth - 1, 0), &rng)
            return .variant(value(of: inner, depth: depth - 1, &rng))
        case .array(.byte):
            return .bytes(Data((0..<Int.random(in: 0...9, using: &rng)).map { _ in UInt8.random(in: .min ... .max, using: &rng) }))
        case .array(let element):
            return .array(element, (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(of: element, depth: depth - 1, &rng) })
        case .dictionary(let key, let valueType):
            return .dictionary(key: key, value: valueType, (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                DBusDictionaryEntry(value(of: key, depth: 0, &rng), value(of: valueType, depth: depth - 1, &rng))
            })
        case .structure(let fields):
            return .structure(fields.map { value(of: $0, depth: depth - 1, &rng) })
        }
    }

    /// A body of zero to four values whose signature fits in 255 bytes.
    static func body(_ rng: inout some RandomNumberGenerator) -> [DBusValue] {
        while true {
            let body = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                let type = self.type(depth: 4, &rng)
                return value(of: type, depth: 4, &rng)
            }
            if body.map(\.type.signature).joined().utf8.count <= 255 { return body }
        }
    }

    static func name(_ rng: inout some RandomNumberGenerator) -> String {
        ["org.example.Thing", "com.example.A_b.C9", ":1.42", "x.y"].randomElement(using: &rng)!
    }

    /// A message of any kind with the header fields its kind needs and some optional ones.
    static func message(_ rng: inout some RandomNumberGenerator) -> DBusMessage {
        let kind = [DBusMessage.Kind.methodCall, .methodReturn, .error, .signal].randomElement(using: &rng)!
        var message = DBusMessage(kind: kind, flags: DBusMessage.Flags(rawValue: UInt8.random(in: 0...7, using: &rng)))
        switch kind {
        case .methodCall:
            message.path = objectPath(&rng)
            message.member = "Member\(Int.random(in: 0...9, using: &rng))"
            if Bool.random(using: &rng) { message.interface = name(&rng) }
        case .signal:
            message.path = objectPath(&rng)
            message.interface = name(&rng)
            message.member = "Changed"
        case .error:
            message.errorName = "org.example.Error.Failed"
            message.replySerial = UInt32.random(in: 1 ... .max, using: &rng)
        case .methodReturn:
            message.replySerial = UInt32.random(in: 1 ... .max, using: &rng)
        }
        if Bool.random(using: &rng) { message.destination = name(&rng) }
        if Bool.random(using: &rng) { message.sender = name(&rng) }
        message.body = body(&rng)
        if message.body.contains(where: { $0.largestFDIndex != nil }) {
            message.unixFDs = (0..<Int32(fdCount)).map { 100 + $0 }
        }
        return message
    }

    static let messages = Generator<DBusMessage, Shrink.None<DBusMessage>>(run: { rng in message(&rng) })
    static let bodies = Generator<[DBusValue], Shrink.None<[DBusValue]>>(run: { rng in body(&rng) })
}
