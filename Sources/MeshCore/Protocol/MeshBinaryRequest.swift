import Foundation

/// A request to a node one is logged in to (`SEND_BINARY_REQ`); the node answers with
/// `BINARY_RESPONSE` carrying the request's tag.
public enum MeshBinaryRequest: Sendable, Hashable {
    /// The node's status (``MeshNodeStatus``).
    case status
    /// The node's telemetry; bits set in `excluding` leave out base (1), location (2) or
    /// environment (4) readings.
    case telemetry(excluding: UInt8 = 0)
    /// Sensors: minimum, maximum and average of each reading over a window (seconds ago).
    case minMaxAverage(fromSecondsAgo: UInt32, toSecondsAgo: UInt32)
    /// The access list (administrators only).
    case accessList
    /// Repeaters: the repeaters heard directly (``MeshNeighbours``).
    case neighbours(count: UInt8 = 255, offset: UInt16 = 0, order: MeshNeighbourOrder = .newestFirst, prefixLength: UInt8 = 4, nonce: UInt32 = 0)
    /// Repeaters: firmware version, name and owner text.
    case ownerInfo

    /// The request type byte.
    public var type: UInt8 {
        switch self {
        case .status: 0x01
        case .telemetry: 0x03
        case .minMaxAverage: 0x04
        case .accessList: 0x05
        case .neighbours: 0x06
        case .ownerInfo: 0x07
        }
    }

    /// The type byte and its parameters, as carried after the public key.
    public var encoded: Data {
        var writer = ByteWriter(code: type)
        switch self {
        case .status, .ownerInfo:
            break
        case .telemetry(let excluding):
            writer.u8(excluding)
        case .minMaxAverage(let from, let to):
            writer.u32(from)
            writer.u32(to)
            writer.u8(0)
            writer.u8(0)
        case .accessList:
            writer.u8(0)
            writer.u8(0)
        case .neighbours(let count, let offset, let order, let prefixLength, let nonce):
            writer.u8(0)
            writer.u8(count)
            writer.u16(offset)
            writer.u8(order.rawValue)
            writer.u8(min(prefixLength, 32))
            writer.u32(nonce)
        }
        return writer.data
    }

    /// Parses a request body as a server does; nil for a type it does not know.
    public init?(decoding body: Data) {
        guard let type = body.first else { return nil }
        var reader = ByteReader(body, code: type)
        switch type {
        case 0x01: self = .status
        case 0x03: self = .telemetry(excluding: (try? reader.u8()) ?? 0)
        case 0x04:
            guard let from = try? reader.u32(), let to = try? reader.u32() else { return nil }
            self = .minMaxAverage(fromSecondsAgo: from, toSecondsAgo: to)
        case 0x05: self = .accessList
        case 0x06:
            guard (try? reader.u8()) != nil, let count = try? reader.u8(), let offset = try? reader.u16(),
                let order = try? reader.u8(), let prefixLength = try? reader.u8()
            else { return nil }
            self = .neighbours(
                count: count, offset: offset, order: MeshNeighbourOrder(rawValue: order) ?? .newestFirst,
                prefixLength: prefixLength, nonce: (try? reader.u32()) ?? 0)
        case 0x07: self = .ownerInfo
        default: return nil
        }
    }
}

/// How a repeater orders its neighbour list.
public enum MeshNeighbourOrder: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Heard most recently first.
    case newestFirst = 0
    /// Heard longest ago first.
    case oldestFirst = 1
    /// Best signal first.
    case strongestFirst = 2
    /// Weakest signal first.
    case weakestFirst = 3
}

/// A repeater's neighbours: the repeaters it hears directly.
public struct MeshNeighbours: Sendable, Hashable {
    /// How many neighbours the repeater knows (more than listed when the list was cut).
    public var total: Int
    /// The neighbours listed.
    public var entries: [Entry]

    /// One neighbour.
    public struct Entry: Sendable, Hashable {
        /// The first bytes of its public key (as many as asked for).
        public var publicKeyPrefix: Data
        /// Seconds since it was last heard.
        public var heardSecondsAgo: UInt32
        /// The SNR it was heard with, in dB.
        public var snr: Double

        /// Creates an entry.
        public init(publicKeyPrefix: Data, heardSecondsAgo: UInt32, snr: Double) {
            self.publicKeyPrefix = publicKeyPrefix
            self.heardSecondsAgo = heardSecondsAgo
            self.snr = snr
        }
    }

    /// Creates a list.
    public init(total: Int, entries: [Entry]) {
        self.total = total
        self.entries = entries
    }

    /// Decodes a response body: `total i16, returned i16`, then entries of the prefix length
    /// asked for, a `UInt32` age and an SNR byte.
    ///
    /// - Throws: ``MeshCoreDecodeError`` when the entries announced are not all there.
    public init(decoding body: Data, prefixLength: Int) throws(MeshCoreDecodeError) {
        var reader = ByteReader(body, code: MeshCorePushCode.binaryResponse.rawValue, offset: 0)
        let total = Int(Int16(bitPattern: try reader.u16()))
        let returned = Int(Int16(bitPattern: try reader.u16()))
        guard returned >= 0, prefixLength >= 0, prefixLength <= 32 else {
            throw .malformed(code: reader.code, reason: "\(returned) neighbours of \(prefixLength)-byte prefixes")
        }
        try reader.require(returned * (prefixLength + 5))
        var entries: [Entry] = []
        for _ in 0..<returned {
            entries.append(Entry(
                publicKeyPrefix: try reader.bytes(prefixLength), heardSecondsAgo: try reader.u32(),
                snr: Double(try reader.i8()) / 4))
        }
        self.init(total: max(total, returned), entries: entries)
    }

    /// The response body, with prefixes of `prefixLength` bytes (0…32).
    public func encoded(prefixLength: Int) -> Data {
        let prefixLength = min(max(prefixLength, 0), 32)
        var writer = ByteWriter()
        writer.u16(UInt16(bitPattern: Int16(clamping: total)))
        writer.u16(UInt16(bitPattern: Int16(clamping: entries.count)))
        for entry in entries {
            writer.bytes(entry.publicKeyPrefix, fixed: prefixLength)
            writer.u32(entry.heardSecondsAgo)
            writer.i8(MeshCoreFixedPoint.int8(entry.snr, scale: 4))
        }
        return writer.data
    }
}

/// One entry of a server's access list.
public struct MeshAccessEntry: Sendable, Hashable, Codable {
    /// The first 6 bytes of the member's public key.
    public var publicKeyPrefix: Data
    /// What the member may do.
    public var permission: MeshAccessPermission

    /// Creates an entry.
    public init(publicKeyPrefix: Data, permission: MeshAccessPermission) {
        self.publicKeyPrefix = publicKeyPrefix
        self.permission = permission
    }

    /// Decodes an access-list body: entries of a 6-byte prefix and a permissions byte. The
    /// answer arrives padded with zeros: all-zero prefixes and a partial entry at the end are
    /// not entries.
    public static func list(decoding body: Data) -> [MeshAccessEntry] {
        stride(from: body.startIndex, to: body.endIndex - 6, by: 7).compactMap { start in
            let prefix = Data(body[start..<(start + 6)])
            guard prefix.contains(where: { $0 != 0 }) else { return nil }
            return MeshAccessEntry(publicKeyPrefix: prefix, permission: MeshAccessPermission(rawValue: body[start + 6] & 0x03) ?? .guest)
        }
    }

    /// The access-list body.
    public static func encoded(_ entries: [MeshAccessEntry]) -> Data {
        var writer = ByteWriter()
        for entry in entries {
            writer.bytes(entry.publicKeyPrefix, fixed: 6)
            writer.u8(entry.permission.rawValue)
        }
        return writer.data
    }
}

/// A repeater's owner information (`GET_OWNER_INFO`, or the owner anonymous request).
public struct MeshOwnerInfo: Sendable, Hashable, Codable {
    /// The firmware version (only in the logged-in request's answer).
    public var firmwareVersion: String?
    /// The node's name.
    public var name: String
    /// Whatever its owner wrote about it.
    public var owner: String

    /// Creates owner information.
    public init(firmwareVersion: String? = nil, name: String, owner: String) {
        self.firmwareVersion = firmwareVersion
        self.name = name
        self.owner = owner
    }

    /// Parses `fw\nname\nowner` (`withVersion`) or `name\nowner`; the owner text keeps any
    /// further lines.
    public init(text: String, withVersion: Bool) {
        var lines = text.split(separator: "\n", maxSplits: withVersion ? 2 : 1, omittingEmptySubsequences: false).map(String.init)
        let version: String? = withVersion && !lines.isEmpty ? lines.removeFirst() : nil
        self.init(firmwareVersion: version, name: lines.first ?? "", owner: lines.count > 1 ? lines[1] : "")
    }

    /// The text form (with the version when there is one).
    public var text: String {
        ([firmwareVersion].compactMap { $0 } + [name, owner]).joined(separator: "\n")
    }
}
