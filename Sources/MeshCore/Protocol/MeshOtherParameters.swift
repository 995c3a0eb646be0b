import Foundation

/// Who may read one kind of this node's telemetry.
public enum MeshTelemetryPermission: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Nobody.
    case deny = 0
    /// Contacts whose flags allow it (``MeshContact/flags`` bits 1–3).
    case byContactFlags = 1
    /// Everyone who asks.
    case allowAll = 2
}

/// The three telemetry permissions packed in one byte: base (battery, bits 0–1), location
/// (bits 2–3) and environment sensors (bits 4–5).
///
/// The raw byte is kept as the radio sent it; a 2-bit value with no meaning (3) reads as
/// ``MeshTelemetryPermission/deny``.
public struct MeshTelemetryModes: RawRepresentable, Sendable, Hashable, Codable {
    /// The byte as on the wire.
    public var rawValue: UInt8

    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Packs three permissions.
    public init(base: MeshTelemetryPermission, location: MeshTelemetryPermission, environment: MeshTelemetryPermission) {
        rawValue = environment.rawValue << 4 | location.rawValue << 2 | base.rawValue
    }

    /// Battery voltage and the node's own readings.
    public var base: MeshTelemetryPermission {
        get { field(0) }
        set { setField(0, newValue) }
    }

    /// The node's position.
    public var location: MeshTelemetryPermission {
        get { field(2) }
        set { setField(2, newValue) }
    }

    /// Environment sensors.
    public var environment: MeshTelemetryPermission {
        get { field(4) }
        set { setField(4, newValue) }
    }

    private func field(_ shift: UInt8) -> MeshTelemetryPermission {
        MeshTelemetryPermission(rawValue: rawValue >> shift & 0x03) ?? .deny
    }

    private mutating func setField(_ shift: UInt8, _ value: MeshTelemetryPermission) {
        rawValue = rawValue & ~(0x03 << shift) | value.rawValue << shift
    }
}

/// The settings `SET_OTHER_PARAMS` writes, all four at once (`SELF_INFO` reports them).
public struct MeshOtherParameters: Sendable, Hashable, Codable {
    /// Whether new nodes wait for the app (``MeshCoreFrame/newAdvert(_:)``) instead of being
    /// added; with it on, ``MeshAutoAddConfiguration`` says which kinds are still added.
    public var manualAddContacts: Bool
    /// Who may read this node's telemetry.
    public var telemetryModes: MeshTelemetryModes
    /// Whether adverts carry the node's position.
    public var sharesLocationInAdverts: Bool
    /// How many extra acknowledgements the node sends for each direct message (0 = one ack).
    public var multiAcks: UInt8

    /// Creates the settings.
    public init(
        manualAddContacts: Bool = false,
        telemetryModes: MeshTelemetryModes = MeshTelemetryModes(rawValue: 0),
        sharesLocationInAdverts: Bool = false,
        multiAcks: UInt8 = 0
    ) {
        self.manualAddContacts = manualAddContacts
        self.telemetryModes = telemetryModes
        self.sharesLocationInAdverts = sharesLocationInAdverts
        self.multiAcks = multiAcks
    }

    /// The settings as a `SELF_INFO` reports them.
    public init(_ info: SelfInfo) {
        self.init(
            manualAddContacts: info.manualAddContacts, telemetryModes: MeshTelemetryModes(rawValue: info.telemetryModes),
            sharesLocationInAdverts: info.advertLocationPolicy != 0, multiAcks: info.multiAcks)
    }

    func encode(into writer: inout ByteWriter) {
        writer.bool(manualAddContacts)
        writer.u8(telemetryModes.rawValue)
        writer.bool(sharesLocationInAdverts)
        writer.u8(multiAcks)
    }

    /// Reads the command as the firmware does: the first byte always, each later one only
    /// when the frame carries it (a missing one keeps `current`'s value).
    static func decode(from reader: inout ByteReader, current: MeshOtherParameters = MeshOtherParameters())
        throws(MeshCoreDecodeError) -> MeshOtherParameters
    {
        var parameters = current
        parameters.manualAddContacts = try reader.u8() & 0x01 != 0
        if !reader.isAtEnd { parameters.telemetryModes = MeshTelemetryModes(rawValue: try reader.u8()) }
        if !reader.isAtEnd { parameters.sharesLocationInAdverts = try reader.u8() != 0 }
        if !reader.isAtEnd { parameters.multiAcks = try reader.u8() }
        return parameters
    }
}

extension MeshOtherParameters {
    /// Applies a `SET_OTHER_PARAMS` frame to `current` as the firmware does: a frame that
    /// stops early leaves the later settings as they were.
    ///
    /// - Throws: ``MeshCoreDecodeError`` for a frame without even the first setting.
    package static func applying(frame: Data, to current: MeshOtherParameters) throws(MeshCoreDecodeError) -> MeshOtherParameters {
        guard let code = frame.first else { throw .empty }
        var reader = ByteReader(frame, code: code)
        return try decode(from: &reader, current: current)
    }
}
