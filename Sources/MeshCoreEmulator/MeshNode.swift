import Crypto
import Foundation
import MeshCore
import TetherSimulator

/// A scripted node of a ``MeshNetwork``: a chat node, a repeater or a bot.
///
/// It acknowledges direct messages after the round trip its hop distance implies, and can
/// answer them ("echo: <text>") when ``echoBot`` is on.
@SimulationActor
public final class MeshNode {
    /// The node's name.
    public let name: String
    /// The node's 32-byte public key.
    public nonisolated let publicKey: Data
    /// The kind of node its adverts announce.
    public let type: MeshContactType
    /// Hop distance from the mesh's core.
    public var hops: Int
    /// Offline nodes neither receive nor acknowledge anything.
    public var isOnline = true {
        didSet { if oldValue != isOnline { network?.report(.nodeOnline(name: name, online: isOnline)) } }
    }
    /// Whether direct messages are acknowledged.
    public var autoAcknowledges = true
    /// When true, every direct message is answered with "echo: <text>".
    public var echoBot: Bool
    /// Direct messages received, oldest first.
    public private(set) var receivedDirect: [(from: String, text: String)] = []
    /// Channel messages heard ("Sender: text"), oldest first.
    public private(set) var receivedChannel: [String] = []

    /// Repeaters, room servers and sensors: the administrator's password.
    public var adminPassword = "password"
    /// Repeaters, room servers and sensors: the guest password, nil for no guest logins.
    public var guestPassword: String? = "hello"
    /// Repeaters: the owner text of `GET_OWNER_INFO` and the owner anonymous request.
    public var owner = "Tether emulator"
    /// Repeaters: the regions they flood for (the regions anonymous request).
    public var regions = ["*", "europe"]
    /// The battery voltage status and telemetry report.
    public var batteryMillivolts: UInt16 = 3_950
    /// The firmware version `GET_OWNER_INFO` reports.
    public var firmwareVersion = "v1.17.1"
    /// Room servers: the posts stored.
    public var posts: [String] = []
    /// Who is logged in, by public key.
    public internal(set) var logins: [Data: MeshAccessPermission] = [:]
    /// Requests answered, for the status counters.
    var requestsAnswered: UInt32 = 0

    weak var network: MeshNetwork?

    let identity: Curve25519.Signing.PrivateKey

    init(name: String, identity: Curve25519.Signing.PrivateKey, type: MeshContactType, hops: Int, echoBot: Bool) {
        self.name = name
        self.identity = identity
        self.publicKey = identity.publicKey.rawRepresentation
        self.type = type
        self.hops = hops
        self.echoBot = echoBot
    }

    /// Sends a direct message to a radio or node of the network.
    public func sendDirect(_ text: String, to recipientName: String) {
        network?.nodeSendsDirect(self, to: recipientName, text: text)
    }

    /// Posts "Name: text" on the public channel.
    public func postOnChannel(_ text: String) {
        guard isOnline, let network else { return }
        network.sendChannel(from: self, secret: MeshPublicChannel.secret, text: "\(name): \(text)", timestamp: network.epoch)
    }

    /// Advertises the node: to neighbours (zero-hop) or the whole mesh (flood).
    public func advert(flood: Bool = true) {
        guard isOnline else { return }
        network?.advertise(from: self, flood: flood)
    }

    /// The node's advert, signed with its key.
    func makeAdvert(timestamp: UInt32) -> MeshAdvert? {
        try? MeshAdvert(signingKey: identity, timestamp: timestamp, data: MeshAdvertData(type: type, name: name))
    }

    func receiveDirect(from sender: String, senderKey: Data, text: String, textType: MeshTextType) {
        if textType == .cliData {
            // Servers run commands from administrators and answer in kind; others ignore them.
            guard isServer, logins[senderKey] == .admin else { return }
            let reply = commandReply(text)
            network?.schedule(after: .milliseconds(100)) { [weak self] _ in
                guard let self else { return }
                self.network?.nodeSendsDirect(self, to: sender, text: reply, textType: .cliData)
            }
            return
        }
        receivedDirect.append((sender, text))
        if echoBot {
            network?.schedule(after: .milliseconds(250)) { [weak self] _ in
                self?.sendDirect("echo: \(text)", to: sender)
            }
        }
    }

    func receiveChannel(_ text: String) {
        receivedChannel.append(text)
    }
}
