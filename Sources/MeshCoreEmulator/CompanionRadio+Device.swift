import Crypto
import Foundation
import MeshCore
import TetherCore

/// The device commands: identity and signing, contact cards, settings, statistics, reboot.
extension CompanionRadio {
    /// The most a SIGN_START session takes, as the firmware allocates.
    static let signingCapacity = 8_192
    /// The airtime the statistics count per packet (a 60-byte packet at SF8, 62.5 kHz).
    static let airtimePerPacket: Duration = .milliseconds(300)

    func handleDevice(_ command: MeshCoreCommand) {
        switch command {
        case .exportContact(nil):
            guard let advert = makeAdvert() else { return reply(.disabled) }
            reply(.exportedContact(packet: MeshContactCard(advert: advert).packet))
        case .exportContact(let key?):
            guard contacts.contains(where: { $0.publicKey == key }), let card = advertBlobs[key] else {
                return reply(.error(.notFound))
            }
            let packet = card.packet
            // The firmware drops a frame over the limit: the app hears nothing.
            guard 1 + packet.count <= MeshCoreFrameLimits.maximumFrameSize else {
                return logger.warning("\(name): card of \(key.prefix(6).hexString) too long to send (\(packet.count) bytes)")
            }
            reply(.exportedContact(packet: packet))
        case .importContact(let packet):
            // The firmware refuses only a packet that is not an advert; one that fails to parse
            // later is answered OK and dropped when it is looped back.
            guard let header = packet.first, header >> 6 == 0, (header >> 2) & 0x0F == 4 else {
                return reply(.error(.illegalArgument))
            }
            reply(.ok(value: nil))
            guard let card = try? MeshContactCard(packet: packet) else {
                return logger.info("\(name): imported advert does not parse; dropped")
            }
            // The firmware loops the packet back as if heard, on its next turn.
            if let network {
                network.schedule(after: .zero) { [weak self] _ in
                    self?.receiveAdvert(card.advert, path: card.path, pathHashSize: card.pathHashSize)
                }
            } else {
                receiveAdvert(card.advert, path: card.path, pathHashSize: card.pathHashSize)
            }
        case .setTuningParams(let tuning):
            configuration.tuning = tuning
            reply(.ok(value: nil))
        case .getTuningParams:
            reply(.tuningParameters(configuration.tuning))
        case .exportPrivateKey:
            guard configuration.privateKeyExport, let identity else { return reply(.disabled) }
            // Seed and public key; real firmware exports its expanded key (see the emulator docs).
            reply(.privateKey(identity.rawRepresentation + publicKey))
        case .importPrivateKey(let key):
            guard configuration.privateKeyExport, identity != nil else { return reply(.disabled) }
            guard let imported = try? Curve25519.Signing.PrivateKey(rawRepresentation: key.prefix(32)),
                imported.publicKey.rawRepresentation == key.suffix(32)
            else { return reply(.error(.illegalArgument)) }
            let derived = imported.publicKey.rawRepresentation
            guard let first = derived.first, first != 0x00, first != 0xFF else { return reply(.error(.illegalArgument)) }
            guard derived == publicKey else {
                logger.warning("\(name): the emulator keeps each radio's identity; a different key is refused")
                return reply(.error(.illegalArgument))
            }
            reply(.ok(value: nil))
        case .signStart:
            guard identity != nil else { return reply(.disabled) }
            signing = Data()
            reply(.signStart(maximumLength: UInt32(Self.signingCapacity)))
        case .signData(let chunk):
            guard let collected = signing else { return reply(.error(.badState)) }
            guard collected.count + chunk.count <= Self.signingCapacity else { return reply(.error(.tableFull)) }
            signing = collected + chunk
            reply(.ok(value: nil))
        case .signFinish:
            guard let collected = signing, let identity else { return reply(.error(.badState)) }
            signing = nil
            guard let signature = try? identity.signature(for: collected) else { return reply(.error(.tableFull)) }
            reply(.signature(Data(signature)))
        case .setDevicePin(let pin):
            guard pin == 0 || MeshCoreCommand.devicePinRange.contains(pin) else { return reply(.error(.illegalArgument)) }
            configuration.blePin = pin
            reply(.ok(value: nil))
        case .setOtherParams(let parameters):
            apply(parameters)
            reply(.ok(value: nil))
        case .getCustomVars:
            reply(.customVariables(MeshCustomVariable.fitting(configuration.customVariables)))
        case .setCustomVar(let variable):
            guard let index = configuration.customVariables.firstIndex(where: { $0.name == variable.name }) else {
                return reply(.error(.illegalArgument))
            }
            configuration.customVariables[index].value = variable.value
            reply(.ok(value: nil))
        case .getAdvertPath(let key):
            // The firmware compares the first 7 bytes of the key.
            guard let entry = recentAdverts.last(where: { $0.publicKey.prefix(7) == key.prefix(7) }) else {
                return reply(.error(.notFound))
            }
            reply(.advertPath(entry.path))
        case .factoryReset:
            factoryReset()
        case .getStats(let kind):
            reply(.stats(stats(kind)))
        case .setAutoAddConfig(let rules):
            configuration.autoAdd = MeshAutoAddConfiguration(
                options: rules.options, maxHops: min(rules.maxHops ?? configuration.autoAdd.maxHops ?? 0, 64))
            reply(.ok(value: nil))
        case .getAutoAddConfig:
            reply(.autoAddConfiguration(MeshAutoAddConfiguration(
                options: configuration.autoAdd.options, maxHops: configuration.autoAdd.maxHops ?? 0)))
        case .getAllowedRepeatFrequencies:
            reply(.allowedRepeatFrequencies(configuration.allowedRepeatFrequencies))
        case .setPathHashMode(let mode):
            guard mode <= 2 else { return reply(.error(.illegalArgument)) }
            configuration.pathHashMode = mode
            reply(.ok(value: nil))
        case .setFloodScope(let scope):
            floodScope = scope
            reply(.ok(value: nil))
        case .setDefaultFloodScope(let scope):
            configuration.defaultFloodScope = scope
            reply(.ok(value: nil))
        case .getDefaultFloodScope:
            reply(.defaultFloodScope(configuration.defaultFloodScope))
        case .reboot:
            restart()
        default:
            reply(.error(.unsupportedCommand))
        }
    }

    /// SET_OTHER_PARAMS from a frame shorter than the current layout.
    func setOtherParameters(frame: Data) {
        guard let parameters = try? MeshOtherParameters.applying(frame: frame, to: otherParameters) else {
            return reply(.error(.unsupportedCommand))
        }
        apply(parameters)
        reply(.ok(value: nil))
    }

    /// The settings SET_OTHER_PARAMS writes, as they are now.
    var otherParameters: MeshOtherParameters {
        MeshOtherParameters(
            manualAddContacts: manualAddContacts, telemetryModes: configuration.telemetryModes,
            sharesLocationInAdverts: configuration.sharesLocationInAdverts, multiAcks: configuration.multiAcks)
    }

    private func apply(_ parameters: MeshOtherParameters) {
        manualAddContacts = parameters.manualAddContacts
        configuration.manualAddContacts = parameters.manualAddContacts
        configuration.telemetryModes = parameters.telemetryModes
        configuration.sharesLocationInAdverts = parameters.sharesLocationInAdverts
        configuration.multiAcks = parameters.multiAcks
    }

    /// The radio's own advert, signed, with its position when it shares it; nil without a
    /// private key.
    func makeAdvert() -> MeshAdvert? {
        guard let identity else { return nil }
        let shares = configuration.sharesLocationInAdverts
        let data = MeshAdvertData(
            type: .chat, latitude: shares ? configuration.latitude : nil, longitude: shares ? configuration.longitude : nil,
            name: name)
        return try? MeshAdvert(signingKey: identity, timestamp: clockEpoch, data: data)
    }

    /// Erases contacts, channels and settings, then reboots (the identity stays: see the
    /// emulator's documentation).
    private func factoryReset() {
        configuration = initialConfiguration
        manualAddContacts = initialConfiguration.manualAddContacts
        name = initialName
        contacts.removeAll()
        advertBlobs.removeAll()
        channels = Array(repeating: nil, count: Int(configuration.maxChannels))
        if !channels.isEmpty {
            channels[0] = ChannelInfo(index: 0, name: MeshPublicChannel.name, secret: MeshPublicChannel.secret)
        }
        restart()
    }

    // MARK: Statistics

    func countSent(flood: Bool) {
        packetStats.sent &+= 1
        if flood { packetStats.sentFlood &+= 1 } else { packetStats.sentDirect &+= 1 }
    }

    func countReceived(flood: Bool, snr: Double = 8) {
        packetStats.received &+= 1
        if flood { packetStats.receivedFlood &+= 1 } else { packetStats.receivedDirect &+= 1 }
        lastSignal = (Int8(clamping: Int((snr * 2 - 100).rounded())), snr)
    }

    private func stats(_ kind: MeshStatsKind) -> MeshStats {
        switch kind {
        case .core:
            let uptime = max(0, (timeline.now - bootTime).seconds.rounded(.down))
            return .core(MeshStats.Core(
                batteryMillivolts: configuration.batteryMillivolts, uptimeSeconds: UInt32(clamping: Int64(uptime)),
                errorFlags: 0, outboundQueueLength: 0))
        case .radio:
            let airtime = Self.airtimePerPacket.seconds
            return .radio(MeshStats.Radio(
                noiseFloor: -112, lastRSSI: lastSignal.rssi, lastSNR: lastSignal.snr,
                transmitAirtimeSeconds: UInt32(clamping: Int64(Double(packetStats.sent) * airtime)),
                receiveAirtimeSeconds: UInt32(clamping: Int64(Double(packetStats.received) * airtime))))
        case .packets:
            return .packets(packetStats)
        }
    }
}
