import ArgumentParser
import Foundation
import MeshCore
import TetherCore
import TetherSimulator
import MeshCoreEmulator
import MeshCoreStorage

/// `tether mesh …`: a MeshCore companion radio over BLE, TCP or serial.
struct MeshCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Talk to a MeshCore companion radio over BLE, TCP (WiFi companion) or serial, or emulate one.",
        discussion: "Without --ble, --tcp or --serial the radio is reached over BLE on the chosen driver; on the simulator that is the emulated radio \"MeshCore-Tether Base\" in a small scripted mesh.",
        subcommands: [
            Info.self, Contacts.self, Send.self, Channel.self, Listen.self, Messages.self, Time.self, Advert.self, Battery.self,
            MeshShellSubcommands.Stats.self, MeshShellSubcommands.Get.self, MeshShellSubcommands.Set.self,
            MeshShellSubcommands.Path.self, MeshShellSubcommands.Trace.self, MeshShellSubcommands.Login.self,
            MeshShellSubcommands.Status.self, MeshShellSubcommands.Telemetry.self, MeshShellSubcommands.Neighbours.self,
            MeshShellSubcommands.Cmd.self, MeshShellSubcommands.Card.self, MeshShellSubcommands.Export.self,
            MeshShellSubcommands.Import.self, MeshShellSubcommands.Reboot.self, MeshShellSubcommands.Run.self,
            MeshEmulate.self,
        ])

    /// Declared here too so that the radio can be named before the subcommand as well as after
    /// it (`tether mesh --tcp H info`, as the README writes it): ArgumentParser gives the
    /// subcommand's `MeshTarget` the values either way.
    @OptionGroup var target: MeshTarget

    /// Without a subcommand: the interactive prompt on a terminal, or the commands read from
    /// standard input one per line.
    func run() async throws {
        try await MeshShellRunner.interactiveOrScript(target)
    }
}

/// How to reach the radio, shared by every `tether mesh` subcommand.
struct MeshTarget: ParsableArguments {
    @OptionGroup var global: GlobalOptions

    @Option(help: "Reach the radio over BLE by its advertised name (default: the first \"MeshCore…\" radio).")
    var ble: String?

    @Option(help: "Reach a WiFi companion over TCP at HOST[:PORT] (port 5000 by default).")
    var tcp: String?

    @Option(help: "Reach the radio on a serial device (115200 8N1), e.g. /dev/ttyACM0.")
    var serial: String?

    @OptionGroup var output: JSONOption
    var json: Bool { output.json }

    @OptionGroup var store: DatabaseOption
    var database: String? { store.database }

    @Option(parsing: .unconditional, help: "Seconds allowed for connecting and the startup sequence (at most 600).")
    var timeout: Double = 60

    @Option(help: "The radio's pairing PIN (6 digits), given when BlueZ pairs over BLE. Ignored by the other drivers and by --tcp/--serial.")
    var pin: String?

    func validate() throws {
        let chosen = [ble != nil, tcp != nil, serial != nil].filter { $0 }.count
        guard chosen <= 1 else { throw ValidationError("choose one of --ble, --tcp and --serial") }
        if let tcp { _ = try Self.hostAndPort(tcp) }
        if let pin {
            guard (1...6).contains(pin.count), pin.allSatisfy(\.isASCII), pin.allSatisfy(\.isNumber) else {
                throw ValidationError("--pin wants the radio's PIN: up to 6 digits (got \(terminalSafe(pin)))")
            }
        }
        try Seconds.validate(timeout, option: "--timeout", maximum: 600)
    }

    /// Parses `HOST[:PORT]`.
    static func hostAndPort(_ text: String) throws -> (String, Int) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty, parts.count <= 2 else { throw ValidationError("--tcp wants the radio's HOST or HOST:PORT, got \(terminalSafe(text)) (mesh emulate listens at --listen)") }
        guard parts.count == 2 else { return (String(host), StreamTransport.defaultTCPPort) }
        guard let port = Int(parts[1]), (1...65_535).contains(port) else {
            throw ValidationError("--tcp wants the radio's port, 1 to 65535, in \(terminalSafe(text)) (mesh emulate listens at --listen)")
        }
        return (String(host), port)
    }

    /// Connects and runs the startup sequence; progress goes to standard error.
    /// `prepare` runs before the startup (to subscribe to the manager's events, so messages the
    /// startup drains from the radio's queue are seen).
    /// `announceNewMessages`: say on standard error how many messages the startup fetched
    /// (commands that show them, such as `listen`, pass false).
    func open(reconnect: Bool = false, announceNewMessages: Bool = true,
              prepare: (ConnectionManager) async -> Void = { _ in }) async throws -> MeshLink {
        let transport: any MeshTransport
        var environment: Environment?
        if tcp != nil || serial != nil, pin != nil {
            note("tether: --pin is ignored with \(tcp != nil ? "--tcp" : "--serial") (only BLE pairs)")
        }
        if let tcp {
            let (host, port) = try Self.hostAndPort(tcp)
            transport = StreamTransport.tcp(host: host, port: port)
        } else if let serial {
            transport = StreamTransport.serial(path: serial)
        } else {
            let env = try await Environment.make(json: json, pin: pin)
            environment = env
            try await env.central.requirePoweredOn()
            // On the simulator, the default radio is the world's "Tether Base".
            let name = ble ?? (env.emulators.map { _ in "\(MeshCoreBLE.namePrefix)-\(MeshNetwork.demoRadioName)" })
            let found = try await BLETransport.discover(on: env.central, name: name)
            note("Found \(terminalSafe(found.name ?? "radio")) (\(DiscoveredPeripheral.describe(rssi: found.rssi)))")
            transport = await BLETransport(central: env.central, peripheral: found.id)
        }
        let store = try MeshStore(path: database ?? MeshStore.defaultPath())
        let session = MeshCoreSession(transport: transport, configuration: .init(appName: "tether"))
        let manager = ConnectionManager(
            session: session, store: store,
            configuration: .init(reconnectPolicy: reconnect ? .persistent : .never))
        await prepare(manager)
        // Messages the startup takes off the radio's queue are stored; the user hears of them.
        let newestBefore = (try? await store.newestMessageID()) ?? .max
        do {
            try await within(timeout, "connecting to the radio") { try await manager.connect() }
        } catch {
            // A radio that wants a PIN fails the pairing without one.
            guard environment?.driver == .bluez, pin == nil else { throw error }
            throw CLIError("\(CLIError.from(error).message) (if the radio asks for a PIN, pass --pin)")
        }
        if let info = await manager.selfInfo {
            let firmware = await manager.deviceInfo?.firmwareVersion ?? "?"
            note("Connected to \(terminalSafe(info.name)) (firmware \(terminalSafe(firmware))), \(await manager.contacts.count) contacts")
        }
        let omitted = await manager.omittedContactCount
        if omitted > 0 {
            note("The radio listed \(omitted) contact(s) beyond the \(await manager.contacts.count) kept; they are not shown or stored")
        }
        if announceNewMessages {
            // The startup is over once connect returned: what it stored is counted.
            // A note, not a reason to fail the command (or to leave the link open).
            let count = (try? await store.incomingMessageCount(after: newestBefore)) ?? 0
            if count > 0 { note("\(count) new message(s) (tether mesh messages)") }
        }
        return MeshLink(manager: manager, store: store, environment: environment, json: json)
    }

    /// A progress line on standard error (kept off standard output for JSON consumers).
    func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// An open radio connection for one CLI command.
struct MeshLink {
    let manager: ConnectionManager
    let store: MeshStore
    let environment: Environment?
    let json: Bool

    var session: MeshCoreSession { manager.session }

    func close() async { await manager.disconnect() }

    /// Runs `body`, then disconnects (also on failure), mapping errors to one CLI line.
    static func with(
        _ target: MeshTarget, reconnect: Bool = false, announceNewMessages: Bool = true,
        prepare: (ConnectionManager) async -> Void = { _ in },
        _ body: (MeshLink) async throws -> Void
    ) async throws {
        do {
            let link = try await target.open(reconnect: reconnect, announceNewMessages: announceNewMessages, prepare: prepare)
            do {
                try await body(link)
                await link.close()
            } catch {
                await link.close()
                throw error
            }
        } catch {
            throw CLIError.from(error)
        }
    }

    func emit(_ value: some Encodable, text: String) throws {
        print(json ? jsonLine(value) : text)
        flushOutput()
    }
}

extension MeshCommands {
    /// `tether mesh info`.
    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The radio's identity, radio settings and firmware.")
        @OptionGroup var target: MeshTarget

        func run() async throws {
            try await MeshLink.with(target) { link in
                guard let info = await link.manager.selfInfo else { throw CLIError("the radio sent no SELF_INFO") }
                let device = await link.manager.deviceInfo
                let report = MeshInfoReport(info, device, contacts: await link.manager.contacts.count, channels: await link.manager.channels.map(\.name))
                try link.emit(report, text: report.text)
            }
        }
    }

    /// `tether mesh contacts`.
    struct Contacts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The radio's contacts.")
        @OptionGroup var target: MeshTarget

        func run() async throws {
            try await MeshLink.with(target) { link in
                let contacts = await link.manager.contacts
                for contact in contacts {
                    let row = MeshContactRow(contact)
                    try link.emit(row, text: row.text)
                }
                if !link.json { print("\(contacts.count) contact(s)") }
            }
        }
    }

    /// `tether mesh send <name> <text>`.
    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a direct message and wait for its acknowledgement.")
        @OptionGroup var target: MeshTarget
        @Argument(help: "The contact's name (or the start of its public key in hex).") var name: String
        @Argument(help: "The message.") var text: String
        @Option(help: "Sends before giving up.") var attempts = 3

        func validate() throws {
            guard !text.isEmpty else { throw ValidationError("the message is empty") }
            guard (1...10).contains(attempts) else { throw ValidationError("--attempts must be 1…10") }
        }

        func run() async throws {
            try await MeshLink.with(target) { link in
                guard let contact = await link.manager.contact(named: name) else {
                    let known = await link.manager.contacts.map(\.name).joined(separator: ", ")
                    throw CLIError("no contact named \(name) (known: \(known.isEmpty ? "none" : terminalSafe(known)))")
                }
                let message = try await link.manager.sendMessage(text, to: contact, attempts: attempts)
                let row = MeshMessageLine(message, contact: contact.name)
                try link.emit(row, text: "Delivered to \(terminalSafe(contact.name))" + (message.roundTrip.map { " (round trip \($0) ms)" } ?? ""))
            }
        }
    }

    /// `tether mesh channel <idx> <text>`.
    struct Channel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a message on a channel (0 is Public).")
        @OptionGroup var target: MeshTarget
        @Argument(help: "The channel index.") var index: UInt8
        @Argument(help: "The message.") var text: String

        func run() async throws {
            try await MeshLink.with(target) { link in
                let message = try await link.manager.sendChannelMessage(text, channel: index)
                let name = await link.manager.channels.first { $0.index == index }?.name ?? "channel \(index)"
                try link.emit(MeshMessageLine(message, contact: nil), text: "Sent on \(terminalSafe(name))")
            }
        }
    }

    /// `tether mesh listen`.
    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show messages live, and acknowledgements as they arrive; reconnects on link loss.")
        @OptionGroup var target: MeshTarget
        @Option(parsing: .unconditional, help: "How long to listen, in seconds (at most a day).") var seconds: Double = 60

        func validate() throws {
            try Seconds.validate(seconds)
        }

        func run() async throws {
            // Subscribed before the startup: messages queued while we were away are shown too.
            let box = EventsBox()
            try await MeshLink.with(target, reconnect: true, announceNewMessages: false, prepare: { box.events = await $0.events() }) { link in
                guard let events = box.events else { return }
                let json = link.json
                let names = Dictionary(await link.manager.contacts.map { ($0.publicKeyPrefix.hexString, $0.name) }, uniquingKeysWith: { a, _ in a })
                if !json { print("Listening for \(Int(seconds)) s…") }
                flushOutput()
                let listener = Task {
                    for await event in events {
                        guard let line = MeshListenLine(event, names: names) else { continue }
                        print(json ? jsonLine(line) : line.line)
                        flushOutput()
                    }
                }
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                listener.cancel()
            }
        }
    }

    /// `tether mesh messages`: the stored messages, without a radio.
    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The stored messages (received and sent), oldest first; no radio needed.")
        @Option(help: "Only the direct messages with this contact (name, or the start of its public key in hex).") var contact: String?
        @Option(help: "Only this channel's messages (0 is Public).") var channel: Int?
        @Option(help: "Only the newest N.") var limit: Int?
        // --json and --database are the group's (MeshTarget's): declared on `tether mesh` too,
        // they are parsed there wherever they stand, so a second declaration here never saw them.
        @ParentCommand var mesh: MeshCommands
        var json: Bool { mesh.target.json }
        var database: String? { mesh.target.database }

        func validate() throws {
            if contact != nil, channel != nil { throw ValidationError("choose --contact or --channel, not both") }
            if let channel, !(0...255).contains(channel) { throw ValidationError("--channel must be between 0 and 255") }
            if let limit, !(1...1_000_000).contains(limit) { throw ValidationError("--limit must be between 1 and 1000000") }
        }

        func run() async throws {
            do {
                guard let store = try openForReading(explicit: database, defaultPath: MeshStore.defaultPath(), { try MeshStore(path: $0, access: $1) }) else {
                    if !json { print("0 message(s)") }
                    return
                }
                let contacts = try await store.contacts()
                var peer: String?
                if let contact {
                    // As `send` finds a contact: the name (any case), or at least 4 hex digits of
                    // the key; hex alone also reaches a contact the radio has since forgotten.
                    let key = contact.lowercased()
                    let isHex = key.count >= 4 && key.allSatisfy(\.isHexDigit) && key.allSatisfy(\.isASCII)
                    if let found = contacts.first(where: { $0.name.caseInsensitiveCompare(contact) == .orderedSame })
                        ?? contacts.first(where: { isHex && $0.publicKey.hexString.hasPrefix(key) }) {
                        peer = found.publicKey.hexString
                    } else if isHex {
                        peer = key
                    } else {
                        throw CLIError("no stored contact named \(terminalSafe(contact)) (give its name or at least 4 hex digits of its key)")
                    }
                }
                let keys = contacts.map { ($0.publicKey.hexString, $0.name) }.sorted { $0.0 < $1.0 }
                let messages = try await store.messages(peer: peer, channel: channel, limit: limit)
                for message in messages {
                    let name = message.peer.flatMap { prefix in keys.first { $0.0.hasPrefix(prefix) }?.1 }
                    print(json ? jsonLine(MeshMessageLine(message, contact: name)) : MeshMessageLine(message, contact: name).line)
                }
                if !json { print("\(messages.count) message(s)") }
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether mesh time`.
    struct Time: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The radio's clock; --set sets it to this computer's time.")
        @OptionGroup var target: MeshTarget
        @Flag(help: "Set the radio's clock to now (the radio refuses to go backwards).") var set = false

        func run() async throws {
            try await MeshLink.with(target) { link in
                if set {
                    let now = UInt32(clamping: Int64(Date().timeIntervalSince1970))
                    do {
                        try await link.session.setDeviceTime(now)
                    } catch let error as MeshCoreError where error.radioErrorCode == .illegalArgument {
                        throw CLIError("the radio refused: its clock is ahead of this computer's and it never goes back")
                    }
                }
                let radio = try await link.session.deviceTime()
                let report = MeshTimeReport(radio: radio, local: Date())
                try link.emit(report, text: report.text)
            }
        }
    }

    /// `tether mesh advert`.
    struct Advert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send the radio's advert (zero-hop, or flooded through the mesh).")
        @OptionGroup var target: MeshTarget
        @Flag(help: "Flood the advert through the whole mesh.") var flood = false

        func run() async throws {
            try await MeshLink.with(target) { link in
                try await link.session.sendSelfAdvert(flood: flood)
                struct Report: Encodable { var type = "advert"; let advert: String }
                try link.emit(Report(advert: flood ? "flood" : "zero-hop"), text: flood ? "Advert flooded" : "Advert sent to neighbours")
            }
        }
    }

    /// `tether mesh battery`.
    struct Battery: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Battery voltage and storage use.")
        @OptionGroup var target: MeshTarget

        func run() async throws {
            try await MeshLink.with(target) { link in
                let value = try await link.session.batteryAndStorage()
                struct Report: Encodable { var type = "battery"; let millivolts: Int; let usedKilobytes: Int?; let totalKilobytes: Int? }
                let report = Report(millivolts: Int(value.millivolts), usedKilobytes: value.usedKilobytes.map(Int.init), totalKilobytes: value.totalKilobytes.map(Int.init))
                let storage = value.usedKilobytes.map { used in " · storage \(used)/\(value.totalKilobytes ?? 0) KB" } ?? ""
                try link.emit(report, text: String(format: "Battery %.2f V", Double(value.millivolts) / 1000) + storage)
            }
        }
    }
}

/// Carries the event stream subscribed in `prepare` to the command body.
final class EventsBox: @unchecked Sendable {
    var events: AsyncStream<ConnectionManager.Event>?
}
