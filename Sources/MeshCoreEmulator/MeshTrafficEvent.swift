import Foundation
import MeshCore

/// Something that happened in a ``MeshNetwork``, for logs and the CLI's traffic lines.
public enum MeshTrafficEvent: Sendable, Hashable, CustomStringConvertible {
    /// A direct message left `from` for `to`.
    case directMessage(from: String, to: String, text: String, hops: Int)
    /// A direct message could not reach `to` (offline or unknown).
    case undeliverable(from: String, to: String, reason: String)
    /// `by` acknowledged a message from `to` after `roundTrip`.
    case acknowledged(by: String, to: String, roundTrip: Duration)
    /// A channel message was posted.
    case channelMessage(from: String, text: String)
    /// A node or radio advertised.
    case advert(from: String, flood: Bool)
    /// A node went online or offline.
    case nodeOnline(name: String, online: Bool)
    /// A radio's app sent a command (`accepted` false: undecodable).
    case appCommand(radio: String, code: UInt8, accepted: Bool)
    /// An app attached to or left a radio.
    case appConnection(radio: String, connected: Bool)
    /// A radio queued a received message; `queued` messages now wait.
    case messageQueued(radio: String, queued: Int)

    /// One human-readable line.
    public var description: String {
        switch self {
        case .directMessage(let from, let to, let text, let hops):
            "DM \(from) → \(to) (\(hops) hop\(hops == 1 ? "" : "s")): \(text)"
        case .undeliverable(let from, let to, let reason):
            "DM \(from) → \(to) not delivered: \(reason)"
        case .acknowledged(let by, let to, let roundTrip):
            "ACK \(by) → \(to) after \(Int((roundTrip.seconds * 1000).rounded())) ms"
        case .channelMessage(let from, let text):
            "CHANNEL from \(from): \(text)"
        case .advert(let from, let flood):
            "ADVERT \(from) (\(flood ? "flood" : "zero-hop"))"
        case .nodeOnline(let name, let online):
            "NODE \(name) \(online ? "online" : "offline")"
        case .appCommand(let radio, let code, let accepted):
            "APP → \(radio): command \(code)\(accepted ? "" : " (undecodable)")"
        case .appConnection(let radio, let connected):
            "APP \(connected ? "attached to" : "left") \(radio)"
        case .messageQueued(let radio, let queued):
            "QUEUE \(radio): \(queued) message\(queued == 1 ? "" : "s") waiting"
        }
    }
}
