import Foundation

/// Everything the app sends to the radio.
///
/// ``encoded()`` produces the frame; ``init(decoding:)`` parses one the way the firmware
/// does (the emulator uses it). Codes without a dedicated case travel raw in
/// ``other(code:payload:)``.
public enum MeshCoreCommand: Sendable, Hashable {
    /// `APP_START`: `01 03` + six spaces + the UTF-8 app name. Answered with `SELF_INFO`.
    case appStart(appName: String)
    /// `DEVICE_QUERY`: `16 ver`. A version of 3 or more selects the V3 message frames.
    case deviceQuery(protocolVersion: UInt8)
    /// `GET_CONTACTS`: `04`, optionally + the `UInt32` time to list changes since.
    case getContacts(since: UInt32?)
    /// `SEND_TXT_MSG`: a direct text message. Answered with `SENT`.
    case sendTextMessage(TextMessage)
    /// `SEND_CHANNEL_TXT_MSG`: `03 00 idx timestamp(4) text`. Answered with `OK`.
    case sendChannelTextMessage(channel: UInt8, timestamp: UInt32, text: String)
    /// `GET_DEVICE_TIME`: `05`. Answered with `CURR_TIME`.
    case getDeviceTime
    /// `SET_DEVICE_TIME`: `06` + seconds since 1970 as `UInt32`.
    case setDeviceTime(UInt32)
    /// `SEND_SELF_ADVERT`: `07` (zero-hop) or `07 01` (flood).
    case sendSelfAdvert(flood: Bool)
    /// `SET_ADVERT_NAME`: `08` + the name, truncated to 31 bytes on a character boundary.
    case setAdvertName(String)
    /// `SYNC_NEXT_MESSAGE`: `0A`. Answered with a message or `NO_MORE_MESSAGES`.
    case syncNextMessage
    /// `GET_BATT_AND_STORAGE`: `14`.
    case getBatteryAndStorage
    /// `GET_CHANNEL`: `1F idx`. Answered with `CHANNEL_INFO`.
    case getChannel(UInt8)
    /// `REMOVE_CONTACT`: `0F` + the 32-byte public key.
    case removeContact(publicKey: Data)
    /// `REBOOT`: `13` + "reboot".
    case reboot
    /// `HAS_CONNECTION`: `1C` + the 32-byte public key.
    case hasConnection(publicKey: Data)
    /// `SET_CHANNEL`: `20 idx name(32, NUL-padded, at most 31 bytes kept) secret(16)`. An
    /// empty name with a zero secret clears the slot. Answered with `OK`.
    case setChannel(ChannelInfo)
    /// `ADD_UPDATE_CONTACT`: `09` + the contact body, up to the fields given: by default
    /// through the position (144 bytes, as the apps send it), so the radio stamps the
    /// modification time itself and lists the change to `GET_CONTACTS since`. Answered with `OK`.
    case addUpdateContact(MeshContact, fields: ContactUpdateFields = .withPosition)
    /// `RESET_PATH`: `0D` + the 32-byte public key: the contact is reached by flooding again.
    case resetPath(publicKey: Data)
    /// `GET_CONTACT_BY_KEY`: `1E` + the 32-byte public key. Answered with `CONTACT`.
    case getContactByKey(publicKey: Data)
    /// `SHARE_CONTACT`: `10` + the 32-byte public key: re-sends the contact's advert zero-hop.
    case shareContact(publicKey: Data)
    /// `SET_RADIO_TX_POWER`: `0C` + the power in dBm as a signed byte.
    case setRadioTxPower(Int8)
    /// `SET_ADVERT_LATLON`: `0E` + latitude and longitude as `Int32` degrees × 10⁶.
    case setAdvertLatLon(latitude: Double, longitude: Double)
    /// `SET_RADIO_PARAMS`: `0B` + frequency (kHz, `UInt32`), bandwidth (Hz, `UInt32`),
    /// spreading factor, coding rate, and whether the radio repeats (protocol 9).
    case setRadioParams(MeshRadioParameters)
    /// Any other command: the code byte and the bytes after it, raw.
    case other(code: UInt8, payload: Data)

    /// The arguments of `SEND_TXT_MSG`:
    /// `02`, txt_type, attempt, timestamp u32, destination key prefix (6 bytes), text.
    public struct TextMessage: Sendable, Hashable {
        /// The text type.
        public var textType: MeshTextType
        /// The attempt number, 0 for the first try.
        public var attempt: UInt8
        /// When the message was written (seconds since 1970).
        public var timestamp: UInt32
        /// The first 6 bytes of the recipient's public key.
        public var destinationPrefix: Data
        /// The message text.
        public var text: String

        /// Creates the arguments of a direct text message.
        public init(
            textType: MeshTextType = .plain,
            attempt: UInt8 = 0,
            timestamp: UInt32,
            destinationPrefix: Data,
            text: String
        ) {
            self.textType = textType
            self.attempt = attempt
            self.timestamp = timestamp
            self.destinationPrefix = destinationPrefix
            self.text = text
        }
    }

    /// The reserved bytes APP_START carries after its code: `03` then six spaces.
    static let appStartReserved = Data([0x03, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20])
    /// The confirmation REBOOT carries after its code.
    static let rebootMagic = Data("reboot".utf8)
    /// The longest advert name, in bytes.
    package static let maximumAdvertNameBytes = 31
    /// The length of a destination key prefix.
    static let prefixSize = 6

    /// The command's code byte.
    public var code: UInt8 {
        switch self {
        case .appStart: MeshCoreCommandCode.appStart.rawValue
        case .deviceQuery: MeshCoreCommandCode.deviceQuery.rawValue
        case .getContacts: MeshCoreCommandCode.getContacts.rawValue
        case .sendTextMessage: MeshCoreCommandCode.sendTextMessage.rawValue
        case .sendChannelTextMessage: MeshCoreCommandCode.sendChannelTextMessage.rawValue
        case .getDeviceTime: MeshCoreCommandCode.getDeviceTime.rawValue
        case .setDeviceTime: MeshCoreCommandCode.setDeviceTime.rawValue
        case .sendSelfAdvert: MeshCoreCommandCode.sendSelfAdvert.rawValue
        case .setAdvertName: MeshCoreCommandCode.setAdvertName.rawValue
        case .syncNextMessage: MeshCoreCommandCode.syncNextMessage.rawValue
        case .getBatteryAndStorage: MeshCoreCommandCode.getBatteryAndStorage.rawValue
        case .getChannel: MeshCoreCommandCode.getChannel.rawValue
        case .removeContact: MeshCoreCommandCode.removeContact.rawValue
        case .reboot: MeshCoreCommandCode.reboot.rawValue
        case .hasConnection: MeshCoreCommandCode.hasConnection.rawValue
        case .setChannel: MeshCoreCommandCode.setChannel.rawValue
        case .addUpdateContact: MeshCoreCommandCode.addUpdateContact.rawValue
        case .resetPath: MeshCoreCommandCode.resetPath.rawValue
        case .getContactByKey: MeshCoreCommandCode.getContactByKey.rawValue
        case .shareContact: MeshCoreCommandCode.shareContact.rawValue
        case .setRadioTxPower: MeshCoreCommandCode.setRadioTxPower.rawValue
        case .setAdvertLatLon: MeshCoreCommandCode.setAdvertLatLon.rawValue
        case .setRadioParams: MeshCoreCommandCode.setRadioParams.rawValue
        case .other(let code, _): code
        }
    }

    /// Encodes the command as one frame.
    ///
    /// - Throws: ``MeshCoreEncodeError/invalidArgument(_:)`` for a key or prefix of the wrong
    ///   length; ``MeshCoreEncodeError/frameTooLarge(_:)`` if the frame would exceed
    ///   ``MeshCoreFrameLimits/maximumFrameSize`` (for example, a text that is too long).
    public func encoded() throws(MeshCoreEncodeError) -> Data {
        var writer = ByteWriter(code: code)
        switch self {
        case .appStart(let appName):
            writer.bytes(Self.appStartReserved)
            writer.string(appName)
        case .deviceQuery(let version):
            writer.u8(version)
        case .getContacts(let since):
            if let since { writer.u32(since) }
        case .sendTextMessage(let message):
            try Self.check(message.destinationPrefix, length: Self.prefixSize, name: "destination prefix")
            writer.u8(message.textType.rawValue)
            writer.u8(message.attempt)
            writer.u32(message.timestamp)
            writer.bytes(message.destinationPrefix)
            writer.string(message.text)
        case .sendChannelTextMessage(let channel, let timestamp, let text):
            writer.u8(MeshTextType.plain.rawValue)
            writer.u8(channel)
            writer.u32(timestamp)
            writer.string(text)
        case .setDeviceTime(let time):
            writer.u32(time)
        case .sendSelfAdvert(let flood):
            if flood { writer.u8(1) }
        case .setAdvertName(let name):
            writer.bytes(MeshCoreText.utf8(name, maxBytes: Self.maximumAdvertNameBytes))
        case .getChannel(let index):
            writer.u8(index)
        case .removeContact(let key), .hasConnection(let key), .resetPath(let key), .getContactByKey(let key),
             .shareContact(let key):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            writer.bytes(key)
        case .setChannel(let channel):
            guard channel.secret.count == MeshChannelSecret.size else {
                throw .invalidArgument("a channel secret must be \(MeshChannelSecret.size) bytes, got \(channel.secret.count)")
            }
            writer.u8(channel.index)
            // The radio keeps 31 bytes and a NUL.
            writer.bytes(MeshCoreText.utf8(channel.name, maxBytes: ChannelInfo.nameSize - 1), fixed: ChannelInfo.nameSize)
            writer.bytes(channel.secret)
        case .addUpdateContact(let contact, let fields):
            try Self.check(contact.publicKey, length: MeshContact.publicKeySize, name: "public key")
            var body = ByteWriter(capacity: MeshContact.bodySize)
            contact.encodeBody(into: &body)
            let length = switch fields {
            case .withLastModified: MeshContact.bodySize
            case .withPosition: MeshContact.bodySize - 4
            case .throughLastAdvert: MeshContact.bodySize - 12
            }
            writer.bytes(Data(body.data.prefix(length)))
        case .setRadioTxPower(let dBm):
            writer.i8(dBm)
        case .setAdvertLatLon(let latitude, let longitude):
            guard abs(latitude) <= 90, abs(longitude) <= 180 else {
                throw .invalidArgument("coordinates \(latitude), \(longitude) are not a position on Earth")
            }
            writer.i32(MeshCoreFixedPoint.int32(latitude, scale: 1e6))
            writer.i32(MeshCoreFixedPoint.int32(longitude, scale: 1e6))
        case .setRadioParams(let radio):
            writer.u32(radio.frequencyKilohertz)
            writer.u32(radio.bandwidthHertz)
            writer.u8(radio.spreadingFactor)
            writer.u8(radio.codingRate)
            writer.bool(radio.repeats)
        case .reboot:
            writer.bytes(Self.rebootMagic)
        case .other(_, let payload):
            writer.bytes(payload)
        case .getDeviceTime, .syncNextMessage, .getBatteryAndStorage:
            break
        }
        guard writer.data.count <= MeshCoreFrameLimits.maximumFrameSize else {
            throw .frameTooLarge(writer.data.count)
        }
        return writer.data
    }

    private static func check(_ bytes: Data, length: Int, name: String) throws(MeshCoreEncodeError) {
        guard bytes.count == length else {
            throw .invalidArgument("\(name) must be \(length) bytes, got \(bytes.count)")
        }
    }

    /// Decodes one command frame the way the firmware reads it.
    ///
    /// Lenient where the firmware is: `GET_CONTACTS` without a complete `since` lists
    /// everything, `SEND_SELF_ADVERT` floods only when its second byte is 1, message texts and
    /// names may be empty, and bytes after the last field are ignored.
    ///
    /// - Throws: ``MeshCoreDecodeError`` for an empty, oversized or truncated frame
    ///   (`APP_START` needs at least 8 bytes), or a `REBOOT` without its "reboot"
    ///   confirmation. Never traps, whatever the input.
    public init(decoding frame: Data) throws(MeshCoreDecodeError) {
        guard let code = frame.first else { throw .empty }
        guard frame.count <= MeshCoreFrameLimits.maximumFrameSize else {
            throw .tooLarge(frame.count)
        }
        var reader = ByteReader(frame, code: code)
        guard let known = MeshCoreCommandCode(rawValue: code) else {
            self = .other(code: code, payload: reader.rest())
            return
        }
        switch known {
        case .appStart:
            _ = try reader.bytes(Self.appStartReserved.count)
            self = .appStart(appName: reader.restString())
        case .deviceQuery:
            self = .deviceQuery(protocolVersion: try reader.u8())
        case .getContacts:
            let since: UInt32? = if reader.remaining >= 4 { try reader.u32() } else { nil }
            self = .getContacts(since: since)
        case .sendTextMessage:
            try reader.require(1 + 1 + 4 + Self.prefixSize)
            self = .sendTextMessage(TextMessage(
                textType: MeshTextType(rawValue: try reader.u8()), attempt: try reader.u8(),
                timestamp: try reader.u32(), destinationPrefix: try reader.bytes(Self.prefixSize),
                text: reader.restString()))
        case .sendChannelTextMessage:
            try reader.require(1 + 1 + 4)
            _ = try reader.u8()
            self = .sendChannelTextMessage(
                channel: try reader.u8(), timestamp: try reader.u32(), text: reader.restString())
        case .getDeviceTime:
            self = .getDeviceTime
        case .setDeviceTime:
            self = .setDeviceTime(try reader.u32())
        case .sendSelfAdvert:
            let flag: UInt8 = if reader.isAtEnd { 0 } else { try reader.u8() }
            let flood = flag == 1
            self = .sendSelfAdvert(flood: flood)
        case .setAdvertName:
            self = .setAdvertName(reader.restString())
        case .syncNextMessage:
            self = .syncNextMessage
        case .getBatteryAndStorage:
            self = .getBatteryAndStorage
        case .getChannel:
            self = .getChannel(try reader.u8())
        case .removeContact:
            self = .removeContact(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .hasConnection:
            self = .hasConnection(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .resetPath:
            self = .resetPath(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .getContactByKey:
            self = .getContactByKey(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .shareContact:
            self = .shareContact(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .setChannel:
            // The firmware takes 16-byte secrets only: a frame long enough for 32 is refused.
            guard frame.count < 1 + 1 + ChannelInfo.nameSize + 32 else {
                throw .malformed(code: code, reason: "SET_CHANNEL with a 32-byte secret")
            }
            var channel = try ChannelInfo.decode(from: &reader)
            // The radio keeps 31 bytes of the name.
            channel.name = String(decoding: MeshCoreText.utf8(channel.name, maxBytes: ChannelInfo.nameSize - 1), as: UTF8.self)
            self = .setChannel(channel)
        case .addUpdateContact:
            let (contact, fields) = try MeshContact.decodeCommandBody(from: &reader)
            self = .addUpdateContact(contact, fields: fields)
        case .setRadioTxPower:
            self = .setRadioTxPower(try reader.i8())
        case .setAdvertLatLon:
            try reader.require(8)
            self = .setAdvertLatLon(latitude: Double(try reader.i32()) / 1e6, longitude: Double(try reader.i32()) / 1e6)
        case .setRadioParams:
            try reader.require(4 + 4 + 1 + 1)
            let frequency = try reader.u32(), bandwidth = try reader.u32()
            let spreadingFactor = try reader.u8(), codingRate = try reader.u8()
            // Without the last byte the firmware turns repeating off.
            let repeats = reader.isAtEnd ? false : try reader.u8() != 0
            self = .setRadioParams(MeshRadioParameters(
                frequencyKilohertz: frequency, bandwidthHertz: bandwidth, spreadingFactor: spreadingFactor,
                codingRate: codingRate, repeats: repeats))
        case .reboot:
            let magic: Data =
                if reader.remaining >= Self.rebootMagic.count {
                    try reader.bytes(Self.rebootMagic.count)
                } else {
                    reader.rest()
                }
            guard magic == Self.rebootMagic else {
                throw .malformed(code: code, reason: "REBOOT without its \"reboot\" confirmation")
            }
            self = .reboot
        default:
            self = .other(code: code, payload: reader.rest())
        }
    }
}
