import Foundation

/// The node's own identity and radio settings: the `SELF_INFO` reply to `APP_START`.
public struct SelfInfo: Sendable, Hashable {
    /// The length of the fixed part, code byte included; the name follows.
    static let fixedSize = 58

    /// The advert type this node announces (normally ``MeshContactType/chat``).
    public var advertType: MeshContactType
    /// The transmit power in dBm (signed: some boards go below 0 dBm).
    public var txPower: Int8
    /// The highest transmit power the hardware allows, in dBm.
    public var maxTxPower: UInt8
    /// The node's 32-byte public key.
    public var publicKey: Data
    /// The advertised latitude in degrees.
    public var latitude: Double
    /// The advertised longitude in degrees.
    public var longitude: Double
    /// How many extra acknowledgements are sent.
    public var multiAcks: UInt8
    /// Whether (and how) the position is included in adverts.
    public var advertLocationPolicy: UInt8
    /// Telemetry permissions, raw: `env << 4 | loc << 2 | base`.
    public var telemetryModes: UInt8
    /// Whether new contacts must be added by hand (adverts arrive as `NEW_ADVERT`).
    public var manualAddContacts: Bool
    /// The radio frequency in MHz (wire: u32 MHz × 1000).
    public var radioFrequency: Double
    /// The radio bandwidth in kHz (wire: u32 kHz × 1000).
    public var radioBandwidth: Double
    /// The LoRa spreading factor.
    public var spreadingFactor: UInt8
    /// The LoRa coding rate.
    public var codingRate: UInt8
    /// The node's name (the rest of the frame).
    public var name: String

    /// Creates a self-info record.
    public init(
        advertType: MeshContactType = .chat,
        txPower: Int8 = 0,
        maxTxPower: UInt8 = 0,
        publicKey: Data,
        latitude: Double = 0,
        longitude: Double = 0,
        multiAcks: UInt8 = 0,
        advertLocationPolicy: UInt8 = 0,
        telemetryModes: UInt8 = 0,
        manualAddContacts: Bool = false,
        radioFrequency: Double = 0,
        radioBandwidth: Double = 0,
        spreadingFactor: UInt8 = 0,
        codingRate: UInt8 = 0,
        name: String
    ) {
        self.advertType = advertType
        self.txPower = txPower
        self.maxTxPower = maxTxPower
        self.publicKey = publicKey
        self.latitude = latitude
        self.longitude = longitude
        self.multiAcks = multiAcks
        self.advertLocationPolicy = advertLocationPolicy
        self.telemetryModes = telemetryModes
        self.manualAddContacts = manualAddContacts
        self.radioFrequency = radioFrequency
        self.radioBandwidth = radioBandwidth
        self.spreadingFactor = spreadingFactor
        self.codingRate = codingRate
        self.name = name
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> SelfInfo {
        try reader.require(fixedSize - 1)
        let advertType = MeshContactType(rawValue: try reader.u8())
        let txPower = try reader.i8()
        let maxTxPower = try reader.u8()
        let publicKey = try reader.bytes(MeshContact.publicKeySize)
        let latitude = Double(try reader.i32()) / 1e6
        let longitude = Double(try reader.i32()) / 1e6
        let multiAcks = try reader.u8()
        let advertLocationPolicy = try reader.u8()
        let telemetryModes = try reader.u8()
        let manualAddContacts = try reader.u8() != 0
        let frequency = Double(try reader.u32()) / 1000
        let bandwidth = Double(try reader.u32()) / 1000
        let spreadingFactor = try reader.u8()
        let codingRate = try reader.u8()
        let name = reader.restString()
        return SelfInfo(
            advertType: advertType, txPower: txPower, maxTxPower: maxTxPower,
            publicKey: publicKey, latitude: latitude, longitude: longitude,
            multiAcks: multiAcks, advertLocationPolicy: advertLocationPolicy,
            telemetryModes: telemetryModes, manualAddContacts: manualAddContacts,
            radioFrequency: frequency, radioBandwidth: bandwidth,
            spreadingFactor: spreadingFactor, codingRate: codingRate, name: name)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(advertType.rawValue)
        writer.i8(txPower)
        writer.u8(maxTxPower)
        writer.bytes(publicKey, fixed: MeshContact.publicKeySize)
        writer.i32(MeshCoreFixedPoint.int32(latitude, scale: 1e6))
        writer.i32(MeshCoreFixedPoint.int32(longitude, scale: 1e6))
        writer.u8(multiAcks)
        writer.u8(advertLocationPolicy)
        writer.u8(telemetryModes)
        writer.bool(manualAddContacts)
        writer.u32(MeshCoreFixedPoint.uint32(radioFrequency, scale: 1000))
        writer.u32(MeshCoreFixedPoint.uint32(radioBandwidth, scale: 1000))
        writer.u8(spreadingFactor)
        writer.u8(codingRate)
        writer.string(name)
    }
}
