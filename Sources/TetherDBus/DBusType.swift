/// A D-Bus type: one complete type of a signature.
///
/// Signatures are parsed into trees of these; values carry the type of their elements so that
/// empty arrays and dictionaries still marshal with the right signature.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte
    case boolean
    case int16
    case uint16
    case int32
    case uint32
    case int64
    case uint64
    case double
    case string
    case objectPath
    case signature
    case unixFD
    case variant
    /// `aT`: an array of `T` (`ay` is carried as ``DBusValue/bytes(_:)``).
    case array(DBusType)
    /// `a{KV}`: a dictionary; `K` is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(…)`: a structure of one or more fields.
    case structure([DBusType])

    /// The type's signature text (`s`, `a{sv}`, `(ii)` …).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    public var description: String { signature }

    /// The alignment of the type's marshalled form, in bytes.
    public var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array, .dictionary: 4
        case .int64, .uint64, .double, .structure: 8
        }
    }

    /// Whether the type is basic (allowed as a dictionary key).
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// Parses a signature of zero or more complete types.
    ///
    /// Enforces the specification's limits (255 bytes, nesting depth 32 for arrays and for
    /// structures), so a hostile signature cannot recurse without bound.
    public static func parse(_ signature: String) throws(DBusDecodingError) -> [DBusType] {
        let bytes = Array(signature.utf8)
        guard bytes.count <= 255 else { throw DBusDecodingError("signature longer than 255 bytes") }
        var index = 0
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(bytes, &index, arrayDepth: 0, structDepth: 0))
        }
        return types
    }

    /// Parses a signature that must hold exactly one complete type (a variant's).
    public static func parseSingle(_ signature: String) throws(DBusDecodingError) -> DBusType {
        let types = try parse(signature)
        guard types.count == 1 else { throw DBusDecodingError("expected one complete type in signature '\(signature)'") }
        return types[0]
    }

    private static func parseOne(_ bytes: [UInt8], _ index: inout Int, arrayDepth: Int, structDepth: Int) throws(DBusDecodingError) -> DBusType {
        guard index < bytes.count else { throw DBusDecodingError("signature ends inside a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { throw DBusDecodingError("arrays nested deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try parseOne(bytes, &index, arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard key.isBasic else { throw DBusDecodingError("dictionary key of type \(key) is not basic") }
                let value = try parseOne(bytes, &index, arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw DBusDecodingError("dictionary entry must hold exactly a key and a value")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(bytes, &index, arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else { throw DBusDecodingError("structures nested deeper than 32") }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw DBusDecodingError("unterminated structure in signature") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseOne(bytes, &index, arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard !fields.isEmpty else { throw DBusDecodingError("empty structure in signature") }
            return .structure(fields)
        default:
            throw DBusDecodingError("invalid type code '\(Character(Unicode.Scalar(code)))' in signature")
        }
    }
}

/// Input that is not valid D-Bus: a malformed message, signature or value.
public struct DBusDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, for logs.
    public let reason: String

    /// Creates an error with a reason.
    public init(_ reason: String) { self.reason = reason }

    public var description: String { "malformed D-Bus data: \(reason)" }
}
