import Crypto
import Foundation
import MeshCore
import Logging
import TetherCore
import TetherSimulator

/// The command handler of a MeshCore companion radio's firmware, for the core command set.
///
/// The app side talks to it in frames: ``receive(_:)`` takes one command frame; replies and
/// pushes wait in an outbox that the host (``MeshCoreEmulator`` over BLE,
/// ``MeshCoreStreamHost`` over TCP or serial, or a test) pulls with ``nextOutput()`` after
/// ``outputHandler`` tells it something is ready. Pulling lets each host pace frames as its
/// link does, and lets a contact listing go out one frame at a time as the firmware's does.
///
/// The mesh side (``MeshNetwork``) delivers messages, channel posts, adverts and acks. All of
/// it runs on the `SimulationActor`, one handler at a time, as firmware on one core would.
@SimulationActor
public final class CompanionRadio {
    /// The node's 32-byte public key.
    public nonisolated let publicKey: Data
    /// The limits and reported values; the settings commands (TX power, position, radio
    /// parameters) change it, and it outlives APP_START as the firmware's saved preferences do.
    public internal(set) var configuration: Configuration
    /// The advertised name (SET_ADVERT_NAME changes it).
    public internal(set) var name: String
    /// Hop distance from the mesh's core (see ``MeshNetwork``).
    public var hops: Int
    /// When true, unknown nodes' adverts are pushed as NEW_ADVERT instead of being added.
    public var manualAddContacts: Bool
    /// The contact table, in the order contacts were added.
    public internal(set) var contacts: [MeshContact] = []
    /// The protocol version the app announced with DEVICE_QUERY; 0 until then and after the
    /// app disconnects.
    public internal(set) var protocolVersion: UInt8 = 0
    /// True while a host reports an app attached (BLE central subscribed, TCP client open).
    public private(set) var isAppConnected = false
    /// The name the app gave in APP_START, if any.
    public private(set) var appName: String?
    /// What happened so far.
    public private(set) var counters = Counters()
    /// Called whenever a frame becomes available in the outbox; the host then pulls with
    /// ``nextOutput()``.
    public var outputHandler: (@SimulationActor () -> Void)?

    weak var network: MeshNetwork?
    let timeline: Timeline
    let logger: Logger
    /// The node's Ed25519 identity; nil for a radio made from a bare public key (it then
    /// cannot sign: its own card, SIGN_* and key export answer DISABLED).
    let identity: Curve25519.Signing.PrivateKey?
    /// What FACTORY_RESET returns to.
    let initialConfiguration: Configuration
    let initialName: String
    var clockBase: UInt32
    var clockBaseTime: Duration
    var channels: [ChannelInfo?]
    var queue: [QueuedMessage] = []
    /// The last advert heard from each contact, as the firmware keeps it for EXPORT_CONTACT
    /// and SHARE_CONTACT.
    var advertBlobs: [Data: MeshContactCard] = [:]
    /// The routes of the 16 latest adverts (GET_ADVERT_PATH; RAM only, lost on reboot).
    var recentAdverts: [(publicKey: Data, path: MeshAdvertPath)] = []
    /// The session's flood scope (SET_FLOOD_SCOPE_KEY; RAM only).
    var floodScope: MeshFloodScopeOverride = .useDefault
    /// Data collected between SIGN_START and SIGN_FINISH.
    var signing: Data?
    /// When the radio last booted, for the uptime STATS report.
    var bootTime: Duration
    /// Packet counters for STATS.
    var packetStats = MeshStats.Packets(received: 0, sent: 0, sentFlood: 0, sentDirect: 0, receivedFlood: 0, receivedDirect: 0, receiveErrors: 0)
    /// The number of the remote request awaited (only the latest one's answer is pushed).
    var pendingRemote: UInt64 = 0
    /// The last tag given to a remote request.
    var remoteTag: UInt32 = 0x5EED_0001
    /// The signal of the last packet heard, for STATS.
    var lastSignal: (rssi: Int8, snr: Double) = (0, 0)
    private var outbox: [Output] = []
    private var inFlight: [Output] = []
    var listing: [MeshContact]?
    private var listingLastModified: UInt32 = 0
    private var outputSerial: UInt64 = 0
    var expectedAcks: [UInt32: (contactKey: Data, flood: Bool)] = [:]
    var expectedAckOrder: [UInt32] = []

    /// Creates a radio.
    ///
    /// - Parameters:
    ///   - name: The advertised name (cut to 31 bytes).
    ///   - publicKey: The 32-byte key (shorter keys are zero-padded, longer ones cut).
    ///   - timeline: Virtual time; the radio's clock advances with it.
    ///   - startEpoch: The radio's clock (seconds since 1970) at the timeline's current instant.
    ///   - hops: Hop distance from the mesh's core.
    ///   - configuration: Limits and reported values.
    ///   - logger: Receives dropped messages and undecodable frames.
    ///
    /// A radio made from a bare key has no private key: it cannot sign, so its own card, the
    /// SIGN_* commands and key export answer DISABLED. Give it an `identity` instead
    /// (``init(name:identity:timeline:startEpoch:hops:configuration:logger:)``) for those.
    public convenience init(
        name: String,
        publicKey: Data,
        timeline: Timeline,
        startEpoch: UInt32,
        hops: Int = 1,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "meshcore.emulator.radio")
    ) {
        self.init(
            name: name, publicKey: publicKey, identity: nil, timeline: timeline, startEpoch: startEpoch, hops: hops,
            configuration: configuration, logger: logger)
    }

    /// Creates a radio with an Ed25519 identity: its public key is `identity`'s, and it signs
    /// its adverts, its card and what the app asks it to sign.
    public convenience init(
        name: String,
        identity: Curve25519.Signing.PrivateKey,
        timeline: Timeline,
        startEpoch: UInt32,
        hops: Int = 1,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "meshcore.emulator.radio")
    ) {
        self.init(
            name: name, publicKey: identity.publicKey.rawRepresentation, identity: identity, timeline: timeline,
            startEpoch: startEpoch, hops: hops, configuration: configuration, logger: logger)
    }

    private init(
        name: String,
        publicKey: Data,
        identity: Curve25519.Signing.PrivateKey?,
        timeline: Timeline,
        startEpoch: UInt32,
        hops: Int,
        configuration: Configuration,
        logger: Logger
    ) {
        var key = Data(publicKey.prefix(MeshContact.publicKeySize))
        if key.count < MeshContact.publicKeySize { key.append(Data(count: MeshContact.publicKeySize - key.count)) }
        self.publicKey = key
        self.identity = identity
        self.initialConfiguration = configuration
        self.initialName = Self.clampName(name)
        self.bootTime = timeline.now
        self.name = Self.clampName(name)
        self.timeline = timeline
        self.hops = hops
        self.configuration = configuration
        self.manualAddContacts = configuration.manualAddContacts
        self.logger = logger
        clockBase = startEpoch
        clockBaseTime = timeline.now
        channels = Array(repeating: nil, count: Int(configuration.maxChannels))
        if !channels.isEmpty {
            channels[0] = ChannelInfo(index: 0, name: MeshPublicChannel.name, secret: MeshPublicChannel.secret)
        }
    }

    // MARK: State for tests and hosts

    /// The radio's clock in seconds since 1970: the last time set plus virtual time elapsed.
    public var clockEpoch: UInt32 {
        let elapsed = max(0, Int64((timeline.now - clockBaseTime).seconds.rounded(.down)))
        return UInt32(clamping: Int64(clockBase) + elapsed)
    }

    /// How many messages wait in the offline queue.
    public var queuedMessageCount: Int { queue.count }

    /// The texts of the queued messages, oldest first.
    public var queuedMessageTexts: [String] { queue.map(\.text) }

    /// True while a contact listing is still going out (GET_CONTACTS then answers ERR 4).
    public var isListingContacts: Bool { listing != nil }

    /// Frames waiting in the outbox (replies and pushes not yet taken by a host).
    public var pendingOutputCount: Int { outbox.count }

    /// True when the outbox holds frames or a listing is in progress.
    public var hasPendingOutput: Bool { !outbox.isEmpty || listing != nil }

    /// The channel in `index`, nil for an unset slot.
    public func channel(_ index: UInt8) -> ChannelInfo? {
        Int(index) < channels.count ? channels[Int(index)] : nil
    }

    /// The contact whose key starts with `prefix`.
    public func contact(prefix: Data) -> MeshContact? {
        guard !prefix.isEmpty else { return nil }
        return contacts.first { $0.publicKey.starts(with: prefix) }
    }

    /// The contact with this name.
    public func contact(named name: String) -> MeshContact? {
        contacts.first { $0.name == name }
    }

    // MARK: App attachment

    /// A host reports that an app attached.
    public func appConnected() {
        guard !isAppConnected else { return }
        isAppConnected = true
        network?.report(.appConnection(radio: name, connected: true))
    }

    /// A host reports that the app went away: the protocol version resets, a listing is
    /// abandoned, and every message whose reply had not certainly reached the app returns to
    /// the front of the queue, in order.
    public func appDisconnected() {
        guard isAppConnected else { return }
        isAppConnected = false
        protocolVersion = 0
        appName = nil
        listing = nil
        let unsent = (inFlight + outbox).compactMap(\.message)
        inFlight.removeAll()
        outbox.removeAll()
        if !unsent.isEmpty {
            queue.insert(contentsOf: unsent, at: 0)
            counters.messagesRequeued += unsent.count
            trimQueue()
            logger.info("\(name): \(unsent.count) undelivered message(s) back in the queue")
        }
        network?.report(.appConnection(radio: name, connected: false))
    }

    // MARK: Output

    /// Takes the next frame for the app, or nil when there is none.
    ///
    /// A SYNC_NEXT_MESSAGE reply stays "in flight" until the host confirms it with
    /// ``delivered(_:)``, the app sends its next command, or the app disconnects (it then
    /// returns to the queue).
    public func nextOutput() -> Output? {
        let output: Output
        if !outbox.isEmpty {
            output = outbox.removeFirst()
        } else if var remaining = listing {
            if remaining.isEmpty {
                listing = nil
                output = makeOutput(.endOfContacts(lastModified: listingLastModified))
            } else {
                let contact = remaining.removeFirst()
                listing = remaining
                output = makeOutput(.contact(contact))
            }
        } else {
            return nil
        }
        if output.message != nil { inFlight.append(output) }
        return output
    }

    /// The host confirms that `output` reached the app.
    public func delivered(_ output: Output) {
        inFlight.removeAll { $0.serial == output.serial }
    }

    /// The host could not send `output`. While the app is attached it goes back to the front
    /// of the outbox; otherwise a message it carried returns to the front of the queue.
    public func undelivered(_ output: Output) {
        inFlight.removeAll { $0.serial == output.serial }
        if isAppConnected {
            outbox.insert(output, at: 0)
        } else if let message = output.message {
            queue.insert(message, at: 0)
            counters.messagesRequeued += 1
            trimQueue()
        }
    }

    /// Pulls every pending frame at once, confirming each (for tests and instant hosts).
    public func drainOutputs() -> [Data] {
        var frames: [Data] = []
        while let output = nextOutput() {
            delivered(output)
            frames.append(output.frame)
        }
        return frames
    }

    private func makeOutput(_ frame: MeshCoreFrame, message: QueuedMessage? = nil) -> Output {
        outputSerial += 1
        return Output(frame: frame.encoded(), serial: outputSerial, message: message)
    }

    func reply(_ frame: MeshCoreFrame, message: QueuedMessage? = nil) {
        if case .error = frame { counters.errors += 1 }
        outbox.append(makeOutput(frame, message: message))
        outputHandler?()
    }

    /// Pushes go out only to an attached app, and are dropped rather than let the outbox grow.
    func push(_ frame: MeshCoreFrame) {
        guard isAppConnected else { return }
        guard outbox.count < configuration.outboxCapacity else {
            counters.pushesDropped += 1
            logger.warning("\(name): outbox full, push 0x\(String(frame.code, radix: 16)) dropped")
            return
        }
        outbox.append(makeOutput(frame))
        outputHandler?()
    }

    // MARK: Commands

    /// Handles one command frame from the app. Never traps: an undecodable frame gets ERR 1.
    public func receive(_ frame: Data) {
        counters.commands += 1
        // A serialized app sends its next command only after reading the previous reply.
        inFlight.removeAll()
        let command: MeshCoreCommand
        do {
            command = try MeshCoreCommand(decoding: frame)
        } catch {
            logger.debug("\(name): undecodable command: \(error)")
            network?.report(.appCommand(radio: name, code: frame.first ?? 0, accepted: false))
            // The firmware's handlers answer ERR 6 for a value out of range, ERR 1 for the rest.
            if case .invalidValue = error { return reply(.error(.illegalArgument)) }
            reply(.error(.unsupportedCommand))
            return
        }
        network?.report(.appCommand(radio: name, code: command.code, accepted: true))
        if case .setOtherParams = command, frame.count < 5 {
            // An older app's shorter frame leaves the later settings alone.
            return setOtherParameters(frame: frame)
        }
        handle(command)
    }

    private func handle(_ command: MeshCoreCommand) {
        switch command {
        case .appStart(let appName):
            self.appName = appName
            reply(.selfInfo(selfInfo))
        case .deviceQuery(let version):
            protocolVersion = version
            reply(.deviceInfo(deviceInfo))
        case .getContacts(let since):
            startListing(since: since)
        case .sendTextMessage(let message):
            sendDirect(message)
        case .sendChannelTextMessage(let index, let timestamp, let text):
            // An in-range slot that is clear still sends, with an all-zero key, as the firmware does.
            guard index < configuration.maxChannels else { return reply(.error(.notFound)) }
            let channel = channel(index) ?? ChannelInfo(index: index, name: "", secret: Data(count: MeshChannelSecret.size))
            counters.channelMessagesSent += 1
            countSent(flood: true)
            reply(.ok(value: nil))
            network?.sendChannel(from: self, secret: channel.secret, text: "\(name): \(text)", timestamp: timestamp)
        case .syncNextMessage:
            if queue.isEmpty {
                reply(.noMoreMessages)
            } else {
                let message = queue.removeFirst()
                reply(message.frame(v3: protocolVersion >= 3), message: message)
            }
        case .getDeviceTime:
            reply(.currentTime(clockEpoch))
        case .setDeviceTime(let time):
            // Firmware rule: the clock never goes backwards.
            guard time >= clockEpoch else { return reply(.error(.illegalArgument)) }
            clockBase = time
            clockBaseTime = timeline.now
            reply(.ok(value: nil))
        case .getBatteryAndStorage:
            let used = UInt32(8 + contacts.count / 4 + queue.count / 8)
            reply(.batteryAndStorage(BatteryAndStorage(
                millivolts: configuration.batteryMillivolts, usedKilobytes: used,
                totalKilobytes: configuration.totalStorageKilobytes)))
        case .sendSelfAdvert(let flood):
            countSent(flood: flood)
            reply(.ok(value: nil))
            network?.advertise(from: self, flood: flood)
        case .setAdvertName(let newName):
            name = Self.clampName(newName)
            reply(.ok(value: nil))
        case .getChannel(let index):
            guard index < configuration.maxChannels else { return reply(.error(.notFound)) }
            reply(.channelInfo(channel(index) ?? ChannelInfo(index: index, name: "", secret: Data(count: 16))))
        case .removeContact(let key):
            guard let position = contacts.firstIndex(where: { $0.publicKey == key }) else {
                return reply(.error(.notFound))
            }
            contacts.remove(at: position)
            advertBlobs[key] = nil
            reply(.ok(value: nil))
        case .setChannel(let channel):
            guard channel.index < configuration.maxChannels else { return reply(.error(.notFound)) }
            // An empty name and a zero secret clear the slot.
            let clears = channel.name.isEmpty && channel.secret.allSatisfy { $0 == 0 }
            channels[Int(channel.index)] = clears ? nil : channel
            reply(.ok(value: nil))
        case .addUpdateContact(var contact, let fields):
            let known = contacts.first { $0.publicKey == contact.publicKey }
            if fields == .throughLastAdvert, let known {
                // A frame without the position keeps the one the radio has.
                contact.latitude = known.latitude
                contact.longitude = known.longitude
            }
            if fields != .withLastModified { contact.lastModified = clockEpoch }
            reply(addContact(contact) ? .ok(value: nil) : .error(.tableFull))
        case .resetPath(let key):
            guard let index = contacts.firstIndex(where: { $0.publicKey == key }) else { return reply(.error(.notFound)) }
            // The firmware leaves the modification time alone here.
            contacts[index].outPath = nil
            contacts[index].outPathHashSize = 1
            reply(.ok(value: nil))
        case .shareContact(let key):
            guard contacts.contains(where: { $0.publicKey == key }) else { return reply(.error(.notFound)) }
            guard let card = advertBlobs[key] else { return reply(.error(.tableFull)) }
            reply(.ok(value: nil))
            network?.share(card.advert, from: self)
        case .getContactByKey(let key):
            guard let contact = contacts.first(where: { $0.publicKey == key }) else { return reply(.error(.notFound)) }
            reply(.contact(contact))
        case .setRadioTxPower(let dBm):
            guard dBm >= -9, Int(dBm) <= Int(configuration.maxTxPower) else { return reply(.error(.illegalArgument)) }
            configuration.txPower = dBm
            reply(.ok(value: nil))
        case .setAdvertLatLon(let latitude, let longitude):
            guard abs(latitude) <= 90, abs(longitude) <= 180 else { return reply(.error(.illegalArgument)) }
            configuration.latitude = latitude
            configuration.longitude = longitude
            reply(.ok(value: nil))
        case .setRadioParams(let radio):
            guard radio.isValid else { return reply(.error(.illegalArgument)) }
            if radio.repeats {
                guard configuration.allowedRepeatFrequencies.contains(where: { $0.contains(radio.frequencyKilohertz) }) else {
                    return reply(.error(.illegalArgument))
                }
            }
            configuration.repeats = radio.repeats
            configuration.radioFrequency = Double(radio.frequencyKilohertz) / 1000
            configuration.radioBandwidth = Double(radio.bandwidthHertz) / 1000
            configuration.spreadingFactor = radio.spreadingFactor
            configuration.codingRate = radio.codingRate
            reply(.ok(value: nil))
        case .logout:
            handleRemote(command)
        case .sendRawData(let path, let payload):
            countSent(flood: false)
            reply(.ok(value: nil))
            network?.sendRawData(from: self, pathHops: path.count, payload: payload)
        case .sendRawPacket(_, let packet):
            guard Self.isMeshPacket(packet) else { return reply(.error(.illegalArgument)) }
            countSent(flood: packet[packet.startIndex] & 0x03 <= 1)
            reply(.ok(value: nil))
        case .runCLICommand(let line):
            // Protocol 14 and later only.
            guard configuration.firmwareVersionCode >= 14 else { return reply(.error(.unsupportedCommand)) }
            reply(.cliReply(localCommandReply(line)))
        case .sendChannelData(let datagram):
            // In the firmware's order: the channel (a cleared slot sends with a zero key), the
            // type, the length (the group-data encoder holds 165 bytes; 166 and 167 fit the
            // frame but not the packet).
            guard datagram.channelIndex < configuration.maxChannels else { return reply(.error(.notFound)) }
            let channel = channel(datagram.channelIndex)
                ?? ChannelInfo(index: datagram.channelIndex, name: "", secret: Data(count: MeshChannelSecret.size))
            guard datagram.dataType != 0, datagram.payload.count <= 167 else { return reply(.error(.illegalArgument)) }
            guard datagram.payload.count <= MeshChannelData.maximumPayload else { return reply(.error(.tableFull)) }
            countSent(flood: datagram.path == nil)
            reply(.ok(value: nil))
            network?.sendChannelData(from: self, secret: channel.secret, datagram: datagram)
        case .exportContact, .importContact, .setTuningParams, .getTuningParams, .exportPrivateKey, .importPrivateKey,
             .signStart, .signData, .signFinish, .setDevicePin, .setOtherParams, .getCustomVars, .setCustomVar,
             .getAdvertPath, .factoryReset, .getStats, .setAutoAddConfig, .getAutoAddConfig,
             .getAllowedRepeatFrequencies, .setPathHashMode, .setFloodScope, .setDefaultFloodScope,
             .getDefaultFloodScope, .reboot:
            handleDevice(command)
        case .sendLogin, .sendStatusRequest, .sendTelemetryRequest, .sendBinaryRequest, .sendAnonymousRequest,
             .sendPathDiscoveryRequest, .sendTracePath, .sendControlData, .hasConnection:
            handleRemote(command)
        case .other(let code, _) where code == MeshCoreCommandCode.getStats.rawValue:
            reply(.error(.illegalArgument))
        case .other:
            reply(.error(.unsupportedCommand))
        }
    }

    private var selfInfo: SelfInfo {
        SelfInfo(
            advertType: .chat, txPower: configuration.txPower, maxTxPower: configuration.maxTxPower,
            publicKey: publicKey, latitude: configuration.latitude, longitude: configuration.longitude,
            multiAcks: configuration.multiAcks, advertLocationPolicy: configuration.sharesLocationInAdverts ? 1 : 0,
            telemetryModes: configuration.telemetryModes.rawValue, manualAddContacts: manualAddContacts, radioFrequency: configuration.radioFrequency,
            radioBandwidth: configuration.radioBandwidth, spreadingFactor: configuration.spreadingFactor,
            codingRate: configuration.codingRate, name: name)
    }

    private var deviceInfo: DeviceInfo {
        DeviceInfo(
            firmwareVersionCode: configuration.firmwareVersionCode, maxContacts: configuration.maxContacts,
            maxChannels: configuration.maxChannels, blePin: configuration.blePin,
            buildDate: configuration.buildDate, manufacturer: configuration.manufacturer,
            firmwareVersion: configuration.firmwareVersion,
            // Clients of v10+ firmware read both tail bytes unconditionally.
            repeatMode: configuration.repeats, pathHashMode: configuration.pathHashMode)
    }

    private func startListing(since: UInt32?) {
        guard listing == nil else { return reply(.error(.badState)) }
        let selected = contacts.filter { since == nil || $0.lastModified > since! }
        // As the firmware: END_OF_CONTACTS carries the newest lastmod sent (0 when none was), and
        // CONTACTS_START the total number of contacts, not the filtered count.
        listingLastModified = selected.map(\.lastModified).max() ?? 0
        reply(.contactsStart(count: UInt32(contacts.count)))
        listing = selected
        outputHandler?()
    }

    private func sendDirect(_ message: MeshCoreCommand.TextMessage) {
        guard message.textType == .plain || message.textType == .cliData else {
            return reply(.error(.unsupportedCommand))
        }
        guard let contact = contact(prefix: message.destinationPrefix) else {
            return reply(.error(.notFound))
        }
        let flood = contact.outPath == nil
        let pathHops = UInt32((contact.outPathHopCount ?? 0) + 1)
        let timeout: UInt32 = flood ? 12_000 : 2_000 + 1_600 * pathHops
        // CLI data is not acknowledged: the firmware's SENT carries an ack code of 0.
        let ack = message.textType == .cliData ? 0 : MeshAckCode.make(
            timestamp: message.timestamp, attempt: message.attempt, text: message.text, senderKey: publicKey)
        if message.textType != .cliData {
            // Bounded: an app that sends to nodes that never answer must not grow the table.
            if expectedAcks.count >= 256, expectedAcks[ack] == nil, let oldest = expectedAckOrder.first {
                expectedAckOrder.removeFirst()
                expectedAcks[oldest] = nil
            }
            if expectedAcks[ack] == nil { expectedAckOrder.append(ack) }
            expectedAcks[ack] = (contact.publicKey, flood)
        }
        counters.directMessagesSent += 1
        countSent(flood: flood)
        reply(.sent(SentResult(isFlood: flood, expectedAck: ack, suggestedTimeout: timeout)))
        network?.sendDirect(
            from: self, to: contact.publicKey, text: message.text, timestamp: message.timestamp,
            textType: message.textType, ack: ack, pathHops: flood ? nil : (contact.outPathHopCount ?? 0) + 1)
    }

    /// A reboot: what lives in RAM is lost (queued messages, pending acks, recent advert
    /// paths, the session's flood scope, a signing session, counters); contacts, channels and
    /// settings stay, as the firmware keeps them in flash. The emulated link stays up: the app
    /// sees no disconnection and should send APP_START again.
    func restart() {
        logger.info("\(name): rebooting")
        queue.removeAll()
        outbox.removeAll()
        inFlight.removeAll()
        listing = nil
        expectedAcks.removeAll()
        expectedAckOrder.removeAll()
        recentAdverts.removeAll()
        floodScope = .useDefault
        signing = nil
        protocolVersion = 0
        appName = nil
        bootTime = timeline.now
        packetStats = MeshStats.Packets(received: 0, sent: 0, sentFlood: 0, sentDirect: 0, receivedFlood: 0, receivedDirect: 0, receiveErrors: 0)
        lastSignal = (0, 0)
        counters.reboots += 1
    }

    // MARK: From the mesh

    /// A direct message arrived. Only contacts can be decrypted; returns whether it was taken
    /// (the network then returns the ack).
    func receiveDirect(
        from senderKey: Data, text: String, timestamp: UInt32, textType: MeshTextType,
        pathLength: UInt8, snr: Double
    ) -> Bool {
        countReceived(flood: pathLength != 0xFF, snr: snr)
        guard contacts.contains(where: { $0.publicKey == senderKey }) else {
            logger.info("\(name): message from an unknown key \(senderKey.prefix(6).hexString) ignored")
            return false
        }
        enqueue(.direct(
            senderPrefix: Data(senderKey.prefix(6)), pathLength: pathLength, textType: textType,
            timestamp: timestamp, text: text, snr: snr))
        return true
    }

    /// A channel message arrived; it is queued if the radio has a slot with that secret.
    func receiveChannel(secret: Data, text: String, timestamp: UInt32, pathLength: UInt8, snr: Double) {
        countReceived(flood: true, snr: snr)
        guard let index = channels.firstIndex(where: { $0?.secret == secret }) else { return }
        enqueue(.channel(index: UInt8(index), pathLength: pathLength, timestamp: timestamp, text: text, snr: snr))
    }

    /// Raw data along a path reached this radio: pushed as RAW_DATA (byte 3 reserved, 0xFF).
    func receiveRawData(_ payload: Data, snr: Double) {
        countReceived(flood: false, snr: snr)
        push(.rawData(snr: snr, rssi: lastSignal.rssi, payload: payload))
    }

    /// Whether `packet` parses as a mesh packet: version 0, a valid path length, the path
    /// present, 1 to 184 payload bytes.
    static func isMeshPacket(_ packet: Data) -> Bool {
        guard let header = packet.first, header >> 6 == 0 else { return false }
        var index = packet.startIndex + 1
        if header & 0x03 == 0 || header & 0x03 == 3 { index += 4 }
        guard index < packet.endIndex, let (hops, size) = try? MeshPathEncoding.decode(packet[index], code: 0x41) else { return false }
        index += 1 + hops * size
        // At least one payload byte, at most 184.
        return index < packet.endIndex && packet.endIndex - index <= 184
    }

    /// The radio's own CLI (protocol 14): a few of the firmware's commands.
    func localCommandReply(_ line: String) -> String {
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "ver": "\(configuration.firmwareVersion) (Build: \(configuration.buildDate))"
        case "get name": "> \(name)"
        case "get tx": "> \(configuration.txPower)"
        case "clock": "\(clockEpoch)"
        default: "Unknown command"
        }
    }

    /// A channel datagram arrived; it is queued if the radio has a slot with that secret.
    func receiveChannelData(secret: Data, datagram: MeshChannelData, pathLength: UInt8, snr: Double) {
        countReceived(flood: true, snr: snr)
        guard let index = channels.firstIndex(where: { $0?.secret == secret }) else { return }
        enqueue(.channelData(index: UInt8(index), pathLength: pathLength, dataType: datagram.dataType, payload: datagram.payload, snr: snr))
    }

    /// The recipient acknowledged a message the app sent.
    func receiveAck(_ ack: UInt32, roundTrip: Duration, hops: Int) {
        guard let expected = expectedAcks.removeValue(forKey: ack) else { return }
        expectedAckOrder.removeAll { $0 == ack }
        counters.confirmations += 1
        let milliseconds = UInt32(clamping: Int64((roundTrip.seconds * 1000).rounded()))
        push(.sendConfirmed(SendConfirmation(ack: ack, roundTrip: milliseconds)))
        // A flooded message's ack brings the path back, as the firmware's path return does.
        if expected.flood, let index = contacts.firstIndex(where: { $0.publicKey == expected.contactKey }) {
            contacts[index].outPath = Data((0..<max(0, hops - 1)).map { UInt8(truncatingIfNeeded: $0 + 1) })
            contacts[index].outPathHashSize = 1
            contacts[index].lastModified = clockEpoch
            push(.pathUpdated(publicKey: expected.contactKey))
        }
    }

    /// A node's advert arrived over `path` (its hop hashes, `pathHashSize` bytes each; empty
    /// when heard directly).
    ///
    /// As the firmware: a bad signature, app data without a name, or a replayed advert (not
    /// newer than the stored one) is dropped; a known contact is updated; an unknown node is
    /// added when the auto-add rules allow it and pushed as NEW_ADVERT otherwise. The advert is
    /// kept for EXPORT_CONTACT and SHARE_CONTACT only when its node is (or becomes) a contact.
    func receiveAdvert(_ advert: MeshAdvert, path: Data, pathHashSize: Int = 1) {
        let key = advert.publicKey
        guard key != publicKey else { return }
        countReceived(flood: true)
        guard advert.isSignatureValid else {
            logger.info("\(name): advert with a bad signature from \(key.prefix(6).hexString) dropped")
            return
        }
        let data = advert.data
        guard let advertName = data.name else {
            logger.info("\(name): advert without a name from \(key.prefix(6).hexString) dropped")
            return
        }
        let card = MeshContactCard(advert: advert, path: path, pathHashSize: pathHashSize)
        if let index = contacts.firstIndex(where: { $0.publicKey == key }) {
            guard advert.timestamp > contacts[index].lastAdvert else {
                logger.debug("\(name): replayed advert from \(key.prefix(6).hexString) ignored")
                return
            }
            rememberPath(of: card)
            contacts[index].name = advertName
            if let latitude = data.latitude, let longitude = data.longitude {
                contacts[index].latitude = latitude
                contacts[index].longitude = longitude
            }
            contacts[index].lastAdvert = advert.timestamp
            contacts[index].lastModified = clockEpoch
            advertBlobs[key] = card
            push(.advert(publicKey: key))
            return
        }
        rememberPath(of: card)
        var contact = advert.contact
        contact.lastModified = clockEpoch
        let rules = configuration.autoAdd
        let wanted = (!manualAddContacts || rules.options.adds(contact.type)) && rules.admits(hops: card.path.count / card.pathHashSize)
        guard wanted else { return push(.newAdvert(contact)) }
        if contacts.count >= configuration.maxContacts {
            guard rules.options.contains(.overwriteOldest),
                let oldest = contacts.indices.filter({ contacts[$0].flags & 0x01 == 0 })
                    .min(by: { contacts[$0].lastModified < contacts[$1].lastModified })
            else {
                push(.newAdvert(contact))
                return push(.contactsFull)
            }
            let removed = contacts.remove(at: oldest)
            advertBlobs[removed.publicKey] = nil
            push(.contactDeleted(publicKey: removed.publicKey))
        }
        contacts.append(contact)
        advertBlobs[key] = card
        push(.advert(publicKey: key))
    }

    /// The advert-path table: the 16 latest adverts' routes (RAM only).
    private func rememberPath(of card: MeshContactCard) {
        let key = card.advert.publicKey
        recentAdverts.removeAll { $0.publicKey == key }
        recentAdverts.append((key, MeshAdvertPath(receivedAt: clockEpoch, path: card.path, hashSize: card.pathHashSize)))
        if recentAdverts.count > 16 { recentAdverts.removeFirst() }
    }

    /// Adds or replaces a contact directly, as if it had advertised earlier (for scenarios and
    /// tests). Returns false when the table is full.
    @discardableResult
    public func addContact(_ contact: MeshContact) -> Bool {
        if let index = contacts.firstIndex(where: { $0.publicKey == contact.publicKey }) {
            contacts[index] = contact
            return true
        }
        guard contacts.count < configuration.maxContacts else { return false }
        contacts.append(contact)
        return true
    }

    private func enqueue(_ message: QueuedMessage) {
        queue.append(message)
        counters.messagesQueued += 1
        trimQueue()
        network?.report(.messageQueued(radio: name, queued: queue.count))
        push(.messageWaiting)
    }

    private func trimQueue() {
        while queue.count > configuration.offlineQueueCapacity {
            let dropped = queue.removeFirst()
            counters.messagesDropped += 1
            logger.warning("\(name): offline queue full, oldest message dropped: \(dropped.text)")
        }
    }

    static func clampName(_ name: String) -> String {
        String(decoding: MeshCoreText.utf8(name, maxBytes: MeshCoreCommand.maximumAdvertNameBytes), as: UTF8.self)
    }
}
