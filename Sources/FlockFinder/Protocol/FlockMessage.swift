/// Why a notification payload was rejected.
public enum FlockParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The payload is larger than ``FlockFinderBLEConstants/maxPayloadBytes`` (its size).
    case tooLarge(Int)
    /// The payload is not a complete JSON object (why; truncated payloads end up here).
    case notJSON(String)
    /// A required field is absent or null (its key).
    case missingField(String)
    /// A field has the wrong type or an out-of-range value (its key).
    case invalidField(String)
    /// A stream payload whose `evt` is not one the firmware sends (the `evt` value).
    case unknownEvent(String)

    /// A one-line explanation for logs and `tether flock parse`.
    public var description: String {
        switch self {
        case .tooLarge(let size): "payload of \(size) bytes exceeds \(FlockFinderBLEConstants.maxPayloadBytes)"
        case .notJSON(let why): "not a JSON object: \(why)"
        case .missingField(let key): "missing field \"\(key)\""
        case .invalidField(let key): "invalid field \"\(key)\""
        case .unknownEvent(let evt): "unknown stream event \(evt.debugDescription)"
        }
    }
}

/// What one notification payload decodes to.
public enum FlockMessage: Sendable, Hashable {
    /// A detection (a payload without an `evt` key).
    case detection(Detection)
    /// A live stream event (a payload with an `evt` key).
    case stream(StreamEvent)
    /// A payload that could not be decoded: its text (invalid UTF-8 repaired, capped at
    /// ``FlockFinderBLEConstants/maxPayloadBytes`` bytes) and why.
    case invalid(raw: String, reason: FlockParseError)
}
