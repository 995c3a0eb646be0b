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
    /// `LOGOUT`: `1D` + the 32-byte public key: ends the session with a repeater or room
    /// server. Answered with `OK`.
    case logout(publicKey: Data)
    /// `EXPORT_CONTACT`: `11` for the radio's own card, `11` + a contact's 32-byte key for the
    /// advert the radio keeps of it. Answered with `EXPORT_CONTACT`.
    case exportContact(publicKey: Data?)
    /// `IMPORT_CONTACT`: `12` + a contact card's packet (``MeshContactCard/packet``). Answered
    /// with `OK`; the radio then treats the advert as heard: it checks the signature and
    /// applies its add rules (in manual-add mode that is a `NEW_ADVERT` push, not a contact).
    case importContact(packet: Data)
    /// `SET_TUNING_PARAMS`: `15` + both values × 1000 as `UInt32`. Answered with `OK`.
    case setTuningParams(MeshTuningParameters)
    /// `GET_TUNING_PARAMS`: `2B`. Answered with `TUNING_PARAMS`.
    case getTuningParams
    /// `EXPORT_PRIVATE_KEY`: `17`. Answered with `PRIVATE_KEY`, or `DISABLED` on builds without it.
    case exportPrivateKey
    /// `IMPORT_PRIVATE_KEY`: `18` + the 64-byte private key. Answered with `OK`.
    case importPrivateKey(Data)
    /// `SIGN_START`: `21`: starts signing with the node's key. Answered with `SIGN_START`.
    case signStart
    /// `SIGN_DATA`: `22` + the next chunk of data to sign. Answered with `OK`.
    case signData(Data)
    /// `SIGN_FINISH`: `23`. Answered with `SIGNATURE`.
    case signFinish
    /// `SET_DEVICE_PIN`: `25` + the BLE PIN as `UInt32` (0 for the board's default, else six
    /// digits). Answered with `OK`.
    case setDevicePin(UInt32)
    /// `SET_OTHER_PARAMS`: `26` + manual add, telemetry modes, location policy, multi-acks.
    /// Answered with `OK`.
    case setOtherParams(MeshOtherParameters)
    /// `GET_CUSTOM_VARS`: `28`. Answered with `CUSTOM_VARS`.
    case getCustomVars
    /// `SET_CUSTOM_VAR`: `29` + `name:value`. Answered with `OK`.
    case setCustomVar(MeshCustomVariable)
    /// `GET_ADVERT_PATH`: `2A 00` + the 32-byte public key. Answered with `ADVERT_PATH`.
    case getAdvertPath(publicKey: Data)
    /// `FACTORY_RESET`: `33` + "reset": erases everything and reboots.
    case factoryReset
    /// `GET_STATS`: `38` + the kind. Answered with `STATS`.
    case getStats(MeshStatsKind)
    /// `SET_AUTOADD_CONFIG`: `3A` + the options and the hop limit. Answered with `OK`.
    case setAutoAddConfig(MeshAutoAddConfiguration)
    /// `GET_AUTOADD_CONFIG`: `3B`. Answered with `AUTOADD_CONFIG`.
    case getAutoAddConfig
    /// `GET_ALLOWED_REPEAT_FREQ`: `3C`. Answered with `ALLOWED_REPEAT_FREQ`.
    case getAllowedRepeatFrequencies
    /// `SET_PATH_HASH_MODE`: `3D 00` + the mode (0, 1, 2: hop hashes of 1, 2 or 3 bytes in
    /// the floods this node starts). Answered with `OK`.
    case setPathHashMode(UInt8)
    /// `SET_FLOOD_SCOPE_KEY`: `36 00` + a 16-byte key, `36 00` to fall back to the default
    /// scope, `36 01` for unscoped floods. Lasts until the radio reboots. Answered with `OK`.
    case setFloodScope(MeshFloodScopeOverride)
    /// `SET_DEFAULT_FLOOD_SCOPE`: `3F` + the name (31 bytes, NUL-padded) and key, or a bare `3F`
    /// to clear it. Kept across reboots. Answered with `OK`.
    case setDefaultFloodScope(MeshFloodScope?)
    /// `GET_DEFAULT_FLOOD_SCOPE`: `40`. Answered with `DEFAULT_FLOOD_SCOPE`.
    case getDefaultFloodScope
    /// `SEND_LOGIN`: `1A` + the server's 32-byte key + the password (at most 15 bytes). Answered
    /// with `SENT`, then `LOGIN_SUCCESS` or `LOGIN_FAIL` (or nothing: a wrong password often
    /// gets no answer at all).
    case sendLogin(publicKey: Data, password: String)
    /// `SEND_STATUS_REQ`: `1B` + the server's key. Answered with `SENT`, then `STATUS_RESPONSE`.
    case sendStatusRequest(publicKey: Data)
    /// `SEND_TELEMETRY_REQ`: `27 00 00 00` + a node's key, or without a key for this radio's
    /// own telemetry (then answered at once with `TELEMETRY_RESPONSE`, no `SENT`).
    case sendTelemetryRequest(publicKey: Data?)
    /// `SEND_BINARY_REQ`: `32` + the node's key + a request body (type and parameters, see
    /// ``MeshBinaryRequest``). Answered with `SENT` (its ack field is the request's tag), then
    /// `BINARY_RESPONSE` with that tag.
    case sendBinaryRequest(publicKey: Data, body: Data)
    /// `SEND_ANON_REQ`: `39` + the node's key + request data (see ``MeshAnonymousRequest``).
    /// Answered like `SEND_BINARY_REQ`.
    case sendAnonymousRequest(publicKey: Data, data: Data)
    /// `SEND_PATH_DISCOVERY_REQ`: `34 00` + the node's key. Answered with `SENT`, then
    /// `PATH_DISCOVERY_RESPONSE`.
    case sendPathDiscoveryRequest(publicKey: Data)
    /// `SEND_TRACE_PATH`: `24` + tag, auth code, flags, repeater hashes. Answered with `SENT`,
    /// then `TRACE_DATA`.
    case sendTracePath(MeshTraceRequest)
    /// `SEND_CONTROL_DATA`: `37` + a control payload whose first byte has bit 7 set (node
    /// discovery, ``MeshNodeDiscovery``). Sent zero-hop; answered with `OK`.
    case sendControlData(Data)
    /// `SEND_CHANNEL_DATA`: `3E idx path_len [path] type(2) data`: a binary datagram on a
    /// channel, flooded or along a path. Answered with `OK`.
    case sendChannelData(MeshChannelData)
    /// `SEND_RAW_DATA`: `19 path_len path payload`: a raw custom packet sent along a path
    /// (`path_len` is the path's byte count, below 0x80: the firmware sends raw data direct
    /// only); the payload is at least 4 bytes. Answered with `OK`; the node at the end of the
    /// route pushes `RAW_DATA`.
    case sendRawData(path: Data, payload: Data)
    /// `SEND_RAW_PACKET`: `41 priority packet`: a whole mesh packet (header, path, payload)
    /// for the radio to transmit. Answered with `OK`, `ERR 6` for a packet that does not parse.
    case sendRawPacket(priority: UInt8, packet: Data)
    /// `RUN_CLI_COMMAND` (protocol 14): `42` + a command line for the radio itself. Answered
    /// with `CLI_REPLY`; older firmware answers `ERR 1`.
    case runCLICommand(String)
    /// Any other command: the code byte and the bytes after it, raw.
    case other(code: UInt8, payload: Data)

    /// `SEND_BINARY_REQ` for a typed request.
    public static func binaryRequest(to publicKey: Data, _ request: MeshBinaryRequest) -> MeshCoreCommand {
        .sendBinaryRequest(publicKey: publicKey, body: request.encoded)
    }

    /// `SEND_ANON_REQ` for a typed request.
    public static func anonymousRequest(to publicKey: Data, _ request: MeshAnonymousRequest) -> MeshCoreCommand {
        .sendAnonymousRequest(publicKey: publicKey, data: request.encoded)
    }

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
    /// The confirmation FACTORY_RESET carries after its code.
    static let factoryResetMagic = Data("reset".utf8)
    /// The length of a private key as the radio exports it.
    public static let privateKeySize = 64
    /// The BLE PINs the radio takes besides 0 (its default).
    public static let devicePinRange: ClosedRange<UInt32> = 100_000...999_999
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
        case .logout: MeshCoreCommandCode.logout.rawValue
        case .exportContact: MeshCoreCommandCode.exportContact.rawValue
        case .importContact: MeshCoreCommandCode.importContact.rawValue
        case .setTuningParams: MeshCoreCommandCode.setTuningParams.rawValue
        case .getTuningParams: MeshCoreCommandCode.getTuningParams.rawValue
        case .exportPrivateKey: MeshCoreCommandCode.exportPrivateKey.rawValue
        case .importPrivateKey: MeshCoreCommandCode.importPrivateKey.rawValue
        case .signStart: MeshCoreCommandCode.signStart.rawValue
        case .signData: MeshCoreCommandCode.signData.rawValue
        case .signFinish: MeshCoreCommandCode.signFinish.rawValue
        case .setDevicePin: MeshCoreCommandCode.setDevicePin.rawValue
        case .setOtherParams: MeshCoreCommandCode.setOtherParams.rawValue
        case .getCustomVars: MeshCoreCommandCode.getCustomVars.rawValue
        case .setCustomVar: MeshCoreCommandCode.setCustomVar.rawValue
        case .getAdvertPath: MeshCoreCommandCode.getAdvertPath.rawValue
        case .factoryReset: MeshCoreCommandCode.factoryReset.rawValue
        case .getStats: MeshCoreCommandCode.getStats.rawValue
        case .setAutoAddConfig: MeshCoreCommandCode.setAutoAddConfig.rawValue
        case .getAutoAddConfig: MeshCoreCommandCode.getAutoAddConfig.rawValue
        case .getAllowedRepeatFrequencies: MeshCoreCommandCode.getAllowedRepeatFrequencies.rawValue
        case .setPathHashMode: MeshCoreCommandCode.setPathHashMode.rawValue
        case .setFloodScope: MeshCoreCommandCode.setFloodScopeKey.rawValue
        case .setDefaultFloodScope: MeshCoreCommandCode.setDefaultFloodScope.rawValue
        case .getDefaultFloodScope: MeshCoreCommandCode.getDefaultFloodScope.rawValue
        case .sendLogin: MeshCoreCommandCode.sendLogin.rawValue
        case .sendStatusRequest: MeshCoreCommandCode.sendStatusRequest.rawValue
        case .sendTelemetryRequest: MeshCoreCommandCode.sendTelemetryRequest.rawValue
        case .sendBinaryRequest: MeshCoreCommandCode.sendBinaryRequest.rawValue
        case .sendAnonymousRequest: MeshCoreCommandCode.sendAnonymousRequest.rawValue
        case .sendPathDiscoveryRequest: MeshCoreCommandCode.sendPathDiscoveryRequest.rawValue
        case .sendTracePath: MeshCoreCommandCode.sendTracePath.rawValue
        case .sendControlData: MeshCoreCommandCode.sendControlData.rawValue
        case .sendChannelData: MeshCoreCommandCode.sendChannelData.rawValue
        case .sendRawData: MeshCoreCommandCode.sendRawData.rawValue
        case .sendRawPacket: MeshCoreCommandCode.sendRawPacket.rawValue
        case .runCLICommand: MeshCoreCommandCode.runCLICommand.rawValue
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
             .shareContact(let key), .logout(let key), .sendStatusRequest(let key):
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
        case .factoryReset:
            writer.bytes(Self.factoryResetMagic)
        case .exportContact(let key):
            if let key {
                try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
                writer.bytes(key)
            }
        case .importContact(let packet):
            // The radio refuses anything shorter than an advert's fixed part.
            guard packet.count >= Self.minimumImportPacket else {
                throw .invalidArgument("a contact card's packet is at least \(Self.minimumImportPacket) bytes, got \(packet.count)")
            }
            writer.bytes(packet)
        case .setTuningParams(let tuning):
            tuning.encode(into: &writer)
        case .importPrivateKey(let key):
            try Self.check(key, length: Self.privateKeySize, name: "private key")
            writer.bytes(key)
        case .signData(let chunk):
            guard !chunk.isEmpty else { throw .invalidArgument("an empty chunk to sign") }
            writer.bytes(chunk)
        case .setDevicePin(let pin):
            guard pin == 0 || Self.devicePinRange.contains(pin) else {
                throw .invalidArgument("a BLE PIN is 0 (the default) or six digits, got \(pin)")
            }
            writer.u32(pin)
        case .setOtherParams(let parameters):
            parameters.encode(into: &writer)
        case .setCustomVar(let variable):
            writer.string(try variable.encoded())
        case .getAdvertPath(let key):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            writer.u8(0)
            writer.bytes(key)
        case .getStats(let kind):
            writer.u8(kind.rawValue)
        case .setAutoAddConfig(let configuration):
            configuration.encode(into: &writer)
        case .setPathHashMode(let mode):
            guard mode <= 2 else { throw .invalidArgument("path hash mode is 0, 1 or 2 (1-, 2- or 3-byte hashes), got \(mode)") }
            writer.u8(0)
            writer.u8(mode)
        case .setFloodScope(let scope):
            switch scope {
            case .key(let key):
                try Self.check(key, length: MeshFloodScope.keySize, name: "flood scope key")
                writer.u8(0)
                writer.bytes(key)
            case .useDefault:
                writer.u8(0)
            case .unscoped:
                writer.u8(1)
            }
        case .setDefaultFloodScope(let scope):
            if let scope { try scope.encode(into: &writer) }
        case .sendLogin(let key, let password):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            // The servers read 15 bytes: a longer password would be cut and never match.
            guard password.utf8.count <= Self.maximumPasswordBytes else {
                throw .invalidArgument("a password is at most \(Self.maximumPasswordBytes) bytes, got \(password.utf8.count)")
            }
            writer.bytes(key)
            writer.string(password)
        case .sendTelemetryRequest(let key):
            writer.bytes(Data(count: 3))
            if let key {
                try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
                writer.bytes(key)
            }
        case .sendBinaryRequest(let key, let body):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            guard !body.isEmpty else { throw .invalidArgument("a binary request needs its type byte") }
            writer.bytes(key)
            writer.bytes(body)
        case .sendAnonymousRequest(let key, let data):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            guard !data.isEmpty else { throw .invalidArgument("an anonymous request needs its type byte") }
            writer.bytes(key)
            writer.bytes(data)
        case .sendPathDiscoveryRequest(let key):
            try Self.check(key, length: MeshContact.publicKeySize, name: "public key")
            writer.u8(0)
            writer.bytes(key)
        case .sendTracePath(let trace):
            try trace.encode(into: &writer)
        case .sendControlData(let payload):
            guard let first = payload.first, first & 0x80 != 0 else {
                throw .invalidArgument("a control payload's first byte has bit 7 set")
            }
            writer.bytes(payload)
        case .sendChannelData(let datagram):
            try datagram.encodeCommand(into: &writer)
        case .sendRawData(let path, let payload):
            guard path.count <= MeshPathEncoding.maximumPathBytes else { throw .invalidArgument("a path is at most 64 bytes") }
            guard payload.count >= 4 else { throw .invalidArgument("raw data is at least 4 bytes, got \(payload.count)") }
            writer.u8(UInt8(path.count))
            writer.bytes(path)
            writer.bytes(payload)
        case .sendRawPacket(let priority, let packet):
            guard packet.count >= 2 else { throw .invalidArgument("a mesh packet has at least a header and a path length") }
            writer.u8(priority)
            writer.bytes(packet)
        case .runCLICommand(let line):
            guard line.utf8.count >= 2 else { throw .invalidArgument("a command line is at least 2 bytes") }
            writer.string(line)
        case .other(_, let payload):
            writer.bytes(payload)
        case .getDeviceTime, .syncNextMessage, .getBatteryAndStorage, .getTuningParams, .exportPrivateKey, .signStart,
             .signFinish, .getCustomVars, .getAutoAddConfig, .getAllowedRepeatFrequencies, .getDefaultFloodScope:
            break
        }
        guard writer.data.count <= MeshCoreFrameLimits.maximumFrameSize else {
            throw .frameTooLarge(writer.data.count)
        }
        return writer.data
    }

    /// The longest password a server reads.
    public static let maximumPasswordBytes = 15
    /// The longest binary request body the radio sends.
    public static let maximumRequestBody = 168

    /// The shortest packet `IMPORT_CONTACT` takes (the firmware's guard: a frame over 98 bytes).
    static let minimumImportPacket = 98

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
        case .factoryReset:
            guard reader.remaining >= Self.factoryResetMagic.count,
                try reader.bytes(Self.factoryResetMagic.count) == Self.factoryResetMagic
            else {
                throw .malformed(code: code, reason: "FACTORY_RESET without its \"reset\" confirmation")
            }
            self = .factoryReset
        case .logout:
            self = .logout(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .exportContact:
            // Shorter than a key: the radio's own card.
            self = .exportContact(publicKey: reader.remaining >= MeshContact.publicKeySize ? try reader.bytes(MeshContact.publicKeySize) : nil)
        case .importContact:
            guard reader.remaining >= Self.minimumImportPacket else {
                throw .truncated(code: code, needed: 1 + Self.minimumImportPacket, got: frame.count)
            }
            self = .importContact(packet: reader.rest())
        case .setTuningParams:
            self = .setTuningParams(try MeshTuningParameters.decode(from: &reader))
        case .getTuningParams:
            self = .getTuningParams
        case .exportPrivateKey:
            self = .exportPrivateKey
        case .importPrivateKey:
            self = .importPrivateKey(try reader.bytes(Self.privateKeySize))
        case .signStart:
            self = .signStart
        case .signData:
            try reader.require(1)
            self = .signData(reader.rest())
        case .signFinish:
            self = .signFinish
        case .setDevicePin:
            self = .setDevicePin(try reader.u32())
        case .setOtherParams:
            self = .setOtherParams(try MeshOtherParameters.decode(from: &reader))
        case .getCustomVars:
            self = .getCustomVars
        case .setCustomVar:
            try reader.require(3)
            let text = reader.restString()
            guard let variable = MeshCustomVariable.parse(pair: text) else {
                throw .invalidValue(code: code, reason: "SET_CUSTOM_VAR without name:value")
            }
            self = .setCustomVar(variable)
        case .getAdvertPath:
            try reader.require(1 + MeshContact.publicKeySize)
            _ = try reader.u8()
            self = .getAdvertPath(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .getStats:
            let raw = try reader.u8()
            guard let kind = MeshStatsKind(rawValue: raw) else {
                throw .invalidValue(code: code, reason: "statistics of kind \(raw)")
            }
            self = .getStats(kind)
        case .setAutoAddConfig:
            self = .setAutoAddConfig(try MeshAutoAddConfiguration.decode(from: &reader))
        case .getAutoAddConfig:
            self = .getAutoAddConfig
        case .getAllowedRepeatFrequencies:
            self = .getAllowedRepeatFrequencies
        case .setPathHashMode:
            guard try reader.u8() == 0 else { throw .malformed(code: code, reason: "SET_PATH_HASH_MODE's second byte must be 0") }
            self = .setPathHashMode(try reader.u8())
        case .setFloodScopeKey:
            switch try reader.u8() {
            case 0:
                self = .setFloodScope(reader.remaining >= MeshFloodScope.keySize ? .key(try reader.bytes(MeshFloodScope.keySize)) : .useDefault)
            case 1:
                self = .setFloodScope(.unscoped)
            case let other:
                throw .malformed(code: code, reason: "SET_FLOOD_SCOPE_KEY mode \(other)")
            }
        case .setDefaultFloodScope:
            guard reader.remaining >= MeshFloodScope.nameField + MeshFloodScope.keySize else {
                self = .setDefaultFloodScope(nil)
                return
            }
            let nameField = try reader.bytes(MeshFloodScope.nameField)
            let length = nameField.firstIndex(of: 0).map { $0 - nameField.startIndex } ?? nameField.count
            guard (1...MeshFloodScope.maximumNameBytes).contains(length) else {
                throw .invalidValue(code: code, reason: "a default scope's name of \(length) bytes")
            }
            self = .setDefaultFloodScope(MeshFloodScope(
                name: MeshCoreText.decode(nulPadded: nameField), key: try reader.bytes(MeshFloodScope.keySize)))
        case .getDefaultFloodScope:
            self = .getDefaultFloodScope
        case .sendLogin:
            let key = try reader.bytes(MeshContact.publicKeySize)
            // The server reads at most 15 bytes of it.
            self = .sendLogin(publicKey: key, password: String(decoding: reader.rest().prefix(Self.maximumPasswordBytes), as: UTF8.self))
        case .sendStatusRequest:
            self = .sendStatusRequest(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .sendTelemetryRequest:
            // Exactly the three reserved bytes: this radio's own; with a key: a node's.
            if frame.count == 4 {
                self = .sendTelemetryRequest(publicKey: nil)
            } else {
                _ = try reader.bytes(3)
                self = .sendTelemetryRequest(publicKey: try reader.bytes(MeshContact.publicKeySize))
            }
        case .sendBinaryRequest:
            let key = try reader.bytes(MeshContact.publicKeySize)
            try reader.require(1)
            self = .sendBinaryRequest(publicKey: key, body: reader.rest())
        case .sendAnonymousRequest:
            let key = try reader.bytes(MeshContact.publicKeySize)
            try reader.require(1)
            self = .sendAnonymousRequest(publicKey: key, data: reader.rest())
        case .sendPathDiscoveryRequest:
            guard try reader.u8() == 0 else {
                throw .malformed(code: code, reason: "SEND_PATH_DISCOVERY_REQ's second byte must be 0")
            }
            self = .sendPathDiscoveryRequest(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .sendTracePath:
            self = .sendTracePath(try MeshTraceRequest.decode(from: &reader))
        case .sendControlData:
            let payload = reader.rest()
            guard let first = payload.first, first & 0x80 != 0 else {
                throw .malformed(code: code, reason: "a control payload's first byte has bit 7 set")
            }
            self = .sendControlData(payload)
        case .sendChannelData:
            self = .sendChannelData(try MeshChannelData.decodeCommand(from: &reader))
        case .sendRawData:
            // The firmware's guards: a frame of 6 bytes or more, a path length below 0x80 (no
            // flooding), and 4 payload bytes after the path.
            guard frame.count >= 6 else { throw .truncated(code: code, needed: 6, got: frame.count) }
            let length = try reader.u8()
            guard length < 0x80 else { throw .malformed(code: code, reason: "raw data cannot flood") }
            let path = try reader.bytes(Int(length))
            try reader.require(4)
            self = .sendRawData(path: path, payload: reader.rest())
        case .sendRawPacket:
            try reader.require(3)
            self = .sendRawPacket(priority: try reader.u8(), packet: reader.rest())
        case .runCLICommand:
            try reader.require(2)
            self = .runCLICommand(reader.restString())
        }
    }
}
