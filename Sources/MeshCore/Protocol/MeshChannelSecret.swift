import Crypto
import Foundation

/// How MeshCore channel secrets are made and recognised.
public enum MeshChannelSecret {
    /// The length of a channel secret the companion protocol takes.
    public static let size = 16

    /// The secret of a `#hashtag` channel, derived from its name the way the MeshCore apps do:
    /// the first 16 bytes of SHA-256 over the name's UTF-8, `#` included (added when `name`
    /// lacks it). Anyone who knows the name can join, which is the point of such a channel.
    public static func hashtag(_ name: String) -> Data {
        let tagged = name.hasPrefix("#") ? name : "#" + name
        return Data(SHA256.hash(data: Data(tagged.utf8)).prefix(size))
    }

    /// The one-byte channel id that group packets carry on the air: the first byte of SHA-256
    /// over the secret (the 16 bytes the companion protocol sets; every byte given is hashed).
    public static func hash(of secret: Data) -> UInt8 {
        SHA256.hash(data: secret).first { _ in true } ?? 0
    }
}
