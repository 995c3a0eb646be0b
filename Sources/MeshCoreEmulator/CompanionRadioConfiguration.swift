import Foundation
import MeshCore

extension CompanionRadio {
    /// The fixed facts of an emulated companion radio: limits, identity details and the values
    /// it reports. The defaults match a MeshCore companion on firmware v1.17 (version code 13).
    public struct Configuration: Sendable, Hashable {
        /// How many contacts the table holds (DEVICE_INFO reports half of it in one byte).
        public var maxContacts: Int
        /// How many channel slots exist; slot 0 is "Public".
        public var maxChannels: UInt8
        /// How many received messages wait for the app before the oldest is dropped.
        public var offlineQueueCapacity: Int
        /// How many frames may wait for the app; pushes beyond it are dropped (replies never are).
        public var outboxCapacity: Int
        /// When true, adverts from unknown nodes are pushed as NEW_ADVERT instead of being added.
        public var manualAddContacts: Bool
        /// The BLE pairing PIN DEVICE_INFO reports.
        public var blePin: UInt32
        /// The firmware version code DEVICE_INFO reports.
        public var firmwareVersionCode: UInt8
        /// The firmware version string.
        public var firmwareVersion: String
        /// The firmware build date (at most 12 bytes).
        public var buildDate: String
        /// The manufacturer and model (at most 40 bytes).
        public var manufacturer: String
        /// The battery voltage BATT_AND_STORAGE reports.
        public var batteryMillivolts: UInt16
        /// The total storage BATT_AND_STORAGE reports.
        public var totalStorageKilobytes: UInt32
        /// The transmit power in dBm (SELF_INFO reports it; SET_RADIO_TX_POWER changes it).
        public var txPower: Int8
        /// The highest transmit power the board allows, in dBm.
        public var maxTxPower: UInt8
        /// The radio frequency in MHz.
        public var radioFrequency: Double
        /// The radio bandwidth in kHz.
        public var radioBandwidth: Double
        /// The LoRa spreading factor.
        public var spreadingFactor: UInt8
        /// The LoRa coding rate.
        public var codingRate: UInt8
        /// Whether the radio repeats others' packets (SET_RADIO_PARAMS, on an allowed frequency).
        public var repeats: Bool = false
        /// Extra acknowledgements per direct message (SET_OTHER_PARAMS).
        public var multiAcks: UInt8 = 0
        /// Whether adverts and the radio's card carry its position (SET_OTHER_PARAMS).
        public var sharesLocationInAdverts = false
        /// Who may read the radio's telemetry (SET_OTHER_PARAMS).
        public var telemetryModes = MeshTelemetryModes(rawValue: 0)
        /// The timing parameters (firmware defaults: no extra receive delay, airtime factor 1).
        public var tuning = MeshTuningParameters(receiveDelayBase: 0, airtimeFactor: 1)
        /// The board's custom variables; SET_CUSTOM_VAR changes only these (the emulated board
        /// has a GPS, switched off).
        public var customVariables = [MeshCustomVariable(name: "gps", value: "0")]
        /// Which nodes manual-add mode still adds, and from how far.
        public var autoAdd = MeshAutoAddConfiguration(options: [], maxHops: 0)
        /// The hop hash size of floods the radio starts: 0, 1 or 2 (1 to 3 bytes).
        public var pathHashMode: UInt8 = 0
        /// The flood scope kept across reboots.
        public var defaultFloodScope: MeshFloodScope?
        /// The frequency ranges (kHz) the radio may repeat on (a default build's).
        public var allowedRepeatFrequencies: [ClosedRange<UInt32>] = [433_000...433_000, 869_495...869_495, 918_000...918_000]
        /// Whether the firmware was built with private-key export (EXPORT/IMPORT_PRIVATE_KEY).
        public var privateKeyExport = true
        /// The advertised latitude in degrees.
        public var latitude: Double
        /// The advertised longitude in degrees.
        public var longitude: Double

        /// Creates a configuration; every parameter has the firmware's default.
        public init(
            maxContacts: Int = 100,
            maxChannels: UInt8 = 8,
            offlineQueueCapacity: Int = 16,
            outboxCapacity: Int = 64,
            manualAddContacts: Bool = false,
            blePin: UInt32 = 123_456,
            firmwareVersionCode: UInt8 = 13,
            firmwareVersion: String = "v1.17",
            buildDate: String = "01 Dec 2025",
            manufacturer: String = "Tether Emulated Companion",
            batteryMillivolts: UInt16 = 4_012,
            totalStorageKilobytes: UInt32 = 1_024,
            txPower: Int8 = 22,
            maxTxPower: UInt8 = 22,
            radioFrequency: Double = 869.618,
            radioBandwidth: Double = 62.5,
            spreadingFactor: UInt8 = 8,
            codingRate: UInt8 = 8,
            latitude: Double = 0,
            longitude: Double = 0
        ) {
            self.maxContacts = maxContacts
            self.maxChannels = maxChannels
            self.offlineQueueCapacity = offlineQueueCapacity
            self.outboxCapacity = outboxCapacity
            self.manualAddContacts = manualAddContacts
            self.blePin = blePin
            self.firmwareVersionCode = firmwareVersionCode
            self.firmwareVersion = firmwareVersion
            self.buildDate = buildDate
            self.manufacturer = manufacturer
            self.batteryMillivolts = batteryMillivolts
            self.totalStorageKilobytes = totalStorageKilobytes
            self.txPower = txPower
            self.maxTxPower = maxTxPower
            self.radioFrequency = radioFrequency
            self.radioBandwidth = radioBandwidth
            self.spreadingFactor = spreadingFactor
            self.codingRate = codingRate
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// What the radio has done since it started, for tests and logs.
    public struct Counters: Sendable, Hashable {
        /// Command frames received from the app (decodable or not).
        public var commands = 0
        /// ERR replies sent.
        public var errors = 0
        /// Direct messages the app sent (SENT replies).
        public var directMessagesSent = 0
        /// Channel messages the app sent.
        public var channelMessagesSent = 0
        /// Messages received from the mesh and queued for the app.
        public var messagesQueued = 0
        /// Queued messages dropped because the offline queue was full.
        public var messagesDropped = 0
        /// Messages put back at the front of the queue because their reply never reached the app.
        public var messagesRequeued = 0
        /// SEND_CONFIRMED pushes produced.
        public var confirmations = 0
        /// Pushes dropped because the outbox was full.
        public var pushesDropped = 0
        /// Reboots (REBOOT, FACTORY_RESET).
        public var reboots = 0

        /// All zero.
        public init() {}
    }

    /// One frame for the app, handed to the host by ``CompanionRadio/nextOutput()``.
    public struct Output: Sendable, Hashable {
        /// The frame, without any transport framing.
        public let frame: Data
        let serial: UInt64
        /// The queued message a SYNC_NEXT_MESSAGE reply carries; it returns to the queue if the
        /// frame never reaches the app.
        let message: QueuedMessage?
    }
}

/// The public channel secret every MeshCore radio ships with (base64 `izOH6cXN6mrJ5e26oRXNcg==`).
public enum MeshPublicChannel {
    /// The channel's name in slot 0.
    public static let name = "Public"
    /// The well-known 16-byte secret.
    public static let secret = Data([
        0x8B, 0x33, 0x87, 0xE9, 0xC5, 0xCD, 0xEA, 0x6A, 0xC9, 0xE5, 0xED, 0xBA, 0xA1, 0x15, 0xCD, 0x72,
    ])
}
