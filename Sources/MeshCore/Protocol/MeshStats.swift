import Foundation

/// Which statistics `GET_STATS` asks for.
public enum MeshStatsKind: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Battery, uptime, error flags, queue length.
    case core = 0
    /// Noise floor, last RSSI and SNR, airtime.
    case radio = 1
    /// Packet counters.
    case packets = 2
}

/// The radio's statistics (`STATS`, protocol 8 and later).
public enum MeshStats: Sendable, Hashable {
    /// `18 00`: the node itself.
    case core(Core)
    /// `18 01`: the LoRa radio.
    case radio(Radio)
    /// `18 02`: packet counters.
    case packets(Packets)
    /// A kind this library does not know, with the bytes after the kind byte.
    case other(kind: UInt8, payload: Data)

    /// `18 00`: battery, uptime, error flags and queue length (11 bytes).
    public struct Core: Sendable, Hashable, Codable {
        /// The battery voltage in millivolts.
        public var batteryMillivolts: UInt16
        /// Seconds since the radio booted.
        public var uptimeSeconds: UInt32
        /// The firmware's error flags (raw).
        public var errorFlags: UInt16
        /// Packets waiting to be sent.
        public var outboundQueueLength: UInt8

        /// Creates core statistics.
        public init(batteryMillivolts: UInt16, uptimeSeconds: UInt32, errorFlags: UInt16, outboundQueueLength: UInt8) {
            self.batteryMillivolts = batteryMillivolts
            self.uptimeSeconds = uptimeSeconds
            self.errorFlags = errorFlags
            self.outboundQueueLength = outboundQueueLength
        }
    }

    /// `18 01`: the radio's view of the air (14 bytes).
    public struct Radio: Sendable, Hashable, Codable {
        /// The noise floor in dBm.
        public var noiseFloor: Int16
        /// The RSSI of the last packet received, in dBm.
        public var lastRSSI: Int8
        /// The SNR of the last packet received, in dB (quarter-dB steps on the wire).
        public var lastSNR: Double
        /// Seconds spent transmitting since boot.
        public var transmitAirtimeSeconds: UInt32
        /// Seconds spent receiving since boot.
        public var receiveAirtimeSeconds: UInt32

        /// Creates radio statistics.
        public init(noiseFloor: Int16, lastRSSI: Int8, lastSNR: Double, transmitAirtimeSeconds: UInt32, receiveAirtimeSeconds: UInt32) {
            self.noiseFloor = noiseFloor
            self.lastRSSI = lastRSSI
            self.lastSNR = lastSNR
            self.transmitAirtimeSeconds = transmitAirtimeSeconds
            self.receiveAirtimeSeconds = receiveAirtimeSeconds
        }
    }

    /// `18 02`: packet counters since boot (30 bytes; 26 on firmware without receive errors).
    public struct Packets: Sendable, Hashable, Codable {
        /// Packets received.
        public var received: UInt32
        /// Packets sent.
        public var sent: UInt32
        /// Packets sent by flooding.
        public var sentFlood: UInt32
        /// Packets sent along a path.
        public var sentDirect: UInt32
        /// Flooded packets received.
        public var receivedFlood: UInt32
        /// Direct packets received.
        public var receivedDirect: UInt32
        /// Packets that failed to decode; nil when the firmware does not count them.
        public var receiveErrors: UInt32?

        /// Creates packet counters.
        public init(
            received: UInt32, sent: UInt32, sentFlood: UInt32, sentDirect: UInt32, receivedFlood: UInt32,
            receivedDirect: UInt32, receiveErrors: UInt32? = nil
        ) {
            self.received = received
            self.sent = sent
            self.sentFlood = sentFlood
            self.sentDirect = sentDirect
            self.receivedFlood = receivedFlood
            self.receivedDirect = receivedDirect
            self.receiveErrors = receiveErrors
        }
    }

    /// The kind of statistics.
    public var kind: UInt8 {
        switch self {
        case .core: MeshStatsKind.core.rawValue
        case .radio: MeshStatsKind.radio.rawValue
        case .packets: MeshStatsKind.packets.rawValue
        case .other(let kind, _): kind
        }
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshStats {
        let kind = try reader.u8()
        switch MeshStatsKind(rawValue: kind) {
        case .core:
            try reader.require(2 + 4 + 2 + 1)
            return .core(Core(
                batteryMillivolts: try reader.u16(), uptimeSeconds: try reader.u32(), errorFlags: try reader.u16(),
                outboundQueueLength: try reader.u8()))
        case .radio:
            try reader.require(2 + 1 + 1 + 4 + 4)
            return .radio(Radio(
                noiseFloor: Int16(bitPattern: try reader.u16()), lastRSSI: try reader.i8(),
                lastSNR: Double(try reader.i8()) / 4, transmitAirtimeSeconds: try reader.u32(),
                receiveAirtimeSeconds: try reader.u32()))
        case .packets:
            try reader.require(6 * 4)
            // 24 bytes of counters on firmware that does not count receive errors, 28 on firmware
            // that does: anything between is cut short.
            if reader.remaining != 24 { try reader.require(28) }
            let counters = Packets(
                received: try reader.u32(), sent: try reader.u32(), sentFlood: try reader.u32(),
                sentDirect: try reader.u32(), receivedFlood: try reader.u32(), receivedDirect: try reader.u32(),
                receiveErrors: reader.remaining >= 4 ? try reader.u32() : nil)
            return .packets(counters)
        case nil:
            return .other(kind: kind, payload: reader.rest())
        }
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(kind)
        switch self {
        case .core(let core):
            writer.u16(core.batteryMillivolts)
            writer.u32(core.uptimeSeconds)
            writer.u16(core.errorFlags)
            writer.u8(core.outboundQueueLength)
        case .radio(let radio):
            writer.u16(UInt16(bitPattern: radio.noiseFloor))
            writer.i8(radio.lastRSSI)
            writer.i8(MeshCoreFixedPoint.int8(radio.lastSNR, scale: 4))
            writer.u32(radio.transmitAirtimeSeconds)
            writer.u32(radio.receiveAirtimeSeconds)
        case .packets(let packets):
            for value in [packets.received, packets.sent, packets.sentFlood, packets.sentDirect,
                          packets.receivedFlood, packets.receivedDirect] {
                writer.u32(value)
            }
            if let errors = packets.receiveErrors { writer.u32(errors) }
        case .other(_, let payload):
            writer.bytes(payload)
        }
    }
}
