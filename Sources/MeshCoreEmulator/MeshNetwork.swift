import Crypto
import Foundation
import MeshCore
import Logging
import TetherCore
import TetherSimulator

/// A simulated MeshCore mesh: companion radios and scripted nodes at hop distances, on an
/// injected clock.
///
/// Direct messages, channel messages and adverts travel with ``hopLatency`` per hop; the hop
/// count between two members is `max(1, a.hops + b.hops - 1)` (members at 1 hop are neighbours
/// of each other). A recipient acknowledges a direct message and the ack travels back the same
/// way, so SEND_CONFIRMED arrives one round trip after SENT. Everything runs on the
/// `SimulationActor`; under a test clock the whole mesh is deterministic.
@SimulationActor
public final class MeshNetwork {
    /// Virtual time of the mesh.
    public nonisolated let timeline: Timeline
    /// Wall-clock seconds since 1970 when the mesh started (nodes' clocks run from it).
    public nonisolated let startEpoch: UInt32
    /// The seed keys and other randomness derive from.
    public nonisolated let seed: UInt64
    /// The one-way latency of each hop.
    public var hopLatency: Duration
    /// The companion radios, in the order they were added.
    public private(set) var radios: [CompanionRadio] = []
    /// The scripted nodes, in the order they were added.
    public private(set) var nodes: [MeshNode] = []
    /// Receives every traffic event with the virtual time it happened at.
    public var observer: (@SimulationActor (Duration, MeshTrafficEvent) -> Void)?

    let logger: Logger
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var taskSerial = 0
    private var events: [ScheduledEvent] = []
    private var eventSerial = 0
    private var pump: Task<Void, Never>?
    private var pumpDeadline: Duration?

    private struct ScheduledEvent {
        let time: Duration
        let serial: Int
        let action: @SimulationActor (MeshNetwork) -> Void
    }

    /// Creates an empty mesh.
    ///
    /// - Parameters:
    ///   - clock: The clock of virtual time (a `TestClock` in tests, `ContinuousClock` live).
    ///   - seed: Makes node keys and everything derived from them reproducible.
    ///   - startEpoch: The wall-clock time at the start (default 2026-01-01T00:00:00Z).
    ///   - hopLatency: One-way latency per hop.
    ///   - logger: Receives the radios' warnings.
    public nonisolated init(
        clock: any Clock<Duration>,
        seed: UInt64 = 1,
        startEpoch: UInt32 = 1_767_225_600,
        hopLatency: Duration = .milliseconds(400),
        logger: Logger = Logger(label: "meshcore.emulator.mesh")
    ) {
        timeline = Timeline(clock)
        self.seed = seed
        self.startEpoch = startEpoch
        self.hopLatency = hopLatency
        self.logger = logger
    }

    /// The mesh's true time in seconds since 1970 (what nodes stamp their messages with).
    public var epoch: UInt32 {
        UInt32(clamping: Int64(startEpoch) + Int64(timeline.now.seconds.rounded(.down)))
    }

    // MARK: Members

    /// The deterministic 32-byte public key a member called `name` gets in this mesh (an
    /// Ed25519 key, so its adverts and cards carry signatures that verify).
    public nonisolated func key(for name: String) -> Data {
        identity(for: name).publicKey.rawRepresentation
    }

    /// The deterministic Ed25519 identity of the member called `name`: the same seed and name
    /// always give the same key.
    public nonisolated func identity(for name: String) -> Curve25519.Signing.PrivateKey {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var generator = SplitMix64(seed: seed ^ hash)
        var bytes = Data()
        for _ in 0..<4 { withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) } }
        // Any 32 bytes are a valid Ed25519 seed.
        return (try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes)) ?? Curve25519.Signing.PrivateKey()
    }

    /// Adds a companion radio whose clock starts at the mesh's current time.
    @discardableResult
    public func addRadio(
        name: String, hops: Int = 1, configuration: CompanionRadio.Configuration = CompanionRadio.Configuration()
    ) -> CompanionRadio {
        let radio = CompanionRadio(
            name: name, identity: identity(for: name), timeline: timeline, startEpoch: epoch, hops: hops,
            configuration: configuration, logger: logger)
        radio.network = self
        radios.append(radio)
        return radio
    }

    /// Adds a scripted node.
    @discardableResult
    public func addNode(name: String, hops: Int, type: MeshContactType = .chat, echoBot: Bool = false) -> MeshNode {
        let node = MeshNode(name: name, identity: identity(for: name), type: type, hops: hops, echoBot: echoBot)
        node.network = self
        nodes.append(node)
        return node
    }

    /// The radio with this (current) name.
    public func radio(named name: String) -> CompanionRadio? { radios.first { $0.name == name } }

    /// The node with this name.
    public func node(named name: String) -> MeshNode? { nodes.first { $0.name == name } }

    /// Puts every other member into `radio`'s contacts, as if each had advertised a second
    /// ago (path unknown, so the first message floods; their next advert is newer).
    public func introduceAll(to radio: CompanionRadio) {
        for member in members where member.key != radio.publicKey {
            radio.addContact(MeshContact(
                publicKey: member.key, type: member.type, name: member.name, lastAdvert: epoch &- 1,
                lastModified: radio.clockEpoch))
        }
    }

    /// The hop count between two members' keys, nil if either is unknown.
    public func hops(between first: Data, and second: Data) -> Int? {
        guard let a = member(key: first), let b = member(key: second) else { return nil }
        return distance(a, b)
    }

    // MARK: Scheduling

    /// Runs `action` after `delay` of virtual time (cancelled by ``shutdown()``).
    ///
    /// Actions due at the same instant run in the order they were scheduled, so two messages
    /// sent one after the other also arrive in that order.
    public func schedule(after delay: Duration, _ action: @escaping @SimulationActor (MeshNetwork) -> Void) {
        eventSerial += 1
        let event = ScheduledEvent(time: timeline.now + max(.zero, delay), serial: eventSerial, action: action)
        let position = events.firstIndex { ($0.time, $0.serial) > (event.time, event.serial) } ?? events.endIndex
        events.insert(event, at: position)
        if pumpDeadline.map({ event.time < $0 }) ?? true { restartPump() }
    }

    /// One task sleeps until the earliest event, runs everything due, and repeats.
    private func restartPump() {
        pump?.cancel()
        guard let first = events.first else {
            pump = nil
            pumpDeadline = nil
            return
        }
        pumpDeadline = first.time
        let timeline = self.timeline
        pump = Task { @SimulationActor [weak self] in
            do { try await timeline.sleep(until: first.time) } catch { return }
            guard let self, !Task.isCancelled else { return }
            while let next = self.events.first, next.time <= timeline.now {
                self.events.removeFirst()
                next.action(self)
            }
            self.pumpDeadline = nil
            self.restartPump()
        }
    }

    /// Plays `script` from now, once or over and over every `period`.
    @discardableResult
    public func play(_ script: MeshScript, repeatingEvery period: Duration? = nil) -> Task<Void, Never> {
        let timeline = self.timeline
        taskSerial += 1
        let serial = taskSerial
        let task = Task { @SimulationActor [weak self] in
            defer { self?.tasks[serial] = nil }
            var start = timeline.now
            repeat {
                for step in script.steps.sorted(by: { $0.time < $1.time }) {
                    do { try await timeline.sleep(until: start + step.time) } catch { return }
                    guard let self, !Task.isCancelled else { return }
                    self.perform(step.action)
                }
                guard let period else { return }
                start += period
                do { try await timeline.sleep(until: start) } catch { return }
            } while !Task.isCancelled
        }
        tasks[serial] = task
        return task
    }

    /// Cancels every scheduled action and script.
    public func shutdown() {
        for task in tasks.values { task.cancel() }
        tasks.removeAll()
        events.removeAll()
        pump?.cancel()
        pump = nil
        pumpDeadline = nil
    }

    private func perform(_ action: MeshScript.Action) {
        switch action {
        case .directMessage(let from, let to, let text):
            guard let node = node(named: from) else { return logger.warning("script: no node \(from)") }
            node.sendDirect(text, to: to)
        case .channelMessage(let from, let text):
            guard let node = node(named: from) else { return logger.warning("script: no node \(from)") }
            node.postOnChannel(text)
        case .advert(let from, let flood):
            guard let node = node(named: from) else { return logger.warning("script: no node \(from)") }
            node.advert(flood: flood)
        case .setOnline(let name, let online):
            guard let node = node(named: name) else { return logger.warning("script: no node \(name)") }
            node.isOnline = online
        }
    }

    // MARK: Routing

    /// A radio's app sent a direct message.
    /// `pathHops`: the hops of the route a direct (not flooded) send follows. A route that no
    /// longer matches the mesh (the node moved, a repeater went) loses the message, as a stale
    /// path does on the air; flooding finds the node wherever it is.
    func sendDirect(
        from radio: CompanionRadio, to key: Data, text: String, timestamp: UInt32, textType: MeshTextType, ack: UInt32,
        pathHops: Int? = nil
    ) {
        let sender = Member.radio(radio)
        guard let target = member(key: key), target.key != radio.publicKey else {
            return report(.undeliverable(from: radio.name, to: key.prefix(6).hexString, reason: "no such node"))
        }
        if let pathHops, pathHops != distance(sender, target) {
            return report(.undeliverable(from: radio.name, to: target.name, reason: "stale path"))
        }
        deliverDirect(from: sender, to: target, text: text, timestamp: timestamp, textType: textType) { [weak radio] roundTrip, hops in
            radio?.receiveAck(ack, roundTrip: roundTrip, hops: hops)
        }
    }

    /// A node sends a direct message to a member named `recipientName`.
    func nodeSendsDirect(_ node: MeshNode, to recipientName: String, text: String, textType: MeshTextType = .plain) {
        guard node.isOnline else { return }
        guard let target = member(named: recipientName), target.key != node.publicKey else {
            return report(.undeliverable(from: node.name, to: recipientName, reason: "no such node"))
        }
        deliverDirect(from: .node(node), to: target, text: text, timestamp: epoch, textType: textType) { _, _ in }
    }

    private func deliverDirect(
        from sender: Member, to target: Member, text: String, timestamp: UInt32, textType: MeshTextType,
        acknowledged: @escaping @SimulationActor (Duration, Int) -> Void
    ) {
        let hops = distance(sender, target)
        let oneWay = hopLatency * hops
        report(.directMessage(from: sender.name, to: target.name, text: text, hops: hops))
        schedule(after: oneWay) { network in
            guard target.isOnline else {
                return network.report(.undeliverable(from: sender.name, to: target.name, reason: "offline"))
            }
            let accepted: Bool
            switch target {
            case .node(let node):
                node.receiveDirect(from: sender.name, senderKey: sender.key, text: text, textType: textType)
                accepted = node.autoAcknowledges
            case .radio(let radio):
                accepted = radio.receiveDirect(
                    from: sender.key, text: text, timestamp: timestamp, textType: textType,
                    pathLength: UInt8(clamping: hops - 1), snr: Self.snr(hops: hops))
            }
            // CLI data is never acknowledged, either way.
            guard accepted, textType != .cliData else { return }
            network.schedule(after: oneWay) { network in
                network.report(.acknowledged(by: target.name, to: sender.name, roundTrip: oneWay * 2))
                acknowledged(oneWay * 2, hops)
            }
        }
    }

    /// Raw data along a route of `pathHops` repeaters reaches the radios at the route's end
    /// (as far away as the route is long, plus one).
    func sendRawData(from radio: CompanionRadio, pathHops: Int, payload: Data) {
        let sender = Member.radio(radio)
        for target in members where target.key != radio.publicKey {
            guard case .radio(let receiver) = target, distance(sender, target) == pathHops + 1 else { continue }
            let hops = pathHops + 1
            schedule(after: hopLatency * hops) { _ in
                guard target.isOnline else { return }
                receiver.receiveRawData(payload, snr: Self.snr(hops: hops))
            }
        }
    }

    /// A channel datagram from a radio reaches every other radio (nodes ignore app data).
    func sendChannelData(from radio: CompanionRadio, secret: Data, datagram: MeshChannelData) {
        let sender = Member.radio(radio)
        for target in members where target.key != radio.publicKey {
            guard case .radio(let receiver) = target else { continue }
            let hops = distance(sender, target)
            schedule(after: hopLatency * hops) { _ in
                guard target.isOnline else { return }
                receiver.receiveChannelData(secret: secret, datagram: datagram, pathLength: UInt8(clamping: hops - 1), snr: Self.snr(hops: hops))
            }
        }
    }

    /// A channel message from a radio's app or a node reaches every other online member.
    func sendChannel(from radio: CompanionRadio, secret: Data, text: String, timestamp: UInt32) {
        sendChannel(from: .radio(radio), secret: secret, text: text, timestamp: timestamp)
    }

    func sendChannel(from node: MeshNode, secret: Data, text: String, timestamp: UInt32) {
        sendChannel(from: .node(node), secret: secret, text: text, timestamp: timestamp)
    }

    private func sendChannel(from sender: Member, secret: Data, text: String, timestamp: UInt32) {
        report(.channelMessage(from: sender.name, text: text))
        for target in members where target.key != sender.key {
            let hops = distance(sender, target)
            schedule(after: hopLatency * hops) { _ in
                guard target.isOnline else { return }
                switch target {
                case .radio(let radio):
                    radio.receiveChannel(
                        secret: secret, text: text, timestamp: timestamp, pathLength: UInt8(clamping: hops - 1),
                        snr: Self.snr(hops: hops))
                case .node(let node):
                    if secret == MeshPublicChannel.secret { node.receiveChannel(text) }
                }
            }
        }
    }

    /// An advert reaches neighbours (zero-hop) or the whole mesh (flood).
    func advertise(from radio: CompanionRadio, flood: Bool) {
        advertise(from: .radio(radio), advert: radio.makeAdvert(), flood: flood)
    }

    func advertise(from node: MeshNode, flood: Bool) {
        advertise(from: .node(node), advert: node.makeAdvert(timestamp: epoch), flood: flood)
    }

    private func advertise(from sender: Member, advert: MeshAdvert?, flood: Bool) {
        report(.advert(from: sender.name, flood: flood))
        guard let advert else {
            logger.warning("\(sender.name) cannot sign an advert: it has no private key")
            return
        }
        for target in members where target.key != sender.key {
            let hops = distance(sender, target)
            guard flood || hops == 1, case .radio(let radio) = target else { continue }
            // The repeaters between them, one 1-byte hash each, as a flood records its route.
            let path = Data((0..<max(0, hops - 1)).map { UInt8(truncatingIfNeeded: $0 + 1) })
            schedule(after: hopLatency * hops) { _ in
                radio.receiveAdvert(advert, path: path)
            }
        }
    }

    // MARK: Remote requests

    /// A radio's request travels to the node with `key`; `answer` runs there (given the hop
    /// count), and the frame it returns reaches the radio as a push the same number of hops
    /// later. Returns false when no node has that key.
    func request(
        from radio: CompanionRadio, to key: Data, pending: UInt64?, learnsPath: Bool = false,
        _ answer: @escaping @SimulationActor (MeshNode, Int) -> MeshCoreFrame?
    ) -> Bool {
        guard let node = nodes.first(where: { $0.publicKey == key }) else { return false }
        let hops = distance(.radio(radio), .node(node))
        schedule(after: hopLatency * hops) { network in
            guard node.isOnline, let frame = answer(node, hops) else { return }
            network.schedule(after: network.hopLatency * hops) { _ in
                radio.remoteAnswer(frame, pending: pending, from: key, hops: hops, learnsPath: learnsPath)
            }
        }
        return true
    }

    /// The repeaters `node` hears directly (one hop apart), nearest first.
    func neighbours(of node: MeshNode) -> [MeshNode] {
        nodes.filter { $0 !== node && $0.type == .repeater && $0.isOnline && abs($0.hops - node.hops) <= 1 }
    }

    /// The hop hashes a packet from `radio` to the node `hops` away passes (1-byte hashes, the
    /// same synthetic route the emulator uses for flood paths).
    static func route(hops: Int) -> Data {
        Data((0..<max(0, hops - 1)).map { UInt8(truncatingIfNeeded: $0 + 1) })
    }

    /// A trace from `radio` along repeaters named by their key hashes: it comes back when every
    /// hash is an online repeater's, with each hop's SNR.
    func trace(from radio: CompanionRadio, _ request: MeshTraceRequest) {
        let size = request.hashSize
        var hops: [MeshTraceResult.Hop] = []
        for index in 0..<(request.path.count / size) {
            let hash = Data(request.path.dropFirst(index * size).prefix(size))
            guard nodes.contains(where: { $0.type == .repeater && $0.isOnline && $0.publicKey.starts(with: hash) }) else { return }
            hops.append(MeshTraceResult.Hop(hash: hash, snr: Self.snr(hops: 1) - 0.25 * Double(index)))
        }
        let result = MeshTraceResult(
            tag: request.tag, authCode: request.authCode, hashSize: size, hops: hops, finalSNR: Self.snr(hops: 1))
        schedule(after: hopLatency * (2 * hops.count)) { _ in radio.remoteAnswer(.traceData(result), pending: nil) }
    }

    /// A zero-hop node discovery from `radio`: online nodes one hop away whose type the request
    /// asks for answer, each after its own small delay.
    func discover(from radio: CompanionRadio, _ request: MeshNodeDiscovery) {
        let sender = Member.radio(radio)
        for (index, node) in nodes.enumerated() where node.isOnline && distance(sender, .node(node)) == 1 {
            guard request.typeFilter & (1 << (node.type.rawValue & 0x07)) != 0 else { continue }
            let key = request.prefixOnly ? Data(node.publicKey.prefix(8)) : node.publicKey
            let answer = MeshNodeDiscovery.Answer(type: node.type, snrHeard: Self.snr(hops: 1), tag: request.tag, publicKey: key)
            schedule(after: hopLatency * 2 + .milliseconds(50 * index)) { _ in
                radio.remoteAnswer(.controlData(snr: Self.snr(hops: 1), rssi: -60, pathLength: 0, payload: answer.payload), pending: nil)
            }
        }
    }

    /// A radio sends a stored advert again, zero-hop (SHARE_CONTACT): its neighbours hear it.
    func share(_ advert: MeshAdvert, from radio: CompanionRadio) {
        radio.countSent(flood: false)
        let sender = Member.radio(radio)
        for target in members where target.key != radio.publicKey && target.key != advert.publicKey {
            guard distance(sender, target) == 1, case .radio(let neighbour) = target else { continue }
            schedule(after: hopLatency) { _ in neighbour.receiveAdvert(advert, path: Data()) }
        }
    }

    func report(_ event: MeshTrafficEvent) {
        observer?(timeline.now, event)
    }

    // MARK: Members

    private enum Member: Sendable {
        case radio(CompanionRadio)
        case node(MeshNode)

        @SimulationActor var key: Data {
            switch self {
            case .radio(let radio): radio.publicKey
            case .node(let node): node.publicKey
            }
        }

        @SimulationActor var name: String {
            switch self {
            case .radio(let radio): radio.name
            case .node(let node): node.name
            }
        }

        @SimulationActor var hops: Int {
            switch self {
            case .radio(let radio): radio.hops
            case .node(let node): node.hops
            }
        }

        @SimulationActor var isOnline: Bool {
            switch self {
            case .radio: true
            case .node(let node): node.isOnline
            }
        }

        @SimulationActor var type: MeshContactType {
            switch self {
            case .radio: .chat
            case .node(let node): node.type
            }
        }
    }

    private var members: [Member] { radios.map(Member.radio) + nodes.map(Member.node) }

    private func member(key: Data) -> Member? { members.first { $0.key == key } }

    private func member(named name: String) -> Member? { members.first { $0.name == name } }

    private func distance(_ a: Member, _ b: Member) -> Int { max(1, a.hops + b.hops - 1) }

    /// Signal quality falls with distance: 12 dB for a neighbour, 3 dB less per extra hop.
    private static func snr(hops: Int) -> Double { max(-10, 12 - 3 * Double(hops - 1)) }
}
