import Foundation
import MeshCore

/// A message received from the mesh and waiting in a radio's offline queue.
///
/// It is kept format-neutral: the V3 or legacy frame is chosen when the app syncs it, by the
/// protocol version the app announced then.
enum QueuedMessage: Sendable, Hashable {
    case direct(senderPrefix: Data, pathLength: UInt8, textType: MeshTextType, timestamp: UInt32, text: String, snr: Double)
    case channel(index: UInt8, pathLength: UInt8, timestamp: UInt32, text: String, snr: Double)
    case channelData(index: UInt8, pathLength: UInt8, dataType: UInt16, payload: Data, snr: Double)

    /// The reply frame for SYNC_NEXT_MESSAGE.
    func frame(v3: Bool) -> MeshCoreFrame {
        switch self {
        case .direct(let prefix, let pathLength, let textType, let timestamp, let text, let snr):
            .contactMessage(ContactMessage(
                senderPrefix: prefix, pathLength: pathLength, textType: textType, timestamp: timestamp,
                text: text, snr: v3 ? snr : nil, isV3: v3))
        case .channel(let index, let pathLength, let timestamp, let text, let snr):
            .channelMessage(ChannelMessage(
                channelIndex: index, pathLength: pathLength, timestamp: timestamp, text: text,
                snr: v3 ? snr : nil, isV3: v3))
        case .channelData(let index, let pathLength, let dataType, let payload, let snr):
            // Always this layout, whatever the app's protocol version.
            .channelData({
                var datagram = MeshChannelData(channelIndex: index, dataType: dataType, payload: payload)
                datagram.receivedPathLength = pathLength
                datagram.snr = snr
                return datagram
            }())
        }
    }

    /// The text, for logs and tests.
    var text: String {
        switch self {
        case .direct(_, _, _, _, let text, _), .channel(_, _, _, let text, _): text
        case .channelData(_, _, let type, let payload, _): "data 0x\(String(type, radix: 16)) (\(payload.count) bytes)"
        }
    }
}

/// The 4-byte acknowledgement code of a direct message.
///
/// The firmware hashes the timestamp, attempt, text and sender key; FNV-1a over the same
/// inputs keeps it deterministic without a crypto dependency.
enum MeshAckCode {
    static func make(timestamp: UInt32, attempt: UInt8, text: String, senderKey: Data) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        func mix(_ byte: UInt8) {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        for shift in stride(from: 0, to: 32, by: 8) { mix(UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))) }
        mix(attempt)
        for byte in text.utf8 { mix(byte) }
        for byte in senderKey { mix(byte) }
        return hash
    }
}
