import Foundation
import TetherCore

/// Anything the MeshCore apps share as a `meshcore://` link or QR code.
///
/// - `meshcore://<hex>`: a signed contact card (``MeshContactCard``), imported with
///   `IMPORT_CONTACT` so the radio checks the signature.
/// - `meshcore://contact/add?name=…&public_key=<64 hex>&type=<1…4>`: a contact by key, added
///   with `ADD_UPDATE_CONTACT` (nothing to verify: the link says what it says).
/// - `meshcore://channel/add?name=…&secret=<32 hex>`: a channel, set with `SET_CHANNEL`.
public enum MeshShareLink: Sendable, Hashable {
    /// A signed contact card.
    case card(MeshContactCard)
    /// A contact by name, key and type.
    case contact(name: String, publicKey: Data, type: MeshContactType)
    /// A channel by name and 16-byte secret.
    case channel(name: String, secret: Data)

    /// The longest link accepted, in bytes (a card is under 400; query links far shorter).
    public static let maximumLength = 1024

    /// Parses a link.
    ///
    /// - Throws: ``MeshCoreDecodeError/malformed(code:reason:)`` naming what is wrong: not a
    ///   `meshcore://` link, an unknown kind, a missing or malformed key or secret, a type
    ///   outside 1…4; ``MeshCoreDecodeError/tooLarge(_:)`` over ``maximumLength``.
    public init(_ link: String) throws(MeshCoreDecodeError) {
        let text = link.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count <= Self.maximumLength else { throw .tooLarge(text.utf8.count) }
        guard text.lowercased().hasPrefix(MeshContactCard.scheme) else {
            throw Self.malformed("a share link starts with \(MeshContactCard.scheme)")
        }
        let rest = String(text.dropFirst(MeshContactCard.scheme.count))
        let kind = rest.prefix { $0 != "?" }.lowercased()
        switch kind {
        case "contact/add", "channel/add":
            let query = Self.query(of: rest)
            guard let name = query["name"], !name.isEmpty else { throw Self.malformed("the link has no name") }
            if kind == "channel/add" {
                guard let hex = query["secret"], let secret = Data(hexString: hex), secret.count == MeshChannelSecret.size else {
                    throw Self.malformed("a channel link needs a secret of \(MeshChannelSecret.size) bytes in hex")
                }
                self = .channel(name: name, secret: secret)
            } else {
                guard let hex = query["public_key"], let key = Data(hexString: hex), key.count == MeshContact.publicKeySize else {
                    throw Self.malformed("a contact link needs a public_key of \(MeshContact.publicKeySize) bytes in hex")
                }
                let typeText = query["type"] ?? "1"
                guard let raw = UInt8(typeText), (1...4).contains(raw) else {
                    throw Self.malformed("a contact link's type is 1 to 4, got \(typeText.debugDescription)")
                }
                self = .contact(name: name, publicKey: key, type: MeshContactType(rawValue: raw))
            }
        default:
            self = .card(try MeshContactCard(uri: text))
        }
    }

    private static func query(of text: String) -> [String: String] {
        guard let start = text.firstIndex(of: "?") else { return [:] }
        var items: [String: String] = [:]
        for pair in text[text.index(after: start)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = parts.first else { continue }
            let raw = parts.count > 1 ? String(parts[1]) : ""
            // `+` is a space in query strings, as the apps write them.
            let value = raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
            items[String(key).lowercased()] = value
        }
        return items
    }

    private static func malformed(_ reason: String) -> MeshCoreDecodeError {
        .malformed(code: MeshPacketHeader.PayloadType.advert.rawValue, reason: reason)
    }
}
