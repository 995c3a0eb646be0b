import Foundation

/// A request any node may send a repeater without logging in (`SEND_ANON_REQ`). The
/// repeater answers only a request that reached it along a path (not flooded), back along
/// ``replyPath``; the answer comes as `BINARY_RESPONSE` with the request's tag.
public struct MeshAnonymousRequest: Sendable, Hashable {
    /// What is asked.
    public enum Kind: UInt8, Sendable, Hashable, Codable, CaseIterable {
        /// The regions the repeater floods for.
        case regions = 0x01
        /// The node's name and owner text.
        case owner = 0x02
        /// The repeater's clock and features.
        case clock = 0x03
    }

    /// What is asked.
    public var kind: Kind
    /// The route back to this radio, from the repeater's side (empty: the repeater is a
    /// direct neighbour).
    public var replyPath: Data
    /// The bytes of each hop hash in ``replyPath``.
    public var replyPathHashSize: Int {
        didSet { replyPathHashSize = min(max(replyPathHashSize, 1), MeshPathEncoding.maximumHashSize) }
    }

    /// Creates a request.
    public init(_ kind: Kind, replyPath: Data = Data(), replyPathHashSize: Int = 1) {
        self.kind = kind
        self.replyPath = replyPath
        self.replyPathHashSize = min(max(replyPathHashSize, 1), MeshPathEncoding.maximumHashSize)
    }

    /// The request data after the public key: kind, reply path length (encoded), reply path.
    public var encoded: Data {
        var writer = ByteWriter(code: kind.rawValue)
        let hops = min(replyPath.count / replyPathHashSize, MeshPathEncoding.maximumPathBytes / replyPathHashSize, 63)
        writer.u8(MeshPathEncoding.encode(hops: hops, hashSize: replyPathHashSize))
        writer.bytes(Data(replyPath.prefix(hops * replyPathHashSize)))
        return writer.data
    }

    /// Parses request data as a repeater does; nil for an unknown kind or a bad path.
    public init?(decoding data: Data) {
        guard let raw = data.first, let kind = Kind(rawValue: raw) else { return nil }
        var reader = ByteReader(data, code: raw)
        guard let encoded = try? reader.u8(), let (hops, size) = try? MeshPathEncoding.decode(encoded, code: raw),
            let path = try? reader.bytes(hops * size)
        else { return nil }
        self.init(kind, replyPath: path, replyPathHashSize: size)
    }
}

/// A repeater's answer to an anonymous request: its clock, then the kind's data.
public enum MeshAnonymousResponse: Sendable, Hashable {
    /// The regions it floods for (`*` first when it floods for any).
    case regions(clock: UInt32, [String])
    /// Its name and owner text.
    case owner(clock: UInt32, MeshOwnerInfo)
    /// Its clock and feature byte (bridge type in the low bits, 0x80 when it does not forward).
    case clock(clock: UInt32, features: UInt8)

    /// Decodes a response body for `kind`.
    ///
    /// - Throws: ``MeshCoreDecodeError`` when the body lacks the clock (or the feature byte).
    public init(decoding body: Data, kind: MeshAnonymousRequest.Kind) throws(MeshCoreDecodeError) {
        var reader = ByteReader(body, code: MeshCorePushCode.binaryResponse.rawValue, offset: 0)
        let clock = try reader.u32()
        switch kind {
        case .regions:
            let text = MeshCoreText.decode(nulPadded: reader.rest())
            self = .regions(clock: clock, text.split(separator: ",").map(String.init))
        case .owner:
            self = .owner(clock: clock, MeshOwnerInfo(text: MeshCoreText.decode(nulPadded: reader.rest()), withVersion: false))
        case .clock:
            self = .clock(clock: clock, features: try reader.u8())
        }
    }

    /// The response body.
    public var encoded: Data {
        var writer = ByteWriter()
        switch self {
        case .regions(let clock, let names):
            writer.u32(clock)
            writer.string(names.joined(separator: ","))
            writer.u8(0)
        case .owner(let clock, let info):
            writer.u32(clock)
            writer.string(info.name + "\n" + info.owner)
            writer.u8(0)
        case .clock(let clock, let features):
            writer.u32(clock)
            writer.u8(features)
        }
        return writer.data
    }
}
