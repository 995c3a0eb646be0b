import Foundation

/// The two layouts firmware uses for events that carry an identifier (`0x10`–`0x15`).
///
/// The spec's tables (§5.3–5.6) and later firmware put the id's length inside the payload; the
/// §7.2 example and v1.1 firmware make the packet's length byte the id's length and may append
/// a timestamp after the id (firmware-facts, "Event format conflict").
public enum KiroEventForm: Sendable, Hashable {
    /// `[type][len][idLen][id][timestamp u32 BE]`, where `len = 1 + idLen (+ 4)`.
    case innerLength
    /// `[type][idLen][id]`, optionally followed by a 4-byte timestamp outside the length.
    case legacy
}

/// A device → app event (protocol §5).
public struct KiroEvent: Sendable, Hashable, Codable {
    /// What happened.
    public var type: EventLogType
    /// The task id (`0x10`–`0x13`), item id (`0x14`) or calendar event id (`0x15`); nil otherwise.
    public var id: String?
    /// Device Unix time of the event, when the firmware sent one.
    public var timestamp: UInt32?
    /// Battery percentage for ``EventLogType/lowBattery``, 0…100.
    public var batteryLevel: UInt8?

    /// Creates an event.
    public init(type: EventLogType, id: String? = nil, timestamp: UInt32? = nil, batteryLevel: UInt8? = nil) {
        self.type = type
        self.id = id
        self.timestamp = timestamp
        self.batteryLevel = batteryLevel
    }

    /// The timestamp as a `Date`, if present.
    public var date: Date? {
        timestamp.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// The notification the device sends for this event (used by the emulator and tests).
    ///
    /// Only the fields that belong to ``type`` are written: id-bearing events write ``id``
    /// (truncated by whole characters to fit the length byte; nil writes an empty id, which
    /// decoders reject) and ``timestamp`` if set; ``EventLogType/lowBattery`` writes
    /// ``batteryLevel`` clamped to 100 (0 if nil); the rest have no payload.
    public func encoded(form: KiroEventForm = .innerLength) -> Data {
        var bytes: [UInt8] = [type.code]
        switch type {
        case .enterTaskIn, .completeTask, .skipTask, .selectedTaskChanged, .wheelSelect, .viewEventDetail:
            let stamp: [UInt8] = timestamp.map { ts in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ts >> $0) } } ?? []
            switch form {
            case .innerLength:
                let room = KiroString.maxBytes - 1 - stamp.count
                let idBytes = Array(KiroString.truncated(id ?? "", maxCharacters: .max, maxBytes: room).utf8)
                bytes.append(UInt8(1 + idBytes.count + stamp.count))
                bytes.append(UInt8(idBytes.count))
                bytes += idBytes
            case .legacy:
                let idBytes = Array(KiroString.truncated(id ?? "", maxCharacters: .max).utf8)
                bytes.append(UInt8(idBytes.count))
                bytes += idBytes
            }
            bytes += stamp
        case .requestRefresh, .deviceWake, .deviceSleep:
            bytes.append(0)
        case .lowBattery:
            bytes += [1, min(batteryLevel ?? 0, KiroLimits.batteryLevelRange.upperBound)]
        }
        return Data(bytes)
    }
}

/// Why a notification is not a usable event.
public enum KiroEventDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The type byte is not a known event; callers ignore these (§8.2).
    case unknownType(UInt8)
    /// The bytes do not fit the event's layout (the reason).
    case malformed(String)
    /// The notification had no bytes.
    case empty

    /// Whether a client meets this in normal use and may ignore it quietly: event types from
    /// newer firmware (§8.2) and empty notifications. A malformed event is worth a warning.
    public var isExpected: Bool {
        switch self {
        case .unknownType, .empty: true
        case .malformed: false
        }
    }

    /// A short phrase for logs.
    public var description: String {
        switch self {
        case .unknownType(let type): "unknown event type 0x\(String(type, radix: 16, uppercase: true))"
        case .malformed(let reason): "malformed event: \(reason)"
        case .empty: "empty notification"
        }
    }
}

/// Turns notifications from the device into ``KiroEvent``s. Pure; no input can crash it.
///
/// **Telling the two id forms apart.** The first byte after the header cannot decide it alone:
/// in the inner-length form it is the id length, which for a 36-byte UUID is `0x24` (`$`), a
/// printable character. So the decoder checks structure, with `L` the length byte and `N` the
/// bytes after the header:
/// 1. *Inner-length form* iff `N == L`, the id-length byte `n` satisfies `L == 1 + n` (no
///    timestamp) or `L == 5 + n` (timestamp), and the id is valid.
/// 2. Otherwise *legacy form* iff `N == L` (no timestamp) or `N == L + 4` (timestamp after the
///    id), and the id is valid.
/// 3. Otherwise the event is malformed.
///
/// A valid id is non-empty, well-formed UTF-8 without ASCII control characters (ids are UUIDs
/// or similar printable text). So for ids shorter than 32 bytes the inner form's length byte,
/// itself a control character, can never pass as the first character of a legacy id.
///
/// Both rules can match only when a legacy id of `L` bytes starts with the byte `L − 1` or
/// `L − 5` (and has no timestamp): possible only for ids of 33 bytes or more, and never for
/// UUIDs, whose first character is a hex digit. The inner form wins such ties, as
/// firmware-facts prescribes.
///
/// Events without an id (`0x20`, `0x30`, `0x31`) need only a consistent length; payload bytes
/// that later firmware might add are ignored. LowBattery reads its first payload byte, clamped
/// to 100.
public struct KiroEventDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// The event in `packet` (one whole notification), or why there is none.
    public func decode(_ packet: Data) throws(KiroEventDecodeError) -> KiroEvent {
        try Self.decodeOne(Array(packet)).get()
    }

    /// Every packet in `data`, which may hold several back to back, in order: its event, or why
    /// it has none.
    ///
    /// Packet boundaries come from the length byte. A legacy id event may be followed by a
    /// timestamp outside its length; it is taken to have one when at least four bytes remain and
    /// the next byte is not a known event type. Unix times since 2020 start with `0x5E`–`0x7F`,
    /// never an event code, while a following packet always starts with one. A truncated last
    /// packet is malformed.
    public func decodeAll(_ data: Data) -> [Result<KiroEvent, KiroEventDecodeError>] {
        let bytes = Array(data)
        var results: [Result<KiroEvent, KiroEventDecodeError>] = []
        var start = 0
        while start < bytes.count {
            let size = Self.packetSize(bytes, from: start)
            results.append(Self.decodeOne(Array(bytes[start..<start + size])))
            start += size
        }
        return results
    }

    /// The size of the packet starting at `start`, never past the end and at least 1.
    private static func packetSize(_ bytes: [UInt8], from start: Int) -> Int {
        let available = bytes.count - start
        guard available >= 2 else { return available }
        let length = Int(bytes[start + 1])
        let base = 2 + length
        guard base <= available else { return available }
        guard let type = EventLogType(code: bytes[start]), type.carriesID,
              !innerFormFits(bytes[start...].prefix(base))
        else { return base }
        let after = available - base
        if after >= 4, EventLogType(code: bytes[start + base]) == nil {
            return base + 4
        }
        return base
    }

    /// Whether `packet`'s header and id-length byte describe the inner-length form exactly.
    private static func innerFormFits(_ packet: ArraySlice<UInt8>) -> Bool {
        let b = Array(packet)
        guard b.count >= 3, b.count - 2 == Int(b[1]) else { return false }
        let length = Int(b[1]), idLength = Int(b[2])
        return idLength > 0 && (length == 1 + idLength || length == 5 + idLength)
    }

    private static func decodeOne(_ b: [UInt8]) -> Result<KiroEvent, KiroEventDecodeError> {
        guard let first = b.first else { return .failure(.empty) }
        guard let type = EventLogType(code: first) else { return .failure(.unknownType(first)) }
        guard b.count >= 2 else { return .failure(.malformed("\(type.rawValue) has no length byte")) }
        let length = Int(b[1])
        let following = b.count - 2

        switch type {
        case .requestRefresh, .deviceWake, .deviceSleep:
            guard following == length else {
                return .failure(.malformed("\(type.rawValue) length byte \(length) but \(following) bytes follow"))
            }
            return .success(KiroEvent(type: type))

        case .lowBattery:
            guard following == length, length >= 1 else {
                return .failure(.malformed("low_battery needs one level byte (length \(length), \(following) follow)"))
            }
            return .success(KiroEvent(type: type, batteryLevel: min(b[2], KiroLimits.batteryLevelRange.upperBound)))

        case .enterTaskIn, .completeTask, .skipTask, .selectedTaskChanged, .wheelSelect, .viewEventDetail:
            if innerFormFits(b[...]) {
                let idLength = Int(b[2])
                if let id = validID(b[3..<3 + idLength]) {
                    let timestamp = length == 5 + idLength ? timestamp(b, at: 3 + idLength) : nil
                    return .success(KiroEvent(type: type, id: id, timestamp: timestamp))
                }
            }
            guard following == length || following == length + 4 else {
                return .failure(.malformed(
                    "\(type.rawValue) length byte \(length) fits neither form with \(following) bytes following"))
            }
            guard let id = validID(b[2..<2 + length]) else {
                return .failure(.malformed("\(type.rawValue) id is empty, not UTF-8 or has control characters"))
            }
            let timestamp = following == length + 4 ? timestamp(b, at: 2 + length) : nil
            return .success(KiroEvent(type: type, id: id, timestamp: timestamp))
        }
    }

    /// The id text if `bytes` are non-empty UTF-8 without ASCII control characters.
    private static func validID(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return KiroString.decodeUTF8(bytes)
    }

    private static func timestamp(_ b: [UInt8], at offset: Int) -> UInt32 {
        b[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
