import Foundation

/// The specification's hard limits, enforced on every value read or written.
enum DBusLimits {
    /// The largest array, in bytes.
    static let maximumArrayLength = 64 * 1024 * 1024
    /// Variants nested in variants: not limited by the specification's signature rules, so
    /// bounded here to keep recursion finite.
    static let maximumVariantDepth = 64
}

/// Marshals values in D-Bus wire format (little-endian), aligned relative to offset 0.
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    mutating func align(_ boundary: Int) {
        let remainder = bytes.count % boundary
        if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: boundary - remainder)) }
    }

    mutating func appendByte(_ value: UInt8) { bytes.append(value) }

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        align(MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendString(_ text: String) throws(DBusEncodingError) {
        let utf8 = Array(text.utf8)
        guard !utf8.contains(0) else { throw DBusEncodingError("string contains a NUL byte") }
        append(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    mutating func appendSignature(_ text: String) throws(DBusEncodingError) {
        let utf8 = Array(text.utf8)
        guard utf8.count <= 255 else { throw DBusEncodingError("signature longer than 255 bytes") }
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    mutating func append(_ value: DBusValue, depth: Int = 0) throws(DBusEncodingError) {
        guard depth <= DBusLimits.maximumVariantDepth + 64 else { throw DBusEncodingError("value nested too deeply") }
        switch value {
        case .byte(let v): appendByte(v)
        case .boolean(let v): append(UInt32(v ? 1 : 0))
        case .int16(let v): append(v)
        case .uint16(let v): append(v)
        case .int32(let v): append(v)
        case .uint32(let v): append(v)
        case .int64(let v): append(v)
        case .uint64(let v): append(v)
        case .double(let v): append(v.bitPattern)
        case .string(let s): try appendString(s)
        case .objectPath(let p): try appendString(p.rawValue)
        case .signature(let s):
            do { _ = try DBusType.parse(s) } catch { throw DBusEncodingError("invalid signature '\(s)': \(error.reason)") }
            try appendSignature(s)
        case .unixFD(let index): append(index)
        case .variant(let inner):
            try appendSignature(inner.type.signature)
            try append(inner, depth: depth + 1)
        case .bytes(let data):
            guard data.count <= DBusLimits.maximumArrayLength else { throw DBusEncodingError("array longer than 64 MiB") }
            append(UInt32(data.count))
            bytes.append(contentsOf: data)
        case .array(let elementType, let elements):
            try appendArray(elementAlignment: elementType.alignment) { (writer) throws(DBusEncodingError) in
                for element in elements {
                    guard element.type == elementType else {
                        throw DBusEncodingError("array of \(elementType) holds a value of type \(element.type)")
                    }
                    try writer.append(element, depth: depth + 1)
                }
            }
        case .dictionary(let keyType, let valueType, let entries):
            guard keyType.isBasic else { throw DBusEncodingError("dictionary key type \(keyType) is not basic") }
            try appendArray(elementAlignment: 8) { (writer) throws(DBusEncodingError) in
                for entry in entries {
                    guard entry.key.type == keyType, entry.value.type == valueType else {
                        throw DBusEncodingError("dictionary of {\(keyType)\(valueType)} holds an entry of {\(entry.key.type)\(entry.value.type)}")
                    }
                    writer.align(8)
                    try writer.append(entry.key, depth: depth + 1)
                    try writer.append(entry.value, depth: depth + 1)
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusEncodingError("empty structure") }
            align(8)
            for field in fields { try append(field, depth: depth + 1) }
        }
    }

    private mutating func appendArray(elementAlignment: Int, _ body: (inout DBusWriter) throws(DBusEncodingError) -> Void) throws(DBusEncodingError) {
        align(4)
        let lengthOffset = bytes.count
        append(UInt32(0))
        align(elementAlignment)
        let start = bytes.count
        try body(&self)
        let length = bytes.count - start
        guard length <= DBusLimits.maximumArrayLength else { throw DBusEncodingError("array longer than 64 MiB") }
        withUnsafeBytes(of: UInt32(length).littleEndian) { raw in
            for i in 0..<4 { bytes[lengthOffset + i] = raw[i] }
        }
    }
}

/// A value that cannot be marshalled (a NUL in a string, an element of the wrong type…).
public struct DBusEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { "cannot encode D-Bus value: \(reason)" }
}

/// Reads values in D-Bus wire format from a message buffer, bounds-checked throughout.
struct DBusReader {
    let bytes: [UInt8]
    var offset: Int
    let end: Int
    let bigEndian: Bool

    init(bytes: [UInt8], offset: Int = 0, end: Int? = nil, bigEndian: Bool) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
        self.bigEndian = bigEndian
    }

    var isAtEnd: Bool { offset >= end }

    mutating func align(_ boundary: Int) throws(DBusDecodingError) {
        let remainder = offset % boundary
        guard remainder != 0 else { return }
        let padding = boundary - remainder
        guard offset + padding <= end else { throw DBusDecodingError("data ends inside alignment padding") }
        offset += padding
    }

    mutating func readByte() throws(DBusDecodingError) -> UInt8 {
        guard offset < end else { throw DBusDecodingError("data ends before a byte") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws(DBusDecodingError) -> T {
        let size = MemoryLayout<T>.size
        try align(size)
        guard offset + size <= end else { throw DBusDecodingError("data ends inside a \(size)-byte integer") }
        var value: T = 0
        for i in 0..<size {
            let byte = T(bytes[offset + i])
            value |= bigEndian ? byte << (8 * (size - 1 - i)) : byte << (8 * i)
        }
        offset += size
        return value
    }

    mutating func readString() throws(DBusDecodingError) -> String {
        let length = Int(try read(UInt32.self))
        return try readText(length: length)
    }

    mutating func readSignature() throws(DBusDecodingError) -> String {
        let length = Int(try readByte())
        return try readText(length: length)
    }

    private mutating func readText(length: Int) throws(DBusDecodingError) -> String {
        guard length <= end - offset - 1 else { throw DBusDecodingError("string of \(length) bytes runs past the data") }
        let slice = bytes[offset..<(offset + length)]
        guard bytes[offset + length] == 0 else { throw DBusDecodingError("string not NUL-terminated") }
        guard !slice.contains(0) else { throw DBusDecodingError("string contains a NUL byte") }
        guard let text = String(validating: slice, as: UTF8.self) else { throw DBusDecodingError("string is not valid UTF-8") }
        offset += length + 1
        return text
    }

    mutating func read(_ type: DBusType, depth: Int = 0) throws(DBusDecodingError) -> DBusValue {
        guard depth <= DBusLimits.maximumVariantDepth + 64 else { throw DBusDecodingError("value nested too deeply") }
        switch type {
        case .byte: return .byte(try readByte())
        case .boolean:
            let raw = try read(UInt32.self)
            guard raw <= 1 else { throw DBusDecodingError("boolean value \(raw) is neither 0 nor 1") }
            return .boolean(raw == 1)
        case .int16: return .int16(try read(Int16.self))
        case .uint16: return .uint16(try read(UInt16.self))
        case .int32: return .int32(try read(Int32.self))
        case .uint32: return .uint32(try read(UInt32.self))
        case .int64: return .int64(try read(Int64.self))
        case .uint64: return .uint64(try read(UInt64.self))
        case .double: return .double(Double(bitPattern: try read(UInt64.self)))
        case .string: return .string(try readString())
        case .objectPath:
            let text = try readString()
            guard let path = DBusObjectPath(text) else { throw DBusDecodingError("invalid object path '\(text.prefix(64))'") }
            return .objectPath(path)
        case .signature:
            let text = try readSignature()
            _ = try DBusType.parse(text)
            return .signature(text)
        case .unixFD: return .unixFD(try read(UInt32.self))
        case .variant:
            let signature = try readSignature()
            let inner = try DBusType.parseSingle(signature)
            return .variant(try read(inner, depth: depth + 1))
        case .array(let element):
            let length = Int(try read(UInt32.self))
            guard length <= DBusLimits.maximumArrayLength else { throw DBusDecodingError("array of \(length) bytes exceeds 64 MiB") }
            try align(element.alignment)
            guard length <= end - offset else { throw DBusDecodingError("array of \(length) bytes runs past the data") }
            if element == .byte {
                defer { offset += length }
                return .bytes(Data(bytes[offset..<(offset + length)]))
            }
            let stop = offset + length
            var elements: [DBusValue] = []
            while offset < stop {
                elements.append(try read(element, depth: depth + 1))
            }
            guard offset == stop else { throw DBusDecodingError("array elements overrun the array's length") }
            return .array(element, elements)
        case .dictionary(let keyType, let valueType):
            let length = Int(try read(UInt32.self))
            guard length <= DBusLimits.maximumArrayLength else { throw DBusDecodingError("array of \(length) bytes exceeds 64 MiB") }
            try align(8)
            guard length <= end - offset else { throw DBusDecodingError("dictionary of \(length) bytes runs past the data") }
            let stop = offset + length
            var entries: [DBusDictionaryEntry] = []
            while offset < stop {
                try align(8)
                let key = try read(keyType, depth: depth + 1)
                let value = try read(valueType, depth: depth + 1)
                entries.append(DBusDictionaryEntry(key, value))
            }
            guard offset == stop else { throw DBusDecodingError("dictionary entries overrun the array's length") }
            return .dictionary(key: keyType, value: valueType, entries)
        case .structure(let fieldTypes):
            try align(8)
            var fields: [DBusValue] = []
            fields.reserveCapacity(fieldTypes.count)
            for fieldType in fieldTypes { fields.append(try read(fieldType, depth: depth + 1)) }
            return .structure(fields)
        }
    }
}
