import Foundation

/// A binary datagram on a channel (`SEND_CHANNEL_DATA`, `CHANNEL_DATA_RECV`): apps exchange
/// their own data types over a channel's key, beside its text.
public struct MeshChannelData: Sendable, Hashable {
    /// The channel slot.
    public var channelIndex: UInt8
    /// The app-defined type: 0x0100–0xFEFF registered apps, 0xFF00–0xFFFE testing, 0xFFFF
    /// development; 0 is invalid.
    public var dataType: UInt16
    /// The bytes (at most ``maximumPayload``).
    public var payload: Data
    /// Sending: the route to take, `nil` to flood. Received: always nil (the radio does not
    /// report it).
    public var path: Data?
    /// The bytes of each hop hash in ``path``.
    public var pathHashSize: Int {
        didSet { pathHashSize = min(max(pathHashSize, 1), MeshPathEncoding.maximumHashSize) }
    }
    /// Received: the encoded path length of the packet (0xFF: it arrived direct).
    public var receivedPathLength: UInt8?
    /// Received: the signal-to-noise ratio, in dB.
    public var snr: Double?

    /// The longest payload the radio sends in one datagram.
    public static let maximumPayload = 165
    /// The longest payload a received frame can hold.
    static let maximumFramePayload = 167

    /// Creates a datagram to send.
    public init(channelIndex: UInt8, dataType: UInt16, payload: Data, path: Data? = nil, pathHashSize: Int = 1) {
        self.channelIndex = channelIndex
        self.dataType = dataType
        self.payload = payload
        self.path = path
        self.pathHashSize = min(max(pathHashSize, 1), MeshPathEncoding.maximumHashSize)
    }

    func encodeCommand(into writer: inout ByteWriter) throws(MeshCoreEncodeError) {
        guard dataType != 0 else { throw .invalidArgument("data type 0 is invalid") }
        guard payload.count <= Self.maximumPayload else {
            throw .invalidArgument("a channel datagram carries at most \(Self.maximumPayload) bytes, got \(payload.count)")
        }
        writer.u8(channelIndex)
        if let path {
            let hops = path.count / pathHashSize
            guard path.count % pathHashSize == 0, path.count <= MeshPathEncoding.maximumPathBytes, hops <= 63 else {
                throw .invalidArgument("a path is whole hashes, at most 64 bytes")
            }
            writer.u8(MeshPathEncoding.encode(hops: hops, hashSize: pathHashSize))
            writer.bytes(path)
        } else {
            writer.u8(0xFF)
        }
        writer.u16(dataType)
        writer.bytes(payload)
    }

    static func decodeCommand(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshChannelData {
        // The firmware answers ERR 6 for every malformed datagram.
        func invalid(_ reason: String) -> MeshCoreDecodeError { .invalidValue(code: reader.code, reason: reason) }
        guard reader.remaining >= 3 else { throw invalid("a channel datagram needs index, path length and type") }
        let index = try reader.u8()
        let encoded = try reader.u8()
        var path: Data?
        var size = 1
        if encoded != 0xFF {
            guard let (hops, hashSize) = try? MeshPathEncoding.decode(encoded, code: reader.code), reader.remaining >= hops * hashSize else {
                throw invalid("path length 0x\(String(encoded, radix: 16))")
            }
            path = try reader.bytes(hops * hashSize)
            size = hashSize
        }
        guard reader.remaining >= 2 else { throw invalid("no data type") }
        // Type 0 and an oversized payload are the radio's to refuse, after it checked the
        // channel (ERR 2 comes first).
        let type = try reader.u16()
        return MeshChannelData(channelIndex: index, dataType: type, payload: reader.rest(), path: path, pathHashSize: size)
    }

    /// `CHANNEL_DATA_RECV`: `1B snr 00 00 idx path_len type(2) len data`.
    static func decodeReceived(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshChannelData {
        let snr = Double(try reader.i8()) / 4
        _ = try reader.bytes(2)
        let index = try reader.u8()
        let pathLength = try reader.u8()
        let type = try reader.u16()
        let length = Int(try reader.u8())
        var data = MeshChannelData(channelIndex: index, dataType: type, payload: try reader.bytes(length))
        data.receivedPathLength = pathLength
        data.snr = snr
        return data
    }

    func encodeReceived(into writer: inout ByteWriter) {
        writer.i8(MeshCoreFixedPoint.int8(snr ?? 0, scale: 4))
        writer.bytes(Data(count: 2))
        writer.u8(channelIndex)
        writer.u8(receivedPathLength ?? 0xFF)
        writer.u16(dataType)
        let kept = payload.prefix(Self.maximumFramePayload)
        writer.u8(UInt8(kept.count))
        writer.bytes(Data(kept))
    }
}
