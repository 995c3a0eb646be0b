#if os(Linux)
import Foundation
import Logging
import Synchronization
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherDBus
@preconcurrency import TetherSimulator

enum ProbeCase: String, CaseIterable {
    /// The system bus over its Unix socket: EXTERNAL authentication and descriptor passing.
    case bus
    /// Notifications and writes without response through AcquireNotify/AcquireWrite sockets.
    case sockets
    /// 1,000 writes without response at the longest length, paced by the socket's back-pressure,
    /// echoed back as 1,000 notifications.
    case burst
    /// A read of an `encrypt-read` characteristic pairs by itself (Just Works).
    case justWorks = "just-works"
    /// Explicit pairing with the passkey the peripheral shows, then an authenticated read.
    case passkey
    /// The central types a wrong passkey: pairing fails and the characteristic stays closed.
    case wrongPasskey = "wrong-passkey"
}

struct ProbeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A value shared between tasks, under the standard library's mutex.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}

/// What a stream delivered and nobody took yet, and bounded waits for what comes next: each
/// `next` takes the first match, leaving the others for later waits.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Shared<[Element]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let items = self.items
        task = Task { for await item in stream { items.update { $0.append(item) } } }
    }

    deinit { task.cancel() }

    /// The first element not yet taken that matches, within `seconds`.
    func next(_ what: String, within seconds: Double = 60, _ matches: (Element) -> Bool) async throws -> Element {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            var found: Element?
            items.update { pending in
                if let index = pending.firstIndex(where: matches) { found = pending.remove(at: index) }
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw ProbeFailure("no \(what) within \(Int(seconds)) s")
    }
}

/// One run of a case: a ``BlueZDriver`` on the central adapter and a ``BlueZPeripheralHost``
/// hosting the echo peripheral on the other, both on the guest's system bus.
final class Probe: Sendable {
    let centralAdapter: String
    let peripheralAdapter: String
    let facts = Shared<[String: String]>([:])
    private let driverBox = Shared<BlueZDriver?>(nil)
    private let hostBox = Shared<BlueZPeripheralHost?>(nil)
    private let logger = Logger(label: "tether.probe")

    init(central: String, peripheral: String) {
        centralAdapter = central
        peripheralAdapter = peripheral
    }

    func note(_ key: String, _ value: CustomStringConvertible) { facts.update { $0[key] = value.description } }

    func run(_ probeCase: ProbeCase) async throws -> [String: String] {
        switch probeCase {
        case .bus: try await bus()
        case .sockets: try await sockets()
        case .burst: try await burst()
        case .justWorks: try await pairing(security: .encrypted, passkey: nil)
        case .passkey: try await pairing(security: .authenticated, passkey: { $0 })
        case .wrongPasskey: try await pairing(security: .authenticated, passkey: { ($0 + 1) % 1_000_000 })
        }
        return facts.value
    }

    func close() async {
        await driverBox.value?.shutdown()
        await hostBox.value?.stop()
    }

    // MARK: Cases

    private func bus() async throws {
        let connection = try await DBusConnection.connect(to: DBusAddress.systemBus(environment: ProcessInfo.processInfo.environment))
        defer { connection.close() }
        note("address", connection.address)
        note("mechanism", connection.authenticationMechanism)
        note("unixFDs", connection.supportsUnixFDs)
        // The bus daemon says who we are: the uid the kernel vouched for in EXTERNAL.
        let user = try await connection.call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                         interface: "org.freedesktop.DBus", member: "GetConnectionUnixUser",
                                                         body: [.string(connection.uniqueName)]))
        note("busUID", user.body.first?.integer ?? -1)
        note("processUID", getuid())
        let mirror = try await BlueZObjectMirror.read(from: connection)
        note("adapters", mirror.paths(with: BlueZ.adapterInterface).count)
    }

    private func sockets() async throws {
        // The input takes only commands: bluetoothd refuses every WriteValue while a write socket
        // is held, so the driver takes one only for such a characteristic.
        let link = try await connect(security: .open, agent: BlueZPairingAgent(), commandsOnly: true)
        let characteristics = try await characteristicPaths(link)
        let driver = link.driver, id = link.id
        await driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
        let subscribed = try await link.events.next("subscription") { if case .notificationStateUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
        guard case .notificationStateUpdated(_, _, true, nil) = subscribed else { throw ProbeFailure("subscribing failed: \(subscribed)") }
        note("notifyAcquired", try await property(characteristics.output, "NotifyAcquired", on: link.connection))
        let length = await driver.maximumWriteValueLength(for: .withoutResponse, on: id)
        note("maximumWriteWithoutResponse", length)
        note("mtu", try await property(characteristics.output, "MTU", on: link.connection))
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        await driver.writeValue(payload, for: EchoPeripheral.input, type: .withoutResponse, on: id)
        var echoed = Data()
        while echoed.count < payload.count {
            let echo = try await link.events.next("echo") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
            if case .valueUpdated(_, _, let chunk, _) = echo { echoed += chunk }
        }
        note("echoIntact", echoed == payload)
        note("writeAcquired", try await property(characteristics.input, "WriteAcquired", on: link.connection))
        // Unsubscribing closes the socket: bluetoothd lets go, and the peripheral hears it.
        await driver.setNotifyValue(false, for: EchoPeripheral.output, on: id)
        _ = try await link.events.next("unsubscription") { if case .notificationStateUpdated(id, EchoPeripheral.output, false, nil) = $0 { true } else { false } }
        _ = try await link.activity.next("the peripheral's unsubscription") {
            if case .subscription(EchoPeripheral.output, false) = $0 { true } else { false }
        }
        note("notifyAcquiredAfterUnsubscribing", try await property(characteristics.output, "NotifyAcquired", on: link.connection))
        // A subscription again gets a new socket; a read still goes over D-Bus.
        await driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
        _ = try await link.events.next("second subscription") { if case .notificationStateUpdated(id, EchoPeripheral.output, true, nil) = $0 { true } else { false } }
        await driver.writeValue(Data("again".utf8), for: EchoPeripheral.input, type: .withoutResponse, on: id)
        let again = try await link.events.next("second echo") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
        if case .valueUpdated(_, _, let value, _) = again { note("secondEcho", String(decoding: value, as: UTF8.self)) }
        note("notifyAcquiredAgain", try await property(characteristics.output, "NotifyAcquired", on: link.connection))
    }

    private func burst() async throws {
        let count = 1000
        let link = try await connect(security: .open, agent: BlueZPairingAgent(), commandsOnly: true)
        let driver = link.driver, id = link.id
        await driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
        _ = try await link.events.next("subscription") { if case .notificationStateUpdated(id, EchoPeripheral.output, true, nil) = $0 { true } else { false } }
        let length = await driver.maximumWriteValueLength(for: .withoutResponse, on: id)
        note("count", count)
        note("length", length)
        // Each value carries its number, so order and completeness can be checked at both ends.
        let values = (0..<count).map { index -> Data in
            var value = Data(repeating: UInt8(truncatingIfNeeded: index), count: length)
            value[0] = UInt8(index >> 8)
            value[1] = UInt8(index & 0xFF)
            return value
        }
        // First bluetoothd is stopped (SIGSTOP): nobody drains the socket, so the driver must
        // say no after the socket's buffer is full, and wake the writer once bluetoothd runs again.
        let bluetoothd = try await bluetoothdPID(link.connection)
        // The first write acquires the socket (a D-Bus call, which a stopped bluetoothd would not answer).
        await driver.writeValue(values[0], for: EchoPeripheral.input, type: .withoutResponse, on: id)
        if await !driver.canSendWriteWithoutResponse(on: id) {
            _ = try await link.events.next("ready after the first write") { if case .readyToWriteWithoutResponse(id) = $0 { true } else { false } }
        }
        note("writeAcquired", try await property(try await characteristicPaths(link).input, "WriteAcquired", on: link.connection))
        var next = 1
        guard kill(bluetoothd, SIGSTOP) == 0 else { throw ProbeFailure("cannot stop bluetoothd (pid \(bluetoothd))") }
        // Nothing in between throws, and the limit ends the loop: bluetoothd always continues.
        while next < count, await driver.canSendWriteWithoutResponse(on: id) {
            await driver.writeValue(values[next], for: EchoPeripheral.input, type: .withoutResponse, on: id)
            next += 1
        }
        let refusedAfter = next - 1
        // Still refusing a moment later: the buffer does not drain by itself.
        try? await Task.sleep(for: .milliseconds(200))
        let stillRefusing = await !driver.canSendWriteWithoutResponse(on: id)
        guard kill(bluetoothd, SIGCONT) == 0 else { throw ProbeFailure("cannot continue bluetoothd (pid \(bluetoothd))") }
        let start = ContinuousClock.now
        guard next < count else { throw ProbeFailure("the driver took all \(count) writes with bluetoothd stopped") }
        note("acceptedWithBluetoothdStopped", refusedAfter)
        note("refusingWhileStopped", stillRefusing)
        _ = try await link.events.next("ready to write after bluetoothd continued") { if case .readyToWriteWithoutResponse(id) = $0 { true } else { false } }
        var waits = 0
        for value in values[next...] {
            // What a client of the core does: write while the driver can take one, else wait
            // for readyToWriteWithoutResponse.
            if await !driver.canSendWriteWithoutResponse(on: id) {
                waits += 1
                _ = try await link.events.next("ready to write again") { if case .readyToWriteWithoutResponse(id) = $0 { true } else { false } }
            }
            await driver.writeValue(value, for: EchoPeripheral.input, type: .withoutResponse, on: id)
        }
        let written = ContinuousClock.now
        note("backPressureWaits", waits)
        var echoes: [Data] = []
        echoes.reserveCapacity(count)
        while echoes.count < count {
            let echo = try await link.events.next("echo \(echoes.count + 1) of \(count)") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
            if case .valueUpdated(_, _, let value, _) = echo { echoes.append(value) }
        }
        let done = ContinuousClock.now
        let received = await link.echo.receivedBytes()
        let expected = values.reduce(into: Data()) { $0 += $1 }
        note("peripheralReceivedAllInOrder", received == expected)
        note("peripheralReceivedBytes", received.count)
        note("echoesInOrder", echoes == values)
        let writeSeconds = (written - start).seconds, totalSeconds = (done - start).seconds
        note("writeSeconds", String(format: "%.2f", writeSeconds))
        note("echoSeconds", String(format: "%.2f", totalSeconds))
        let timedBytes = Double((count - refusedAfter) * length)
        note("writeKBps", String(format: "%.1f", timedBytes / 1000 / writeSeconds))
        note("echoKBps", String(format: "%.1f", Double(expected.count) / 1000 / totalSeconds))
        note("notifyAcquired", try await property(try await characteristicPaths(link).output, "NotifyAcquired", on: link.connection))
    }

    /// Connects to a peripheral whose characteristics demand `security`; reads the info
    /// characteristic (pairing first when `passkey` is given: it maps the shown passkey to the
    /// one typed).
    private func pairing(security: BlueZPeripheralSecurity, passkey transform: (@Sendable (UInt32) -> UInt32)?) async throws {
        let shown = Shared<String?>(nil)
        let typed = Shared<String?>(nil)
        let agent: BlueZPairingAgent
        if let transform {
            agent = BlueZPairingAgent(passkey: { _ in
                // The user reads the passkey off the peripheral (bounded: bluetoothd gives up too).
                for _ in 0..<3000 {
                    if let text = shown.value, let value = UInt32(text) {
                        let answer = transform(value)
                        typed.value = String(format: "%06d", answer)
                        return answer
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return nil
            })
        } else {
            agent = BlueZPairingAgent()
        }
        let link = try await connect(security: security, agent: agent, passkeys: shown)
        let driver = link.driver, id = link.id
        note("agentCapability", await driver.status().agent ?? "none")
        if transform != nil {
            do {
                try await driver.pair(id)
                note("pair", "ok")
            } catch {
                note("pair", error)
            }
            note("passkeyShown", shown.value ?? "none")
            note("passkeyTyped", typed.value ?? "none")
        }
        await driver.readValue(for: EchoPeripheral.info, on: id)
        // A failed pairing may end the link while the read is under way: then the loss is the
        // answer (a read in flight gets no event of its own, as on CoreBluetooth).
        let read = try await link.events.next("the read's answer or the link's loss", within: 90) {
            switch $0 {
            case .valueUpdated(id, EchoPeripheral.info, _, _), .disconnected(id, _, _): true
            default: false
            }
        }
        switch read {
        case .valueUpdated(_, _, let value, let error): note("read", error.map { "error: \($0)" } ?? String(decoding: value, as: UTF8.self))
        case .disconnected(_, let error, _): note("read", "error: the link went down (\(error.map { "\($0)" } ?? "no reason"))")
        default: break
        }
        let device = link.devicePath
        let properties = try await link.connection.call(.methodCall(destination: BlueZ.service, path: device, interface: BlueZ.propertiesInterface,
                                                                    member: "GetAll", body: [.string(BlueZ.deviceInterface)]))
        let values = properties.body.first?.stringKeyedDictionary ?? [:]
        note("paired", values["Paired"]?.bool ?? false)
        note("bonded", values["Bonded"]?.bool ?? false)
    }

    // MARK: Set-up

    struct Link {
        let driver: BlueZDriver
        let id: PeripheralID
        let events: Recorder<BLEDriverEvent>
        let activity: Recorder<BlueZPeripheralActivity>
        let connection: DBusConnection
        let devicePath: DBusObjectPath
        let echo: EchoHandle
    }

    /// The echo behaviour, read on the simulation actor.
    struct EchoHandle: Sendable {
        let behavior: EchoPeripheral
        func receivedBytes() async -> Data { await behavior.received }
    }

    /// Starts the driver (its agent first: the peripheral's must end up bluetoothd's default),
    /// then the host, then scans and connects.
    private func connect(security: BlueZPeripheralSecurity, agent: BlueZPairingAgent, passkeys: Shared<String?>? = nil,
                         commandsOnly: Bool = false) async throws -> Link {
        let address = try DBusAddress.systemBus(environment: ProcessInfo.processInfo.environment)
        let connection = try await DBusConnection.connect(to: address)
        let mirror = try await BlueZObjectMirror.read(from: connection)
        guard let peripheralAddress = mirror.properties(DBusObjectPath("/org/bluez/\(peripheralAdapter)")!, BlueZ.adapterInterface)?["Address"]?.string,
              let centralIndex = UInt8(centralAdapter.dropFirst(3)),
              let id = BlueZMapping.peripheralID(adapterIndex: centralIndex, address: peripheralAddress) else {
            throw ProbeFailure("no adapters \(centralAdapter) and \(peripheralAdapter)")
        }
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: centralAdapter, agent: agent, maximumValueLength: 510,
                                                                         acquireNotifySockets: true),
                                 logger: Logger(label: "tether.bluez"))
        driverBox.value = driver
        let events = Recorder(driver.events)
        let status = await driver.ready()
        guard status.state == .poweredOn else { throw ProbeFailure("the driver is not powered on: \(status)") }
        let echo = EchoPeripheral()
        let radio = VirtualRadio(clock: ContinuousClock())
        let peripheralID = PeripheralID(UUID())
        await radio.add(EchoPeripheral.makePeripheral(id: peripheralID, behavior: echo,
                                                      inputProperties: commandsOnly ? [.writeWithoutResponse] : [.write, .writeWithoutResponse]))
        let host = BlueZPeripheralHost(radio: radio, peripheral: peripheralID, configuration: BlueZPeripheralHostConfiguration(
            adapter: peripheralAdapter, readvertiseInterval: .seconds(1), security: security), logger: Logger(label: "tether.bluez.peripheral"))
        hostBox.value = host
        let activity = Recorder(host.activity)
        try await host.start()
        if let passkeys {
            // The peripheral's screen: the passkey it shows.
            Task {
                while let shown = try? await activity.next("passkey", within: 120, { if case .passkey = $0 { true } else { false } }) {
                    if case .passkey(_, let passkey) = shown { passkeys.value = passkey }
                }
            }
        }
        await driver.scan(services: [EchoPeripheral.service], allowDuplicates: false)
        _ = try await events.next("discovery") { if case .discovered(let found) = $0 { found.id == id } else { false } }
        await driver.stopScan()
        await driver.connect(id, options: ConnectOptions())
        _ = try await events.next("connection") { if case .connected(id) = $0 { true } else { false } }
        note("connected", true)
        let devicePath = DBusObjectPath("/org/bluez/\(centralAdapter)/dev_" + peripheralAddress.replacingOccurrences(of: ":", with: "_"))!
        return Link(driver: driver, id: id, events: events, activity: activity, connection: connection, devicePath: devicePath,
                    echo: EchoHandle(behavior: echo))
    }

    /// The central's objects for the echo characteristics.
    private func characteristicPaths(_ link: Link) async throws -> (input: DBusObjectPath, output: DBusObjectPath) {
        let mirror = try await BlueZObjectMirror.read(from: link.connection)
        var input: DBusObjectPath?, output: DBusObjectPath?
        for path in mirror.paths(with: BlueZ.characteristicInterface, under: link.devicePath) {
            switch mirror.properties(path, BlueZ.characteristicInterface)?["UUID"]?.string.flatMap(BluetoothUUID.init(string:)) {
            case EchoPeripheral.input.characteristic: input = path
            case EchoPeripheral.output.characteristic: output = path
            default: break
            }
        }
        guard let input, let output else { throw ProbeFailure("the echo characteristics are missing under \(link.devicePath)") }
        return (input, output)
    }

    /// bluetoothd's process, as the bus daemon knows it.
    private func bluetoothdPID(_ connection: DBusConnection) async throws -> pid_t {
        let reply = try await connection.call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                          interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                                          body: [.string(BlueZ.service)]))
        guard let pid = reply.body.first?.integer, pid > 1 else { throw ProbeFailure("no process id for org.bluez") }
        return pid_t(pid)
    }

    private func property(_ path: DBusObjectPath, _ name: String, on connection: DBusConnection) async throws -> String {
        let reply = try await connection.call(.methodCall(destination: BlueZ.service, path: path, interface: BlueZ.propertiesInterface,
                                                          member: "Get", body: [.string(BlueZ.characteristicInterface), .string(name)]))
        guard let value = reply.body.first else { return "none" }
        if let bool = value.bool { return String(bool) }
        if let integer = value.integer { return String(integer) }
        return "\(value)"
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
#endif
