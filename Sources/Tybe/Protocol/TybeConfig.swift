import Foundation

/// Why a Config write could not be built.
public enum TybeConfigError: Error, Hashable, Sendable {
    /// The ESB channel must be 0…100.
    case channelOutOfRange
}

/// The Config characteristic's 10-byte value.
public struct TybeConfig: Hashable, Sendable {
    /// Wire protocol version (1 for this protocol).
    public var protocolVersion: UInt8
    /// Firmware major version.
    public var firmwareMajor: UInt8
    /// Firmware minor version.
    public var firmwareMinor: UInt8
    /// Firmware patch version.
    public var firmwarePatch: UInt8
    /// The 5-byte ESB radio address, in wire order.
    public var esbAddress: [UInt8]
    /// The ESB radio channel (0…100).
    public var esbChannel: UInt8

    /// The protocol version this package speaks.
    public static let currentProtocolVersion: UInt8 = 1
    /// A Config value's length.
    public static let byteCount = 10
    /// The ESB address length.
    public static let esbAddressBytes = 5
    /// The highest ESB channel.
    public static let maxChannel = 100

    /// Creates a config; `esbAddress` must be 5 bytes (a programming error otherwise).
    public init(
        protocolVersion: UInt8 = currentProtocolVersion, firmwareMajor: UInt8, firmwareMinor: UInt8,
        firmwarePatch: UInt8, esbAddress: [UInt8], esbChannel: UInt8
    ) {
        precondition(esbAddress.count == Self.esbAddressBytes, "An ESB address is 5 bytes")
        self.protocolVersion = protocolVersion
        self.firmwareMajor = firmwareMajor
        self.firmwareMinor = firmwareMinor
        self.firmwarePatch = firmwarePatch
        self.esbAddress = esbAddress
        self.esbChannel = esbChannel
    }

    /// Parses a Config read; nil unless exactly 10 bytes.
    public init?(_ data: Data) {
        let b = [UInt8](data)
        guard b.count == Self.byteCount else { return nil }
        self.init(
            protocolVersion: b[0], firmwareMajor: b[1], firmwareMinor: b[2], firmwarePatch: b[3],
            esbAddress: Array(b[4..<9]), esbChannel: b[9])
    }

    /// The wire bytes.
    public var bytes: Data {
        Data([protocolVersion, firmwareMajor, firmwareMinor, firmwarePatch] + esbAddress + [esbChannel])
    }

    /// `"major.minor.patch"`.
    public var firmwareVersion: String { "\(firmwareMajor).\(firmwareMinor).\(firmwarePatch)" }

    /// The Config write that selects an ESB channel: one byte.
    /// - Throws: ``TybeConfigError/channelOutOfRange`` unless `channel` is 0…100.
    public static func channelWrite(_ channel: Int) throws -> Data {
        guard (0...maxChannel).contains(channel) else { throw TybeConfigError.channelOutOfRange }
        return Data([UInt8(channel)])
    }

    /// The channel a Config write selects (bridge side): nil unless it is one byte 0…100
    /// (the bridge answers anything else with ATT "value not allowed").
    public static func parseChannelWrite(_ data: Data) -> UInt8? {
        guard data.count == 1, let channel = data.first, Int(channel) <= maxChannel else { return nil }
        return channel
    }
}

/// Control characteristic commands.
public enum TybeControl {
    /// `0x01` REQUEST_STATUS: the bridge answers with a status notification.
    public static let requestStatus = Data([0x01])

    /// Whether a Control write is REQUEST_STATUS (exactly the byte `0x01`); the bridge ignores
    /// every other value.
    public static func isRequestStatus(_ data: Data) -> Bool { data.elementsEqual(requestStatus) }
}
