import Foundation

/// A contact as the radio stores it: the body of `CONTACT` and `NEW_ADVERT` frames.
///
/// On the wire (147 bytes after the code byte): public key 32, type, flags, out_path_len
/// (0xFF = unknown, flood), out_path 64, name 32 (NUL-padded), last_advert u32, lat i32 ×1e6,
/// lon i32 ×1e6, lastmod u32.
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

    /// The contact's 32-byte public key.
    public var publicKey: Data
    /// The kind of node.
    public var type: MeshContactType
    /// Contact flags (bit 0: favourite).
    public var flags: UInt8
    /// The route to the contact, one byte per hop, or `nil` when unknown (messages flood).
    /// At most 64 bytes are encoded.
    public var outPath: Data?
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

    /// The first 6 bytes of the public key, which address direct messages.
    public var publicKeyPrefix: Data { Data(publicKey.prefix(6)) }

    /// Creates a contact.
    public init(
        publicKey: Data,
        type: MeshContactType,
        flags: UInt8 = 0,
        outPath: Data? = nil,
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
        self.name = name
        self.lastAdvert = lastAdvert
        self.latitude = latitude
        self.longitude = longitude
        self.lastModified = lastModified
    }

    /// Reads a contact body from `reader`.
    static func decodeBody(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshContact {
        try reader.require(bodySize)
        let publicKey = try reader.bytes(publicKeySize)
        let type = MeshContactType(rawValue: try reader.u8())
        let flags = try reader.u8()
        let pathLength = try reader.u8()
        let pathField = try reader.bytes(outPathCapacity)
        let outPath: Data?
        if pathLength == floodPathLength {
            outPath = nil
        } else if Int(pathLength) <= outPathCapacity {
            outPath = Data(pathField.prefix(Int(pathLength)))
        } else {
            throw .malformed(
                code: reader.code, reason: "out_path_len \(pathLength) exceeds \(outPathCapacity)")
        }
        let name = try reader.string(fixed: nameSize)
        let lastAdvert = try reader.u32()
        let latitude = Double(try reader.i32()) / 1e6
        let longitude = Double(try reader.i32()) / 1e6
        let lastModified = try reader.u32()
        return MeshContact(
            publicKey: publicKey, type: type, flags: flags, outPath: outPath, name: name,
            lastAdvert: lastAdvert, latitude: latitude, longitude: longitude,
            lastModified: lastModified)
    }

    /// Writes the 147-byte body. Fields are cut or zero-padded to their wire widths.
    func encodeBody(into writer: inout ByteWriter) {
        writer.bytes(publicKey, fixed: Self.publicKeySize)
        writer.u8(type.rawValue)
        writer.u8(flags)
        if let outPath {
            let path = outPath.prefix(Self.outPathCapacity)
            writer.u8(UInt8(path.count))
            writer.bytes(Data(path), fixed: Self.outPathCapacity)
        } else {
            writer.u8(Self.floodPathLength)
            writer.bytes(Data(), fixed: Self.outPathCapacity)
        }
        writer.string(name, fixed: Self.nameSize)
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
