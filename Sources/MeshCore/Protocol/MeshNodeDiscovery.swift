import Foundation

/// Node discovery over control data: a zero-hop request (`SEND_CONTROL_DATA`) that nearby
/// repeaters and sensors answer, each with a `CONTROL_DATA` push.
public struct MeshNodeDiscovery: Sendable, Hashable {
    /// The node types asked (bit n for advert type n: repeaters 0x04, sensors 0x10).
    public var typeFilter: UInt8
    /// Matches the answers to the request.
    public var tag: UInt32
    /// Whether answers carry 8-byte key prefixes instead of whole keys.
    public var prefixOnly: Bool
    /// Only nodes whose discovery time is at least this (seconds since 1970).
    public var since: UInt32?

    /// The filter for `types`.
    public static func filter(_ types: [MeshContactType]) -> UInt8 {
        types.reduce(0) { $0 | (1 << ($1.rawValue & 0x07)) }
    }

    /// Creates a discovery request.
    public init(types: [MeshContactType] = [.repeater], tag: UInt32, prefixOnly: Bool = true, since: UInt32? = nil) {
        self.typeFilter = Self.filter(types)
        self.tag = tag
        self.prefixOnly = prefixOnly
        self.since = since
    }

    /// The control payload.
    public var payload: Data {
        var writer = ByteWriter(code: 0x80 | (prefixOnly ? 0x01 : 0x00))
        writer.u8(typeFilter)
        writer.u32(tag)
        if let since { writer.u32(since) }
        return writer.data
    }

    /// One node's answer.
    public struct Answer: Sendable, Hashable {
        /// The answering node's type.
        public var type: MeshContactType
        /// The SNR (dB) it heard the request with.
        public var snrHeard: Double
        /// The request's tag.
        public var tag: UInt32
        /// Its public key, or the first 8 bytes of it.
        public var publicKey: Data

        /// Creates an answer.
        public init(type: MeshContactType, snrHeard: Double, tag: UInt32, publicKey: Data) {
            self.type = type
            self.snrHeard = snrHeard
            self.tag = tag
            self.publicKey = publicKey
        }

        /// Parses a `CONTROL_DATA` payload; nil when it is not a discovery answer.
        public init?(payload: Data) {
            guard let first = payload.first, first & 0xF0 == 0x90 else { return nil }
            var reader = ByteReader(payload, code: first)
            guard let snr = try? reader.i8(), let tag = try? reader.u32() else { return nil }
            let key = reader.rest()
            guard key.count == 8 || key.count == MeshContact.publicKeySize else { return nil }
            self.init(type: MeshContactType(rawValue: first & 0x0F), snrHeard: Double(snr) / 4, tag: tag, publicKey: key)
        }

        /// The payload.
        public var payload: Data {
            var writer = ByteWriter(code: 0x90 | (type.rawValue & 0x0F))
            writer.i8(MeshCoreFixedPoint.int8(snrHeard, scale: 4))
            writer.u32(tag)
            writer.bytes(publicKey)
            return writer.data
        }
    }
}
