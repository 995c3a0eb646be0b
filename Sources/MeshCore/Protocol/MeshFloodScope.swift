import Crypto
import Foundation

/// A region that scopes floods: repeaters configured for it forward this node's floods and
/// others drop them (protocol 8 and later).
///
/// The key is derived from the region's name as the firmware does (the first 16 bytes of
/// SHA-256 over `#` + name), so everyone who names the region gets the same key.
public struct MeshFloodScope: Sendable, Hashable, Codable {
    /// The length of a scope key.
    public static let keySize = 16
    /// The longest name `SET_DEFAULT_FLOOD_SCOPE` takes, in bytes.
    public static let maximumNameBytes = 30
    /// The width of the name field.
    static let nameField = 31

    /// The region's name, without `#`.
    public var name: String
    /// The 16-byte transport key.
    public var key: Data

    /// Creates a scope from a name and a key.
    public init(name: String, key: Data) {
        self.name = name
        self.key = key
    }

    /// The scope of the region called `region` (`#` optional), with its derived key.
    public init(region: String) {
        let name = region.hasPrefix("#") ? String(region.dropFirst()) : region
        self.init(name: name, key: Self.key(forRegion: name))
    }

    /// The transport key of the region called `region` (`#` optional).
    public static func key(forRegion region: String) -> Data {
        let tagged = region.hasPrefix("#") ? region : "#" + region
        return Data(SHA256.hash(data: Data(tagged.utf8)).prefix(keySize))
    }

    func encode(into writer: inout ByteWriter) throws(MeshCoreEncodeError) {
        let bytes = Data(name.utf8)
        guard (1...Self.maximumNameBytes).contains(bytes.count), !bytes.contains(0) else {
            throw .invalidArgument("a flood scope's name must be 1 to \(Self.maximumNameBytes) bytes, got \(bytes.count)")
        }
        guard key.count == Self.keySize else {
            throw .invalidArgument("a flood scope key must be \(Self.keySize) bytes, got \(key.count)")
        }
        writer.bytes(bytes, fixed: Self.nameField)
        writer.bytes(key)
    }

    /// Reads the name and key; nil for a frame without them (no default scope).
    static func decodeIfPresent(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshFloodScope? {
        guard !reader.isAtEnd else { return nil }
        let name = try reader.string(fixed: nameField)
        return MeshFloodScope(name: name, key: try reader.bytes(keySize))
    }
}

/// What `SET_FLOOD_SCOPE_KEY` sets for the rest of the session (it is not kept across reboots).
public enum MeshFloodScopeOverride: Sendable, Hashable {
    /// Floods carry this 16-byte transport key.
    case key(Data)
    /// Back to the default scope (`SET_DEFAULT_FLOOD_SCOPE`), if any.
    case useDefault
    /// Floods carry no scope at all (protocol 12 and later).
    case unscoped

    /// Floods scoped to the region called `region`.
    public static func region(_ region: String) -> MeshFloodScopeOverride {
        .key(MeshFloodScope.key(forRegion: region))
    }
}
