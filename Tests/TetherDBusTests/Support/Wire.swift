/// Builds D-Bus wire bytes by hand, independently of the codec under test, in either byte
/// order. Alignment is relative to the start of the buffer (a body starts 8-aligned, so a body
/// built here aligns as it would in a message).
struct Wire {
    var bytes: [UInt8] = []
    let bigEndian: Bool

    init(bigEndian: Bool = false) { self.bigEndian = bigEndian }

    mutating func pad(to boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func raw(_ values: [UInt8]) { bytes += values }

    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        pad(to: size)
        for i in 0..<size {
            let shift = bigEndian ? 8 * (size - 1 - i) : 8 * i
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    mutating func uint32(_ value: UInt32) { integer(value) }

    /// `s`/`o`: length, bytes, NUL.
    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        bytes += Array(text.utf8)
        bytes.append(0)
    }

    /// `g`: one-byte length, bytes, NUL.
    mutating func signature(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += Array(text.utf8)
        bytes.append(0)
    }

    /// A header field value.
    enum FieldValue {
        case string(String)
        case objectPath(String)
        case signature(String)
        case uint32(UInt32)
        /// Any signature and hand-made bytes (which must align themselves).
        case raw(signature: String, write: (inout Wire) -> Void)
    }

    /// A whole message: the fixed header, the header fields (code, value) and `body`.
    static func message(
        bigEndian: Bool = false, kind: UInt8, flags: UInt8 = 0, serial: UInt32 = 1,
        fields: [(UInt8, FieldValue)], body: [UInt8], announcedBodyLength: UInt32? = nil
    ) -> [UInt8] {
        var wire = Wire(bigEndian: bigEndian)
        wire.byte(bigEndian ? UInt8(ascii: "B") : UInt8(ascii: "l"))
        wire.byte(kind)
        wire.byte(flags)
        wire.byte(1)
        wire.uint32(announcedBodyLength ?? UInt32(body.count))
        wire.uint32(serial)
        let lengthOffset = wire.bytes.count
        wire.uint32(0)
        let start = wire.bytes.count
        for (code, value) in fields {
            wire.pad(to: 8)
            wire.byte(code)
            switch value {
            case .string(let text):
                wire.signature("s")
                wire.string(text)
            case .objectPath(let text):
                wire.signature("o")
                wire.string(text)
            case .signature(let text):
                wire.signature("g")
                wire.signature(text)
            case .uint32(let value):
                wire.signature("u")
                wire.uint32(value)
            case .raw(let signature, let write):
                wire.signature(signature)
                write(&wire)
            }
        }
        let length = UInt32(wire.bytes.count - start)
        var lengthWire = Wire(bigEndian: bigEndian)
        lengthWire.uint32(length)
        wire.bytes.replaceSubrange(lengthOffset..<(lengthOffset + 4), with: lengthWire.bytes)
        wire.pad(to: 8)
        return wire.bytes + body
    }

    /// A signal on `/t`, interface `t.I`, member `M`, with `body` of `signature`.
    static func signal(bigEndian: Bool = false, signature: String, body: [UInt8], extraFields: [(UInt8, FieldValue)] = []) -> [UInt8] {
        var fields: [(UInt8, FieldValue)] = [(1, .objectPath("/t")), (2, .string("t.I")), (3, .string("M"))]
        if !signature.isEmpty { fields.append((8, .signature(signature))) }
        return message(bigEndian: bigEndian, kind: 4, fields: fields + extraFields, body: body)
    }
}
