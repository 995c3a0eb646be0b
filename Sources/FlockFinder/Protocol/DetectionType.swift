/// What kind of surveillance device a detection is (the app's 13 known types), or a type name
/// the firmware sent that the app does not know.
///
/// Firmware types outside the known list (e.g. "Penguin", "Pigvision",
/// "Raven (Gunshot Detector)") are kept by name as ``other(_:)`` rather than collapsed to
/// ``unknown``. Build values from names with ``init(name:)`` so that a known name always maps to
/// its case. Encodes as its ``name`` string.
public enum DetectionType: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Flock Safety ALPR cameras.
    case flockSafety
    /// Verkada cameras.
    case verkada
    /// Lorex cameras.
    case lorex
    /// Reolink cameras.
    case reolink
    /// Axis cameras.
    case axis
    /// Hikvision cameras.
    case hikvision
    /// Dahua cameras.
    case dahua
    /// Ring doorbells and cameras.
    case ring
    /// Google Nest cameras.
    case nest
    /// Arlo cameras.
    case arlo
    /// Wyze cameras.
    case wyze
    /// Eufy cameras.
    case eufy
    /// The firmware's "Unknown" type.
    case unknown
    /// A firmware type name outside the known list, kept verbatim.
    case other(String)

    /// The 13 known types, in the app's order.
    public static let known: [DetectionType] = [
        .flockSafety, .verkada, .lorex, .reolink, .axis, .hikvision, .dahua,
        .ring, .nest, .arlo, .wyze, .eufy, .unknown,
    ]

    /// Maps a type name to its case: the 13 known names match case-insensitively
    /// ("flock safety" is ``flockSafety``); anything else becomes ``other(_:)`` with the name
    /// kept exactly as given.
    public init(name: String) {
        let lowered = name.lowercased()
        if let match = Self.known.first(where: { $0.name.lowercased() == lowered }) {
            self = match
        } else {
            self = .other(name)
        }
    }

    /// The display and wire name: "Flock Safety", "Verkada", …, "Unknown", or the kept name.
    public var name: String {
        switch self {
        case .flockSafety: "Flock Safety"
        case .verkada: "Verkada"
        case .lorex: "Lorex"
        case .reolink: "Reolink"
        case .axis: "Axis"
        case .hikvision: "Hikvision"
        case .dahua: "Dahua"
        case .ring: "Ring"
        case .nest: "Nest"
        case .arlo: "Arlo"
        case .wyze: "Wyze"
        case .eufy: "Eufy"
        case .unknown: "Unknown"
        case .other(let name): name
        }
    }

    /// Whether this is one of the 13 ``known`` types.
    public var isKnown: Bool {
        if case .other = self { false } else { true }
    }

    /// The ``name``.
    public var description: String { name }

    /// Decodes from a name string through ``init(name:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(name: try container.decode(String.self))
    }

    /// Encodes as the ``name`` string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
