import Foundation
import TetherCore

/// A contact card: a node's signed advert as a flood packet, what `EXPORT_CONTACT` returns,
/// `IMPORT_CONTACT` takes, and people pass around as `meshcore://` followed by its hex.
///
/// Packet layout: header (flood route, ADVERT payload), [4 bytes of transport codes for the
/// transport route types], path length (encoded: hops and hash size), path, advert payload.
/// A card the radio exports for a contact keeps the path the advert flooded over.
public struct MeshContactCard: Sendable, Hashable {
    /// The URI prefix.
    public static let scheme = "meshcore://"
    /// The longest packet a card holds (header, transport codes, path length, path, payload).
    static let maximumPacketSize = 1 + 4 + 1 + MeshPathEncoding.maximumPathBytes + MeshAdvert.fixedSize + MeshAdvert.maximumAppDataSize

    /// The signed advert.
    public var advert: MeshAdvert
    /// The hop hashes the advert flooded over (empty for one's own card).
    public var path: Data
    /// The bytes of each hop's hash in ``path``.
    public var pathHashSize: Int {
        didSet { pathHashSize = min(max(pathHashSize, 1), MeshPathEncoding.maximumHashSize) }
    }

    /// A card for `advert`, with the path it came over.
    public init(advert: MeshAdvert, path: Data = Data(), pathHashSize: Int = 1) {
        self.advert = advert
        self.path = path
        self.pathHashSize = min(max(pathHashSize, 1), MeshPathEncoding.maximumHashSize)
    }

    /// The raw packet.
    public var packet: Data {
        var writer = ByteWriter(capacity: 2 + path.count + MeshAdvert.fixedSize + advert.appDataBytes.count)
        writer.u8(MeshPacketHeader.make(route: .flood, payload: .advert))
        let hops = min(path.count / pathHashSize, MeshPathEncoding.maximumPathBytes / pathHashSize, 63)
        writer.u8(MeshPathEncoding.encode(hops: hops, hashSize: pathHashSize))
        writer.bytes(Data(path.prefix(hops * pathHashSize)))
        writer.bytes(advert.payload)
        return writer.data
    }

    /// `meshcore://` and the packet in lower-case hex.
    public var uri: String { Self.scheme + packet.hexString }

    /// Parses a raw advert packet, as the radio does for `IMPORT_CONTACT`.
    ///
    /// - Throws: ``MeshCoreDecodeError`` for a packet that is not an advert, has payload
    ///   version bits set, an invalid path, or a truncated advert. The signature is not checked
    ///   here (see ``MeshAdvert/isSignatureValid``).
    public init(packet: Data) throws(MeshCoreDecodeError) {
        guard packet.count <= Self.maximumPacketSize else { throw .tooLarge(packet.count) }
        var reader = ByteReader(packet, code: MeshPacketHeader.PayloadType.advert.rawValue, offset: 0)
        let header = try reader.u8()
        guard header >> 6 == 0 else {
            throw .malformed(code: reader.code, reason: "packet version \(header >> 6) (only 0 exists)")
        }
        guard (header >> 2) & 0x0F == MeshPacketHeader.PayloadType.advert.rawValue else {
            throw .malformed(code: reader.code, reason: "payload type \((header >> 2) & 0x0F) is not an advert")
        }
        let route = header & 0x03
        if route == MeshPacketHeader.RouteType.transportFlood.rawValue || route == MeshPacketHeader.RouteType.transportDirect.rawValue {
            _ = try reader.bytes(4)
        }
        let (hops, size) = try MeshPathEncoding.decode(try reader.u8(), code: reader.code)
        let path = try reader.bytes(hops * size)
        self.init(advert: try MeshAdvert(payload: reader.rest()), path: path, pathHashSize: size)
    }

    /// Parses `meshcore://<hex>` (the scheme is optional; surrounding spaces are ignored).
    ///
    /// - Throws: ``MeshCoreDecodeError`` when the text is not hex or the packet is not a card.
    public init(uri: String) throws(MeshCoreDecodeError) {
        var text = Substring(uri.trimmingCharacters(in: .whitespacesAndNewlines))
        if text.lowercased().hasPrefix(Self.scheme) { text = text.dropFirst(Self.scheme.count) }
        guard text.utf8.count <= 2 * Self.maximumPacketSize else { throw .tooLarge(text.utf8.count / 2) }
        guard let bytes = Data(hexString: String(text)) else {
            throw .malformed(code: MeshPacketHeader.PayloadType.advert.rawValue, reason: "a contact card is hex after \(Self.scheme)")
        }
        try self.init(packet: bytes)
    }
}
