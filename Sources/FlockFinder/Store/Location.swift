import Foundation

/// A geographic position (WGS 84 degrees), such as the phone's at a detection's receipt.
public struct Location: Sendable, Hashable, Codable {
    /// Latitude in degrees, north positive.
    public var latitude: Double
    /// Longitude in degrees, east positive.
    public var longitude: Double
    /// The radius of uncertainty in metres, if known.
    public var horizontalAccuracy: Double?

    /// Creates a location.
    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
    }
}

/// Supplies the current location when a detection is stored (CoreLocation on a phone, a fixed
/// value in tests and on the command line).
public protocol LocationProvider: Sendable {
    /// The current location, or nil when it is unknown or not permitted.
    func currentLocation() async -> Location?
}

/// A ``LocationProvider`` that always answers the same location (or nil).
public struct FixedLocationProvider: LocationProvider {
    /// The location answered.
    public let location: Location?

    /// Creates a provider that always answers `location`.
    public init(_ location: Location?) {
        self.location = location
    }

    /// The fixed ``location``.
    public func currentLocation() async -> Location? { location }
}

/// A detection as kept by a ``DetectionRecorder`` (`DetectionStore`): with its row id, when the phone received it
/// and where the phone was.
public struct StoredDetection: Sendable, Hashable, Codable, Identifiable {
    /// The database row id (increasing in insertion order).
    public var id: Int64
    /// The detection.
    public var detection: Detection
    /// When the phone received it.
    public var receivedAt: Date
    /// Where the phone was, if known.
    public var location: Location?

    /// Creates a stored detection.
    public init(id: Int64, detection: Detection, receivedAt: Date, location: Location? = nil) {
        self.id = id
        self.detection = detection
        self.receivedAt = receivedAt
        self.location = location
    }
}
