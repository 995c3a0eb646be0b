import ArgumentParser
import Dispatch
import Foundation
import TetherCore
import TetherSimulator
import TetherWorld
#if os(Linux)
import TetherBlueZPeripheral
#endif

/// `tether emulate <device> --bluez`: a device emulator served over the air, so real centrals
/// (phones, the device's own app, another `tether`) can scan for it and connect.
struct EmulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Serve a device emulator over the air as a real Bluetooth LE peripheral.",
        discussion: """
            --bluez publishes the emulator's GATT table and advertisement through bluetoothd \
            (Linux); it is the only way to serve one for now. Every central's connection, \
            subscription, write and read is printed as it happens; notifications are \
            summarised once a second. Ctrl-C (or SIGTERM) unregisters the advertisement and \
            the GATT application and exits. For MeshCore over TCP or a pseudo-terminal, see \
            `tether mesh emulate`.
            """)

    @Argument(help: ArgumentHelp("The emulator to serve (--list describes them).", valueName: "device"))
    var device: DeviceName?

    @Flag(help: "Serve it through BlueZ (bluetoothd), as a GATT application and an LE advertisement.")
    var bluez = false

    @Flag(help: "List what can be emulated: name, advertised name and services.")
    var list = false

    /// Taken out of the command line with `--driver` (see ``DriverSelection``); here for the help.
    @Option(help: ArgumentHelp("The BlueZ adapter that becomes the peripheral (default: the first powered one).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Register the advertisement again about every SECONDS, and withdraw it while a central is connected (for controllers that report an advertisement only when it starts, such as btvirt).", valueName: "seconds"))
    var readvertise: Double?

    @Option(help: ArgumentHelp("What a central must do first: open (nothing), encrypted (pair, Just Works) or authenticated (pair typing the passkey this command prints).", valueName: "level"))
    var security: EmulatedSecurity = .open

    @Flag(help: "Also stop when standard input reaches end of file (for scripts and tests).")
    var untilStdinCloses = false

    func validate() throws {
        if list { return }
        guard device != nil else {
            throw ValidationError("name the emulator to serve: \(DeviceName.allValueStrings.joined(separator: ", ")) (or --list)")
        }
        if let readvertise, !(readvertise >= 0.5 && readvertise <= 3600) {
            throw ValidationError("--readvertise must be between 0.5 and 3600 seconds")
        }
    }

    func run() async throws {
        if list { return await Self.printList() }
        guard let device else { return }
        guard bluez else {
            throw CLIError("emulate serves \(device.entry.id) over the air, and BlueZ is the only way to do that for now: add --bluez (Linux, bluetoothd with an adapter)")
        }
        #if os(Linux)
        try await serve(device)
        #else
        throw CLIError("--bluez needs Linux (bluetoothd); this system cannot serve an emulator over the air yet")
        #endif
    }

    /// One line per emulator: name, advertised name, services, what it is.
    static func printList() async {
        print(pad("DEVICE", 9) + pad("ADVERTISED AS", 24) + pad("SERVICES", 38) + "WHAT")
        for entry in DeviceCatalog.all {
            let setup = await EmulatedSetup.make(entry, log: { _ in })
            await setup.shutdown()
            let services = setup.services.map(\.uuidString).joined(separator: ",")
            print(pad(entry.id, 9) + pad("\"\(terminalSafe(setup.name ?? ""))\"", 24) + pad(services.isEmpty ? "-" : services, 38) + entry.summary)
        }
    }

    #if os(Linux)
    private func serve(_ device: DeviceName) async throws {
        // Before anything is registered: Ctrl-C from here on unregisters cleanly.
        let termination = Termination(stdin: untilStdinCloses)
        let printer = ActivityPrinter()
        let setup = await EmulatedSetup.make(device.entry, log: { printer.line(terminalSafe($0)) })
        try await Self.serve(setup, id: device.entry.id, termination: termination, printer: printer,
                             readvertise: readvertise, security: security)
    }

    /// Serves `setup` through BlueZ until `termination` fires, printing every central's
    /// activity; shuts `setup` down at the end. `id` names the emulator in messages.
    static func serve(_ setup: EmulatedSetup, id: String, termination: Termination, printer: ActivityPrinter,
                      readvertise: Double?, security: EmulatedSecurity) async throws {
        let configuration = BlueZPeripheralHostConfiguration(
            adapter: DriverSelection.current.adapter,
            readvertiseInterval: readvertise.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            security: security.level)
        let host = BlueZPeripheralHost(radio: setup.radio, peripheral: setup.peripheral, configuration: configuration,
                                       logger: BlueZSupport.logger("tether.bluez.peripheral"))
        let failure = LockedValue<String?>(nil)
        let activity = Task {
            for await event in host.activity {
                printer.handle(event)
                if case .centralConnected = event { await setup.centralConnected() }
                if case .stopped(let reason) = event {
                    failure.set(reason)
                    termination.trigger("the host stopped")
                }
            }
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                printer.tick()
            }
        }
        let started = await resultWithin(30) { () -> String? in
            do {
                try await host.start()
                return nil
            } catch {
                return (error as? BlueZPeripheralHostError)?.message ?? "\(error)"
            }
        }
        if started != .some(nil) {
            _ = await resultWithin(5) { await host.stop() }
            activity.cancel()
            ticker.cancel()
            await setup.shutdown()
            throw CLIError("cannot serve \(id) over BlueZ: \(started.flatMap { $0 } ?? "bluetoothd did not answer within 30 s")")
        }
        printer.line("serving \(id) (\"\(terminalSafe(setup.name ?? ""))\", services \(setup.services.map(\.uuidString).joined(separator: ", "))); Ctrl-C stops")
        let reason = await termination.wait()
        printer.line("\(reason): stopping")
        await host.stop()
        // Let the last activity lines out, then summarise what was held back.
        try? await Task.sleep(for: .milliseconds(100))
        activity.cancel()
        ticker.cancel()
        printer.tick()
        await setup.shutdown()
        if let reason = failure.get() {
            throw CLIError("stopped serving \(id): \(terminalSafe(reason))")
        }
        printer.line("stopped: advertisement and GATT application unregistered")
    }
    #endif
}

/// A value shared between tasks under a lock.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&value) } }
}

/// `--security` of `tether emulate`.
enum EmulatedSecurity: String, ExpressibleByArgument, CaseIterable {
    case open, encrypted, authenticated

    #if os(Linux)
    var level: BlueZPeripheralSecurity {
        switch self {
        case .open: .open
        case .encrypted: .encrypted
        case .authenticated: .authenticated
        }
    }
    #endif
}

/// A device of the ``DeviceCatalog`` named on the command line.
struct DeviceName: ExpressibleByArgument, Sendable {
    let entry: DeviceEntry

    init?(argument: String) {
        guard let entry = DeviceCatalog.entry(id: argument) else { return nil }
        self.entry = entry
    }

    static var allValueStrings: [String] { DeviceCatalog.all.map(\.id) }

    /// Completes the catalog's ids (a non-enum argument would complete file names).
    static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}

/// One emulator on a virtual radio of its own (the host is that radio's only central), ready
/// to be served over the air.
struct EmulatedSetup: Sendable {
    let radio: VirtualRadio
    let peripheral: PeripheralID
    /// The advertised name.
    let name: String?
    /// The advertised services.
    let services: [BluetoothUUID]
    /// Runs when a central connects (the FlockFinder drive starts over).
    let centralConnected: @Sendable () async -> Void
    /// Stops what the emulator runs in the background.
    let shutdown: @Sendable () async -> Void

    /// Builds the device's emulator on a new radio that runs in real time; `log` receives what
    /// its world does besides GATT traffic (text from the emulated world, shown made safe).
    @SimulationActor
    static func make(_ entry: DeviceEntry, log: @escaping @Sendable (String) -> Void) -> EmulatedSetup {
        let radio = VirtualRadio(clock: ContinuousClock())
        let standalone = entry.makeStandalone(activity: log)
        let peripheral = standalone.peripheral
        radio.add(peripheral)
        return EmulatedSetup(
            radio: radio, peripheral: peripheral.id,
            name: peripheral.advertisement.localName ?? peripheral.name,
            services: peripheral.advertisement.serviceUUIDs,
            centralConnected: standalone.centralConnected, shutdown: standalone.shutdown)
    }
}
