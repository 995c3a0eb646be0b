import Foundation
import MeshCore
import TetherCore
import TetherSimulator

/// Requests to other nodes: logins, status, telemetry, binary and anonymous requests, path
/// discovery, traces and node discovery. The radio answers `SENT`; the node's answer arrives
/// later as a push. As in the firmware, only the latest login/status/telemetry/binary/
/// discovery request is awaited: a newer one makes the radio drop an older one's answer.
extension CompanionRadio {
    func handleRemote(_ command: MeshCoreCommand) {
        switch command {
        case .sendLogin(let key, let password):
            guard let contact = contact(publicKey: key) else { return reply(.error(.notFound)) }
            // The ack field of a login's SENT is the server's key prefix, not a tag.
            let ack = UInt32(key[key.startIndex]) | UInt32(key[key.startIndex + 1]) << 8
                | UInt32(key[key.startIndex + 2]) << 16 | UInt32(key[key.startIndex + 3]) << 24
            let pending = startRemote(to: contact, ack: ack)
            let radioKey = publicKey, clock = clockEpoch
            send(to: key, pending: pending) { node, _ in
                node.login(password: password, from: radioKey, clock: clock).map { .loginSuccess($0) }
            }
        case .sendStatusRequest(let key):
            guard let contact = contact(publicKey: key) else { return reply(.error(.notFound)) }
            let pending = startRemote(to: contact)
            let radioKey = publicKey
            send(to: key, pending: pending) { node, _ in
                guard let status = node.status(for: radioKey, uptime: node.uptime) else { return nil }
                return .statusResponse(MeshServerReply(serverPrefix: Data(node.publicKey.prefix(6)), body: MeshNode.padded(status.encoded)))
            }
        case .sendTelemetryRequest(nil):
            let own = MeshTelemetry(readings: [
                MeshTelemetry.Reading(channel: 1, type: .voltage, value: .number(Double(configuration.batteryMillivolts) / 1000)),
            ])
            push(.telemetryResponse(MeshServerReply(serverPrefix: Data(publicKey.prefix(6)), body: own)))
        case .sendTelemetryRequest(let key?):
            guard let contact = contact(publicKey: key) else { return reply(.error(.notFound)) }
            let pending = startRemote(to: contact)
            let radioKey = publicKey
            send(to: key, pending: pending) { node, _ in
                node.telemetry(for: radioKey).map {
                    .telemetryResponse(MeshServerReply(serverPrefix: Data(node.publicKey.prefix(6)), body: MeshTelemetry(lpp: MeshNode.padded($0.lpp))))
                }
            }
        case .sendBinaryRequest(let key, let body):
            guard body.count <= MeshCoreCommand.maximumRequestBody else { return reply(.error(.tableFull)) }
            guard let contact = contact(publicKey: key) else { return reply(.error(.notFound)) }
            let pending = startRemote(to: contact)
            let radioKey = publicKey, tag = pending.ack
            send(to: key, pending: pending) { node, _ in
                let neighbours = node.network?.neighbours(of: node) ?? []
                return node.binaryRequest(body, from: radioKey, uptime: node.uptime, neighbours: neighbours)
                    .map { .binaryResponse(tag: tag, body: MeshNode.padded($0)) }
            }
        case .sendAnonymousRequest(let key, let data):
            guard data.count <= MeshCoreCommand.maximumRequestBody else { return reply(.error(.tableFull)) }
            // A node that is not a contact is reached zero-hop, as a transient contact.
            let contact = contact(publicKey: key) ?? MeshContact(publicKey: key, type: .none, outPath: Data(), name: "")
            let pending = startRemote(to: contact)
            let tag = pending.ack
            let request = MeshAnonymousRequest(decoding: data)
            let direct = contact.outPath != nil
            send(to: key, pending: pending) { node, hops in
                // Repeaters answer only requests that came along a path, never a flood; a
                // transient contact is one hop away or nothing.
                guard direct, let request, contact.type != .none || hops == 1 else { return nil }
                return node.anonymousRequest(request, clock: node.network?.epoch ?? 0).map { .binaryResponse(tag: tag, body: MeshNode.padded($0)) }
            }
        case .sendPathDiscoveryRequest(let key):
            guard let contact = contact(publicKey: key) else { return reply(.error(.notFound)) }
            let pending = startRemote(to: contact, flood: true)
            // The radio keeps a discovered path for the app to apply, not as the route.
            send(to: key, pending: pending, learnsPath: false) { node, hops in
                let route = MeshNetwork.route(hops: hops)
                return .pathDiscoveryResponse(MeshDiscoveredPath(
                    nodePrefix: Data(node.publicKey.prefix(6)), outPath: route, inPath: Data(route.reversed())))
            }
        case .sendTracePath(let request):
            countSent(flood: false)
            let hops = UInt32(request.path.count / request.hashSize)
            reply(.sent(SentResult(isFlood: false, expectedAck: request.tag, suggestedTimeout: 2_000 + 1_600 * (hops + 1))))
            network?.trace(from: self, request)
        case .sendControlData(let payload):
            countSent(flood: false)
            reply(.ok(value: nil))
            if let request = Self.discoveryRequest(payload) { network?.discover(from: self, request) }
        case .logout:
            // The radio only stops its keep-alive with the server: nothing goes over the air,
            // and the server keeps the login in its access list.
            reply(.ok(value: nil))
        case .hasConnection:
            // Current servers ask for no keep-alive, so the radio never holds a connection.
            reply(.error(.notFound))
        default:
            reply(.error(.unsupportedCommand))
        }
    }

    /// A node's answer reached the radio: pushed if it answers the request still awaited (or
    /// one that is not tracked, such as a trace). A server answers a flooded request with a
    /// path return (`learnsPath`): the contact's route becomes the one the answer came over
    /// (PATH_UPDATED first), and later requests go direct.
    func remoteAnswer(_ frame: MeshCoreFrame, pending: UInt64?, from key: Data? = nil, hops: Int = 0, learnsPath: Bool = false) {
        if learnsPath, let key, let index = contacts.firstIndex(where: { $0.publicKey == key }) {
            contacts[index].outPath = MeshNetwork.route(hops: hops)
            contacts[index].outPathHashSize = 1
            contacts[index].lastModified = clockEpoch
            push(.pathUpdated(publicKey: key))
        }
        if let pending, pending != pendingRemote { return }
        push(frame)
    }

    // MARK: Plumbing

    struct PendingRemote {
        let serial: UInt64
        let ack: UInt32
        /// Whether the request floods, so the answer comes as a path return that sets the route.
        let flood: Bool
    }

    private func contact(publicKey key: Data) -> MeshContact? { contacts.first { $0.publicKey == key } }

    /// Answers SENT for a request to `contact` and makes it the one request awaited.
    private func startRemote(to contact: MeshContact, ack: UInt32? = nil, flood: Bool? = nil) -> PendingRemote {
        pendingRemote &+= 1
        remoteTag &+= 0x9E37_79B9
        let isFlood = flood ?? (contact.outPath == nil)
        let tag = ack ?? remoteTag
        let hops = UInt32((contact.outPathHopCount ?? 0) + 1)
        countSent(flood: isFlood)
        reply(.sent(SentResult(isFlood: isFlood, expectedAck: tag, suggestedTimeout: isFlood ? 12_000 : 2_000 + 1_600 * hops)))
        return PendingRemote(serial: pendingRemote, ack: tag, flood: isFlood)
    }

    /// Sends the request to the node; its answer comes back with the request's number, and the
    /// radio drops it if a newer request started meanwhile.
    private func send(
        to key: Data, pending: PendingRemote, learnsPath: Bool = true, _ answer: @escaping @SimulationActor (MeshNode, Int) -> MeshCoreFrame?
    ) {
        guard network?.request(from: self, to: key, pending: pending.serial, learnsPath: learnsPath && pending.flood, answer) == true else {
            return logger.info("\(name): no node with key \(key.prefix(6).hexString) in the mesh; the request is lost")
        }
    }

    private static func discoveryRequest(_ payload: Data) -> MeshNodeDiscovery? {
        guard payload.count >= 6, payload[payload.startIndex] & 0xF0 == 0x80 else { return nil }
        var request = MeshNodeDiscovery(types: [], tag: 0, prefixOnly: payload[payload.startIndex] & 0x01 != 0)
        request.typeFilter = payload[payload.startIndex + 1]
        request.tag = payload.dropFirst(2).prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        return request
    }
}
