#if os(macOS) || os(Linux)
import Foundation
import MeshCore
import MeshCoreEmulator
import Observation
import TetherCore
import TetherSimulator

/// The MeshCore app's screen (PocketMesh's): the radios nearby, the connection as
/// red/yellow/green dots, contacts and channels, a chat per contact or channel with delivery
/// ticks (sent, delivered, failed), messages arriving live, the radio's settings and battery,
/// and adverts heard. It follows a ``MeshCoreViewModel`` on a ``ConnectionManager`` over
/// ``BLETransport`` (one per radio connected to).
@Observable
@MainActor
public final class MeshCoreScreen: StudioScreen {
    public let device = "mesh"
    /// The view model of the radio connected to (nil before the first connection).
    public private(set) var model: MeshCoreViewModel?
    /// Radios found by the last scan.
    public private(set) var radios: [RadioState] = []
    /// Whether a scan is under way.
    public private(set) var scanning = false
    /// The radio connected to (or being connected to).
    public private(set) var radio: RadioState?
    /// The chat shown: a contact's key prefix (hex) or a channel's index.
    public private(set) var chat: Chat?
    /// Why the last scan or connection failed (nil once one worked).
    public private(set) var connectionError: String?

    /// The chat shown.
    public enum Chat: Sendable, Equatable {
        /// A contact, by its key prefix (12 hex digits).
        case contact(String)
        /// A channel, by index.
        case channel(Int)
    }

    /// A radio found by a scan.
    public struct RadioState: Encodable, Sendable, Equatable {
        var id: String
        var name: String?
        var rssi: Int?
    }

    /// Contacts sent to the page (a radio may hold thousands).
    public static let contactLimit = 1_000
    /// Messages of the chat shown sent to the page (its newest).
    public static let chatLimit = 200
    /// Radios a scan lists.
    public static let radioLimit = 64
    /// The longest message text (the radio's limit for a direct message).
    public static let textLimit = 160

    @ObservationIgnored private let central: Central
    @ObservationIgnored private let store: any MeshMessageStore
    @ObservationIgnored private let network: MeshNetwork?
    @ObservationIgnored private var manager: ConnectionManager?
    @ObservationIgnored private var scanTask: Task<Void, Never>?
    @ObservationIgnored private let work = ScreenWork()
    /// Messages being sent (each waits for its acknowledgement on its own).
    @ObservationIgnored private var sends: [Int: Task<Void, Never>] = [:]
    @ObservationIgnored private var sendSerial = 0
    @ObservationIgnored private var scanSerial = 0

    /// Messages that may await their acknowledgement at once; more are refused.
    public static let sendLimit = 8

    /// A screen on `central` keeping messages in `store`; `network` (the simulator's mesh) adds
    /// the simulator's controls.
    public init(central: Central, store: any MeshMessageStore, network: MeshNetwork? = nil) {
        self.central = central
        self.store = store
        self.network = network
    }

    public func start() async {}

    /// Stops scanning and disconnects the radio.
    public func stop() async {
        stopScan()
        work.cancel()
        for send in sends.values { send.cancel() }
        model?.stop()
        await manager?.disconnect()
        await work.finish()
    }

    // MARK: State

    /// A contact as the list shows it.
    public struct ContactState: Encodable, Sendable, Equatable {
        var key: String
        var name: String
        var type: String
        var hops: Int?
        var lastAdvert: UInt32
        var messages: Int
    }

    /// A channel as the list shows it.
    public struct ChannelState: Encodable, Sendable, Equatable {
        var index: Int
        var name: String
        var messages: Int
    }

    /// A message of the chat shown.
    public struct MessageState: Encodable, Sendable, Equatable {
        var id: Int64?
        var direction: String
        var sender: String?
        var text: String
        var timestamp: UInt32
        /// `received`, `sent` (✓), `delivered` (✓✓), `failed`.
        var status: String
        var roundTrip: UInt32?
        var hops: Int?
        var snr: Double?
    }

    /// What the page draws.
    public struct State: Encodable, Sendable {
        var scanning: Bool
        var radios: [RadioState]
        var radio: RadioState?
        var connection: String
        var dot: String
        var error: String?
        var actionError: String?
        /// The radio's settings as [label, value] pairs, in the order shown.
        var selfInfo: [[String]]?
        var battery: [String: Int]?
        var contacts: [ContactState]
        var contactCount: Int
        var channels: [ChannelState]
        var chat: [String: String]?
        var chatTitle: String?
        var messages: [MessageState]
        var adverts: [String]
        var simulated: Bool
    }

    public func state() -> State {
        let model = self.model
        let messages = model?.messages ?? []
        var directCounts: [String: Int] = [:]
        var channelCounts: [Int: Int] = [:]
        for message in messages {
            if message.kind == .direct, let peer = message.peer { directCounts[peer, default: 0] += 1 }
            if message.kind == .channel, let index = message.channelIndex { channelCounts[index, default: 0] += 1 }
        }
        let contacts = model?.contacts ?? []
        let names = Dictionary(contacts.map { ($0.publicKey.prefix(6).hexString, $0.name) }, uniquingKeysWith: { first, _ in first })
        var shown: [MeshMessage] = []
        var title: String?
        switch chat {
        case .contact(let key)?:
            // Also a contact the radio no longer lists (or not yet): its messages are kept.
            shown = model?.conversation(withPeer: key) ?? []
            title = names[key].map { "Chat with \($0)" } ?? "Chat with \(key)"
        case .channel(let index)?:
            shown = model?.conversation(channel: index) ?? []
            title = (model?.channels.first { Int($0.index) == index }?.name).map { "Channel \($0)" } ?? "Channel \(index)"
        case nil:
            break
        }
        let info = model?.selfInfo
        return State(
            scanning: scanning,
            radios: radios,
            radio: radio,
            connection: model?.state.rawValue ?? "disconnected",
            dot: model?.dot.rawValue ?? "red",
            error: connectionError ?? model?.lastError.map(userFacingText),
            actionError: model?.actionError,
            selfInfo: info.map { info in [
                ["Name", info.name], ["Key", info.publicKey.prefix(6).hexString],
                ["Frequency", String(format: "%.3f MHz", info.radioFrequency)], ["Bandwidth", String(format: "%g kHz", info.radioBandwidth)],
                ["Spreading factor", "\(info.spreadingFactor)"], ["Coding rate", "4/\(info.codingRate)"],
                ["TX power", "\(info.txPower) dBm (max \(info.maxTxPower))"],
                ["Position", info.latitude == 0 && info.longitude == 0 ? "not set" : String(format: "%.5f, %.5f", info.latitude, info.longitude)],
            ] },
            battery: model?.battery.map { battery in
                var values = ["millivolts": Int(battery.millivolts)]
                if let used = battery.usedKilobytes { values["usedKilobytes"] = Int(used) }
                if let total = battery.totalKilobytes { values["totalKilobytes"] = Int(total) }
                return values
            },
            contacts: contacts.prefix(Self.contactLimit).map { contact in
                let key = contact.publicKey.prefix(6).hexString
                return ContactState(key: key, name: contact.name, type: Self.name(contact.type), hops: contact.outPathHopCount,
                                    lastAdvert: contact.lastAdvert, messages: directCounts[key] ?? 0)
            },
            contactCount: contacts.count,
            channels: (model?.channels ?? []).map { ChannelState(index: Int($0.index), name: $0.name, messages: channelCounts[Int($0.index)] ?? 0) },
            chat: chat.map { chat in
                switch chat {
                case .contact(let key): ["contact": key]
                case .channel(let index): ["channel": String(index)]
                }
            },
            chatTitle: title,
            messages: shown.suffix(Self.chatLimit).map { message in
                MessageState(id: message.id, direction: message.direction.rawValue, sender: message.senderName, text: message.text,
                             timestamp: message.timestamp, status: message.status.rawValue, roundTrip: message.roundTrip,
                             hops: message.pathLength, snr: message.snr)
            },
            adverts: (model?.adverts ?? []).prefix(20).map { key in names[key.prefix(6).hexString] ?? key.prefix(6).hexString },
            simulated: network != nil)
    }

    // MARK: Actions

    public func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        switch action.name {
        case "scan":
            if try action.flag("on") { startScan() } else { stopScan() }
        case "connect":
            let id = PeripheralID(try action.uuid("id"))
            guard let found = radios.first(where: { $0.id == id.description }) else {
                throw StudioProtocolError("no radio \(id) was found: scan first")
            }
            stopScan()
            // In the background: Disconnect must not wait behind a startup.
            work.cancel()
            guard work.run({ [weak self] in await self?.connect(to: id, found) }) else {
                throw StudioProtocolError("connections are under way: wait, or Disconnect")
            }
        case "disconnect":
            work.cancel()
            await manager?.disconnect()
        case "select":
            if case .number(let index)? = action.arguments["channel"] {
                guard index.rounded() == index, (0...255).contains(index) else { throw StudioProtocolError("\"channel\" must be 0…255") }
                chat = .channel(Int(index))
            } else {
                let key = try action.string("contact", maximumLength: 12).lowercased()
                guard key.count == 12, key.allSatisfy(\.isHexDigit) else { throw StudioProtocolError("\"contact\" is a key prefix of 12 hex digits") }
                chat = .contact(key)
            }
        case "send":
            let text = try action.string("text", maximumLength: Self.textLimit)
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw StudioProtocolError("a message needs text") }
            guard let model, model.state == .ready else { throw StudioProtocolError("connect to a radio first") }
            switch chat {
            case .contact(let key)?:
                guard let contact = model.contacts.first(where: { $0.publicKey.prefix(6).hexString == key }) else {
                    throw StudioProtocolError("the radio has no contact \(key)")
                }
                // Waits for the acknowledgement in the background; the ticks follow in the chat.
                try startSend { await model.send(text, to: contact) }
            case .channel(let index)?:
                try startSend { await model.send(text, channel: UInt8(index)) }
            case nil:
                throw StudioProtocolError("pick a contact or a channel first")
            }
        case "battery":
            guard let model else { throw StudioProtocolError("connect to a radio first") }
            await model.refreshBattery()
        case "simulateNode":
            guard let network else { throw StudioProtocolError("real nodes announce themselves") }
            let name = try action.string("name", maximumLength: 31)
            guard !name.isEmpty else { throw StudioProtocolError("a node needs a name") }
            await { @SimulationActor in
                if network.node(named: name) == nil { network.addNode(name: name, hops: 1) }
                _ = network.play(MeshScript([.at(.zero, .advert(from: name, flood: true))]))
            }()
        default:
            throw action.unknown
        }
    }

    // MARK: Connecting

    private func startScan() {
        guard scanTask == nil else { return }
        scanning = true
        radios = []
        connectionError = nil
        let central = self.central
        scanSerial += 1
        let serial = scanSerial
        scanTask = Task { [weak self] in
            do {
                // By name: the Nordic UART service alone is also a GripFit's (and many more).
                let found = try await central.scan(filter: ScanFilter(name: .prefix(MeshCoreBLE.namePrefix)), timeout: .seconds(15))
                for await peripheral in found {
                    guard let self else { return }
                    self.found(peripheral)
                }
            } catch is CancellationError {
            } catch {
                if self?.scanSerial == serial { self?.connectionError = userFacingText(error) }
            }
            // Only this scan's end: a newer one may be under way.
            guard let self, self.scanSerial == serial else { return }
            self.scanning = false
            self.scanTask = nil
        }
    }

    /// Sends in the background, at most ``sendLimit`` at once.
    private func startSend(_ body: @escaping @MainActor () async -> Void) throws(StudioProtocolError) {
        guard sends.count < Self.sendLimit else {
            throw StudioProtocolError("\(Self.sendLimit) messages await their acknowledgement: wait for one")
        }
        sendSerial += 1
        let id = sendSerial
        sends[id] = Task { [weak self] in
            await body()
            self?.sends[id] = nil
        }
    }

    private func stopScan() {
        scanTask?.cancel()
        scanTask = nil
        scanning = false
    }

    private func found(_ peripheral: DiscoveredPeripheral) {
        let entry = RadioState(id: peripheral.id.description, name: peripheral.displayName, rssi: peripheral.rssi)
        if let index = radios.firstIndex(where: { $0.id == entry.id }) {
            radios[index] = entry
        } else if radios.count < Self.radioLimit {
            radios.append(entry)
        }
    }

    private func connect(to id: PeripheralID, _ found: RadioState) async {
        if let manager, radio?.id == found.id, await manager.state != .disconnected { return }
        // Another radio: the one before is let go.
        model?.stop()
        if let previous = manager { await previous.disconnect() }
        guard !Task.isCancelled else { return }
        let transport = await BLETransport(central: central, peripheral: id)
        guard !Task.isCancelled else { return }
        let session = MeshCoreSession(transport: transport, configuration: .init(appName: "Tether Studio"))
        let manager = ConnectionManager(session: session, store: store)
        let model = MeshCoreViewModel(manager: manager)
        self.manager = manager
        self.model = model
        radio = found
        chat = nil
        connectionError = nil
        await model.start()
        await model.connect()
        // A Disconnect that came during the startup, before the manager was there to stop.
        guard !Task.isCancelled else {
            await manager.disconnect()
            return
        }
        // The manager's own state: the view model hears "ready" a moment later.
        if await manager.state == .ready { await model.refreshBattery() }
    }

    // MARK: Helpers

    static func name(_ type: MeshContactType) -> String {
        switch type {
        case .none: "none"
        case .chat: "chat"
        case .repeater: "repeater"
        case .room: "room"
        case .sensor: "sensor"
        case .unknown(let value): "type \(value)"
        }
    }

}
#endif
