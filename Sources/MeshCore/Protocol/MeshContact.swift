import Foundation

/// A contact as the radio stores it: the body of `CONTACT` and `NEW_ADVERT` frames.
///
/// On the wire (147 bytes after the code byte): public key 32, type, flags, out_path_len
/// (0xFF = unknown, flood; otherwise bits 0–5 the hop count and bits 6–7 the hash size − 1),
/// out_path 64, name 32 (NUL-padded), last_advert u32, lat i32 ×1e6, lon i32 ×1e6, lastmod u32.
public struct MeshContact: Sendable, Hashable, Codable {
    /// The length of the body on the wire, without the code byte.
    static let bodySize = 147
    /// The length of the public key.
    package static let publicKeySize = 32
    /// The width of the out-path field.
    static let outPathCapacity = 64
    /// The width of the name field.
    static let nameSize = 32
    /// The out_path_len value meaning "no known path, flood".
    static let floodPathLength: UInt8 = 0xFF
    /// The widest hop hash a path encodes.
    static let maximumHashSize = 3

    /// The contact's 32-byte public key.
    public var publicKey: Data
    /// The kind of node.
    public var type: MeshContactType
    /// Contact flags (bit 0: favourite).
    public var flags: UInt8
    /// The route to the contact, ``outPathHashSize`` bytes per hop, or `nil` when unknown
    /// (messages flood). At most 64 bytes (and 63 hops) are encoded.
    public var outPath: Data?
    /// The bytes of each hop's hash in ``outPath``: 1, 2 or 3 (repeaters choose with
    /// `SET_PATH_HASH_MODE`).
    public var outPathHashSize: Int
    /// The advertised name; at most 32 UTF-8 bytes are encoded.
    public var name: String
    /// The timestamp of the contact's last advert (seconds since 1970, the sender's clock).
    public var lastAdvert: UInt32
    /// The advertised latitude in degrees.
    public var latitude: Double
    /// The advertised longitude in degrees.
    public var longitude: Double
    /// When the radio last changed this contact (seconds since 1970, the radio's clock).
    public var lastModified: UInt32

    /// The hops of ``outPath`` (nil when the contact is reached by flooding).
    public var outPathHopCount: Int? { outPath.map { $0.count / hashSize } }

    /// ``outPathHashSize`` within 1…3 (it is a public `var`; the wire has no other sizes).
    private var hashSize: Int { min(max(outPathHashSize, 1), Self.maximumHashSize) }

    /// The first 6 bytes of the public key, which address direct messages.
    public var publicKeyPrefix: Data { Data(publicKey.prefix(6)) }

    /// Creates a contact.
    public init(
        publicKey: Data,
        type: MeshContactType,
        flags: UInt8 = 0,
        outPath: Data? = nil,
        outPathHashSize: Int = 1,
        name: String,
        lastAdvert: UInt32 = 0,
        latitude: Double = 0,
        longitude: Double = 0,
        lastModified: UInt32 = 0
    ) {
        self.publicKey = publicKey
        self.type = type
        self.flags = flags
        self.outPath = outPath
        self.outPathHashSize = min(max(outPathHashSize, 1), Self.maximumHashSize)
        self.name = name
        self.lastAdvert = lastAdvert
        self.latitude = latitude
        self.longitude = longitude
        self.lastModified = lastModified
    }

    private enum CodingKeys: String, CodingKey {
        case publicKey, type, flags, outPath, outPathHashSize, name, lastAdvert, latitude, longitude, lastModified
    }

    /// Decodes a contact; `outPathHashSize` may be missing (encoded before it existed: 1).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            publicKey: try container.decode(Data.self, forKey: .publicKey),
            type: try container.decode(MeshContactType.self, forKey: .type),
            flags: try container.decode(UInt8.self, forKey: .flags),
            outPath: try container.decodeIfPresent(Data.self, forKey: .outPath),
            outPathHashSize: try container.decodeIfPresent(Int.self, forKey: .outPathHashSize) ?? 1,
            name: try container.decode(String.self, forKey: .name),
            lastAdvert: try container.decode(UInt32.self, forKey: .lastAdvert),
            latitude: try container.decode(Double.self, forKey: .latitude),
            longitude: try container.decode(Double.self, forKey: .longitude),
            lastModified: try container.decode(UInt32.self, forKey: .lastModified))
    }

    /// Reads a contact body from `reader`.
    static func decodeBody(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshContact {
        try reader.require(bodySize)
        let publicKey = try reader.bytes(publicKeySize)
        let type = MeshContactType(rawValue: try reader.u8())
        let flags = try reader.u8()
        let encodedLength = try reader.u8()
        let pathField = try reader.bytes(outPathCapacity)
        let outPath: Data?
        var hashSize = 1
        let size = Int(encodedLength >> 6) + 1
        let length = Int(encodedLength & 0x3F) * size
        if encodedLength != floodPathLength, size <= maximumHashSize, length <= outPathCapacity {
            hashSize = size
            outPath = Data(pathField.prefix(length))
        } else {
            // 0xFF, or a value no path has (the radio stores what any app wrote): flood, rather
            // than losing the whole contact from a listing.
            outPath = nil
        }
        let name = try reader.string(fixed: nameSize)
        let lastAdvert = try reader.u32()
        let latitude = Double(try reader.i32()) / 1e6
        let longitude = Double(try reader.i32()) / 1e6
        let lastModified = try reader.u32()
        return MeshContact(
            publicKey: publicKey, type: type, flags: flags, outPath: outPath, outPathHashSize: hashSize, name: name,
            lastAdvert: lastAdvert, latitude: latitude, longitude: longitude,
            lastModified: lastModified)
    }

    /// Reads the body of `ADD_UPDATE_CONTACT` the way the firmware does: everything up to the
    /// last advert time is needed; the position counts only when both coordinates are there,
    /// the modification time only when it is (what is absent reads as zero).
    static func decodeCommandBody(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> (MeshContact, ContactUpdateFields) {
        let throughLastAdvert = publicKeySize + 3 + outPathCapacity + nameSize + 4
        try reader.require(throughLastAdvert)
        let given = reader.rest()
        let fields: ContactUpdateFields =
            given.count >= bodySize ? .withLastModified : given.count >= bodySize - 4 ? .withPosition : .throughLastAdvert
        let kept = switch fields {
        case .withLastModified: bodySize
        case .withPosition: bodySize - 4
        case .throughLastAdvert: throughLastAdvert
        }
        let body = Data(given.prefix(kept)) + Data(count: bodySize - kept)
        var full = ByteReader(body, code: reader.code, offset: 0)
        return (try decodeBody(from: &full), fields)
    }

    /// Writes the 147-byte body. Fields are cut or zero-padded to their wire widths.
    func encodeBody(into writer: inout ByteWriter) {
        writer.bytes(publicKey, fixed: Self.publicKeySize)
        writer.u8(type.rawValue)
        writer.u8(flags)
        if let outPath {
            // Whole hops only, as many as the field (64 bytes) and the count (6 bits) hold.
            let size = hashSize
            let hops = min(outPath.count / size, Self.outPathCapacity / size, 63)
            writer.u8(UInt8(size - 1) << 6 | UInt8(hops))
            writer.bytes(Data(outPath.prefix(hops * size)), fixed: Self.outPathCapacity)
        } else {
            writer.u8(Self.floodPathLength)
            writer.bytes(Data(), fixed: Self.outPathCapacity)
        }
        // 31 bytes and a NUL, as the firmware keeps names.
        writer.bytes(MeshCoreText.utf8(name, maxBytes: Self.nameSize - 1), fixed: Self.nameSize)
        writer.u32(lastAdvert)
        writer.i32(MeshCoreFixedPoint.int32(latitude, scale: 1e6))
        writer.i32(MeshCoreFixedPoint.int32(longitude, scale: 1e6))
        writer.u32(lastModified)
    }

    /// Decodes a bare 147-byte body (no code byte); `code` is reported in errors.
    static func decodeBody(
        _ body: Data, code: UInt8 = MeshCoreResponseCode.contact.rawValue
    ) throws(MeshCoreDecodeError) -> MeshContact {
        var reader = ByteReader(body, code: code, offset: 0)
        return try decodeBody(from: &reader)
    }

    /// The bare 147-byte body, without a code byte.
    func encodeBody() -> Data {
        var writer = ByteWriter(capacity: Self.bodySize)
        encodeBody(into: &writer)
        return writer.data
    }
}

/// How much of a contact an `ADD_UPDATE_CONTACT` frame carries: the firmware keeps a known
/// contact's position when the frame stops before it, and stamps its own clock as the
/// modification time when the frame stops before that.
public enum ContactUpdateFields: Sendable, Hashable {
    /// Up to the last advert time (136 bytes).
    case throughLastAdvert
    /// And the position (144 bytes, what the apps send: the radio stamps the time).
    case withPosition
    /// And the modification time (148 bytes).
    case withLastModified
}
