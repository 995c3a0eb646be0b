import Foundation

/// A D-Bus message: a method call, a reply, an error or a signal.
public struct DBusMessage: Sendable, Hashable, CustomStringConvertible {
    /// The message type.
    public enum Kind: UInt8, Sendable, Hashable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    /// Header flags.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The caller does not want a reply.
        public static let noReplyExpected = Flags(rawValue: 0x01)
        /// The bus must not start a service to deliver the call.
        public static let noAutoStart = Flags(rawValue: 0x02)
        /// The caller lets the service prompt the user (polkit).
        public static let allowInteractiveAuthorization = Flags(rawValue: 0x04)
    }

    public var kind: Kind
    public var flags: Flags
    /// Assigned by the connection when sent; 0 until then.
    public var serial: UInt32
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var replySerial: UInt32?
    public var destination: String?
    public var sender: String?
    /// The body's values; the signature is derived from them.
    public var body: [DBusValue]
    /// File descriptors carried with the message (`h` values index into this). Received
    /// descriptors belong to whoever handles the message: close or adopt them. Descriptors of a
    /// message a connection accepts for sending become the connection's: it closes them once
    /// sent (or when it closes first); a send refused at once leaves them with the caller.
    public var unixFDs: [Int32]

    /// Creates a message.
    public init(
        kind: Kind, flags: Flags = [], serial: UInt32 = 0, path: DBusObjectPath? = nil, interface: String? = nil,
        member: String? = nil, errorName: String? = nil, replySerial: UInt32? = nil, destination: String? = nil,
        sender: String? = nil, body: [DBusValue] = [], unixFDs: [Int32] = []
    ) {
        self.kind = kind
        self.flags = flags
        self.serial = serial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.replySerial = replySerial
        self.destination = destination
        self.sender = sender
        self.body = body
        self.unixFDs = unixFDs
    }

    /// A method call.
    public static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// A signal.
    public static func signal(path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
    }

    /// A successful reply to `call`.
    public static func methodReturn(to call: DBusMessage, body: [DBusValue] = [], unixFDs: [Int32] = []) -> DBusMessage {
        DBusMessage(kind: .methodReturn, replySerial: call.serial, destination: call.sender, body: body, unixFDs: unixFDs)
    }

    /// An error reply to `call`.
    public static func error(to call: DBusMessage, name: String, message: String) -> DBusMessage {
        DBusMessage(kind: .error, errorName: name, replySerial: call.serial, destination: call.sender, body: [.string(message)])
    }

    /// The body's signature.
    public var signature: String { body.map(\.type.signature).joined() }

    /// The first body value as a string, the text of an error reply.
    public var errorMessage: String { body.first?.string ?? "" }

    public var description: String {
        var parts = ["\(kind)"]
        if serial != 0 { parts.append("serial=\(serial)") }
        if let replySerial { parts.append("reply_serial=\(replySerial)") }
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature=\(signature)")
        return parts.joined(separator: " ")
    }

    // MARK: Wire format

    private enum Field: UInt8 {
        case path = 1, interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    /// The fixed part of every message: enough bytes to know its total length.
    public static let fixedHeaderLength = 16

    /// The total length of the message whose first ``fixedHeaderLength`` bytes are `prefix`.
    ///
    /// Throws for an impossible header or one longer than `maximumLength`, so a stream reader
    /// knows how much to buffer (and when to give up) before the whole message has arrived.
    public static func frameLength(prefix: some Collection<UInt8>, maximumLength: Int) throws(DBusDecodingError) -> Int {
        let bytes = Array(prefix.prefix(fixedHeaderLength))
        guard bytes.count == fixedHeaderLength else { throw DBusDecodingError("header shorter than 16 bytes") }
        let bigEndian: Bool
        switch bytes[0] {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        default: throw DBusDecodingError("unknown byte order \(bytes[0])")
        }
        guard bytes[3] == 1 else { throw DBusDecodingError("unsupported protocol version \(bytes[3])") }
        var reader = DBusReader(bytes: bytes, offset: 4, bigEndian: bigEndian)
        let bodyLength = Int(try reader.read(UInt32.self))
        _ = try reader.read(UInt32.self)
        let fieldsLength = Int(try reader.read(UInt32.self))
        let headerEnd = (16 + fieldsLength + 7) & ~7
        let total = headerEnd + bodyLength
        guard total <= maximumLength else {
            throw DBusDecodingError("message of \(total) bytes exceeds the limit of \(maximumLength)")
        }
        return total
    }

    /// Encodes the message with `serial`.
    public func encoded(serial: UInt32) throws(DBusEncodingError) -> [UInt8] {
        guard serial != 0 else { throw DBusEncodingError("serial 0 is reserved") }
        try validateHeader()
        var bodyWriter = DBusWriter(reservingCapacity: 128)
        for value in body {
            if let index = value.largestFDIndex, Int(index) >= unixFDs.count {
                throw DBusEncodingError("file descriptor index \(index) but \(unixFDs.count) descriptors attached")
            }
            try bodyWriter.append(value)
        }
        let signature = self.signature
        guard signature.utf8.count <= 255 else { throw DBusEncodingError("body signature longer than 255 bytes") }

        var fields: [DBusValue] = []
        func field(_ code: Field, _ value: DBusValue) {
            fields.append(.structure([.byte(code.rawValue), .variant(value)]))
        }
        if let path { field(.path, .objectPath(path)) }
        if let interface { field(.interface, .string(interface)) }
        if let member { field(.member, .string(member)) }
        if let errorName { field(.errorName, .string(errorName)) }
        if let replySerial { field(.replySerial, .uint32(replySerial)) }
        if let destination { field(.destination, .string(destination)) }
        if let sender { field(.sender, .string(sender)) }
        if !body.isEmpty { field(.signature, .signature(signature)) }
        if !unixFDs.isEmpty { field(.unixFDs, .uint32(UInt32(unixFDs.count))) }

        var writer = DBusWriter(reservingCapacity: 128 + bodyWriter.bytes.count)
        writer.appendByte(UInt8(ascii: "l"))
        writer.appendByte(kind.rawValue)
        writer.appendByte(flags.rawValue)
        writer.appendByte(1)
        writer.append(UInt32(bodyWriter.bytes.count))
        writer.append(serial)
        try writer.append(.array(.structure([.byte, .variant]), fields))
        writer.align(8)
        var bytes = writer.bytes
        bytes.append(contentsOf: bodyWriter.bytes)
        return bytes
    }

    private func validateHeader() throws(DBusEncodingError) {
        switch kind {
        case .methodCall:
            guard path != nil, member != nil else { throw DBusEncodingError("a method call needs a path and a member") }
        case .signal:
            guard path != nil, interface != nil, member != nil else { throw DBusEncodingError("a signal needs a path, an interface and a member") }
        case .error:
            guard errorName != nil, replySerial != nil else { throw DBusEncodingError("an error needs a name and a reply serial") }
        case .methodReturn:
            guard replySerial != nil else { throw DBusEncodingError("a reply needs a reply serial") }
        }
    }

    /// Decodes one whole message. `unixFDs` are the descriptors that arrived with it; the
    /// header's count must not exceed them.
    public static func decode(_ bytes: [UInt8], unixFDs: [Int32] = []) throws(DBusDecodingError) -> DBusMessage {
        guard bytes.count >= fixedHeaderLength else { throw DBusDecodingError("message shorter than its fixed header") }
        let total = try frameLength(prefix: bytes, maximumLength: Int.max)
        guard total == bytes.count else { throw DBusDecodingError("message length \(bytes.count) differs from its header's \(total)") }
        let bigEndian = bytes[0] == UInt8(ascii: "B")
        guard let kind = Kind(rawValue: bytes[1]) else { throw DBusDecodingError("unknown message type \(bytes[1])") }
        var reader = DBusReader(bytes: bytes, offset: 4, bigEndian: bigEndian)
        let bodyLength = Int(try reader.read(UInt32.self))
        let serial = try reader.read(UInt32.self)
        guard serial != 0 else { throw DBusDecodingError("serial 0") }
        let fieldsValue = try reader.read(.array(.structure([.byte, .variant])))
        try reader.align(8)
        guard reader.offset + bodyLength == bytes.count else { throw DBusDecodingError("body length does not match the message") }

        var message = DBusMessage(kind: kind, flags: Flags(rawValue: bytes[2]), serial: serial)
        var signature = ""
        var fdCount = 0
        for field in fieldsValue.arrayElements ?? [] {
            guard let parts = field.structureFields, parts.count == 2, case .byte(let code) = parts[0] else { continue }
            let value = parts[1].unwrapped
            func expect<T>(_ extracted: T?, _ what: String) throws(DBusDecodingError) -> T {
                guard let extracted else { throw DBusDecodingError("header field \(code) is not \(what)") }
                return extracted
            }
            switch Field(rawValue: code) {
            case .path: message.path = try expect(value.objectPath, "an object path")
            case .interface: message.interface = try expect(stringValue(value), "a string")
            case .member: message.member = try expect(stringValue(value), "a string")
            case .errorName: message.errorName = try expect(stringValue(value), "a string")
            case .replySerial:
                guard case .uint32(let v) = value else { throw DBusDecodingError("reply serial is not a uint32") }
                message.replySerial = v
            case .destination: message.destination = try expect(stringValue(value), "a string")
            case .sender: message.sender = try expect(stringValue(value), "a string")
            case .signature:
                guard case .signature(let s) = value else { throw DBusDecodingError("signature field is not a signature") }
                signature = s
            case .unixFDs:
                guard case .uint32(let v) = value else { throw DBusDecodingError("unix fd count is not a uint32") }
                fdCount = Int(v)
            case nil: continue // unknown fields must be ignored
            }
        }
        guard fdCount <= unixFDs.count else {
            throw DBusDecodingError("message announces \(fdCount) file descriptors, \(unixFDs.count) arrived")
        }
        switch kind {
        case .methodCall where message.path == nil || message.member == nil:
            throw DBusDecodingError("method call without a path or member")
        case .signal where message.path == nil || message.interface == nil || message.member == nil:
            throw DBusDecodingError("signal without a path, interface or member")
        case .error where message.errorName == nil || message.replySerial == nil:
            throw DBusDecodingError("error without a name or reply serial")
        case .methodReturn where message.replySerial == nil:
            throw DBusDecodingError("reply without a reply serial")
        default: break
        }
        let types = try DBusType.parse(signature)
        var bodyReader = DBusReader(bytes: bytes, offset: reader.offset, bigEndian: bigEndian)
        var body: [DBusValue] = []
        for type in types { body.append(try bodyReader.read(type)) }
        guard bodyReader.isAtEnd else { throw DBusDecodingError("body holds bytes beyond its signature") }
        for value in body {
            if let index = value.largestFDIndex, Int(index) >= fdCount {
                throw DBusDecodingError("file descriptor index \(index) out of range")
            }
        }
        message.body = body
        message.unixFDs = Array(unixFDs.prefix(fdCount))
        return message
    }

    private static func stringValue(_ value: DBusValue) -> String? {
        if case .string(let s) = value { return s }
        return nil
    }
}

extension DBusValue {
    /// The largest `h` index inside the value, if any.
    var largestFDIndex: UInt32? {
        switch self {
        case .unixFD(let index): return index
        case .variant(let inner): return inner.largestFDIndex
        case .array(.byte, _), .bytes: return nil
        case .array(_, let elements), .structure(let elements): return elements.compactMap(\.largestFDIndex).max()
        case .dictionary(_, _, let entries):
            return entries.compactMap { [ $0.key.largestFDIndex, $0.value.largestFDIndex ].compactMap { $0 }.max() }.max()
        default: return nil
        }
    }
}
