/// The LoRa settings of `SET_RADIO_PARAMS`, in the units the radio takes them.
public struct MeshRadioParameters: Sendable, Hashable {
    /// The frequency in kHz (869.525 MHz is 869_525); the firmware takes 150 MHz to 2.5 GHz.
    public var frequencyKilohertz: UInt32
    /// The bandwidth in Hz (250 kHz is 250_000); the firmware takes 7 kHz to 500 kHz.
    public var bandwidthHertz: UInt32
    /// The spreading factor, 5 to 12.
    public var spreadingFactor: UInt8
    /// The coding rate's denominator, 5 to 8 (4/5 to 4/8).
    public var codingRate: UInt8
    /// Whether the radio repeats others' packets (protocol 9; only on frequencies the radio
    /// allows, `GET_ALLOWED_REPEAT_FREQ`).
    public var repeats: Bool

    /// The firmware's accepted ranges.
    public static let frequencyRange: ClosedRange<UInt32> = 150_000...2_500_000
    /// The firmware's accepted bandwidths, in Hz.
    public static let bandwidthRange: ClosedRange<UInt32> = 7_000...500_000
    /// The firmware's accepted spreading factors.
    public static let spreadingFactorRange: ClosedRange<UInt8> = 5...12
    /// The firmware's accepted coding rates.
    public static let codingRateRange: ClosedRange<UInt8> = 5...8

    /// Creates radio settings.
    public init(frequencyKilohertz: UInt32, bandwidthHertz: UInt32, spreadingFactor: UInt8, codingRate: UInt8, repeats: Bool = false) {
        self.frequencyKilohertz = frequencyKilohertz
        self.bandwidthHertz = bandwidthHertz
        self.spreadingFactor = spreadingFactor
        self.codingRate = codingRate
        self.repeats = repeats
    }

    /// Whether every value is within the firmware's ranges (it answers ERR 6 otherwise).
    public var isValid: Bool {
        Self.frequencyRange.contains(frequencyKilohertz) && Self.bandwidthRange.contains(bandwidthHertz)
            && Self.spreadingFactorRange.contains(spreadingFactor) && Self.codingRateRange.contains(codingRate)
    }
}
