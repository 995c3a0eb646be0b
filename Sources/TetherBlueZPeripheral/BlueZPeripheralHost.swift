#if os(Linux)
import Foundation
import Logging
import TetherBlueZ
import TetherCore
import TetherDBus
import TetherSimulator

/// Where and how a ``BlueZPeripheralHost`` publishes its peripheral.
public struct BlueZPeripheralHostConfiguration: Sendable {
    /// The adapter that becomes the peripheral (`hci1`); nil picks the first powered one.
    public var adapter: String?
    /// The bus; nil is the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    public var busAddress: String?
    /// The environment to read `DBUS_SYSTEM_BUS_ADDRESS` from.
    public var environment: [String: String]
    /// Register the advertisement again about this often, for controllers that report it only
    /// when advertising starts (BlueZ 5.66's virtual `btvirt`: scanners that start later miss it).
    /// With it the host also withdraws the advertisement while a central is connected (so a
    /// second central cannot find the peripheral then) and keeps its rounds away from a central
    /// that reconnects. nil (real controllers): advertise once, never withdraw.
    public var readvertiseInterval: Duration?
    /// Bound on each call to bluetoothd.
    public var callTimeout: Duration
    /// What a central must do before it may use the characteristics.
    public var security: BlueZPeripheralSecurity

    /// Creates a configuration.
    public init(
        adapter: String? = nil, busAddress: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        readvertiseInterval: Duration? = nil, callTimeout: Duration = .seconds(10),
        security: BlueZPeripheralSecurity = .open
    ) {
        self.security = security
        self.adapter = adapter
        self.busAddress = busAddress
        self.environment = environment
        self.readvertiseInterval = readvertiseInterval
        self.callTimeout = callTimeout
    }
}

/// What a hosted peripheral asks of a central before it may read, write or subscribe.
///
/// Other than ``open``, the characteristics carry BlueZ's `encrypt-*` flags: a central on an
/// unencrypted link is refused with ATT "insufficient encryption"/"authentication", and its
/// stack pairs. The host registers a pairing agent for it and makes it bluetoothd's default
/// (a peripheral's pairing requests go to the default agent), answering only for centrals on
/// its own adapter.
public enum BlueZPeripheralSecurity: Sendable, Hashable {
    /// Anyone may use the characteristics.
    case open
    /// An encrypted link: Just Works pairing suffices (the host's agent, `NoInputNoOutput`,
    /// accepts).
    case encrypted
    /// An authenticated link (protected against a man in the middle): the central types the
    /// six digits the host shows (``BlueZPeripheralActivity/passkey(central:passkey:)``).
    case authenticated

    /// The characteristic `Flags` that demand this security, for the ATT properties given.
    public func flags(for properties: CharacteristicProperties) -> [String] {
        let prefix: String
        switch self {
        case .open: return []
        case .encrypted: prefix = "encrypt-"
        case .authenticated: prefix = "encrypt-authenticated-"
        }
        var flags: [String] = []
        if properties.contains(.read) { flags.append(prefix + "read") }
        // bluetoothd 5.66 turns `encrypt-write` into the write property too: a characteristic
        // that takes only writes without response cannot be protected without changing it.
        if properties.contains(.write) { flags.append(prefix + "write") }
        if properties.contains(.notify) { flags.append(prefix + "notify") }
        if properties.contains(.indicate) { flags.append(prefix + "indicate") }
        return flags
    }
}

/// What a hosted peripheral's centrals do, for logs and the CLI.
public enum BlueZPeripheralActivity: Sendable, Hashable, CustomStringConvertible {
    /// The GATT application and the advertisement are registered.
    case published(adapter: String, address: String, name: String?)
    /// A central connected.
    case centralConnected(String)
    /// A central disconnected.
    case centralDisconnected(String)
    /// A central subscribed to (or unsubscribed from) a characteristic.
    case subscription(CharacteristicPath, enabled: Bool)
    /// A central wrote bytes.
    case write(CharacteristicPath, Data, WriteType)
    /// A central read a characteristic.
    case read(CharacteristicPath)
    /// A central is pairing and must type this passkey (``BlueZPeripheralSecurity/authenticated``).
    case passkey(central: String, passkey: String)
    /// The emulator sent a notification.
    case notification(CharacteristicPath, Data)
    /// The emulator's GATT database changed: the application was registered again, and
    /// bluetoothd tells connected centrals with a Service Changed indication.
    case servicesChanged([BluetoothUUID])
    /// Something went wrong that does not stop the host (a re-advertisement refused, bluetoothd
    /// restarting and the host registering again).
    case problem(String)
    /// The host cannot go on (the bus is gone); the stream ends after this.
    case stopped(String)

    public var description: String {
        switch self {
        case .published(let adapter, let address, let name):
            "advertising\(name.map { " \"\($0)\"" } ?? "") on \(adapter) (\(address))"
        case .centralConnected(let address): "central \(address) connected"
        case .centralDisconnected(let address): "central \(address) disconnected"
        case .subscription(let path, let enabled): "\(enabled ? "subscribed to" : "unsubscribed from") \(path.characteristic)"
        case .write(let path, let data, let type):
            "\(type == .withResponse ? "write" : "write command") \(data.count) byte(s) to \(path.characteristic): \(Self.hex(data))"
        case .read(let path): "read \(path.characteristic)"
        case .passkey(let central, let passkey): "central \(central) is pairing: passkey \(passkey)"
        case .notification(let path, let data): "notify \(data.count) byte(s) on \(path.characteristic)"
        case .servicesChanged(let services): "services changed: \(services.isEmpty ? "added" : services.map(\.description).joined(separator: ", ")), registered again"
        case .problem(let text): "problem: \(text)"
        case .stopped(let text): "stopped: \(text)"
        }
    }

    private static func hex(_ data: Data) -> String {
        let shown = data.prefix(32).map { String(format: "%02x", $0) }.joined(separator: " ")
        return data.count > 32 ? shown + " …" : shown
    }
}

/// A failure to publish a peripheral, with what to do about it.
public struct BlueZPeripheralHostError: Error, Sendable, CustomStringConvertible {
    /// One line for the user.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Serves one virtual peripheral — any device emulator or the echo peripheral — over the air
/// through bluetoothd: a GATT application (`GattManager1.RegisterApplication`) and an LE
/// advertisement (`LEAdvertisingManager1.RegisterAdvertisement`) on one adapter.
///
/// The emulator is not modified: the host is a central on the emulator's own virtual radio
/// (through `SimulatedDriver`), so bluetoothd's `ReadValue`/`WriteValue`/`StartNotify` calls
/// reach the same behaviour API the simulator uses, and the emulator's notifications become
/// `PropertiesChanged(Value)` signals that BlueZ sends to subscribed centrals. The radio must
/// be the host's alone (its event stream has one consumer) and run on a real clock.
public final class BlueZPeripheralHost: @unchecked Sendable {
    /// What centrals do, as it happens (the newest 1,000 are kept if nobody reads).
    public let activity: AsyncStream<BlueZPeripheralActivity>
    private let activityContinuation: AsyncStream<BlueZPeripheralActivity>.Continuation
    private let radio: VirtualRadio
    private let peripheralID: PeripheralID
    private let configuration: BlueZPeripheralHostConfiguration
    private let logger: Logger
    private let appRoot: DBusObjectPath
    private let advertisementPath: DBusObjectPath

    // Confined to the D-Bus connection's queue once started.
    private var connection: DBusConnection?
    private var tree: DBusObjectTree?
    private var advertisementTree: DBusObjectTree?
    /// The pairing agent's object, when the security asks for one.
    private var agentTree: DBusObjectTree?
    private let agentPath: DBusObjectPath
    /// Successful re-registrations of the advertisement (on the queue).
    private var readvertisements = 0
    /// The application and the advertisement are registered with the current bluetoothd.
    private var registered = false

    /// Where bluetoothd reaches the application: the host's bus name and the object path of
    /// a characteristic (tests play bluetoothd with it).
    func objectForTesting(_ characteristic: CharacteristicPath) async -> (busName: String, path: DBusObjectPath?) {
        await onQueue { [self] in (connection?.uniqueName ?? "", characteristicPaths[characteristic]) }
    }

    /// How many times the advertisement was registered again
    /// (``BlueZPeripheralHostConfiguration/readvertiseInterval``).
    public func readvertisementCount() async -> Int { await onQueue { [self] in readvertisements } }
    private var adapterPath: DBusObjectPath?
    private var characteristicPaths: [CharacteristicPath: DBusObjectPath] = [:]
    /// Characteristics that take writes without response (see ``writeType(_:for:)``).
    private var takesCommands: Set<CharacteristicPath> = []
    private var byObjectPath: [DBusObjectPath: CharacteristicPath] = [:]
    private var pendingReads: [CharacteristicPath: [(DBusIncomingCall, Int)]] = [:]
    private var pendingWrites: [CharacteristicPath: [DBusIncomingCall]] = [:]
    private var pendingSubscriptions: [CharacteristicPath: [(DBusIncomingCall?, Bool)]] = [:]
    private var lastRead: [CharacteristicPath: Data] = [:]
    private var subscribed: Set<CharacteristicPath> = []
    private var centrals: Set<DBusObjectPath> = []
    private var virtualLinkUp = false
    /// The real link's ATT MTU as last handed to the virtual link (nil: not since it came up).
    private var realMTU: Int?
    private var readvertiseTimer: DispatchSourceTimer?
    /// With re-advertising: bluetoothd has the advertisement registered (it is withdrawn while
    /// a central is connected), a call changing that is unanswered, a round is due, and no
    /// round comes before `readvertisingPausedUntil` (a central just left).
    private var advertised = false
    /// Advertisement calls (and re-registrations after a bluetoothd restart) under way.
    private var advertisementCallsInFlight = 0
    /// `stop()` waiting for the call in flight to be answered (see ``stop()``).
    private var advertisementCallWaiters: [CheckedContinuation<Void, Never>] = []
    /// Renewed whenever bluetoothd leaves or comes back: a late answer from an earlier one says
    /// nothing about the current one's copy.
    private var bluezGeneration = 0
    private var roundDue = false
    private var readvertisingPausedUntil = ContinuousClock.now
    private var stopped = false
    private var bluezOwner: String?
    /// A republication of the application under way, and the invalidated services of the
    /// changes that came meanwhile (nil: none), which the next one publishes.
    private var republishing = false
    private var republishPending: Set<BluetoothUUID>?
    /// `stop()` waiting for a republication to end.
    private var republishWaiters: [CheckedContinuation<Void, Never>] = []
    /// The bluetoothd (its generation) that has the application registered, nil when none.
    private var applicationGeneration: Int?
    /// Bumped at every rebuild of the application's tree.
    private var treeVersion = 0
    /// The services invalidated by changes bluetoothd has not been given yet (empty: services
    /// were only added), nil when it has them all.
    private var unpublished: Set<BluetoothUUID>?

    // The ordered pipe of commands to the virtual radio.
    private enum Command: Sendable {
        case connect
        /// The real link's ATT MTU (bluetoothd's `mtu` option), for the virtual link.
        case mtu(Int)
        case disconnect
        case read(CharacteristicPath)
        case write(CharacteristicPath, Data, WriteType)
        case subscribe(CharacteristicPath, Bool)
    }
    private let commands: AsyncStream<Command>.Continuation
    private let commandStream: AsyncStream<Command>
    private var eventTask: Task<Void, Never>?
    private var commandTask: Task<Void, Never>?
    private let linkState = LinkWaiter()

    private static let counter = LockedCounter()

    /// Creates a host for the peripheral `id` of `radio`.
    public init(radio: VirtualRadio, peripheral id: PeripheralID, configuration: BlueZPeripheralHostConfiguration = BlueZPeripheralHostConfiguration(),
                logger: Logger = Logger(label: "tether.bluez.peripheral")) {
        self.radio = radio
        self.peripheralID = id
        self.configuration = configuration
        self.logger = logger
        let n = Self.counter.next()
        appRoot = DBusObjectPath("/org/tether/peripheral\(n)")!
        advertisementPath = DBusObjectPath("/org/tether/advertisement\(n)")!
        // Outside the application's tree, like the advertisement: bluetoothd reads that tree whole.
        agentPath = DBusObjectPath("/org/tether/peripheralagent\(n)")!
        (activity, activityContinuation) = AsyncStream.makeStream(of: BlueZPeripheralActivity.self, bufferingPolicy: .bufferingNewest(1000))
        (commandStream, commands) = AsyncStream.makeStream(of: Command.self)
    }

    /// Connects to bluetoothd, powers the adapter, registers the GATT application and the
    /// advertisement. Throws a ``BlueZPeripheralHostError`` that says what is missing.
    public func start() async throws {
        let address: DBusAddress
        do throws(DBusError) {
            address = try DBusAddress.systemBus(override: configuration.busAddress, environment: configuration.environment)
        } catch {
            throw BlueZPeripheralHostError("bad D-Bus address: \(error.message)")
        }
        let connection: DBusConnection
        do throws(DBusError) {
            connection = try await DBusConnection.connect(to: address, label: "tether.bluez.peripheral", logger: logger)
        } catch {
            throw BlueZPeripheralHostError("no D-Bus system bus at \(address): \(error.message)")
        }
        self.connection = connection
        let owner: String
        do {
            let reply = try await connection.call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                              interface: "org.freedesktop.DBus", member: "GetNameOwner",
                                                              body: [.string(BlueZ.service)]))
            owner = reply.body.first?.string ?? ""
        } catch {
            connection.close()
            throw BlueZPeripheralHostError("bluetoothd is not running (no owner of org.bluez on \(address))")
        }
        let mirror: BlueZObjectMirror
        do {
            mirror = try await BlueZObjectMirror.read(from: connection)
        } catch {
            connection.close()
            throw BlueZPeripheralHostError("bluetoothd did not answer: \(error.message)")
        }
        let adapters = mirror.paths(with: BlueZ.adapterInterface).filter { mirror.properties($0, BlueZ.gattManagerInterface) != nil }
        let adapter: DBusObjectPath
        if let wanted = configuration.adapter {
            guard let found = adapters.first(where: { $0.lastElement == wanted }) else {
                connection.close()
                throw BlueZPeripheralHostError(adapters.isEmpty ? "no Bluetooth adapter"
                    : "no adapter \(wanted) (have \(adapters.map(\.lastElement).joined(separator: ", ")))")
            }
            adapter = found
        } else {
            guard let found = adapters.first(where: { mirror.properties($0, BlueZ.adapterInterface)?["Powered"]?.bool == true }) ?? adapters.first else {
                connection.close()
                throw BlueZPeripheralHostError("no Bluetooth adapter")
            }
            adapter = found
        }
        let adapterProperties = mirror.properties(adapter, BlueZ.adapterInterface) ?? [:]
        if adapterProperties["Powered"]?.bool != true {
            do {
                _ = try await connection.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.propertiesInterface,
                                                          member: "Set", body: [.string(BlueZ.adapterInterface), .string("Powered"), .variant(.boolean(true))]))
            } catch {
                connection.close()
                throw BlueZPeripheralHostError("cannot power on \(adapter.lastElement): \(error.message)")
            }
        }

        guard let peripheral = await preparePeripheralOnActor() else {
            connection.close()
            throw BlueZPeripheralHostError("the radio has no peripheral \(peripheralID)")
        }

        let tree = DBusObjectTree(connection: connection, root: appRoot)
        await onQueue { [self] in
            bluezOwner = owner
            adapterPath = adapter
            self.tree = tree
            buildObjects(tree: tree, services: peripheral.services)
            // A change that came before the tree existed: rebuild it (nothing is registered yet).
            if republishPending != nil, !republishing { republishNext() }
        }
        tree.export()
        // The advertisement lives outside the application's tree: BlueZ reads it separately.
        let advertisementTree = DBusObjectTree(connection: connection, root: advertisementPath)
        advertisementTree.add(advertisementPath, interfaces: [advertisementInterface(peripheral.advertisement, name: peripheral.name)])
        advertisementTree.export()
        // Kept: the connection holds exported trees weakly, and bluetoothd reads the
        // advertisement again at every (re-)registration.
        await onQueue { [self] in self.advertisementTree = advertisementTree }

        let deviceRule = DBusMatchRule(sender: BlueZ.service, interface: BlueZ.propertiesInterface, member: "PropertiesChanged", pathNamespace: adapter)
        let addedRule = DBusMatchRule(sender: BlueZ.service, interface: BlueZ.objectManagerInterface, member: "InterfacesAdded")
        let removedRule = DBusMatchRule(sender: BlueZ.service, interface: BlueZ.objectManagerInterface, member: "InterfacesRemoved")
        for rule in [deviceRule, addedRule, removedRule] {
            connection.onSignal(rule) { [weak self] message in
                guard let self, message.sender == self.bluezOwner else { return }
                self.deviceSignal(message)
            }
            try? await connection.addMatch(rule)
        }
        // bluetoothd restarting forgets the application and the advertisement: register again.
        let ownerRule = DBusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                      member: "NameOwnerChanged", arg0: BlueZ.service)
        connection.onSignal(ownerRule) { [weak self] message in
            guard let self, message.sender == "org.freedesktop.DBus", message.body.count >= 3 else { return }
            self.bluezOwnerChanged(to: message.body[2].string ?? "")
        }
        try? await connection.addMatch(ownerRule)
        connection.onDisconnect { [weak self] error in
            guard let self, !self.stopped else { return }
            // Nothing is registered with anybody now, and no more rounds (stop() still cleans up).
            self.registered = false
            self.readvertiseTimer?.cancel()
            self.readvertiseTimer = nil
            self.activityContinuation.yield(.stopped("lost the system bus: \(error.message)"))
            self.activityContinuation.finish()
        }
        startPipes()
        // Before anything is published: a central may pair as soon as it finds the peripheral.
        if configuration.security != .open {
            do {
                try await registerAgent(on: connection, adapter: adapter)
            } catch {
                await stop()
                throw BlueZPeripheralHostError("bluetoothd refused the pairing agent: \(error.message)")
            }
        }

        let version = await onQueue { [self] in treeVersion }
        do {
            _ = try await connection.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.gattManagerInterface,
                                                      member: "RegisterApplication", body: [.objectPath(appRoot), .properties([:])]),
                                          timeout: configuration.callTimeout)
        } catch {
            await stop()
            throw BlueZPeripheralHostError("bluetoothd refused the GATT application on \(adapter.lastElement): \(error.message)")
        }
        await onQueue { [self] in applicationRegistered(version: version) }
        do {
            _ = try await connection.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.advertisingManagerInterface,
                                                      member: "RegisterAdvertisement", body: [.objectPath(advertisementPath), .properties([:])]),
                                          timeout: configuration.callTimeout)
        } catch {
            await stop()
            throw BlueZPeripheralHostError("bluetoothd refused the advertisement on \(adapter.lastElement): \(error.message)")
        }
        if let interval = configuration.readvertiseInterval { await onQueue { [self] in startReadvertising(every: interval) } }
        await onQueue { [self] in
            registered = true
            advertised = true
            reconcileAdvertisement()
        }
        activityContinuation.yield(.published(adapter: adapter.lastElement, address: adapterProperties["Address"]?.string ?? "?",
                                              name: peripheral.advertisement.localName ?? peripheral.name))
        logger.info("published \(peripheral.name ?? "peripheral") on \(adapter.lastElement)")
    }

    private func makeAgent() -> BlueZPairingAgent {
        let activity = activityContinuation
        return configuration.security == .authenticated
            ? .displayOnly { central, passkey in activity.yield(.passkey(central: central, passkey: passkey)) }
            : .justWorksPeripheral()
    }

    private var agentCapability: String { makeAgent().capability }

    /// After bluetoothd restarted: the agent again, as the default (on the queue).
    private func registerAgentAgain(on connection: DBusConnection) {
        guard agentTree != nil else { return }
        let activity = activityContinuation
        Task { [weak self] in
            guard let self else { return }
            do throws(DBusError) {
                try await self.announceAgent(on: connection)
            } catch {
                activity.yield(.problem("bluetoothd is back but the pairing agent is not its default: \(error.message)"))
            }
        }
    }

    /// `RegisterAgent` (AlreadyExists: an earlier attempt registered it), then
    /// `RequestDefaultAgent`: at start and after bluetoothd restarted.
    private func announceAgent(on connection: DBusConnection) async throws(DBusError) {
        let path = agentPath
        do {
            _ = try await connection.call(.methodCall(destination: BlueZ.service, path: "/org/bluez", interface: BlueZ.agentManagerInterface,
                                                      member: "RegisterAgent", body: [.objectPath(path), .string(agentCapability)]),
                                          timeout: configuration.callTimeout)
        } catch {
            guard error.name == "org.bluez.Error.AlreadyExists" else { throw error }
        }
        _ = try await connection.call(.methodCall(destination: BlueZ.service, path: "/org/bluez", interface: BlueZ.agentManagerInterface,
                                                  member: "RequestDefaultAgent", body: [.objectPath(path)]),
                                      timeout: configuration.callTimeout)
    }

    /// Registers the pairing agent and makes it bluetoothd's default: requests of a central
    /// pairing with this peripheral go to the default agent. It answers for devices on this
    /// host's adapter only; with ``BlueZPeripheralSecurity/authenticated`` it shows the passkey.
    private func registerAgent(on connection: DBusConnection, adapter: DBusObjectPath) async throws(DBusError) {
        let path = agentPath
        let agent = makeAgent()
        let tree = DBusObjectTree(connection: connection, root: path)
        tree.add(path, interfaces: [agent.interface(logger: logger) { $0.isDescendant(of: adapter) }])
        tree.export()
        await onQueue { [self] in agentTree = tree }
        try await announceAgent(on: connection)
    }

    /// Unregisters the advertisement and the application, ends the virtual link and closes
    /// the bus connection. Idempotent.
    public func stop() async {
        guard let connection else { return }
        let first = await onQueue { [self] () -> Bool in
            defer { stopped = true }
            readvertiseTimer?.cancel()
            readvertiseTimer = nil
            return !stopped
        }
        guard first else { return }
        // bluetoothd 5.66 frees an advertisement twice, and aborts, when it is unregistered
        // while its registration is still under way (the removal takes the instance the
        // registration then fills: "Failed to add advertisement: Invalid Parameters", then
        // a heap corruption; seen in the guest). A re-advertising round may be in flight:
        // its answer comes first.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            connection.perform { [self] in
                if advertisementCallsInFlight > 0 { advertisementCallWaiters.append(continuation) } else { continuation.resume() }
            }
        }
        // Nor while a republication registers the application again.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            connection.perform { [self] in
                if republishing { republishWaiters.append(continuation) } else { continuation.resume() }
            }
        }
        if let adapter = await onQueue({ [self] in adapterPath }) {
            _ = try? await connection.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.advertisingManagerInterface,
                                                       member: "UnregisterAdvertisement", body: [.objectPath(advertisementPath)]), timeout: .seconds(5))
            _ = try? await connection.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.gattManagerInterface,
                                                       member: "UnregisterApplication", body: [.objectPath(appRoot)]), timeout: .seconds(5))
        }
        if await onQueue({ [self] in agentTree != nil }) {
            _ = try? await connection.call(.methodCall(destination: BlueZ.service, path: "/org/bluez", interface: BlueZ.agentManagerInterface,
                                                       member: "UnregisterAgent", body: [.objectPath(agentPath)]), timeout: .seconds(5))
        }
        commands.yield(.disconnect)
        commands.finish()
        await commandTask?.value
        eventTask?.cancel()
        connection.close()
        activityContinuation.finish()
    }

    // MARK: Building the objects

    /// What the host publishes of a virtual peripheral.
    private struct Published: Sendable {
        let name: String?
        let advertisement: AdvertisementData
        let services: [ServiceDefinition]
    }

    @SimulationActor
    private func preparePeripheralOnActor() -> Published? {
        guard let peripheral = radio.virtualPeripheral(peripheralID) else { return nil }
        // In the same turn as the services are read: no change can fall between.
        radio.observeServiceChanges(of: peripheralID) { [weak self] invalidated in
            guard let self else { return }
            self.connection?.perform { self.requestRepublish(invalidated) }
        }
        // The real link paces traffic; the virtual one only has to keep order. Keep the
        // emulator's MTU (its behaviour depends on it).
        var parameters = peripheral.linkParameters
        parameters.connectionInterval = .milliseconds(1)
        parameters.packetsPerConnectionEvent = 64
        parameters.writeWithoutResponseBuffer = 4096
        parameters.notificationQueueCapacity = 4096
        parameters.connectionSetupTime = .milliseconds(1)
        parameters.supervisionTimeout = .seconds(3600)
        peripheral.linkParameters = parameters
        peripheral.advertisingInterval = .milliseconds(5)
        return Published(name: peripheral.name, advertisement: peripheral.advertisement, services: peripheral.services)
    }

    private func buildObjects(tree: DBusObjectTree, services: [ServiceDefinition]) {
        for (serviceIndex, service) in services.enumerated() {
            let servicePath = appRoot.appending("service\(serviceIndex)")!
            tree.add(servicePath, interfaces: [DBusInterface(name: BlueZ.serviceInterface, properties: [
                "UUID": .string(service.uuid.longString),
                "Primary": .boolean(true),
            ])])
            for (index, characteristic) in service.characteristics.enumerated() {
                let path = CharacteristicPath(service: service.uuid, characteristic: characteristic.uuid)
                let objectPath = servicePath.appending("char\(index)")!
                characteristicPaths[path] = objectPath
                byObjectPath[objectPath] = path
                if characteristic.properties.contains(.writeWithoutResponse) { takesCommands.insert(path) }
                var properties: [String: DBusValue] = [
                    "UUID": .string(characteristic.uuid.longString),
                    "Service": .objectPath(servicePath),
                    "Flags": .strings(BlueZMapping.flags(for: characteristic.properties) + configuration.security.flags(for: characteristic.properties)),
                ]
                if !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                    properties["Notifying"] = .boolean(false)
                }
                if characteristic.properties.contains(.read) || !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                    properties["Value"] = .bytes(characteristic.value)
                }
                tree.add(objectPath, interfaces: [DBusInterface(name: BlueZ.characteristicInterface, properties: properties, methods: [
                    // Weak: the connection outlives nothing, but a host must not be kept alive by
                    // its own objects. An unanswered call is answered with an error on release.
                    "ReadValue": { [weak self] call in self?.readValue(call, path) },
                    "WriteValue": { [weak self] call in self?.writeValue(call, path) },
                    "StartNotify": { [weak self] call in self?.subscribe(call, path, enabled: true) },
                    "StopNotify": { [weak self] call in self?.subscribe(call, path, enabled: false) },
                    "Confirm": { call in call.reply() },
                ])])
            }
        }
    }

    private func advertisementInterface(_ advertisement: AdvertisementData, name: String?) -> DBusInterface {
        // Discoverable: scanners without a service filter skip LE advertisers without the
        // "general discoverable" flag (BlueZ's own `device_is_discoverable`).
        var properties: [String: DBusValue] = ["Type": .string("peripheral"), "Discoverable": .boolean(true)]
        if let localName = advertisement.localName ?? name { properties["LocalName"] = .string(localName) }
        if !advertisement.serviceUUIDs.isEmpty { properties["ServiceUUIDs"] = .strings(advertisement.serviceUUIDs.map(\.longString)) }
        if let manufacturer = advertisement.manufacturerData, manufacturer.count >= 2, let company = advertisement.companyIdentifier {
            properties["ManufacturerData"] = .dictionary(key: .uint16, value: .variant, [
                DBusDictionaryEntry(.uint16(company), .variant(.bytes(Data(manufacturer.dropFirst(2))))),
            ])
        }
        if !advertisement.serviceData.isEmpty {
            properties["ServiceData"] = .dictionary(key: .string, value: .variant, advertisement.serviceData.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(.string($0.key.longString), .variant(.bytes($0.value)))
            })
        }
        if advertisement.txPowerLevel != nil { properties["Includes"] = .strings(["tx-power"]) }
        return DBusInterface(name: BlueZ.advertisementInterface, properties: properties, methods: [
            "Release": { [weak self, logger] call in
                logger.notice("bluetoothd released the advertisement")
                call.reply()
                // bluetoothd has let it go (its adapter went away, or it is exiting): the
                // owner change or the adapter's return decides what comes next.
                self?.advertised = false
            },
        ])
    }

    private func bluezOwnerChanged(to owner: String) {
        guard !stopped else { return }
        bluezGeneration += 1
        applicationGeneration = nil
        if owner.isEmpty {
            bluezOwner = nil
            registered = false
            advertised = false
            failPending("bluetoothd left the bus")
            if !centrals.isEmpty {
                centrals.removeAll()
                commands.yield(.disconnect)
            }
            activityContinuation.yield(.problem("bluetoothd left the bus; waiting for it to come back"))
            return
        }
        bluezOwner = owner
        registerAgain(attempt: 1, owner: owner)
    }

    /// Registers the application and the advertisement with a bluetoothd that just appeared.
    /// It takes its bus name before its adapters exist, so early attempts meet an unknown
    /// adapter: try again every 200 ms for 10 s.
    private func registerAgain(attempt: Int, owner: String) {
        guard let connection, let adapterPath, !stopped, bluezOwner == owner else { return }
        let appRoot = self.appRoot, advertisementPath = self.advertisementPath
        // Tracked like a round's call from the first step: stop() waits for the chain, which
        // never registers the advertisement once stop() has begun.
        advertisementCallsInFlight += 1
        let retry: @Sendable (String) -> Void = { [weak self] problem in
            guard let self else { return }
            self.advertisementCallEnded()
            guard !self.stopped else { return }
            guard attempt < 50 else {
                self.activityContinuation.yield(.problem("bluetoothd is back but \(problem); gave up after 10 s"))
                return
            }
            self.connection?.queue.asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in
                self?.registerAgain(attempt: attempt + 1, owner: owner)
            }
        }
        let power = DBusMessage.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.propertiesInterface, member: "Set",
                                           body: [.string(BlueZ.adapterInterface), .string("Powered"), .variant(.boolean(true))])
        connection.call(power) { [weak self] result in
            if case .failure(let error) = result { return retry("cannot power \(adapterPath.lastElement) (\(error.message))") }
            self?.registerAgentAgain(on: connection)
            let version = self?.treeVersion ?? 0
            connection.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.gattManagerInterface,
                                        member: "RegisterApplication", body: [.objectPath(appRoot), .properties([:])])) { [weak self] result in
                // AlreadyExists: a republication (changed services) registered it with this
                // bluetoothd first.
                if case .failure(let error) = result, error.name != "org.bluez.Error.AlreadyExists" {
                    return retry("refused the GATT application (\(error.message))")
                }
                if case .success = result { self?.applicationRegistered(version: version) }
                guard let self, !self.stopped else {
                    self?.advertisementCallEnded()
                    return
                }
                connection.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                            member: "RegisterAdvertisement", body: [.objectPath(advertisementPath), .properties([:])]),
                                timeout: self.configuration.callTimeout) { [weak self] result in
                    guard let self else { return }
                    self.advertisementCallEnded()
                    if case .failure(let error) = result {
                        self.activityContinuation.yield(.problem("bluetoothd is back but refused the advertisement: \(error.message)"))
                        return
                    }
                    self.registered = true
                    self.advertised = true
                    self.roundDue = false
                    self.activityContinuation.yield(.problem("bluetoothd restarted: application and advertisement registered again"))
                    self.reconcileAdvertisement()
                }
            }
        }
    }

    /// Registers the advertisement again about every `interval` (each time a little earlier or
    /// later), and keeps it withdrawn while a central is connected.
    ///
    /// btvirt's controllers report an advertisement only when advertising (or scanning) is
    /// enabled, so a scanner that starts later needs advertising enabled again. Every round
    /// costs a moment with advertising off, and a central's LE Create Connection that meets
    /// that moment fails at once on btvirt (status 0x3e), which Linux 6.1 takes for success:
    /// it then waits for a connection that never comes (every later attempt to that device
    /// hangs until the adapter is powered off). So:
    /// - the second call of a round does not wait for the first's answer (the gap is
    ///   bluetoothd reading the advertisement back, not two round trips);
    /// - while a central is connected the advertisement is withdrawn (btvirt refuses to
    ///   advertise then anyway); when the last central leaves it is registered again, which
    ///   only turns advertising on, where the kernel would otherwise turn it off and on
    ///   again at the very moment the central reconnects;
    /// - rounds rest for ``readvertisePause(after:)`` after a central leaves, and the jitter
    ///   keeps a central's connection attempt, timed from one round, from meeting a later one
    ///   in lockstep.
    private func startReadvertising(every interval: Duration) {
        guard let connection else { return }
        let timer = DispatchSource.makeTimerSource(queue: connection.queue)
        let scheduleNext: @Sendable (DispatchSourceTimer) -> Void = { timer in
            timer.schedule(deadline: .now() + DispatchTimeInterval(interval * Double.random(in: 0.75...1.25)))
        }
        timer.setEventHandler { [weak self] in
            scheduleNext(timer)
            guard let self else { return }
            self.roundDue = true
            self.reconcileAdvertisement()
        }
        scheduleNext(timer)
        timer.resume()
        readvertiseTimer = timer
    }

    /// Brings bluetoothd's copy of the advertisement to what it should be (see
    /// ``startReadvertising(every:)``): one call at a time, so changes never overlap (under
    /// load one can take longer than the interval); each answer looks again.
    private func reconcileAdvertisement() {
        guard configuration.readvertiseInterval != nil, let connection, let adapterPath,
              registered, !stopped, advertisementCallsInFlight == 0 else { return }
        let wanted = centrals.isEmpty
        let path = advertisementPath
        if advertised != wanted {
            callAdvertisingManager(register: wanted)
            return
        }
        guard wanted, roundDue, ContinuousClock.now >= readvertisingPausedUntil else { return }
        roundDue = false
        // Unregister and register again, the second call sent at once rather than after the
        // first's answer: advertising is off only while bluetoothd reads the advertisement
        // back. (A PropertiesChanged would make bluetoothd 5.66 set the instance again with
        // no gap at all, but when the kernel refuses that, bluetoothd answers a registration
        // that is not there and aborts: seen in the guest.)
        connection.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                    member: "UnregisterAdvertisement", body: [.objectPath(path)])) { _ in }
        callAdvertisingManager(register: true)
    }

    /// Registers (or unregisters) the advertisement; the answer updates ``advertised`` and
    /// looks again. One such call at a time.
    private func callAdvertisingManager(register: Bool) {
        guard let connection, let adapterPath else { return }
        advertisementCallsInFlight += 1
        let member = register ? "RegisterAdvertisement" : "UnregisterAdvertisement"
        let body: [DBusValue] = register ? [.objectPath(advertisementPath), .properties([:])] : [.objectPath(advertisementPath)]
        let generation = bluezGeneration
        connection.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                    member: member, body: body), timeout: configuration.callTimeout) { [weak self] result in
            guard let self else { return }
            self.advertisementCallEnded()
            // Stopping unregisters it after this call (the bus keeps the calls' order).
            guard !self.stopped else { return }
            // An answer from an earlier bluetoothd says nothing of the current one's copy.
            guard self.bluezGeneration == generation else { return self.reconcileAdvertisement() }
            switch result {
            case .success:
                self.advertised = register
                if register {
                    self.readvertisements += 1
                    self.roundDue = false   // it has just been reported anew
                }
                self.reconcileAdvertisement()
            case .failure(let error) where error.name == (register ? "org.bluez.Error.AlreadyExists" : "org.bluez.Error.DoesNotExist"):
                // bluetoothd already has it, or no longer has it: what was wanted.
                self.advertised = register
                self.reconcileAdvertisement()
            case .failure(let error):
                // Not registered (a round has unregistered it before). Tried again at the next
                // tick, not at once: a refusal that lasts (no adapter, too many advertisements)
                // must not spin.
                if register { self.advertised = false }
                self.logger.error("\(member) failed: \(error)")
                self.activityContinuation.yield(.problem("\(member) failed: \(error.message)"))
            }
        }
    }

    /// The advertisement call in flight was answered: `stop()` may unregister now.
    private func advertisementCallEnded() {
        advertisementCallsInFlight = max(0, advertisementCallsInFlight - 1)
        guard advertisementCallsInFlight == 0 else { return }
        let waiters = advertisementCallWaiters
        advertisementCallWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// How long rounds rest after a central disconnects: long enough for a central that
    /// reconnects at once (and meets the advertising that came back) to be through.
    static func readvertisePause(after interval: Duration) -> Duration { max(interval * 3, .seconds(2)) }

    // MARK: Calls from bluetoothd

    private func readValue(_ call: DBusIncomingCall, _ path: CharacteristicPath) {
        let options = call.message.body.first?.stringKeyedDictionary ?? [:]
        noteCentral(options)
        guard let offset = Self.offset(options["offset"]) else {
            return call.fail("org.bluez.Error.InvalidOffset", "offset must be 0…65535")
        }
        if offset > 0, let last = lastRead[path] {
            // BlueZ reads long values in pieces; answer them from one emulator read.
            guard offset <= last.count else { return call.fail("org.bluez.Error.InvalidOffset", "offset \(offset) beyond \(last.count) bytes") }
            return call.reply([.bytes(Data(last.dropFirst(offset)))])
        }
        pendingReads[path, default: []].append((call, offset))
        activityContinuation.yield(.read(path))
        send(.read(path))
    }

    private func writeValue(_ call: DBusIncomingCall, _ path: CharacteristicPath) {
        guard let value = call.message.body.first?.bytes else { return call.fail("org.bluez.Error.InvalidArguments", "WriteValue needs ay") }
        let options = call.message.body.count > 1 ? call.message.body[1].stringKeyedDictionary ?? [:] : [:]
        noteCentral(options)
        let type = writeType(options, for: path)
        guard let offset = Self.offset(options["offset"]) else {
            return call.fail("org.bluez.Error.InvalidOffset", "offset must be 0…65535")
        }
        if offset > 0 {
            logger.debug("write at offset \(offset) to \(path) delivered as a fragment")
        }
        activityContinuation.yield(.write(path, value, type))
        if type == .withoutResponse {
            call.reply()
        } else {
            pendingWrites[path, default: []].append(call)
        }
        send(.write(path, value, type))
    }

    private func subscribe(_ call: DBusIncomingCall, _ path: CharacteristicPath, enabled: Bool) {
        if subscribed.contains(path) == enabled {
            // Another central already holds (or released) the subscription; BlueZ fans out.
            return call.reply()
        }
        pendingSubscriptions[path, default: []].append((call, enabled))
        activityContinuation.yield(.subscription(path, enabled: enabled))
        send(.subscribe(path, enabled))
    }

    /// The type of a write bluetoothd hands over: its `type` option where given (bluezoo).
    /// bluetoothd (5.66, and still 5.79) gives a GATT server application no type, so a write
    /// to a characteristic that takes commands goes to the emulator as a command: in order and
    /// at the link's pace, as the central sent it. A write request to such a characteristic is
    /// then answered as soon as the emulator has it, so an error the emulator would give is not
    /// seen; characteristics that take requests only keep the request's answer.
    private func writeType(_ options: [String: DBusValue], for path: CharacteristicPath) -> WriteType {
        switch options["type"]?.string {
        case "command": .withoutResponse
        case "request", "reliable": .withResponse
        default: takesCommands.contains(path) ? .withoutResponse : .withResponse
        }
    }

    private func noteCentral(_ options: [String: DBusValue]) {
        if let device = options["device"]?.objectPath, !centrals.contains(device) {
            centrals.insert(device)
            activityContinuation.yield(.centralConnected(Self.address(of: device)))
            reconcileAdvertisement()
        }
        if !virtualLinkUp {
            virtualLinkUp = true
            commands.yield(.connect)
        }
        // The emulator works with the MTU the real link negotiated, so a write as long as the
        // central may send reaches it whole and its notifications fit the real link.
        if let mtu = options["mtu"]?.integer, (23...517).contains(mtu), Int(mtu) != realMTU {
            realMTU = Int(mtu)
            commands.yield(.mtu(Int(mtu)))
        }
    }

    private func send(_ command: Command) {
        commands.yield(command)
    }

    private func deviceSignal(_ message: DBusMessage) {
        guard let adapterPath else { return }
        var device: DBusObjectPath?
        var connected: Bool?
        switch message.member {
        case "PropertiesChanged":
            guard message.body.first?.string == BlueZ.deviceInterface, let path = message.path, path.parent == adapterPath else { return }
            device = path
            connected = message.body.count > 1 ? message.body[1].stringKeyedDictionary?["Connected"]?.bool : nil
        case "InterfacesAdded":
            guard message.body.count > 1, let path = message.body[0].objectPath, path.parent == adapterPath,
                  let properties = message.body[1].stringKeyedDictionary?[BlueZ.deviceInterface]?.stringKeyedDictionary else { return }
            device = path
            connected = properties["Connected"]?.bool
        case "InterfacesRemoved":
            guard let path = message.body.first?.objectPath, path.parent == adapterPath, centrals.contains(path) else { return }
            device = path
            connected = false
        default:
            return
        }
        guard let device, let connected else { return }
        if connected {
            guard centrals.insert(device).inserted else { return }
            activityContinuation.yield(.centralConnected(Self.address(of: device)))
            reconcileAdvertisement()
            if !virtualLinkUp {
                virtualLinkUp = true
                commands.yield(.connect)
            }
        } else {
            guard centrals.remove(device) != nil else { return }
            activityContinuation.yield(.centralDisconnected(Self.address(of: device)))
            if let interval = configuration.readvertiseInterval {
                readvertisingPausedUntil = ContinuousClock.now + Self.readvertisePause(after: interval)
            }
            reconcileAdvertisement()
            if centrals.isEmpty, virtualLinkUp {
                failPending("the central disconnected")
                commands.yield(.disconnect)
            }
        }
    }

    /// An `offset` option: absent is 0; anything but 0…65535 is invalid (ATT offsets are 16-bit).
    static func offset(_ value: DBusValue?) -> Int? {
        guard let value else { return 0 }
        guard let number = value.integer, (0...Int64(UInt16.max)).contains(number) else { return nil }
        return Int(number)
    }

    private static func address(of device: DBusObjectPath) -> String {
        let element = device.lastElement
        return element.hasPrefix("dev_") ? element.dropFirst(4).replacingOccurrences(of: "_", with: ":") : element
    }

    // MARK: The virtual side

    @SimulationActor
    private static func exchangeMTU(_ mtu: Int, on radio: VirtualRadio, for id: PeripheralID) {
        radio.exchangeMTU(mtu, on: id)
    }

    private func startPipes() {
        let radio = self.radio
        let id = peripheralID
        let commandStream = self.commandStream
        let linkState = self.linkState
        let logger = self.logger
        let driverTask = Task { @SimulationActor in SimulatedDriver(radio: radio, supportsAutoReconnect: false) }
        // The radio's event stream never ends by itself: ``stop()`` cancels this task.
        eventTask = Task { [weak self] in
            let driver = await driverTask.value
            for await event in driver.events {
                guard let self else { return }
                self.handle(event)
            }
        }
        commandTask = Task {
            let driver = await driverTask.value
            // The virtual link's truth is the radio's events (the emulator may hang up at any
            // time); every GATT command brings the link up first if it is down.
            func ensureLink() async {
                if linkState.isUp { return }
                await driver.connect(id, options: ConnectOptions())
                if !(await linkState.waitUntilUp(timeout: .seconds(5))) {
                    logger.error("the emulator did not accept the virtual connection")
                }
            }
            for await command in commandStream {
                switch command {
                case .connect:
                    await ensureLink()
                case .mtu(let mtu):
                    await ensureLink()
                    await Self.exchangeMTU(mtu, on: radio, for: id)
                case .disconnect:
                    guard linkState.isUp else { continue }
                    await driver.cancelConnection(id)
                    // Let the virtual link end before anything else, so a reconnection that
                    // follows at once does not see the old link's state.
                    if !(await linkState.waitUntilDown(timeout: .seconds(5))) { logger.error("the virtual link did not end") }
                case .read(let path):
                    await ensureLink()
                    await driver.readValue(for: path, on: id)
                case .write(let path, let data, let type):
                    await ensureLink()
                    if type == .withoutResponse {
                        while !(await driver.canSendWriteWithoutResponse(on: id)) {
                            guard await linkState.waitForWriteSpace(timeout: .seconds(2)) else { break }
                        }
                    }
                    await driver.writeValue(data, for: path, type: type, on: id)
                case .subscribe(let path, let enabled):
                    await ensureLink()
                    await driver.setNotifyValue(enabled, for: path, on: id)
                }
            }
            if linkState.isUp {
                await driver.cancelConnection(id)
                _ = await linkState.waitUntilDown(timeout: .seconds(2))
            }
        }
    }

    private func handle(_ event: BLEDriverEvent) {
        switch event {
        case .connected:
            linkState.setUp(true)
        case .disconnected(_, let error, _):
            linkState.setUp(false)
            // A link the host ended itself (its centrals left) was cleaned up then; calls
            // pending now belong to a newer central.
            guard error != nil else { return }
            connection?.perform { [self] in
                failPending("the emulator ended the link")
                // The emulator hung up (its firmware disconnects): hang up on the centrals too.
                disconnectCentrals()
            }
        case .failedToConnect:
            linkState.setUp(false)
            connection?.perform { [self] in failPending("the emulator refused the link") }
        case .readyToWriteWithoutResponse:
            linkState.writeSpace()
        case .valueUpdated(_, let path, let value, let error):
            connection?.perform { [self] in valueUpdated(path, value, error) }
        case .writeCompleted(_, let path, let error):
            connection?.perform { [self] in
                guard var queue = pendingWrites[path], !queue.isEmpty else { return }
                let call = queue.removeFirst()
                pendingWrites[path] = queue
                if let error { fail(call, error) } else { call.reply() }
            }
        case .notificationStateUpdated(_, let path, let isNotifying, let error):
            connection?.perform { [self] in
                if error == nil {
                    if isNotifying { subscribed.insert(path) } else { subscribed.remove(path) }
                    if let objectPath = characteristicPaths[path] {
                        tree?.setProperty("Notifying", to: .boolean(isNotifying), interface: BlueZ.characteristicInterface, path: objectPath)
                    }
                }
                guard var queue = pendingSubscriptions[path], !queue.isEmpty else { return }
                let (call, _) = queue.removeFirst()
                pendingSubscriptions[path] = queue
                if let error { call.map { fail($0, error) } } else { call?.reply() }
            }
        default:
            break
        }
    }

    private func valueUpdated(_ path: CharacteristicPath, _ value: Data, _ error: DriverError?) {
        if var queue = pendingReads[path], !queue.isEmpty {
            // Reads and notifications share one event; a read waiting on this characteristic
            // takes the first value (the virtual link keeps request order).
            let (call, offset) = queue.removeFirst()
            pendingReads[path] = queue
            if let error { return fail(call, error) }
            lastRead[path] = value
            guard offset <= value.count else { return call.fail("org.bluez.Error.InvalidOffset", "offset beyond the value") }
            call.reply([.bytes(Data(value.dropFirst(offset)))])
            return
        }
        guard error == nil, let objectPath = characteristicPaths[path] else { return }
        activityContinuation.yield(.notification(path, value))
        tree?.setProperty("Value", to: .bytes(value), interface: BlueZ.characteristicInterface, path: objectPath)
    }

    /// The emulator's database changed (`VirtualRadio.changeServices`, a firmware update): the
    /// application goes away and comes back with the new database, as a dynamic GATT server's
    /// does, and bluetoothd sends connected centrals Service Changed for both. Calls pending on
    /// the invalidated services fail; their subscriptions are gone (the virtual link dropped
    /// them), so a central subscribes again. One republication at a time (on the queue): a
    /// change arriving meanwhile is published by the next. Without a registration (bluetoothd
    /// away, or not yet registered) only the tree is rebuilt: the next registration reads it.
    private func requestRepublish(_ invalidated: [BluetoothUUID]) {
        guard !stopped else { return }
        republishPending = (republishPending ?? []).union(invalidated)
        if !republishing, tree != nil { republishNext() }
    }

    /// On the queue.
    private func republishNext() {
        guard let invalidated = republishPending, !stopped, let connection, let tree else {
            republishing = false
            let waiters = republishWaiters
            republishWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
            return
        }
        republishPending = nil
        republishing = true
        unpublished = (unpublished ?? []).union(invalidated)
        let root = appRoot, timeout = configuration.callTimeout
        Task { [weak self] in
            guard let self else { return }
            let definitions = await self.currentServices()
            let target: (adapter: DBusObjectPath, version: Int)? = await self.onQueue { [self] in
                self.forget(Array(invalidated))
                tree.removeAll()
                self.characteristicPaths.removeAll()
                self.byObjectPath.removeAll()
                self.takesCommands.removeAll()
                self.buildObjects(tree: tree, services: definitions)
                self.treeVersion += 1
                guard !self.stopped, let generation = self.applicationGeneration, generation == self.bluezGeneration,
                      let adapter = self.adapterPath else { return nil }
                return (adapter, self.treeVersion)
            }
            if let target {
                _ = try? await connection.call(.methodCall(destination: BlueZ.service, path: target.adapter, interface: BlueZ.gattManagerInterface,
                                                           member: "UnregisterApplication", body: [.objectPath(root)]), timeout: timeout)
                do throws(DBusError) {
                    _ = try await connection.call(.methodCall(destination: BlueZ.service, path: target.adapter, interface: BlueZ.gattManagerInterface,
                                                              member: "RegisterApplication", body: [.objectPath(root), .properties([:])]),
                                                  timeout: timeout)
                    await self.onQueue { [self] in self.applicationRegistered(version: target.version) }
                } catch {
                    await self.onQueue { [self] in self.applicationGeneration = nil }
                    self.activityContinuation.yield(.problem("the services changed, but bluetoothd refused the application again: \(error.message)"))
                }
            }
            connection.perform { self.republishNext() }
        }
    }

    /// bluetoothd took the application, reading the tree of `version` (or a later one: its read
    /// may have come after a rebuild); on the queue. If the tree changed since the call, the
    /// change is published again.
    private func applicationRegistered(version: Int) {
        applicationGeneration = bluezGeneration
        guard treeVersion == version else {
            requestRepublish(Array(unpublished ?? []))
            return
        }
        guard let changed = unpublished else { return }
        let services = changed.sorted()
        unpublished = nil
        logger.info("services changed (\(services.map(\.description).joined(separator: ", "))): application registered with them")
        activityContinuation.yield(.servicesChanged(services))
    }

    @SimulationActor
    private func currentServices() -> [ServiceDefinition] {
        radio.virtualPeripheral(peripheralID)?.services ?? []
    }

    /// Fails the calls pending on the invalidated services' characteristics and forgets their
    /// subscriptions (on the queue).
    private func forget(_ invalidated: [BluetoothUUID]) {
        let reason = "the peripheral's services changed"
        for path in pendingReads.keys where invalidated.contains(path.service) {
            for (call, _) in pendingReads.removeValue(forKey: path) ?? [] { call.fail("org.bluez.Error.Failed", reason) }
        }
        for path in pendingWrites.keys where invalidated.contains(path.service) {
            for call in pendingWrites.removeValue(forKey: path) ?? [] { call.fail("org.bluez.Error.Failed", reason) }
        }
        for path in pendingSubscriptions.keys where invalidated.contains(path.service) {
            for (call, _) in pendingSubscriptions.removeValue(forKey: path) ?? [] { call?.fail("org.bluez.Error.Failed", reason) }
        }
        subscribed = subscribed.filter { !invalidated.contains($0.service) }
    }

    private func disconnectCentrals() {
        guard let connection else { return }
        for device in centrals.sorted() {
            connection.call(.methodCall(destination: BlueZ.service, path: device, interface: BlueZ.deviceInterface, member: "Disconnect"),
                            timeout: configuration.callTimeout) { [logger] result in
                if case .failure(let error) = result { logger.info("could not disconnect \(device): \(error)") }
            }
        }
    }

    private func failPending(_ reason: String) {
        for (_, calls) in pendingReads { for (call, _) in calls { call.fail("org.bluez.Error.Failed", reason) } }
        for (_, calls) in pendingWrites { for call in calls { call.fail("org.bluez.Error.Failed", reason) } }
        for (_, calls) in pendingSubscriptions { for (call, _) in calls { call?.fail("org.bluez.Error.Failed", reason) } }
        pendingReads.removeAll()
        pendingWrites.removeAll()
        pendingSubscriptions.removeAll()
        subscribed.removeAll()
        virtualLinkUp = false
        realMTU = nil
    }

    /// The D-Bus error a GATT application answers for an emulator's ATT error, in the words
    /// bluetoothd turns into ATT codes (`dbus_error_to_att_ecode`): `NotPermitted` (read/write
    /// not permitted), `NotAuthorized` (0x08), `NotSupported` (0x06), `InvalidOffset` (0x07),
    /// `InvalidValueLength` (0x0D), and `Failed "0xNN"` for application errors 0x80–0x9F.
    ///
    /// An application cannot answer 0x05, 0x0C or 0x0F (pairing is bluetoothd's business: it is
    /// asked for with `encrypt-*` flags): they become `NotAuthorized`, the nearest code a central
    /// also treats as a pairing problem. Other codes become `Failed "Operation failed"`, which
    /// bluetoothd sends as 0x80.
    static func bluezError(for error: DriverError) -> (String, String) {
        guard case .att(let att) = error else { return ("org.bluez.Error.Failed", error.description) }
        switch att.code {
        case 0x02: return ("org.bluez.Error.NotPermitted", "Read not permitted")
        case 0x03: return ("org.bluez.Error.NotPermitted", "Write not permitted")
        case 0x05, 0x08, 0x0C, 0x0F: return ("org.bluez.Error.NotAuthorized", "Not authorized")
        case 0x06: return ("org.bluez.Error.NotSupported", "Request not supported")
        case 0x07: return ("org.bluez.Error.InvalidOffset", "Invalid offset")
        case 0x0D: return ("org.bluez.Error.InvalidValueLength", "Invalid value length")
        case 0x80...0x9F: return ("org.bluez.Error.Failed", String(format: "0x%02x", att.code))
        default: return ("org.bluez.Error.Failed", "Operation failed")
        }
    }

    private func fail(_ call: DBusIncomingCall, _ error: DriverError) {
        let (name, text) = Self.bluezError(for: error)
        call.fail(name, text)
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        guard let connection else { return body() }
        return await withCheckedContinuation { continuation in
            connection.perform { continuation.resume(returning: body()) }
        }
    }
}

/// Signals between the event task and the command task of a host.
private final class LinkWaiter: @unchecked Sendable {
    private let lock = NSLock()
    private var up = false
    private var nextToken = 0
    private var upWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var spaceWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var downWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]

    var isUp: Bool { lock.withLock { up } }

    func setUp(_ value: Bool) {
        let waiters: [CheckedContinuation<Bool, Never>] = lock.withLock {
            up = value
            if value {
                defer { upWaiters.removeAll() }
                return Array(upWaiters.values)
            }
            defer { downWaiters.removeAll() }
            return Array(downWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    func writeSpace() {
        let waiters = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            defer { spaceWaiters.removeAll() }
            return Array(spaceWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    private enum Condition { case up, down, space }

    func waitUntilUp(timeout: Duration) async -> Bool { await wait(timeout: timeout, for: .up) }

    func waitUntilDown(timeout: Duration) async -> Bool { await wait(timeout: timeout, for: .down) }

    func waitForWriteSpace(timeout: Duration) async -> Bool { await wait(timeout: timeout, for: .space) }

    private func wait(timeout: Duration, for condition: Condition) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let token: Int? = lock.withLock {
                switch condition {
                case .up where up, .down where !up: return nil
                default: break
                }
                nextToken += 1
                switch condition {
                case .up: upWaiters[nextToken] = continuation
                case .down: downWaiters[nextToken] = continuation
                case .space: spaceWaiters[nextToken] = continuation
                }
                return nextToken
            }
            guard let token else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + DispatchTimeInterval(timeout)) { [self] in
                let expired = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
                    switch condition {
                    case .up: upWaiters.removeValue(forKey: token)
                    case .down: downWaiters.removeValue(forKey: token)
                    case .space: spaceWaiters.removeValue(forKey: token)
                    }
                }
                expired?.resume(returning: false)
            }
        }
    }
}

private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
}
#endif
