import Foundation

/// Everything the radio sends: responses to commands and unsolicited pushes.
///
/// ``init(decoding:)`` parses one frame; ``encoded()`` is its inverse (the emulator uses it).
/// Codes without a dedicated case are kept raw in ``other(code:payload:)``.
public enum MeshCoreFrame: Sendable, Hashable {
    /// `OK` (`00`), optionally followed by a `UInt32` value.
    case ok(value: UInt32?)
    /// `ERR` (`01 code`); a bare `01` decodes as `.unknown(0)`.
    case error(MeshCoreErrorCode)
    /// `CONTACTS_START`: the number of `CONTACT` frames to follow.
    case contactsStart(count: UInt32)
    /// `CONTACT`: one contact of a listing.
    case contact(MeshContact)
    /// `END_OF_CONTACTS`: the listing is complete; the most recent modification time.
    case endOfContacts(lastModified: UInt32)
    /// `SELF_INFO`: the reply to `APP_START`.
    case selfInfo(SelfInfo)
    /// `SENT`: the reply to `SEND_TXT_MSG`.
    case sent(SentResult)
    /// `CONTACT_MSG_RECV` or `CONTACT_MSG_RECV_V3` (see ``ContactMessage/isV3``).
    case contactMessage(ContactMessage)
    /// `CHANNEL_MSG_RECV` or `CHANNEL_MSG_RECV_V3` (see ``ChannelMessage/isV3``).
    case channelMessage(ChannelMessage)
    /// `CURR_TIME`: the radio's clock in seconds since 1970.
    case currentTime(UInt32)
    /// `NO_MORE_MESSAGES`: the message queue is empty.
    case noMoreMessages
    /// `BATT_AND_STORAGE`: battery voltage and storage use.
    case batteryAndStorage(BatteryAndStorage)
    /// `DEVICE_INFO`: the reply to `DEVICE_QUERY`.
    case deviceInfo(DeviceInfo)
    /// `CHANNEL_INFO`: the reply to `GET_CHANNEL`.
    case channelInfo(ChannelInfo)
    /// `DISABLED`: the feature is disabled on this radio.
    case disabled
    /// `ADVERT` push: a known contact advertised.
    case advert(publicKey: Data)
    /// `PATH_UPDATED` push: a contact's path changed.
    case pathUpdated(publicKey: Data)
    /// `SEND_CONFIRMED` push: a direct message was acknowledged.
    case sendConfirmed(SendConfirmation)
    /// `MSG_WAITING` push: a message is queued; sync until `NO_MORE_MESSAGES`.
    case messageWaiting
    /// `NEW_ADVERT` push: an unknown node advertised (manual add mode).
    case newAdvert(MeshContact)
    /// `CONTACT_DELETED` push: the radio removed a contact.
    case contactDeleted(publicKey: Data)
    /// `CONTACTS_FULL` push: the contact table is full.
    case contactsFull
    /// `EXPORT_CONTACT`: a contact card's packet (parse it with
    /// ``MeshContactCard/init(packet:)``; kept raw so a card this library cannot read still
    /// reaches the caller).
    case exportedContact(packet: Data)
    /// `PRIVATE_KEY`: the node's 64-byte private key.
    case privateKey(Data)
    /// `SIGN_START`: signing began; at most this many bytes may be signed.
    case signStart(maximumLength: UInt32)
    /// `SIGNATURE`: the 64-byte Ed25519 signature over the data sent with `SIGN_DATA`.
    case signature(Data)
    /// `CUSTOM_VARS`: the board's custom variables.
    case customVariables([MeshCustomVariable])
    /// `ADVERT_PATH`: the route of a contact's latest advert.
    case advertPath(MeshAdvertPath)
    /// `TUNING_PARAMS`: the radio's timing parameters.
    case tuningParameters(MeshTuningParameters)
    /// `STATS`: core, radio or packet statistics.
    case stats(MeshStats)
    /// `AUTOADD_CONFIG`: which nodes are added by themselves in manual-add mode.
    case autoAddConfiguration(MeshAutoAddConfiguration)
    /// `ALLOWED_REPEAT_FREQ`: the frequency ranges (kHz) the radio may repeat on.
    case allowedRepeatFrequencies([ClosedRange<UInt32>])
    /// `DEFAULT_FLOOD_SCOPE`: the scope kept across reboots, nil when there is none.
    case defaultFloodScope(MeshFloodScope?)
    /// `LOGIN_SUCCESS` push: a server accepted the login.
    case loginSuccess(MeshLoginResult)
    /// `LOGIN_FAIL` push: a server refused the login (the first 6 bytes of its key).
    case loginFailed(serverPrefix: Data)
    /// `STATUS_RESPONSE` push: a server's status, raw (decode it with
    /// ``MeshNodeStatus/init(decoding:layout:)`` in the layout of the node asked).
    case statusResponse(MeshServerReply<Data>)
    /// `TELEMETRY_RESPONSE` push: a node's (or this radio's own) telemetry.
    case telemetryResponse(MeshServerReply<MeshTelemetry>)
    /// `BINARY_RESPONSE` push: the answer to a binary or anonymous request with this tag.
    case binaryResponse(tag: UInt32, body: Data)
    /// `PATH_DISCOVERY_RESPONSE` push: the routes to and from a node.
    case pathDiscoveryResponse(MeshDiscoveredPath)
    /// `TRACE_DATA` push: a trace came back.
    case traceData(MeshTraceResult)
    /// `RAW_DATA` push: a raw packet addressed to this radio (SNR in dB, RSSI in dBm).
    case rawData(snr: Double, rssi: Int8, payload: Data)
    /// `LOG_RX_DATA` push: any packet the radio heard, as received.
    case rxLog(snr: Double, rssi: Int8, packet: Data)
    /// `CONTROL_DATA` push: a zero-hop control packet (node discovery answers).
    case controlData(snr: Double, rssi: Int8, pathLength: UInt8, payload: Data)
    /// `CLI_REPLY` (protocol 14): the radio's answer to `RUN_CLI_COMMAND`.
    case cliReply(String)
    /// `CHANNEL_DATA_RECV`: a binary datagram received on a channel (a message of the queue).
    case channelData(MeshChannelData)
    /// Any code without a dedicated case, with the bytes after the code byte.
    case other(code: UInt8, payload: Data)

    /// Decodes one frame.
    ///
    /// Frames longer than ``MeshCoreFrameLimits/maximumFrameSize`` are rejected. Bytes after
    /// the last field a layout defines are ignored, so newer firmware may append fields.
    ///
    /// - Throws: ``MeshCoreDecodeError`` for an empty, oversized, truncated or inconsistent
    ///   frame. Never traps, whatever the input.
    public init(decoding frame: Data) throws(MeshCoreDecodeError) {
        guard let code = frame.first else { throw .empty }
        guard frame.count <= MeshCoreFrameLimits.maximumFrameSize else {
            throw .tooLarge(frame.count)
        }
        var reader = ByteReader(frame, code: code)
        if let response = MeshCoreResponseCode(rawValue: code) {
            self = try Self.decodeResponse(response, reader: &reader)
        } else if let push = MeshCorePushCode(rawValue: code) {
            self = try Self.decodePush(push, reader: &reader)
        } else {
            self = .other(code: code, payload: reader.rest())
        }
    }

    private static func decodeResponse(
        _ response: MeshCoreResponseCode, reader: inout ByteReader
    ) throws(MeshCoreDecodeError) -> MeshCoreFrame {
        switch response {
        case .ok:
            let value: UInt32? = if reader.isAtEnd { nil } else { try reader.u32() }
            return .ok(value: value)
        case .error:
            let raw: UInt8 = if reader.isAtEnd { 0 } else { try reader.u8() }
            return .error(MeshCoreErrorCode(rawValue: raw))
        case .contactsStart:
            return .contactsStart(count: try reader.u32())
        case .contact:
            return .contact(try MeshContact.decodeBody(from: &reader))
        case .endOfContacts:
            return .endOfContacts(lastModified: try reader.u32())
        case .selfInfo:
            return .selfInfo(try SelfInfo.decode(from: &reader))
        case .sent:
            return .sent(try SentResult.decode(from: &reader))
        case .contactMessageReceived, .contactMessageReceivedV3:
            let isV3 = response == .contactMessageReceivedV3
            return .contactMessage(try ContactMessage.decode(from: &reader, isV3: isV3))
        case .channelMessageReceived, .channelMessageReceivedV3:
            let isV3 = response == .channelMessageReceivedV3
            return .channelMessage(try ChannelMessage.decode(from: &reader, isV3: isV3))
        case .currentTime:
            return .currentTime(try reader.u32())
        case .noMoreMessages:
            return .noMoreMessages
        case .batteryAndStorage:
            return .batteryAndStorage(try BatteryAndStorage.decode(from: &reader))
        case .deviceInfo:
            return .deviceInfo(try DeviceInfo.decode(from: &reader))
        case .channelInfo:
            return .channelInfo(try ChannelInfo.decode(from: &reader))
        case .disabled:
            return .disabled
        case .exportContact:
            return .exportedContact(packet: reader.rest())
        case .privateKey:
            return .privateKey(try reader.bytes(MeshCoreCommand.privateKeySize))
        case .signStart:
            _ = try reader.u8()
            return .signStart(maximumLength: try reader.u32())
        case .signature:
            return .signature(try reader.bytes(MeshAdvert.signatureSize))
        case .customVars:
            guard let variables = MeshCustomVariable.parse(list: reader.restString()) else {
                throw .malformed(code: response.rawValue, reason: "a custom variable without name:value")
            }
            return .customVariables(variables)
        case .advertPath:
            return .advertPath(try MeshAdvertPath.decode(from: &reader))
        case .tuningParams:
            return .tuningParameters(try MeshTuningParameters.decode(from: &reader))
        case .stats:
            return .stats(try MeshStats.decode(from: &reader))
        case .autoAddConfig:
            return .autoAddConfiguration(try MeshAutoAddConfiguration.decode(from: &reader))
        case .allowedRepeatFrequencies:
            guard reader.remaining % 8 == 0 else {
                throw .malformed(code: response.rawValue, reason: "\(reader.remaining) bytes are not whole frequency ranges")
            }
            var ranges: [ClosedRange<UInt32>] = []
            while reader.remaining >= 8 {
                let lower = try reader.u32(), upper = try reader.u32()
                ranges.append(min(lower, upper)...max(lower, upper))
            }
            return .allowedRepeatFrequencies(ranges)
        case .defaultFloodScope:
            return .defaultFloodScope(try MeshFloodScope.decodeIfPresent(from: &reader))
        case .channelDataReceived:
            return .channelData(try MeshChannelData.decodeReceived(from: &reader))
        case .cliReply:
            return .cliReply(reader.restString())
        }
    }

    private static func decodePush(
        _ push: MeshCorePushCode, reader: inout ByteReader
    ) throws(MeshCoreDecodeError) -> MeshCoreFrame {
        switch push {
        case .advert:
            return .advert(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .pathUpdated:
            return .pathUpdated(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .sendConfirmed:
            return .sendConfirmed(try SendConfirmation.decode(from: &reader))
        case .messageWaiting:
            return .messageWaiting
        case .newAdvert:
            return .newAdvert(try MeshContact.decodeBody(from: &reader))
        case .contactDeleted:
            return .contactDeleted(publicKey: try reader.bytes(MeshContact.publicKeySize))
        case .contactsFull:
            return .contactsFull
        case .loginSuccess:
            return .loginSuccess(try MeshLoginResult.decode(from: &reader))
        case .loginFail:
            _ = try reader.u8()
            return .loginFailed(serverPrefix: try reader.bytes(MeshCoreCommand.prefixSize))
        case .statusResponse:
            _ = try reader.u8()
            let prefix = try reader.bytes(MeshCoreCommand.prefixSize)
            return .statusResponse(MeshServerReply(serverPrefix: prefix, body: reader.rest()))
        case .telemetryResponse:
            _ = try reader.u8()
            let prefix = try reader.bytes(MeshCoreCommand.prefixSize)
            return .telemetryResponse(MeshServerReply(serverPrefix: prefix, body: MeshTelemetry(lpp: reader.rest())))
        case .binaryResponse:
            _ = try reader.u8()
            return .binaryResponse(tag: try reader.u32(), body: reader.rest())
        case .pathDiscoveryResponse:
            return .pathDiscoveryResponse(try MeshDiscoveredPath.decode(from: &reader))
        case .traceData:
            return .traceData(try MeshTraceResult.decode(from: &reader))
        case .rawData:
            let snr = Double(try reader.i8()) / 4, rssi = try reader.i8()
            _ = try reader.u8()
            return .rawData(snr: snr, rssi: rssi, payload: reader.rest())
        case .logRxData:
            let snr = Double(try reader.i8()) / 4
            return .rxLog(snr: snr, rssi: try reader.i8(), packet: reader.rest())
        case .controlData:
            let snr = Double(try reader.i8()) / 4, rssi = try reader.i8()
            return .controlData(snr: snr, rssi: rssi, pathLength: try reader.u8(), payload: reader.rest())
        }
    }

    /// The frame's code byte.
    public var code: UInt8 {
        switch self {
        case .ok: MeshCoreResponseCode.ok.rawValue
        case .error: MeshCoreResponseCode.error.rawValue
        case .contactsStart: MeshCoreResponseCode.contactsStart.rawValue
        case .contact: MeshCoreResponseCode.contact.rawValue
        case .endOfContacts: MeshCoreResponseCode.endOfContacts.rawValue
        case .selfInfo: MeshCoreResponseCode.selfInfo.rawValue
        case .sent: MeshCoreResponseCode.sent.rawValue
        case .contactMessage(let message): message.code
        case .channelMessage(let message): message.code
        case .currentTime: MeshCoreResponseCode.currentTime.rawValue
        case .noMoreMessages: MeshCoreResponseCode.noMoreMessages.rawValue
        case .batteryAndStorage: MeshCoreResponseCode.batteryAndStorage.rawValue
        case .deviceInfo: MeshCoreResponseCode.deviceInfo.rawValue
        case .channelInfo: MeshCoreResponseCode.channelInfo.rawValue
        case .disabled: MeshCoreResponseCode.disabled.rawValue
        case .advert: MeshCorePushCode.advert.rawValue
        case .pathUpdated: MeshCorePushCode.pathUpdated.rawValue
        case .sendConfirmed: MeshCorePushCode.sendConfirmed.rawValue
        case .messageWaiting: MeshCorePushCode.messageWaiting.rawValue
        case .newAdvert: MeshCorePushCode.newAdvert.rawValue
        case .contactDeleted: MeshCorePushCode.contactDeleted.rawValue
        case .contactsFull: MeshCorePushCode.contactsFull.rawValue
        case .exportedContact: MeshCoreResponseCode.exportContact.rawValue
        case .privateKey: MeshCoreResponseCode.privateKey.rawValue
        case .signStart: MeshCoreResponseCode.signStart.rawValue
        case .signature: MeshCoreResponseCode.signature.rawValue
        case .customVariables: MeshCoreResponseCode.customVars.rawValue
        case .advertPath: MeshCoreResponseCode.advertPath.rawValue
        case .tuningParameters: MeshCoreResponseCode.tuningParams.rawValue
        case .stats: MeshCoreResponseCode.stats.rawValue
        case .autoAddConfiguration: MeshCoreResponseCode.autoAddConfig.rawValue
        case .allowedRepeatFrequencies: MeshCoreResponseCode.allowedRepeatFrequencies.rawValue
        case .defaultFloodScope: MeshCoreResponseCode.defaultFloodScope.rawValue
        case .loginSuccess: MeshCorePushCode.loginSuccess.rawValue
        case .loginFailed: MeshCorePushCode.loginFail.rawValue
        case .statusResponse: MeshCorePushCode.statusResponse.rawValue
        case .telemetryResponse: MeshCorePushCode.telemetryResponse.rawValue
        case .binaryResponse: MeshCorePushCode.binaryResponse.rawValue
        case .pathDiscoveryResponse: MeshCorePushCode.pathDiscoveryResponse.rawValue
        case .traceData: MeshCorePushCode.traceData.rawValue
        case .rawData: MeshCorePushCode.rawData.rawValue
        case .rxLog: MeshCorePushCode.logRxData.rawValue
        case .controlData: MeshCorePushCode.controlData.rawValue
        case .channelData: MeshCoreResponseCode.channelDataReceived.rawValue
        case .cliReply: MeshCoreResponseCode.cliReply.rawValue
        case .other(let code, _): code
        }
    }

    /// Whether the frame is an unsolicited push (code `0x80` or above) rather than a response.
    public var isPush: Bool { code >= 0x80 }

    /// Encodes the frame, the exact inverse of ``init(decoding:)`` for frames it produced.
    ///
    /// Fixed-width fields (keys, names, secrets) are cut or zero-padded to their wire widths;
    /// messages use the V3 or legacy layout according to their `isV3`. No size limit is
    /// enforced.
    public func encoded() -> Data {
        var writer = ByteWriter(code: code)
        switch self {
        case .ok(let value):
            if let value { writer.u32(value) }
        case .error(let error):
            writer.u8(error.rawValue)
        case .contactsStart(let count):
            writer.u32(count)
        case .contact(let contact), .newAdvert(let contact):
            contact.encodeBody(into: &writer)
        case .endOfContacts(let lastModified):
            writer.u32(lastModified)
        case .selfInfo(let info):
            info.encode(into: &writer)
        case .sent(let result):
            result.encode(into: &writer)
        case .contactMessage(let message):
            message.encode(into: &writer)
        case .channelMessage(let message):
            message.encode(into: &writer)
        case .currentTime(let time):
            writer.u32(time)
        case .batteryAndStorage(let report):
            report.encode(into: &writer)
        case .deviceInfo(let info):
            info.encode(into: &writer)
        case .channelInfo(let info):
            info.encode(into: &writer)
        case .advert(let key), .pathUpdated(let key), .contactDeleted(let key):
            writer.bytes(key, fixed: MeshContact.publicKeySize)
        case .sendConfirmed(let confirmation):
            confirmation.encode(into: &writer)
        case .exportedContact(let packet):
            writer.bytes(packet)
        case .privateKey(let key):
            writer.bytes(key, fixed: MeshCoreCommand.privateKeySize)
        case .signStart(let maximumLength):
            writer.u8(0)
            writer.u32(maximumLength)
        case .signature(let signature):
            writer.bytes(signature, fixed: MeshAdvert.signatureSize)
        case .customVariables(let variables):
            writer.string(MeshCustomVariable.list(variables))
        case .advertPath(let path):
            path.encode(into: &writer)
        case .tuningParameters(let tuning):
            tuning.encode(into: &writer)
        case .stats(let stats):
            stats.encode(into: &writer)
        case .autoAddConfiguration(let configuration):
            configuration.encode(into: &writer)
        case .allowedRepeatFrequencies(let ranges):
            for range in ranges {
                writer.u32(range.lowerBound)
                writer.u32(range.upperBound)
            }
        case .defaultFloodScope(let scope):
            if let scope {
                writer.string(scope.name, fixed: MeshFloodScope.nameField)
                writer.bytes(scope.key, fixed: MeshFloodScope.keySize)
            }
        case .loginSuccess(let result):
            result.encode(into: &writer)
        case .loginFailed(let prefix):
            writer.u8(0)
            writer.bytes(prefix, fixed: MeshCoreCommand.prefixSize)
        case .statusResponse(let reply):
            writer.u8(0)
            writer.bytes(reply.serverPrefix, fixed: MeshCoreCommand.prefixSize)
            writer.bytes(reply.body)
        case .telemetryResponse(let reply):
            writer.u8(0)
            writer.bytes(reply.serverPrefix, fixed: MeshCoreCommand.prefixSize)
            writer.bytes(reply.body.lpp)
        case .binaryResponse(let tag, let body):
            writer.u8(0)
            writer.u32(tag)
            writer.bytes(body)
        case .pathDiscoveryResponse(let path):
            path.encode(into: &writer)
        case .traceData(let result):
            result.encode(into: &writer)
        case .rawData(let snr, let rssi, let payload):
            writer.i8(MeshCoreFixedPoint.int8(snr, scale: 4))
            writer.i8(rssi)
            writer.u8(0xFF)
            writer.bytes(payload)
        case .rxLog(let snr, let rssi, let packet):
            writer.i8(MeshCoreFixedPoint.int8(snr, scale: 4))
            writer.i8(rssi)
            writer.bytes(packet)
        case .controlData(let snr, let rssi, let pathLength, let payload):
            writer.i8(MeshCoreFixedPoint.int8(snr, scale: 4))
            writer.i8(rssi)
            writer.u8(pathLength)
            writer.bytes(payload)
        case .channelData(let datagram):
            datagram.encodeReceived(into: &writer)
        case .cliReply(let text):
            writer.string(text)
        case .other(_, let payload):
            writer.bytes(payload)
        case .noMoreMessages, .disabled, .messageWaiting, .contactsFull:
            break
        }
        return writer.data
    }
}
