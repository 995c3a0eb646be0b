import Foundation

/// A repeater's or room server's status (`STATUS_RESPONSE`, or the status binary request).
///
/// Both layouts share the first 48 bytes; a repeater then sends its receive airtime and
/// receive errors (56 bytes), a room server its stored posts and post pushes (52 bytes). The
/// answer arrives padded with zeros to the cipher's block size, so its length cannot tell the
/// layouts apart: the reader says which node type it asked (``Layout``).
public struct MeshNodeStatus: Sendable, Hashable, Codable {
    /// The battery voltage in millivolts.
    public var batteryMillivolts: UInt16
    /// Packets waiting to be sent.
    public var transmitQueueLength: UInt16
    /// The noise floor in dBm.
    public var noiseFloor: Int16
    /// The RSSI of the last packet heard, in dBm.
    public var lastRSSI: Int16
    /// Packets received.
    public var packetsReceived: UInt32
    /// Packets sent.
    public var packetsSent: UInt32
    /// Seconds spent transmitting.
    public var transmitAirtimeSeconds: UInt32
    /// Seconds since the node booted.
    public var uptimeSeconds: UInt32
    /// Packets sent by flooding.
    public var sentFlood: UInt32
    /// Packets sent along a path.
    public var sentDirect: UInt32
    /// Flooded packets received.
    public var receivedFlood: UInt32
    /// Direct packets received.
    public var receivedDirect: UInt32
    /// The firmware's error flags (raw).
    public var errorFlags: UInt16
    /// The SNR of the last packet heard, in dB.
    public var lastSNR: Double
    /// Direct packets heard twice.
    public var directDuplicates: UInt16
    /// Flooded packets heard twice.
    public var floodDuplicates: UInt16
    /// Repeaters: seconds spent receiving.
    public var receiveAirtimeSeconds: UInt32?
    /// Repeaters: packets that failed to decode.
    public var receiveErrors: UInt32?
    /// Room servers: posts stored.
    public var postsStored: UInt16?
    /// Room servers: posts pushed to members.
    public var postPushes: UInt16?

    /// The length of a repeater's status.
    public static let repeaterSize = 56
    /// The length of a room server's status.
    public static let roomServerSize = 52

    /// Creates a status (the repeater or room server fields as given).
    public init(
        batteryMillivolts: UInt16 = 0, transmitQueueLength: UInt16 = 0, noiseFloor: Int16 = 0, lastRSSI: Int16 = 0,
        packetsReceived: UInt32 = 0, packetsSent: UInt32 = 0, transmitAirtimeSeconds: UInt32 = 0, uptimeSeconds: UInt32 = 0,
        sentFlood: UInt32 = 0, sentDirect: UInt32 = 0, receivedFlood: UInt32 = 0, receivedDirect: UInt32 = 0,
        errorFlags: UInt16 = 0, lastSNR: Double = 0, directDuplicates: UInt16 = 0, floodDuplicates: UInt16 = 0,
        receiveAirtimeSeconds: UInt32? = nil, receiveErrors: UInt32? = nil, postsStored: UInt16? = nil, postPushes: UInt16? = nil
    ) {
        self.batteryMillivolts = batteryMillivolts
        self.transmitQueueLength = transmitQueueLength
        self.noiseFloor = noiseFloor
        self.lastRSSI = lastRSSI
        self.packetsReceived = packetsReceived
        self.packetsSent = packetsSent
        self.transmitAirtimeSeconds = transmitAirtimeSeconds
        self.uptimeSeconds = uptimeSeconds
        self.sentFlood = sentFlood
        self.sentDirect = sentDirect
        self.receivedFlood = receivedFlood
        self.receivedDirect = receivedDirect
        self.errorFlags = errorFlags
        self.lastSNR = lastSNR
        self.directDuplicates = directDuplicates
        self.floodDuplicates = floodDuplicates
        self.receiveAirtimeSeconds = receiveAirtimeSeconds
        self.receiveErrors = receiveErrors
        self.postsStored = postsStored
        self.postPushes = postPushes
    }

    /// Which node's layout a status body has.
    public enum Layout: Sendable, Hashable {
        /// 56 bytes, ending in receive airtime and receive errors.
        case repeater
        /// 52 bytes, ending in stored posts and post pushes.
        case roomServer

        /// The layout of a node of `type` (room servers', or else a repeater's).
        public init(_ type: MeshContactType) {
            self = type == .room ? .roomServer : .repeater
        }
    }

    /// Decodes a status body in `layout`; bytes after it (padding) are ignored.
    ///
    /// - Throws: ``MeshCoreDecodeError/truncated(code:needed:got:)`` for a body shorter than
    ///   the layout.
    public init(decoding body: Data, layout: Layout = .repeater) throws(MeshCoreDecodeError) {
        var reader = ByteReader(body, code: MeshCorePushCode.statusResponse.rawValue, offset: 0)
        try reader.require(layout == .repeater ? Self.repeaterSize : Self.roomServerSize)
        self.init(
            batteryMillivolts: try reader.u16(), transmitQueueLength: try reader.u16(),
            noiseFloor: Int16(bitPattern: try reader.u16()), lastRSSI: Int16(bitPattern: try reader.u16()),
            packetsReceived: try reader.u32(), packetsSent: try reader.u32(), transmitAirtimeSeconds: try reader.u32(),
            uptimeSeconds: try reader.u32(), sentFlood: try reader.u32(), sentDirect: try reader.u32(),
            receivedFlood: try reader.u32(), receivedDirect: try reader.u32(), errorFlags: try reader.u16(),
            lastSNR: Double(Int16(bitPattern: try reader.u16())) / 4, directDuplicates: try reader.u16(),
            floodDuplicates: try reader.u16())
        if layout == .repeater {
            receiveAirtimeSeconds = try reader.u32()
            receiveErrors = try reader.u32()
        } else {
            postsStored = try reader.u16()
            postPushes = try reader.u16()
        }
    }

    /// The status body: a room server's layout when ``postsStored`` is set, else a repeater's.
    public var encoded: Data {
        var writer = ByteWriter(capacity: Self.repeaterSize)
        writer.u16(batteryMillivolts)
        writer.u16(transmitQueueLength)
        writer.u16(UInt16(bitPattern: noiseFloor))
        writer.u16(UInt16(bitPattern: lastRSSI))
        for value in [packetsReceived, packetsSent, transmitAirtimeSeconds, uptimeSeconds, sentFlood, sentDirect, receivedFlood, receivedDirect] {
            writer.u32(value)
        }
        writer.u16(errorFlags)
        writer.u16(UInt16(bitPattern: Int16(clamping: Int(MeshCoreFixedPoint.int32(lastSNR, scale: 4)))))
        writer.u16(directDuplicates)
        writer.u16(floodDuplicates)
        if postsStored != nil || postPushes != nil {
            writer.u16(postsStored ?? 0)
            writer.u16(postPushes ?? 0)
        } else {
            writer.u32(receiveAirtimeSeconds ?? 0)
            writer.u32(receiveErrors ?? 0)
        }
        return writer.data
    }
}
