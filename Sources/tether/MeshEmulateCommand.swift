import ArgumentParser
import Dispatch
import Foundation
import MeshCore
import TetherSimulator
import MeshCoreEmulator
import TetherCore

/// `tether mesh emulate`: an emulated MeshCore companion radio inside a small simulated mesh,
/// served over TCP (as a WiFi companion) and optionally a pseudo-terminal (as a USB one), so
/// other programs can drive it.
struct MeshEmulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Run an emulated MeshCore companion radio in a small simulated mesh.",
        discussion: """
            The radio "\(MeshNetwork.demoRadioName)" knows the nodes Alice, Bob, Echo (an echo bot), \
            Ridge Repeater, Trail Club (a room server) and Weather Station (a sensor); the servers \
            take the password "password" (administrator) or "hello" (guest). It listens for one app \
            at a time on TCP with the companion protocol's stream framing; Alice and Bob chat on a \
            script. With --bluez it is served over the air instead (Linux, through bluetoothd), \
            as a MeshCore BLE radio (Nordic UART) that phones and `tether mesh --ble` can reach.
            """)

    // `--listen`, not `--tcp`: under `tether mesh`, `--tcp` names the radio a client reaches.
    @Option(name: .customLong("listen"), help: "Where to listen for an app over TCP, HOST:PORT (port 0 picks a free port).")
    var tcp = "127.0.0.1:5000"

    @Flag(help: "Also serve on a new pseudo-terminal and print its path.")
    var pty = false

    @Flag(help: "Exit when standard input reaches end of file (for scripts and tests).")
    var untilStdinCloses = false

    @Flag(help: "Do not script Alice's and Bob's chatter.")
    var quiet = false

    @Flag(help: "Serve the radio over the air through BlueZ (bluetoothd) instead of TCP, as a MeshCore BLE radio.")
    var bluez = false

    /// Taken out of the command line with `--driver` (see ``DriverSelection``); here for the help.
    @Option(help: ArgumentHelp("With --bluez: the BlueZ adapter that becomes the radio (default: the first powered one).", valueName: "hciN"))
    var adapter: String?

    @Option(help: "Also know this many more contacts (chat nodes \"Node 0001\"…), for sync tests and benchmarks (at most \(MeshNetwork.demoMaximumExtraContacts)).")
    var contacts = 0

    @ParentCommand var mesh: MeshCommands

    func validate() throws {
        // The group's radio options name a radio to reach; the emulator is one.
        if mesh.target.tcp != nil || mesh.target.ble != nil || mesh.target.serial != nil {
            throw ValidationError("mesh emulate listens at --listen HOST:PORT; --tcp, --ble and --serial name a radio to reach")
        }
        _ = try Self.endpoint(tcp)
        guard (0...MeshNetwork.demoMaximumExtraContacts).contains(contacts) else {
            throw ValidationError("--contacts must be between 0 and \(MeshNetwork.demoMaximumExtraContacts)")
        }
        if bluez, pty {
            throw ValidationError("--bluez serves the radio over the air; it cannot also be on a pseudo-terminal (--pty)")
        }
    }

    func run() async throws {
        if bluez { return try await serveOverTheAir() }
        let (host, port) = try Self.endpoint(tcp)
        let startEpoch = UInt32(Date().timeIntervalSince1970), chatter = !quiet, extra = contacts
        let (network, server) = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: ContinuousClock(), startEpoch: startEpoch, chatter: chatter, extraContacts: extra)
            network.observer = { time, event in
                print(String(format: "[%8.3f] ", time.seconds) + event.description)
                flushOutput()
            }
            return (network, MeshCoreStreamHost(radio: network.radios[0]))
        }()
        do {
            let bound = try await server.listen(host: host, port: port)
            print("MeshCore emulator listening on tcp://\(host):\(bound)")
            flushOutput()
            if pty {
                let terminal = try PseudoTerminal.open()
                try await server.serve(fileDescriptor: terminal.master)
                print("MeshCore emulator serial on \(terminal.path)")
                flushOutput()
            }
        } catch {
            await server.close()
            throw CLIError("cannot serve the emulator on \(tcp): \(CLIError.describe(error))")
        }
        await Self.waitForTermination(stdin: untilStdinCloses)
        await server.close()
        await { @SimulationActor in network.shutdown() }()
    }

    /// `--bluez`: the same mesh's radio as a BLE peripheral through bluetoothd.
    private func serveOverTheAir() async throws {
        #if os(Linux)
        // Before anything is registered: Ctrl-C from here on unregisters cleanly.
        let termination = Termination(stdin: untilStdinCloses)
        let printer = ActivityPrinter()
        let startEpoch = UInt32(Date().timeIntervalSince1970), chatter = !quiet, extra = contacts
        let setup = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: ContinuousClock(), startEpoch: startEpoch, chatter: chatter, extraContacts: extra)
            network.observer = { _, event in printer.line(terminalSafe("mesh: \(event.description)")) }
            let radio = VirtualRadio(clock: ContinuousClock())
            let peripheral = MeshCoreEmulator(radio: network.radios[0]).makePeripheral(id: PeripheralID(UUID()))
            radio.add(peripheral)
            return EmulatedSetup(
                radio: radio, peripheral: peripheral.id,
                name: peripheral.advertisement.localName ?? peripheral.name,
                services: peripheral.advertisement.serviceUUIDs,
                centralConnected: {}, shutdown: { @SimulationActor in network.shutdown() })
        }()
        try await EmulateCommand.serve(setup, id: "mesh", termination: termination, printer: printer, readvertise: nil, security: .open)
        #else
        throw CLIError("--bluez needs Linux (bluetoothd); this system cannot serve an emulator over the air yet")
        #endif
    }

    /// Splits HOST:PORT (the port may be 0).
    static func endpoint(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65_535).contains(port), colon != text.startIndex else {
            throw ValidationError("--listen must be HOST:PORT, for example 127.0.0.1:5000")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// Returns on SIGINT or SIGTERM, or at end of standard input when `stdin` is true.
    static func waitForTermination(stdin: Bool) async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        if stdin {
            Thread.detachNewThread {
                // Blocking reads on a thread of its own; empty data means end of file.
                while !FileHandle.standardInput.availableData.isEmpty {}
                continuation.yield()
            }
        }
        for await _ in stream { break }
        for source in sources { source.cancel() }
    }
}
