import Foundation

/// What a repeater, room server or sensor granted a login (`LOGIN_SUCCESS`).
public struct MeshLoginResult: Sendable, Hashable, Codable {
    /// The first 6 bytes of the server's public key.
    public var serverPrefix: Data
    /// Whether the login is an administrator's.
    public var isAdmin: Bool
    /// The raw role byte: 1 administrator; on room servers 2 is a guest.
    public var role: UInt8
    /// The server's clock at login (seconds since 1970); nil from firmware that answers the
    /// short legacy form.
    public var serverTime: UInt32?
    /// The access granted (the low two bits of the ACL byte); nil in the legacy form.
    public var permissions: MeshAccessPermission?
    /// The server's firmware feature level (repeaters 2, room servers and sensors 1); nil in
    /// the legacy form.
    public var firmwareLevel: UInt8?

    /// Creates a login result.
    public init(
        serverPrefix: Data, role: UInt8, serverTime: UInt32? = nil, permissions: MeshAccessPermission? = nil,
        firmwareLevel: UInt8? = nil
    ) {
        self.serverPrefix = serverPrefix
        self.role = role
        self.isAdmin = role == 1
        self.serverTime = serverTime
        self.permissions = permissions
        self.firmwareLevel = firmwareLevel
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshLoginResult {
        let role = try reader.u8()
        let prefix = try reader.bytes(MeshCoreCommand.prefixSize)
        // The legacy form ends here; the current one has all six more bytes.
        guard !reader.isAtEnd else { return MeshLoginResult(serverPrefix: prefix, role: role) }
        try reader.require(6)
        return MeshLoginResult(
            serverPrefix: prefix, role: role, serverTime: try reader.u32(),
            permissions: MeshAccessPermission(rawValue: try reader.u8() & 0x03), firmwareLevel: try reader.u8())
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(role)
        writer.bytes(serverPrefix, fixed: MeshCoreCommand.prefixSize)
        if let serverTime {
            writer.u32(serverTime)
            writer.u8(permissions?.rawValue ?? 0)
            writer.u8(firmwareLevel ?? 0)
        }
    }
}

/// The access a server's access list grants a key.
public enum MeshAccessPermission: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Status and telemetry only.
    case guest = 0
    /// Room servers: read posts.
    case readOnly = 1
    /// Room servers: read and post.
    case readWrite = 2
    /// Everything, remote commands included.
    case admin = 3
}

/// A server's answer that came with the first 6 bytes of its public key (status, telemetry,
/// a failed login).
public struct MeshServerReply<Body: Sendable & Hashable>: Sendable, Hashable {
    /// The first 6 bytes of the server's public key.
    public var serverPrefix: Data
    /// What it said.
    public var body: Body

    /// Creates a reply.
    public init(serverPrefix: Data, body: Body) {
        self.serverPrefix = serverPrefix
        self.body = body
    }
}
