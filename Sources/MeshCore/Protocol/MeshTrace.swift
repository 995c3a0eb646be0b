import Foundation

/// A trace along a route of repeaters (`SEND_TRACE_PATH`): each repeater on ``path`` adds
/// the SNR it heard the trace with, and the result comes back as `TRACE_DATA`.
public struct MeshTraceRequest: Sendable, Hashable {
    /// Matches the result to the request.
    public var tag: UInt32
    /// An authentication code repeaters may check (0 for none).
    public var authCode: UInt32
    /// The bytes of each repeater hash in ``path``: 1, 2, 4 or 8.
    public var hashSize: Int
    /// The repeaters' hashes, in order.
    public var path: Data

    /// The hash sizes a trace takes.
    public static let hashSizes = [1, 2, 4, 8]

    /// Creates a trace request.
    public init(tag: UInt32, authCode: UInt32 = 0, hashSize: Int = 1, path: Data) {
        self.tag = tag
        self.authCode = authCode
        self.hashSize = hashSize
        self.path = path
    }

    /// The flags byte: log2 of the hash size.
    var flags: UInt8 { UInt8(Self.hashSizes.firstIndex(of: hashSize) ?? 0) }

    func encode(into writer: inout ByteWriter) throws(MeshCoreEncodeError) {
        guard Self.hashSizes.contains(hashSize) else {
            throw .invalidArgument("a trace's hash size is 1, 2, 4 or 8 bytes, got \(hashSize)")
        }
        guard !path.isEmpty, path.count % hashSize == 0, path.count / hashSize <= 64 else {
            throw .invalidArgument("a trace path is 1 to 64 hashes of \(hashSize) bytes, got \(path.count) bytes")
        }
        writer.u32(tag)
        writer.u32(authCode)
        writer.u8(flags)
        writer.bytes(path)
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshTraceRequest {
        try reader.require(4 + 4 + 1 + 1)
        let tag = try reader.u32(), auth = try reader.u32()
        let size = 1 << Int(try reader.u8() & 0x03)
        let path = reader.rest()
        guard path.count % size == 0, path.count / size <= 64 else {
            throw .invalidValue(code: reader.code, reason: "\(path.count) path bytes are not whole \(size)-byte hashes")
        }
        return MeshTraceRequest(tag: tag, authCode: auth, hashSize: size, path: path)
    }
}

/// A trace's result (`TRACE_DATA`): the SNR at each repeater and at this radio.
public struct MeshTraceResult: Sendable, Hashable {
    /// The request's tag.
    public var tag: UInt32
    /// The request's authentication code.
    public var authCode: UInt32
    /// The bytes of each repeater hash.
    public var hashSize: Int
    /// Each repeater, with the SNR (dB) it heard the trace with.
    public var hops: [Hop]
    /// The SNR (dB) this radio heard the returning trace with.
    public var finalSNR: Double

    /// One repeater on the route.
    public struct Hop: Sendable, Hashable {
        /// Its hash.
        public var hash: Data
        /// The SNR it heard the trace with, in dB.
        public var snr: Double

        /// Creates a hop.
        public init(hash: Data, snr: Double) {
            self.hash = hash
            self.snr = snr
        }
    }

    /// Creates a result.
    public init(tag: UInt32, authCode: UInt32 = 0, hashSize: Int = 1, hops: [Hop], finalSNR: Double) {
        self.tag = tag
        self.authCode = authCode
        self.hashSize = hashSize
        self.hops = hops
        self.finalSNR = finalSNR
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshTraceResult {
        _ = try reader.u8()
        let length = Int(try reader.u8())
        let size = 1 << Int(try reader.u8() & 0x03)
        let tag = try reader.u32(), auth = try reader.u32()
        guard length % size == 0 else {
            throw .malformed(code: reader.code, reason: "\(length) path bytes are not whole \(size)-byte hashes")
        }
        let hashes = try reader.bytes(length)
        let count = length / size
        let snrs = try reader.bytes(count)
        let final = try reader.i8()
        let hops = (0..<count).map { index in
            Hop(hash: Data(hashes[(index * size)..<((index + 1) * size)]), snr: Double(Int8(bitPattern: snrs[index])) / 4)
        }
        return MeshTraceResult(tag: tag, authCode: auth, hashSize: size, hops: hops, finalSNR: Double(final) / 4)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(0)
        let size = MeshTraceRequest.hashSizes.contains(hashSize) ? hashSize : 1
        let hashes = hops.reduce(into: Data()) { $0.append(Data($1.hash.prefix(size)) + Data(count: max(0, size - $1.hash.count))) }
        writer.u8(UInt8(clamping: hashes.count))
        writer.u8(UInt8(MeshTraceRequest.hashSizes.firstIndex(of: size) ?? 0))
        writer.u32(tag)
        writer.u32(authCode)
        writer.bytes(hashes)
        for hop in hops { writer.i8(MeshCoreFixedPoint.int8(hop.snr, scale: 4)) }
        writer.i8(MeshCoreFixedPoint.int8(finalSNR, scale: 4))
    }
}

/// A route found by path discovery (`PATH_DISCOVERY_RESPONSE`).
public struct MeshDiscoveredPath: Sendable, Hashable {
    /// The first 6 bytes of the node's public key.
    public var nodePrefix: Data
    /// The route from this radio to the node (usable as the contact's path).
    public var outPath: Data
    /// The bytes of each hop hash in ``outPath`` (1 to 3).
    public var outPathHashSize: Int {
        didSet { outPathHashSize = min(max(outPathHashSize, 1), MeshPathEncoding.maximumHashSize) }
    }
    /// The route the answer took back.
    public var inPath: Data
    /// The bytes of each hop hash in ``inPath`` (1 to 3).
    public var inPathHashSize: Int {
        didSet { inPathHashSize = min(max(inPathHashSize, 1), MeshPathEncoding.maximumHashSize) }
    }

    /// Creates a discovered route.
    public init(nodePrefix: Data, outPath: Data, outPathHashSize: Int = 1, inPath: Data, inPathHashSize: Int = 1) {
        self.nodePrefix = nodePrefix
        self.outPath = outPath
        self.outPathHashSize = min(max(outPathHashSize, 1), MeshPathEncoding.maximumHashSize)
        self.inPath = inPath
        self.inPathHashSize = min(max(inPathHashSize, 1), MeshPathEncoding.maximumHashSize)
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshDiscoveredPath {
        _ = try reader.u8()
        let prefix = try reader.bytes(MeshCoreCommand.prefixSize)
        let (outHops, outSize) = try MeshPathEncoding.decode(try reader.u8(), code: reader.code)
        let outPath = try reader.bytes(outHops * outSize)
        let (inHops, inSize) = try MeshPathEncoding.decode(try reader.u8(), code: reader.code)
        let inPath = try reader.bytes(inHops * inSize)
        return MeshDiscoveredPath(nodePrefix: prefix, outPath: outPath, outPathHashSize: outSize, inPath: inPath, inPathHashSize: inSize)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(0)
        writer.bytes(nodePrefix, fixed: MeshCoreCommand.prefixSize)
        for (path, size) in [(outPath, outPathHashSize), (inPath, inPathHashSize)] {
            let hops = min(path.count / size, MeshPathEncoding.maximumPathBytes / size, 63)
            writer.u8(MeshPathEncoding.encode(hops: hops, hashSize: size))
            writer.bytes(Data(path.prefix(hops * size)))
        }
    }
}
