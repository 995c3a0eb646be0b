import Foundation

/// The route a contact's latest advert took to this radio (`ADVERT_PATH`, the reply to
/// `GET_ADVERT_PATH`). The radio keeps the last 16 adverts in memory only.
public struct MeshAdvertPath: Sendable, Hashable {
    /// When this radio received the advert (seconds since 1970, the radio's clock).
    public var receivedAt: UInt32
    /// The hop hashes, ``hashSize`` bytes each; empty for an advert heard directly.
    public var path: Data
    /// The bytes of each hop's hash: 1, 2 or 3 (other values are clamped).
    public var hashSize: Int {
        didSet { hashSize = min(max(hashSize, 1), MeshPathEncoding.maximumHashSize) }
    }

    /// Creates an advert path.
    public init(receivedAt: UInt32, path: Data, hashSize: Int = 1) {
        self.receivedAt = receivedAt
        self.path = path
        self.hashSize = min(max(hashSize, 1), MeshPathEncoding.maximumHashSize)
    }

    /// The number of hops.
    public var hopCount: Int { path.count / hashSize }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshAdvertPath {
        let receivedAt = try reader.u32()
        let (hops, size) = try MeshPathEncoding.decode(try reader.u8(), code: reader.code)
        return MeshAdvertPath(receivedAt: receivedAt, path: try reader.bytes(hops * size), hashSize: size)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u32(receivedAt)
        let hops = min(path.count / hashSize, MeshPathEncoding.maximumPathBytes / hashSize, 63)
        writer.u8(MeshPathEncoding.encode(hops: hops, hashSize: hashSize))
        writer.bytes(Data(path.prefix(hops * hashSize)))
    }
}

/// The one-byte path length of MeshCore packets and frames: bits 0–5 the hop count, bits 6–7
/// the hash size − 1 (3 is invalid); the path is hops × size bytes, at most 64.
package enum MeshPathEncoding {
    /// The widest hop hash.
    package static let maximumHashSize = 3
    /// The longest path, in bytes.
    package static let maximumPathBytes = 64

    /// The hop count and hash size, or a `malformed` error for a value no path has.
    package static func decode(_ encoded: UInt8, code: UInt8) throws(MeshCoreDecodeError) -> (hops: Int, hashSize: Int) {
        let size = Int(encoded >> 6) + 1
        let hops = Int(encoded & 0x3F)
        guard size <= maximumHashSize, hops * size <= maximumPathBytes else {
            throw .malformed(code: code, reason: "path length 0x\(String(encoded, radix: 16)) is not a path")
        }
        return (hops, size)
    }

    /// The byte for `hops` hops of `hashSize` bytes.
    package static func encode(hops: Int, hashSize: Int) -> UInt8 {
        UInt8(min(max(hashSize, 1), maximumHashSize) - 1) << 6 | UInt8(min(max(hops, 0), 63))
    }
}
