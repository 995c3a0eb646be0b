import Foundation

/// A validated D-Bus object path (`/`, `/org/bluez/hci0`).
public struct DBusObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path text.
    public let rawValue: String

    /// Creates a path, or nil if `rawValue` is not a valid object path (elements of
    /// `[A-Za-z0-9_]`, no empty element, no trailing slash except the root).
    public init?(_ rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// Creates a path from a literal; a literal is a programming error if invalid.
    public init(stringLiteral value: String) {
        precondition(Self.isValid(value), "invalid D-Bus object path literal '\(value)'")
        rawValue = value
    }

    /// The root path `/`.
    public static let root: DBusObjectPath = "/"

    /// A child path (`/a` + `b` → `/a/b`); nil if `element` is not a valid path element.
    public func appending(_ element: String) -> DBusObjectPath? {
        DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// Whether `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    /// The last element (`hci0` of `/org/bluez/hci0`); empty for the root.
    public var lastElement: String {
        rawValue.split(separator: "/").last.map(String.init) ?? ""
    }

    /// The parent path; nil for the root.
    public var parent: DBusObjectPath? {
        guard rawValue != "/" else { return nil }
        let elements = rawValue.split(separator: "/").dropLast()
        return DBusObjectPath("/" + elements.joined(separator: "/"))
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                let ok = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_")
                if !ok { return false }
                previousSlash = false
            }
        }
        return true
    }
}

/// One key/value pair of a D-Bus dictionary.
public struct DBusDictionaryEntry: Hashable, Sendable {
    /// The key (a basic value).
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// Creates an entry.
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A D-Bus value of any type.
///
/// Arrays and dictionaries carry their element types so that empty ones marshal correctly.
/// `ay` is always decoded as ``bytes(_:)`` (one `Data`, not one value per byte);
/// `.array(.byte, …)` is accepted when encoding.
public indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(String)
    /// A file descriptor, as an index into the message's ``DBusMessage/unixFDs``.
    case unixFD(UInt32)
    /// A value of any type, with its signature on the wire.
    case variant(DBusValue)
    /// `ay`.
    case bytes(Data)
    /// An array of elements of one type.
    case array(DBusType, [DBusValue])
    /// A dictionary (`a{KV}`), entries in wire order.
    case dictionary(key: DBusType, value: DBusType, [DBusDictionaryEntry])
    /// A structure.
    case structure([DBusValue])

    /// The value's type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    // MARK: Building

    /// `as`.
    public static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map(DBusValue.string)) }

    /// `ao`.
    public static func objectPaths(_ values: [DBusObjectPath]) -> DBusValue { .array(.objectPath, values.map(DBusValue.objectPath)) }

    /// `a{sv}` from a Swift dictionary; keys are sorted so the wire form is stable.
    public static func properties(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant, values.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.string($0.key), .variant($0.value))
        })
    }

    // MARK: Reading (variants are looked through)

    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// The string of an `s`, `o` or `g` value.
    public var string: String? {
        switch unwrapped {
        case .string(let s), .signature(let s): s
        case .objectPath(let p): p.rawValue
        default: nil
        }
    }

    /// The path of an `o` value.
    public var objectPath: DBusObjectPath? {
        if case .objectPath(let p) = unwrapped { return p }
        return nil
    }

    /// The value of a `b`.
    public var bool: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }

    /// Any integer value, widened.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The bytes of an `ay` (in either representation).
    public var bytes: Data? {
        switch unwrapped {
        case .bytes(let data): return data
        case .array(.byte, let elements):
            var data = Data(capacity: elements.count)
            for element in elements {
                guard case .byte(let b) = element else { return nil }
                data.append(b)
            }
            return data
        default: return nil
        }
    }

    /// The elements of an array.
    public var arrayElements: [DBusValue]? {
        switch unwrapped {
        case .array(_, let elements): elements
        case .bytes(let data): data.map(DBusValue.byte)
        default: nil
        }
    }

    /// The strings of an `as` (nil if any element is not a string).
    public var stringArray: [String]? {
        guard let elements = arrayElements else { return nil }
        var result: [String] = []
        for element in elements {
            guard let s = element.string else { return nil }
            result.append(s)
        }
        return result
    }

    /// The entries of a dictionary.
    public var dictionaryEntries: [DBusDictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// A dictionary with string keys (`a{sv}`, `a{ss}`…) as a Swift dictionary; values keep
    /// their variant wrappers off. Later duplicate keys win.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }

    /// The fields of a structure.
    public var structureFields: [DBusValue]? {
        if case .structure(let fields) = unwrapped { return fields }
        return nil
    }
}
