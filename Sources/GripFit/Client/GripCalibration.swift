/// Turns a raw reading into a force (guide §3.3): the seam between the parser and its consumers.
///
/// Managers apply their calibration to every reading, so a per-device calibration can be
/// swapped in without touching the BLE or parsing layers.
public protocol GripCalibration: Sendable {
    /// The force for a raw HX711 value.
    func force(fromRaw raw: Int32) -> Double
}

/// The default: raw values pass through unchanged.
public struct RawCalibration: GripCalibration, Hashable {
    /// Creates the identity calibration.
    public init() {}
    public func force(fromRaw raw: Int32) -> Double { Double(raw) }
}

/// `force = slope × (raw − zeroOffset)`, with the slope in units of force per ADC count.
public struct LinearCalibration: GripCalibration, Hashable, Codable {
    /// Force per ADC count (for example kilograms per count).
    public var slope: Double
    /// The raw value that means no force.
    public var zeroOffset: Int32

    /// Creates a linear calibration.
    public init(slope: Double, zeroOffset: Int32) {
        self.slope = slope
        self.zeroOffset = zeroOffset
    }

    public func force(fromRaw raw: Int32) -> Double { slope * (Double(raw) - Double(zeroOffset)) }
}
