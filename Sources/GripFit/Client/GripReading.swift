import Foundation

/// A reading on its way to the UI: the device's raw value, the calibrated force, and when it
/// arrived.
public struct GripReading: Sendable, Hashable, Codable {
    /// The raw HX711 value (relative to the tare point after a tare).
    public let raw: Int32
    /// The value after calibration (equal to `raw` with ``RawCalibration``).
    public let force: Double
    /// When the phone received it.
    public let receivedAt: Date

    /// Creates a reading.
    public init(raw: Int32, force: Double, receivedAt: Date) {
        self.raw = raw
        self.force = force
        self.receivedAt = receivedAt
    }
}
