#if os(Linux)
import Foundation
import Logging
import TetherCore
import TetherDBus

/// The BlueZ driver's engine. Every property belongs to the D-Bus connection's queue: commands
/// hop there, and BlueZ's signals and replies arrive there in bus order.
final class BlueZCentral: @unchecked Sendable {
    enum Operation {
        case read
        case write(Data, WriteType)
        case notify(Bool)
    }

    /// One device this driver was asked to connect.
    struct Link {
        let path: DBusObjectPath
        /// A connection was requested and not cancelled: keep trying.
        var wanted = false
        var connectInFlight = false
        var reportedConnected = false
        var cancelRequested = false
        var retryScheduled = false
        /// BlueZ has no object for the device (never seen, or forgotten 30 s after a scan):
        /// discovery runs until it reappears, then `Connect` is issued.
        var awaitingDevice = false
        /// Renewed when the link or attempt ends, so late replies of an earlier one are ignored.
        var generation: Int
        var pendingServiceDiscovery: [[BluetoothUUID]?] = []
        var characteristics: [CharacteristicPath: DBusObjectPath] = [:]
        /// Each service's object (the lowest, for a UUID served twice), to tell a service
        /// removed or moved by Service Changed from one added.
        var serviceObjects: [BluetoothUUID: DBusObjectPath] = [:]
        var byObjectPath: [DBusObjectPath: CharacteristicPath] = [:]
        var notifying: Set<CharacteristicPath> = []
        var operations: [CharacteristicPath: [Operation]] = [:]
        var busy: Set<CharacteristicPath> = []
        /// `Value` changes seen while a read is outstanding on that characteristic.
        var heldValues: [CharacteristicPath: [Data]] = [:]
        var commandWritesInFlight = 0
        var wantsReadyToWrite = false
        /// The GATT database lacked what the client asked for: BlueZ's cache may be stale
        /// (a device without Service Changed after a firmware update). Forget the device when
        /// this link ends, so the next connection discovers everything afresh.
        var suspectCache = false
        /// `ServicesResolved` came; the tree is being read again before the link is reported.
        var refreshingTree = false
        /// A `Disconnect` we asked for has not completed yet.
        var disconnectOutstanding = false
        /// `connect` came while that disconnection was outstanding: report it, then connect
        /// again (CoreBluetooth's order: the cancel's disconnection, then the new connection).
        var reconnectAfterDisconnect = false
        /// `AcquireNotify` sockets: notifications arrive on them instead of as `Value` signals.
        var notifySockets: [CharacteristicPath: BlueZAcquiredSocket] = [:]
        /// `AcquireWrite` sockets: a write without response is one packet on them.
        var writeSockets: [CharacteristicPath: BlueZAcquiredSocket] = [:]
        /// bluetoothd refused to hand out a socket: D-Bus calls for the rest of this link.
        var notifyAcquireRefused: Set<CharacteristicPath> = []
        /// Waits for bluetoothd to release a notification socket before acquiring one.
        var notifyAcquireWaits: [CharacteristicPath: Int] = [:]
        /// Writes without response parked at the head of their queue until their socket drains.
        var parkedWrites: Set<CharacteristicPath> = []
        var writeAcquireRefused: Set<CharacteristicPath> = []

        /// Closes every acquired socket (bluetoothd ends the subscriptions).
        mutating func closeSockets() {
            for socket in notifySockets.values { socket.close() }
            for socket in writeSockets.values { socket.close() }
            notifySockets = [:]
            writeSockets = [:]
        }
    }

    /// Operations queued per characteristic, beyond which requests fail (the core keeps one
    /// or two in flight; this bounds a misbehaving caller).
    static let maximumQueuedOperations = 256

    /// Notifications held back while a read is outstanding on their characteristic, at most.
    static let maximumHeldValues = 256

    let connection: DBusConnection
    let configuration: BlueZDriverConfiguration
    let logger: Logger
    private let emit: @Sendable (BLEDriverEvent) -> Void
    private var mirror = BlueZObjectMirror()
    private var bluezOwner: String?
    private var adapterPath: DBusObjectPath?
    private var state: CentralState = .unknown
    private var reason: String?
    private var scanRequested = false
    private var scanServices: [BluetoothUUID]?
    private var allowDuplicates = false
    private var discoveryActive = false
    private var links: [PeripheralID: Link] = [:]
    /// Driver-wide, ever increasing: a reply of an earlier link or attempt never matches a
    /// newer one, even for the same peripheral.
    private var generationCounter = 0

    private func nextGeneration() -> Int {
        generationCounter += 1
        return generationCounter
    }
    private var agentTree: DBusObjectTree?
    /// ``shutdown()`` began: the connection's end is ours, not a loss.
    private var shutDown = false
    private var agentCapability: String?
    private var loadGeneration = 0
    /// bluetoothd's tree has been read since it (re)appeared.
    private var treeLoaded = false
    /// When bluetoothd last appeared on the bus (nil: it was there when the driver started).
    private var bluezAppeared: ContinuousClock.Instant?
    private static let agentPath: DBusObjectPath = "/org/tether/agent"

    init(connection: DBusConnection, configuration: BlueZDriverConfiguration, logger: Logger,
         emit: @escaping @Sendable (BLEDriverEvent) -> Void) {
        self.connection = connection
        self.configuration = configuration
        self.logger = logger
        self.emit = emit
    }

    // MARK: Queue helpers

    func perform(_ body: @escaping @Sendable (BlueZCentral) -> Void) {
        connection.perform { [self] in body(self) }
    }

    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            connection.perform { continuation.resume(returning: body()) }
        }
    }

    private func call(_ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [],
                      timeout: Duration? = nil, _ completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        connection.call(.methodCall(destination: BlueZ.service, path: path, interface: interface, member: member, body: body),
                        timeout: timeout ?? configuration.callTimeout, completion: completion)
    }

    var status: BlueZStatus {
        let adapterProperties = adapterPath.flatMap { mirror.properties($0, BlueZ.adapterInterface) }
        return BlueZStatus(state: state, reason: state == .poweredOn ? nil : reason,
                           adapter: adapterPath?.lastElement, address: adapterProperties?["Address"]?.string,
                           agent: agentCapability)
    }

    // MARK: Start-up

    /// Subscribes to bluetoothd's signals, then reads its tree. Returns once the state is known.
    func start() async {
        let ownerRule = DBusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                      member: "NameOwnerChanged", arg0: BlueZ.service)
        let bluezRule = DBusMatchRule(sender: BlueZ.service)
        // Handlers first, then the bus routes: nothing sent in between is missed (bleak#374).
        // Weak: the connection's tables must not keep the driver alive.
        connection.onSignal(ownerRule) { [weak self] message in
            // Only the bus daemon speaks for name ownership (anyone can send a signal).
            guard message.sender == "org.freedesktop.DBus" else { return }
            self?.nameOwnerChanged(message)
        }
        connection.onSignal(DBusMatchRule()) { [weak self] message in
            guard let self, message.sender != "org.freedesktop.DBus", message.sender == self.bluezOwner else { return }
            self.bluezSignal(message)
        }
        connection.onDisconnect { [weak self] error in self?.busLost(error) }
        do {
            try await connection.addMatch(ownerRule)
            try await connection.addMatch(bluezRule)
        } catch {
            await onQueue { [self] in setState(.unsupported, reason: "the system bus refused a match rule: \(error.message)") }
            return
        }
        let owner: String?
        do {
            let reply = try await connection.call(.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", body: [.string(BlueZ.service)]))
            owner = reply.body.first?.string
        } catch {
            owner = nil
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            perform { central in
                guard let owner else {
                    central.setState(.unsupported, reason: "bluetoothd is not running (no owner of org.bluez on \(central.connection.address))")
                    continuation.resume()
                    return
                }
                central.bluezOwner = owner
                central.load { continuation.resume() }
            }
        }
    }

    /// Reads bluetoothd's whole tree and picks the adapter.
    private func load(_ done: @escaping @Sendable () -> Void) {
        loadGeneration += 1
        treeLoaded = false
        let generation = loadGeneration
        connection.call(.methodCall(destination: BlueZ.service, path: .root, interface: BlueZ.objectManagerInterface,
                                    member: "GetManagedObjects"), timeout: configuration.callTimeout) { [self] result in
            guard generation == loadGeneration else { return done() }
            switch result {
            case .success(let reply):
                mirror.load(reply.body.first ?? .array(.byte, []))
                treeLoaded = true
                chooseAdapter()
                registerAgent(then: done)
            case .failure(let error):
                defer { done() }
                if error.name == DBusError.accessDenied {
                    setState(.unauthorized, reason: "the bus policy does not let this user talk to bluetoothd (\(error.message)); join the bluetooth group")
                } else {
                    setState(.unsupported, reason: "bluetoothd did not answer GetManagedObjects: \(error.message)")
                }
            }
        }
    }

    /// How long after bluetoothd (re)appears a missing adapter is `resetting`, not
    /// `unsupported`: bluetoothd takes its bus name before its adapters are up.
    static let adapterGrace: Duration = .seconds(10)

    /// False while bluetoothd has just (re)appeared and its adapters may still come.
    private func adaptersSettled() -> Bool {
        guard let since = bluezAppeared else { return true }
        let elapsed = ContinuousClock.now - since
        guard elapsed < Self.adapterGrace else { return true }
        setState(.resetting, reason: "bluetoothd is starting: waiting for its adapters")
        let remaining = Self.adapterGrace - elapsed
        connection.queue.asyncAfter(deadline: .now() + DispatchTimeInterval(remaining + .milliseconds(1))) { [weak self] in
            guard let self, self.adapterPath == nil, self.treeLoaded, self.bluezOwner != nil else { return }
            self.chooseAdapter()
        }
        return false
    }

    private func chooseAdapter() {
        let adapters = mirror.paths(with: BlueZ.adapterInterface)
        let chosen: DBusObjectPath?
        if let wanted = configuration.adapter {
            chosen = adapters.first { $0.lastElement == wanted }
            if chosen == nil {
                adapterPath = nil
                guard adaptersSettled() else { return }
                setState(.unsupported, reason: adapters.isEmpty ? "no Bluetooth adapter"
                    : "no adapter \(wanted) (have \(Self.list(adapters.map(\.lastElement))))")
                return
            }
        } else {
            chosen = adapters.first { mirror.properties($0, BlueZ.adapterInterface)?["Powered"]?.bool == true } ?? adapters.first
        }
        guard let chosen else {
            adapterPath = nil
            guard adaptersSettled() else { return }
            setState(.unsupported, reason: "no Bluetooth adapter")
            return
        }
        adapterPath = chosen
        updateAdapterState()
    }

    /// A short list for a sentence: the first few names, then how many more.
    static func list(_ names: [String], limit: Int = 6) -> String {
        let sorted = names.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        let shown = sorted.prefix(limit).joined(separator: ", ")
        return sorted.count > limit ? "\(shown) and \(sorted.count - limit) more" : shown
    }

    private func updateAdapterState() {
        guard let adapterPath, let properties = mirror.properties(adapterPath, BlueZ.adapterInterface) else { return }
        let powerState = properties["PowerState"]?.string
        if powerState == "off-blocked" {
            setState(.poweredOff, reason: "\(adapterPath.lastElement) is blocked by rfkill")
        } else if properties["Powered"]?.bool == true {
            setState(.poweredOn, reason: nil)
        } else {
            setState(.poweredOff, reason: "\(adapterPath.lastElement) is powered off")
        }
    }

    private func registerAgent(then done: @escaping @Sendable () -> Void) {
        guard let agent = configuration.agent, agentTree == nil else { return done() }
        let tree = DBusObjectTree(connection: connection, root: Self.agentPath)
        tree.add(Self.agentPath, interfaces: [agent.interface(logger: logger) { [weak self] device in
            self?.isOurDevice(device) ?? false
        }])
        tree.export()
        agentTree = tree
        call("/org/bluez", BlueZ.agentManagerInterface, "RegisterAgent", [.objectPath(Self.agentPath), .string(agent.capability)]) { [self] result in
            if case .failure(let error) = result {
                logger.warning("could not register the pairing agent: \(error)")
                return done()
            }
            agentCapability = agent.capability
            call("/org/bluez", BlueZ.agentManagerInterface, "RequestDefaultAgent", [.objectPath(Self.agentPath)]) { [self] result in
                if case .failure(let error) = result { logger.info("pairing agent registered, not default: \(error)") }
                done()
            }
        }
    }

    /// Whether `device` is one this driver is connecting or connected to (the agent answers
    /// for those only). On the connection's queue.
    private func isOurDevice(_ device: DBusObjectPath) -> Bool {
        links.values.contains { $0.path == device && ($0.wanted || $0.reportedConnected) }
    }

    // MARK: State

    private func setState(_ newState: CentralState, reason: String?) {
        self.reason = reason
        guard newState != state else { return }
        let old = state
        state = newState
        if let reason, newState != .poweredOn { logger.notice("Bluetooth is \(newState): \(reason)") }
        emit(.stateChanged(newState))
        if old == .poweredOn {
            // Below poweredOn every link is gone, with or without BlueZ saying so per device.
            discoveryActive = false
            dropAllLinks(error: .bluetoothUnavailable(newState))
        }
        if newState == .poweredOn, discoveryWanted { startDiscovery() }
    }

    private func dropAllLinks(error: DriverError) {
        for id in links.keys.sorted(by: { $0.uuid.uuidString < $1.uuid.uuidString }) {
            guard var link = links[id] else { continue }
            if link.reportedConnected {
                linkDown(id, error: link.cancelRequested ? nil : error)
            } else if link.wanted || link.connectInFlight {
                endAttempt(&link)
                links[id] = link
                emit(.failedToConnect(id, .bluetoothUnavailable(state)))
            }
        }
    }

    private func nameOwnerChanged(_ message: DBusMessage) {
        guard message.body.count >= 3, message.body[0].string == BlueZ.service else { return }
        let newOwner = message.body[2].string ?? ""
        if newOwner.isEmpty {
            logger.warning("bluetoothd left the bus")
            bluezOwner = nil
            loadGeneration += 1
            setState(.resetting, reason: "bluetoothd restarted or stopped")
            mirror.removeAll()
            treeLoaded = false
            adapterPath = nil
            agentTree?.unexport()
            agentTree = nil
            agentCapability = nil
        } else {
            logger.info("bluetoothd is on the bus as \(newOwner)")
            bluezOwner = newOwner
            bluezAppeared = ContinuousClock.now
            load {}
        }
    }

    private func busLost(_ error: DBusError) {
        bluezOwner = nil
        // shutdown() closed it: nothing was lost.
        guard !shutDown else { return }
        setState(.unsupported, reason: "lost the system bus: \(error.message)")
    }

    // MARK: Signals

    private func bluezSignal(_ message: DBusMessage) {
        switch (message.interface, message.member) {
        case (BlueZ.objectManagerInterface, "InterfacesAdded"):
            guard let (path, interfaces) = mirror.interfacesAdded(message.body) else { return }
            // Until GetManagedObjects answered, the mirror holds only what was announced
            // meanwhile: choosing now would pick from a partial tree.
            if interfaces.contains(BlueZ.adapterInterface), adapterPath == nil, bluezOwner != nil, treeLoaded { chooseAdapter() }
            if interfaces.contains(BlueZ.deviceInterface) {
                deviceSeen(path, changed: nil)
                deviceAvailable(path)
            }
            if interfaces.contains(BlueZ.serviceInterface) || interfaces.contains(BlueZ.characteristicInterface) {
                gattChanged(under: path)
            }
        case (BlueZ.objectManagerInterface, "InterfacesRemoved"):
            guard let (path, interfaces) = mirror.interfacesRemoved(message.body) else { return }
            if interfaces.contains(BlueZ.adapterInterface), path == adapterPath {
                adapterPath = nil
                setState(.unsupported, reason: "the Bluetooth adapter \(path.lastElement) was removed")
                chooseAdapterIfAny()
            }
            if interfaces.contains(BlueZ.deviceInterface) { deviceRemoved(path) }
            if interfaces.contains(BlueZ.serviceInterface) || interfaces.contains(BlueZ.characteristicInterface) {
                gattChanged(under: path)
            }
        case (BlueZ.propertiesInterface, "PropertiesChanged"):
            guard let path = message.path, let (interface, changed) = mirror.propertiesChanged(path: path, message.body) else { return }
            switch interface {
            case BlueZ.adapterInterface where path == adapterPath:
                updateAdapterState()
                if changed["Discovering"]?.bool == false, discoveryActive, discoveryWanted, state == .poweredOn {
                    // Another client's StopDiscovery or a controller restart: ask again.
                    discoveryActive = false
                    startDiscovery()
                }
            case BlueZ.deviceInterface:
                devicePropertiesChanged(path, changed)
            case BlueZ.characteristicInterface:
                if let value = changed["Value"]?.bytes { valueChanged(path, value) }
            default:
                break
            }
        case (BlueZ.deviceInterface, "Disconnected"):
            // BlueZ ≥ 5.83 names the reason; Connected=false follows and reports the link.
            if let path = message.path, let id = peripheralID(for: path) {
                pendingDisconnectReason[id] = message.body.first?.string == "org.bluez.Reason.Timeout" ? .connectionTimeout : nil
            }
        default:
            break
        }
    }

    private var pendingDisconnectReason: [PeripheralID: DriverError] = [:]

    private func chooseAdapterIfAny() {
        if !mirror.paths(with: BlueZ.adapterInterface).isEmpty, configuration.adapter == nil { chooseAdapter() }
    }

    // MARK: Scanning

    func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) {
        scanRequested = true
        scanServices = services
        self.allowDuplicates = allowDuplicates
        guard state == .poweredOn else { return }
        startDiscovery()
        // Devices BlueZ already knows and has heard recently: report them now, since BlueZ
        // signals nothing for an unchanged advertisement.
        for path in devicePaths() { deviceSeen(path, changed: nil) }
    }

    func stopScan() {
        scanRequested = false
        updateDiscovery()
    }

    /// Discovery runs while the app scans or a connection waits for its device to reappear.
    private var discoveryWanted: Bool {
        scanRequested || links.values.contains { $0.awaitingDevice && $0.wanted }
    }

    private func updateDiscovery() {
        if discoveryWanted {
            if state == .poweredOn { startDiscovery() }
        } else if discoveryActive, let adapterPath {
            discoveryActive = false
            call(adapterPath, BlueZ.adapterInterface, "StopDiscovery") { [self] result in
                if case .failure(let error) = result, !error.message.contains("No discovery started") {
                    logger.debug("StopDiscovery: \(error)")
                }
            }
        }
    }

    private func startDiscovery() {
        guard let adapterPath else { return }
        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(allowDuplicates)]
        // A device awaited for a connection may not advertise the scan's services: no UUID
        // filter then (reports are filtered here anyway).
        let awaiting = links.values.contains { $0.awaitingDevice && $0.wanted }
        if scanRequested, !awaiting, let scanServices, !scanServices.isEmpty { filter["UUIDs"] = .strings(scanServices.map(\.longString)) }
        call(adapterPath, BlueZ.adapterInterface, "SetDiscoveryFilter", [.properties(filter)]) { [self] result in
            if case .failure(let error) = result { logger.debug("SetDiscoveryFilter: \(error)") }
            guard discoveryWanted, !discoveryActive, state == .poweredOn else { return }
            discoveryActive = true
            call(adapterPath, BlueZ.adapterInterface, "StartDiscovery") { [self] result in
                guard case .failure(let error) = result else { return }
                if error.name == "org.bluez.Error.InProgress" { return }
                discoveryActive = false
                logger.warning("StartDiscovery failed: \(error)")
                if error.name == "org.bluez.Error.NotReady" { setState(.poweredOff, reason: "\(adapterPath.lastElement) is not ready") }
            }
        }
    }

    private func devicePaths() -> [DBusObjectPath] {
        guard let adapterPath else { return [] }
        return mirror.paths(with: BlueZ.deviceInterface, under: adapterPath)
    }

    private func deviceSeen(_ path: DBusObjectPath, changed: [String: DBusValue]?) {
        guard scanRequested, state == .poweredOn, let adapterPath, path.parent == adapterPath,
              let properties = mirror.properties(path, BlueZ.deviceInterface) else { return }
        // Only fresh advertisements: BlueZ keeps cached devices (RSSI absent) in its tree.
        guard let rssi = properties["RSSI"]?.integer else { return }
        if let changed {
            let advertising: Set<String> = ["RSSI", "Name", "Alias", "ManufacturerData", "ServiceData", "UUIDs", "TxPower"]
            guard !advertising.isDisjoint(with: changed.keys) else { return }
        }
        guard let id = peripheralID(for: path) else { return }
        let advertisement = BlueZMapping.advertisement(from: properties)
        // BlueZ merges every client's discovery filter: filter again here.
        if let scanServices, !scanServices.isEmpty {
            guard !Set(scanServices).isDisjoint(with: advertisement.serviceUUIDs) else { return }
        }
        let address = properties["Address"]?.string ?? ""
        let alias = properties["Alias"]?.string
        let name = properties["Name"]?.string ?? alias.flatMap { $0.replacingOccurrences(of: "-", with: ":") == address ? nil : $0 }
        emit(.discovered(DiscoveredPeripheral(id: id, name: name, advertisement: advertisement, rssi: Int(clamping: rssi))))
    }

    private func deviceRemoved(_ path: DBusObjectPath) {
        guard let id = peripheralID(for: path), let link = links[id] else { return }
        if link.reportedConnected {
            linkDown(id, error: link.cancelRequested ? nil : .peripheralDisconnected)
        } else if link.wanted, !link.connectInFlight {
            awaitDevice(id)
        }
    }

    // MARK: Identity

    private var adapterIndex: UInt8 {
        adapterPath.flatMap { BlueZMapping.adapterIndex($0.lastElement) } ?? 0
    }

    /// The ID of a device of *our* adapter; nil for other adapters' devices (each adapter has
    /// its own object for a peripheral it has seen, and only ours is our link).
    private func peripheralID(for path: DBusObjectPath) -> PeripheralID? {
        guard let adapterPath, path.parent == adapterPath else { return nil }
        guard let address = mirror.properties(path, BlueZ.deviceInterface)?["Address"]?.string
                ?? Self.address(fromDevicePath: path) else { return nil }
        return BlueZMapping.peripheralID(adapterIndex: adapterIndex, address: address)
    }

    /// The object path BlueZ gives the device of `id` on our adapter (whether it exists now).
    private func expectedDevicePath(for id: PeripheralID) -> DBusObjectPath? {
        guard let (index, address) = BlueZMapping.address(of: id), let adapterPath, index == adapterIndex else { return nil }
        return adapterPath.appending("dev_" + address.replacingOccurrences(of: ":", with: "_"))
    }

    private static func address(fromDevicePath path: DBusObjectPath) -> String? {
        let element = path.lastElement
        guard element.hasPrefix("dev_") else { return nil }
        return element.dropFirst(4).replacingOccurrences(of: "_", with: ":")
    }

    // MARK: Connections

    func connect(_ id: PeripheralID) {
        guard state == .poweredOn else {
            emit(.failedToConnect(id, .bluetoothUnavailable(state)))
            return
        }
        guard let path = links[id]?.path ?? expectedDevicePath(for: id) else {
            emit(.failedToConnect(id, .connectionFailed("not a BlueZ device of \(adapterPath?.lastElement ?? "this adapter") (\(id))")))
            return
        }
        if var pending = links[id], pending.disconnectOutstanding {
            pending.reconnectAfterDisconnect = true
            links[id] = pending
            return
        }
        var link = links[id] ?? Link(path: path, generation: nextGeneration())
        link.wanted = true
        link.cancelRequested = false
        links[id] = link
        if link.reportedConnected { return }
        guard let properties = mirror.properties(path, BlueZ.deviceInterface) else {
            // Never seen, or forgotten (BlueZ drops unconnected devices 30 s after a scan):
            // scan until it advertises again, then connect. Like CoreBluetooth, the request
            // stands until it succeeds or is cancelled.
            awaitDevice(id)
            return
        }
        if properties["Connected"]?.bool == true, properties["ServicesResolved"]?.bool == true {
            linkUp(id)
        } else if !link.connectInFlight {
            issueConnect(id)
        }
    }

    /// When each of our devices last went down (for ``BlueZDriverConfiguration/reconnectSettleTime``);
    /// entries older than that are dropped, so this holds the devices of the last moments only.
    private var lastLinkDown: [DBusObjectPath: ContinuousClock.Instant] = [:]

    private func noteLinkDown(_ path: DBusObjectPath) {
        guard configuration.reconnectSettleTime > .zero else { return }
        let now = ContinuousClock.now
        lastLinkDown = lastLinkDown.filter { now - $0.value < configuration.reconnectSettleTime }
        lastLinkDown[path] = now
    }

    private func awaitDevice(_ id: PeripheralID) {
        guard var link = links[id], !link.awaitingDevice else { return }
        link.awaitingDevice = true
        links[id] = link
        logger.info("\(link.path) is unknown to BlueZ: scanning for it")
        updateDiscovery()
    }

    /// A device object appeared (or advertised) under our adapter: a connection waiting for it
    /// goes ahead.
    private func deviceAvailable(_ path: DBusObjectPath) {
        guard let id = peripheralID(for: path), var link = links[id], link.awaitingDevice, link.wanted else { return }
        link.awaitingDevice = false
        links[id] = link
        updateDiscovery()
        issueConnect(id)
    }

    private func issueConnect(_ id: PeripheralID) {
        guard var link = links[id], link.wanted, !link.connectInFlight else { return }
        if let wait = BlueZMapping.reconnectDelay(lastLinkDown: lastLinkDown[link.path], now: .now,
                                                  settle: configuration.reconnectSettleTime) {
            logger.debug("Connect \(link.path) in \(wait): its last link is still being torn down")
            scheduleConnectRetry(id, after: wait)
            return
        }
        lastLinkDown[link.path] = nil
        link.connectInFlight = true
        link.retryScheduled = false
        links[id] = link
        let generation = link.generation
        logger.debug("Connect \(link.path)")
        call(link.path, BlueZ.deviceInterface, "Connect", timeout: .seconds(60)) { [self] result in
            guard var link = links[id], link.generation == generation else { return }
            link.connectInFlight = false
            links[id] = link
            let device = mirror.properties(link.path, BlueZ.deviceInterface)
            logger.debug("Connect \(link.path) answered \(result.isSuccess ? "ok" : "error"); Connected=\(device?["Connected"]?.bool ?? false) ServicesResolved=\(device?["ServicesResolved"]?.bool ?? false)")
            switch result {
            case .success:
                if device?["ServicesResolved"]?.bool == true, link.wanted {
                    linkUp(id)
                }
                // Otherwise `ServicesResolved` (or `Connected=false`) decides.
            case .failure(let error):
                guard link.wanted else { return }
                if error.name == "org.bluez.Error.AlreadyConnected" {
                    if mirror.properties(link.path, BlueZ.deviceInterface)?["ServicesResolved"]?.bool == true { linkUp(id) }
                    return
                }
                if error.name == DBusError.unknownObject || error.name == DBusError.unknownMethod {
                    // Removed between our look and the call: wait for it to advertise again.
                    awaitDevice(id)
                    return
                }
                if BlueZMapping.isRetryableConnectFailure(name: error.name, message: error.message) {
                    logger.info("Connect \(link.path) ended (\(error.message)); trying again")
                    scheduleConnectRetry(id)
                    return
                }
                link.wanted = false
                links[id] = link
                emit(.failedToConnect(id, BlueZMapping.driverError(name: error.name, message: error.message)))
            }
        }
    }

    private func scheduleConnectRetry(_ id: PeripheralID, after delay: Duration? = nil) {
        guard var link = links[id], link.wanted, !link.retryScheduled else { return }
        link.retryScheduled = true
        links[id] = link
        let generation = link.generation
        let delay = delay ?? configuration.connectRetryDelay
        connection.queue.asyncAfter(deadline: .now() + DispatchTimeInterval(delay)) { [self] in
            guard var link = links[id], link.generation == generation, link.retryScheduled else { return }
            link.retryScheduled = false
            links[id] = link
            guard link.wanted, !link.reportedConnected, state == .poweredOn else { return }
            issueConnect(id)
        }
    }

    func cancelConnection(_ id: PeripheralID) {
        guard var link = links[id] else {
            // Nothing of ours; CoreBluetooth reports a cancelled unknown request as a disconnection.
            emit(.disconnected(id, error: nil, isReconnecting: false))
            return
        }
        let wasPending = !link.reportedConnected
        link.wanted = false
        link.cancelRequested = true
        link.retryScheduled = false
        link.awaitingDevice = false
        links[id] = link
        let connected = mirror.properties(link.path, BlueZ.deviceInterface)?["Connected"]?.bool == true
        if connected || link.connectInFlight || link.refreshingTree {
            link.disconnectOutstanding = true
            links[id] = link
            // Disconnect also aborts a Connect in progress.
            call(link.path, BlueZ.deviceInterface, "Disconnect") { [self] result in
                if case .failure(let error) = result { logger.debug("Disconnect: \(error)") }
                // bluezoo and some BlueZ paths do not signal Connected=false for a pending attempt.
                guard let link = links[id], link.cancelRequested else { return }
                if mirror.properties(link.path, BlueZ.deviceInterface)?["Connected"]?.bool != true {
                    if link.reportedConnected { linkDown(id, error: nil) } else { finishCancelledAttempt(id) }
                }
            }
        }
        if wasPending && !link.connectInFlight && !connected {
            finishCancelledAttempt(id)
        }
    }

    private func finishCancelledAttempt(_ id: PeripheralID) {
        guard let link = links.removeValue(forKey: id) else { return }
        pendingDisconnectReason[id] = nil
        updateDiscovery()
        emit(.disconnected(id, error: nil, isReconnecting: false))
        if link.reconnectAfterDisconnect { connect(id) }
    }

    private func devicePropertiesChanged(_ path: DBusObjectPath, _ changed: [String: DBusValue]) {
        deviceSeen(path, changed: changed)
        if changed["Connected"]?.bool == false, path.parent == adapterPath {
            noteLinkDown(path)
        }
        guard let id = peripheralID(for: path), let link = links[id] else { return }
        if changed["Connected"] != nil || changed["ServicesResolved"] != nil {
            logger.debug("\(path): \(changed.filter { $0.key == "Connected" || $0.key == "ServicesResolved" }.map { "\($0.key)=\($0.value.bool ?? false)" }.sorted().joined(separator: " ")) (wanted \(link.wanted), reported \(link.reportedConnected), in flight \(link.connectInFlight), refreshing \(link.refreshingTree))")
        }
        // Not gated on the mirror's `Connected`: in the guest a `Connected=true` was seen to
        // be missing from the mirror when `ServicesResolved` came (the attempt then hung);
        // `linkUp` reads the tree again and reports the link only if bluetoothd says it is up.
        if changed["ServicesResolved"]?.bool == true, link.wanted, !link.reportedConnected {
            linkUp(id)
        }
        if changed["ServicesResolved"]?.bool == true, link.reportedConnected {
            rebuildGATT(id)
            answerServiceDiscovery(id)
        }
        if changed["Connected"]?.bool == false {
            if link.reportedConnected {
                let error = link.cancelRequested ? nil : (pendingDisconnectReason.removeValue(forKey: id) ?? .peripheralDisconnected)
                linkDown(id, error: error)
            } else if link.cancelRequested {
                finishCancelledAttempt(id)
            } else if link.wanted, !link.connectInFlight {
                // An attempt that BlueZ aborted (le-connection-abort-by-local): retry once the
                // link is really down.
                scheduleConnectRetry(id)
            }
        }
    }

    /// `ServicesResolved` is true: read the tree once more before reporting the link.
    /// bluetoothd queues `InterfacesAdded` of the GATT objects and the `ServicesResolved`
    /// change separately, and the change can come first (seen with bluetoothd 5.66); the
    /// objects are registered by then, so `GetManagedObjects` has them.
    private func linkUp(_ id: PeripheralID) {
        guard var link = links[id], !link.reportedConnected, !link.refreshingTree else { return }
        link.refreshingTree = true
        links[id] = link
        let generation = link.generation
        connection.call(.methodCall(destination: BlueZ.service, path: .root, interface: BlueZ.objectManagerInterface,
                                    member: "GetManagedObjects"), timeout: configuration.callTimeout) { [weak self] result in
            guard let self, var link = self.links[id], link.generation == generation else {
                self?.logger.debug("tree for \(id) read after its attempt ended")
                return
            }
            link.refreshingTree = false
            self.links[id] = link
            if case .success(let reply) = result { self.mirror.load(reply.body.first ?? .array(.byte, [])) }
            self.logger.debug("tree read for \(link.path): \(result.isSuccess ? "ok" : "failed"); Connected=\(self.mirror.properties(link.path, BlueZ.deviceInterface)?["Connected"]?.bool ?? false)")
            // The link may have gone meanwhile (Connected=false came before the reply).
            guard link.wanted, !link.reportedConnected,
                  self.mirror.properties(link.path, BlueZ.deviceInterface)?["Connected"]?.bool == true else {
                if link.wanted, !link.connectInFlight { self.scheduleConnectRetry(id) }
                return
            }
            self.reportLinkUp(id)
        }
    }

    private func reportLinkUp(_ id: PeripheralID) {
        guard var link = links[id], !link.reportedConnected else { return }
        pendingDisconnectReason[id] = nil
        link.reportedConnected = true
        link.connectInFlight = false
        links[id] = link
        rebuildGATT(id, reportingChanges: false)
        logger.info("connected \(link.path)")
        emit(.connected(id))
        answerServiceDiscovery(id)
    }

    /// Nothing more is pending for this link: no request, no attempt, no retry, no wait; late
    /// replies of what was pending no longer match it.
    private func endAttempt(_ link: inout Link) {
        link.wanted = false
        link.connectInFlight = false
        link.retryScheduled = false
        link.awaitingDevice = false
        link.refreshingTree = false
        link.generation = nextGeneration()
    }

    private func linkDown(_ id: PeripheralID, error: DriverError?) {
        // What came on the sockets before the link went down is reported before it.
        drainNotifications(of: id, completely: true)
        guard var link = links[id] else { return }
        let notifying = link.notifying.subtracting(link.notifySockets.keys)
        let paths = link.characteristics
        link.closeSockets()
        link.notifyAcquireRefused = []
        link.notifyAcquireWaits = [:]
        link.parkedWrites = []
        link.writeAcquireRefused = []
        link.reportedConnected = false
        endAttempt(&link)
        pendingDisconnectReason[id] = nil
        let pendingDiscoveries = link.pendingServiceDiscovery
        link.pendingServiceDiscovery = []
        link.operations = [:]
        link.busy = []
        link.heldValues = [:]
        link.notifying = []
        link.commandWritesInFlight = 0
        link.wantsReadyToWrite = false
        let again = link.reconnectAfterDisconnect
        if link.cancelRequested || link.suspectCache || again {
            links[id] = nil
        } else {
            links[id] = link
        }
        let deviceProperties = mirror.properties(link.path, BlueZ.deviceInterface) ?? [:]
        let bonded = deviceProperties["Paired"]?.bool == true || deviceProperties["Bonded"]?.bool == true
        if link.suspectCache, bonded {
            logger.notice("\(link.path) is paired: keeping it (RemoveDevice would unpair it); remove it by hand if its services changed")
        }
        if link.suspectCache, !bonded, let adapterPath {
            // RemoveDevice drops BlueZ's cached GATT database (and any bond); a scan finds the
            // device again and the next connection discovers its services afresh.
            let path = link.path
            call(adapterPath, BlueZ.adapterInterface, "RemoveDevice", [.objectPath(path)]) { [logger] result in
                if case .failure(let error) = result { logger.info("RemoveDevice \(path): \(error)") }
            }
        }
        // Notify sessions outlive a disconnect in BlueZ and come back on reconnect; Tether
        // subscribes again on every start, so end them now.
        for characteristic in notifying.sorted(by: { $0.description < $1.description }) {
            guard let objectPath = paths[characteristic] else { continue }
            call(objectPath, BlueZ.characteristicInterface, "StopNotify") { _ in }
        }
        for _ in pendingDiscoveries { emit(.servicesDiscovered(id, [], .peripheralDisconnected)) }
        logger.info("disconnected \(link.path)\(error.map { ": \($0)" } ?? "")")
        emit(.disconnected(id, error: error, isReconnecting: false))
        if again { connect(id) }
    }

    // MARK: Discovery

    /// Maps the link's characteristics to their objects again. `reportingChanges`: the link
    /// was already reported up, so services whose objects changed (Service Changed: removed,
    /// added, moved) are reported invalidated for the core to rediscover.
    private func rebuildGATT(_ id: PeripheralID, reportingChanges: Bool = true) {
        guard var link = links[id] else { return }
        var characteristics: [CharacteristicPath: DBusObjectPath] = [:]
        var reverse: [DBusObjectPath: CharacteristicPath] = [:]
        var serviceObjects: [BluetoothUUID: DBusObjectPath] = [:]
        for servicePath in mirror.paths(with: BlueZ.serviceInterface, under: link.path) {
            guard let serviceUUID = mirror.properties(servicePath, BlueZ.serviceInterface)?["UUID"]?.string
                .flatMap(BluetoothUUID.init(string:)) else { continue }
            if serviceObjects[serviceUUID].map({ servicePath < $0 }) ?? true { serviceObjects[serviceUUID] = servicePath }
            for charPath in mirror.paths(with: BlueZ.characteristicInterface, under: servicePath) {
                guard let properties = mirror.properties(charPath, BlueZ.characteristicInterface),
                      let uuid = properties["UUID"]?.string.flatMap(BluetoothUUID.init(string:)) else { continue }
                let key = CharacteristicPath(service: serviceUUID, characteristic: uuid)
                // Duplicates map to the lowest handle, as `CharacteristicPath` can name only one.
                if characteristics[key] == nil { characteristics[key] = charPath }
                reverse[charPath] = key
            }
        }
        // A socket whose characteristic changed object (Service Changed) belongs to the old one.
        var lost: [CharacteristicPath] = []
        for (key, socket) in link.notifySockets where characteristics[key] != link.characteristics[key] {
            socket.close()
            link.notifySockets[key] = nil
            link.notifying.remove(key)
            lost.append(key)
        }
        var unblocked: [CharacteristicPath] = []
        for (key, socket) in link.writeSockets where characteristics[key] != link.characteristics[key] {
            // A write waiting for this socket's space runs again on the new object (or fails).
            socket.close()
            link.writeSockets[key] = nil
            if link.parkedWrites.remove(key) != nil {
                link.busy.remove(key)
                unblocked.append(key)
            }
        }
        // Invalidated: a service that was there and is gone, moved, or whose characteristics
        // changed; a service only added is reported as an addition (an empty list).
        let known = Set(link.serviceObjects.keys)
        var invalidated = Set(known.filter { serviceObjects[$0] != link.serviceObjects[$0] })
        for key in Set(link.characteristics.keys).union(characteristics.keys)
        where link.characteristics[key] != characteristics[key] && known.contains(key.service) {
            invalidated.insert(key.service)
        }
        let added = !Set(serviceObjects.keys).subtracting(known).isEmpty
        link.characteristics = characteristics
        link.serviceObjects = serviceObjects
        link.byObjectPath = reverse
        links[id] = link
        for key in lost.sorted(by: { $0.description < $1.description }) {
            emit(.notificationStateUpdated(id, key, isNotifying: false, .invalidHandle))
        }
        if reportingChanges, !invalidated.isEmpty || added {
            logger.info("GATT changed on \(link.path): invalidated \(invalidated.sorted())\(added ? ", services added" : "")")
            emit(.servicesInvalidated(id, invalidated.sorted()))
        }
        for key in unblocked { runNext(on: key, of: id) }
    }

    private func gattChanged(under path: DBusObjectPath) {
        for (id, link) in links where link.reportedConnected && path.isDescendant(of: link.path) {
            rebuildGATT(id)
        }
    }

    func discoverServices(_ services: [BluetoothUUID]?, on id: PeripheralID) {
        guard var link = links[id], link.reportedConnected else {
            emit(.servicesDiscovered(id, [], .peripheralDisconnected))
            return
        }
        link.pendingServiceDiscovery.append(services)
        links[id] = link
        if mirror.properties(link.path, BlueZ.deviceInterface)?["ServicesResolved"]?.bool == true {
            answerServiceDiscovery(id)
        }
    }

    private func answerServiceDiscovery(_ id: PeripheralID) {
        guard var link = links[id], link.reportedConnected, !link.pendingServiceDiscovery.isEmpty else { return }
        let requests = link.pendingServiceDiscovery
        link.pendingServiceDiscovery = []
        links[id] = link
        var all: [GATTService] = []
        for servicePath in mirror.paths(with: BlueZ.serviceInterface, under: link.path) {
            guard let properties = mirror.properties(servicePath, BlueZ.serviceInterface),
                  let uuid = properties["UUID"]?.string.flatMap(BluetoothUUID.init(string:)) else { continue }
            if !all.contains(where: { $0.uuid == uuid }) {
                all.append(GATTService(uuid: uuid, isPrimary: properties["Primary"]?.bool ?? true))
            }
        }
        for wanted in requests {
            let found = all.filter { wanted == nil || wanted!.contains($0.uuid) }
            if let wanted, found.count < Set(wanted).count { suspectCache(id, missing: "service(s) \(Set(wanted).subtracting(found.map(\.uuid)).sorted())") }
            emit(.servicesDiscovered(id, found, nil))
        }
    }

    func discoverCharacteristics(_ wanted: [BluetoothUUID]?, for service: BluetoothUUID, on id: PeripheralID) {
        guard let link = links[id], link.reportedConnected else {
            emit(.characteristicsDiscovered(id, service: service, [], .peripheralDisconnected))
            return
        }
        var found: [GATTCharacteristic] = []
        for (path, objectPath) in link.characteristics.sorted(by: { $0.value < $1.value }) where path.service == service {
            guard wanted == nil || wanted!.contains(path.characteristic),
                  let properties = mirror.properties(objectPath, BlueZ.characteristicInterface) else { continue }
            let descriptors = mirror.paths(with: BlueZ.descriptorInterface, under: objectPath).compactMap { descriptor in
                mirror.properties(descriptor, BlueZ.descriptorInterface)?["UUID"]?.string
                    .flatMap(BluetoothUUID.init(string:)).map(GATTDescriptor.init(uuid:))
            }
            found.append(GATTCharacteristic(path: path, properties: BlueZMapping.properties(flags: properties["Flags"]?.stringArray ?? []),
                                            descriptors: descriptors))
        }
        guard mirror.paths(with: BlueZ.serviceInterface, under: link.path).contains(where: {
            mirror.properties($0, BlueZ.serviceInterface)?["UUID"]?.string.flatMap(BluetoothUUID.init(string:)) == service
        }) else {
            emit(.characteristicsDiscovered(id, service: service, [], .invalidHandle))
            return
        }
        if let wanted, found.count < Set(wanted).count {
            suspectCache(id, missing: "characteristic(s) \(Set(wanted).subtracting(found.map(\.uuid)).sorted())")
        }
        emit(.characteristicsDiscovered(id, service: service, found, nil))
    }

    private func suspectCache(_ id: PeripheralID, missing: String) {
        guard var link = links[id], !link.suspectCache else { return }
        link.suspectCache = true
        links[id] = link
        logger.notice("\(link.path) lacks \(missing); BlueZ's GATT cache may be stale: the device will be forgotten when this link ends")
    }

    // MARK: GATT operations (one at a time per characteristic: BlueZ answers InProgress otherwise)

    func enqueue(_ operation: Operation, on characteristic: CharacteristicPath, of id: PeripheralID) {
        guard var link = links[id], link.reportedConnected else {
            fail(operation, on: characteristic, of: id, with: .peripheralDisconnected)
            return
        }
        guard link.characteristics[characteristic] != nil else {
            fail(operation, on: characteristic, of: id, with: .invalidHandle)
            return
        }
        guard link.operations[characteristic, default: []].count < Self.maximumQueuedOperations else {
            fail(operation, on: characteristic, of: id, with: .other("more than \(Self.maximumQueuedOperations) operations queued on \(characteristic)"))
            return
        }
        if case .write(_, .withoutResponse) = operation { link.commandWritesInFlight += 1 }
        link.operations[characteristic, default: []].append(operation)
        links[id] = link
        runNext(on: characteristic, of: id)
    }

    private func fail(_ operation: Operation, on characteristic: CharacteristicPath, of id: PeripheralID, with error: DriverError) {
        switch operation {
        case .read: emit(.valueUpdated(id, characteristic, Data(), error))
        case .write(_, .withResponse): emit(.writeCompleted(id, characteristic, error))
        case .write(_, .withoutResponse): logger.warning("write without response to \(characteristic) dropped: \(error)")
        case .notify(let enabled): emit(.notificationStateUpdated(id, characteristic, isNotifying: !enabled, error))
        }
    }

    private func runNext(on characteristic: CharacteristicPath, of id: PeripheralID) {
        guard var link = links[id], !link.busy.contains(characteristic),
              var queue = link.operations[characteristic], !queue.isEmpty else { return }
        guard let objectPath = link.characteristics[characteristic] else {
            // The characteristic left the database (Service Changed): what waits for it fails.
            link.operations[characteristic] = nil
            for operation in queue {
                if case .write(_, .withoutResponse) = operation { link.commandWritesInFlight -= 1 }
            }
            let notifyReady = link.commandWritesInFlight == 0 && link.wantsReadyToWrite
            if notifyReady { link.wantsReadyToWrite = false }
            links[id] = link
            for operation in queue { fail(operation, on: characteristic, of: id, with: .invalidHandle) }
            if notifyReady { emit(.readyToWriteWithoutResponse(id)) }
            return
        }
        let operation = queue.removeFirst()
        link.operations[characteristic] = queue
        link.busy.insert(characteristic)
        if case .read = operation { link.heldValues[characteristic] = [] }
        links[id] = link
        let generation = link.generation
        let finish: @Sendable () -> Void = { [self] in
            guard var link = links[id], link.generation == generation else { return }
            link.busy.remove(characteristic)
            links[id] = link
            runNext(on: characteristic, of: id)
        }
        switch operation {
        case .read:
            call(objectPath, BlueZ.characteristicInterface, "ReadValue", [.properties([:])]) { [self] result in
                guard links[id]?.generation == generation else { return }
                drainNotifications(of: id)
                guard var link = links[id], link.generation == generation else { return }
                let held = link.heldValues.removeValue(forKey: characteristic) ?? []
                links[id] = link
                switch result {
                case .success(let reply):
                    let value = reply.body.first?.bytes ?? Data()
                    let notifications = BlueZMapping.notifications(heldDuringRead: held, reply: value)
                    if link.notifying.contains(characteristic) {
                        for notification in notifications { emit(.valueUpdated(id, characteristic, notification, nil)) }
                    }
                    emit(.valueUpdated(id, characteristic, value, nil))
                case .failure(let error):
                    if link.notifying.contains(characteristic) {
                        for notification in held { emit(.valueUpdated(id, characteristic, notification, nil)) }
                    }
                    emit(.valueUpdated(id, characteristic, Data(), BlueZMapping.driverError(name: error.name, message: error.message)))
                }
                finish()
            }
        case .write(let data, .withoutResponse) where link.writeSockets[characteristic] != nil:
            sendAcquired(data, on: characteristic, of: id, generation: generation, finish: finish)
        case .write(_, .withoutResponse) where canAcquire("WriteAcquired", objectPath, refused: link.writeAcquireRefused.contains(characteristic)):
            acquire("AcquireWrite", objectPath, on: characteristic, of: id, generation: generation) { link, socket, _ in
                if let socket { link.writeSockets[characteristic] = socket } else { link.writeAcquireRefused.insert(characteristic) }
            } then: { [self] in
                // The write waits in front for the socket (or the D-Bus call when refused).
                retry(operation, on: characteristic, of: id, generation: generation)
            }
        case .notify(true) where link.notifySockets[characteristic] == nil
            && canAcquire("NotifyAcquired", objectPath, refused: link.notifyAcquireRefused.contains(characteristic))
            && mirror.properties(objectPath, BlueZ.characteristicInterface)?["NotifyAcquired"]?.bool == true:
            // bluetoothd still holds a socket: ours, closed a moment ago (it releases it when it
            // notices, and says so with NotifyAcquired=false), or another program's. Wait up to
            // 2 s, then let StartNotify say what is wrong.
            let waits = link.notifyAcquireWaits[characteristic, default: 0]
            if waits >= 20 { link.notifyAcquireRefused.insert(characteristic) }
            link.notifyAcquireWaits[characteristic] = waits + 1
            links[id] = link
            connection.queue.asyncAfter(deadline: .now() + .milliseconds(waits >= 20 ? 0 : 100)) { [self] in
                retry(operation, on: characteristic, of: id, generation: generation)
            }
        case .notify(true) where link.notifySockets[characteristic] == nil
            && canAcquire("NotifyAcquired", objectPath, refused: link.notifyAcquireRefused.contains(characteristic)):
            acquire("AcquireNotify", objectPath, on: characteristic, of: id, generation: generation) { link, socket, _ in
                link.notifyAcquireWaits[characteristic] = nil
                if let socket {
                    link.notifySockets[characteristic] = socket
                    link.notifying.insert(characteristic)
                } else {
                    link.notifyAcquireRefused.insert(characteristic)
                }
            } then: { [self] in
                guard let link = links[id], link.generation == generation else { return }
                guard let socket = link.notifySockets[characteristic] else {
                    // Refused (another client subscribed, indications only …): StartNotify.
                    return retry(operation, on: characteristic, of: id, generation: generation)
                }
                // Weak: the socket's read handler holds these closures.
                socket.startReading({ [self] value in socketValue(characteristic, of: id, value) },
                                    onClose: { [self, weak socket] reason in
                                        guard let socket else { return }
                                        notifySocketClosed(socket, characteristic, of: id, generation: generation, reason: reason)
                                    })
                emit(.notificationStateUpdated(id, characteristic, isNotifying: true, nil))
                finish()
            }
        case .notify(let enabled) where link.notifySockets[characteristic] != nil:
            if !enabled {
                link.notifySockets.removeValue(forKey: characteristic)?.close()
                link.notifying.remove(characteristic)
                links[id] = link
            }
            emit(.notificationStateUpdated(id, characteristic, isNotifying: enabled, nil))
            finish()
        case .write(let data, let type):
            let options: [String: DBusValue] = ["type": .string(type == .withResponse ? "request" : "command")]
            call(objectPath, BlueZ.characteristicInterface, "WriteValue", [.bytes(data), .properties(options)]) { [self] result in
                guard links[id]?.generation == generation else { return }
                drainNotifications(of: id)
                guard var link = links[id], link.generation == generation else { return }
                switch type {
                case .withResponse:
                    if case .failure(let error) = result {
                        emit(.writeCompleted(id, characteristic, BlueZMapping.driverError(name: error.name, message: error.message)))
                    } else {
                        emit(.writeCompleted(id, characteristic, nil))
                    }
                case .withoutResponse:
                    link.commandWritesInFlight -= 1
                    if case .failure(let error) = result {
                        logger.warning("write without response to \(characteristic) failed: \(error)")
                    }
                    if link.commandWritesInFlight == 0, link.wantsReadyToWrite {
                        link.wantsReadyToWrite = false
                        links[id] = link
                        emit(.readyToWriteWithoutResponse(id))
                    } else {
                        links[id] = link
                    }
                }
                finish()
            }
        case .notify(let enabled):
            call(objectPath, BlueZ.characteristicInterface, enabled ? "StartNotify" : "StopNotify") { [self] result in
                guard var link = links[id], link.generation == generation else { return }
                switch result {
                case .success:
                    if enabled { link.notifying.insert(characteristic) } else { link.notifying.remove(characteristic) }
                    links[id] = link
                    emit(.notificationStateUpdated(id, characteristic, isNotifying: enabled, nil))
                case .failure(let error) where !enabled && error.message.contains("No notify session"):
                    link.notifying.remove(characteristic)
                    links[id] = link
                    emit(.notificationStateUpdated(id, characteristic, isNotifying: false, nil))
                case .failure(let error):
                    emit(.notificationStateUpdated(id, characteristic, isNotifying: link.notifying.contains(characteristic),
                                                   BlueZMapping.driverError(name: error.name, message: error.message)))
                }
                finish()
            }
        }
    }

    // MARK: Acquired sockets

    /// Whether to ask bluetoothd for a socket: allowed by the configuration, the bus passes
    /// descriptors (never over TCP), the characteristic offers one (bluetoothd shows
    /// `NotifyAcquired`/`WriteAcquired` only for `notify`/`write-without-response`), it was
    /// not refused on this link, and for writes, it takes no write with response.
    private func canAcquire(_ property: String, _ objectPath: DBusObjectPath, refused: Bool) -> Bool {
        guard property == "WriteAcquired" ? configuration.acquireWriteSockets : configuration.acquireNotifySockets,
              connection.supportsUnixFDs, !refused,
              let properties = mirror.properties(objectPath, BlueZ.characteristicInterface), properties[property] != nil else { return false }
        guard property == "WriteAcquired" else { return true }
        // While a write socket is held bluetoothd refuses every `WriteValue` to the
        // characteristic ("Write acquired"), requests included: only a characteristic that
        // takes nothing but commands gets one.
        let flags = Set(properties["Flags"]?.stringArray ?? [])
        return flags.isDisjoint(with: ["write", "reliable-write", "authenticated-signed-writes"])
    }

    /// Calls `AcquireWrite`/`AcquireNotify`; `store` records the socket (nil: refused) in the
    /// link, then `then` runs. An answer for an ended link closes the socket.
    private func acquire(_ member: String, _ objectPath: DBusObjectPath, on characteristic: CharacteristicPath, of id: PeripheralID,
                         generation: Int, store: @escaping @Sendable (inout Link, BlueZAcquiredSocket?, DBusError?) -> Void,
                         then: @escaping @Sendable () -> Void) {
        // A subscription may wait for a pairing (bluetoothd raises the link's security by
        // itself): the whole call timeout.
        call(objectPath, BlueZ.characteristicInterface, member, [.properties([:])]) { [self] result in
            var socket: BlueZAcquiredSocket?
            var refusal: DBusError?
            switch result {
            case .success(let reply):
                if case .unixFD(let index)? = reply.body.first, Int(index) < reply.unixFDs.count {
                    let mtu = reply.body.count > 1 ? Int(reply.body[1].integer ?? 23) : 23
                    socket = BlueZAcquiredSocket(fd: reply.unixFDs[Int(index)], mtu: mtu, queue: connection.queue)
                    for (offset, fd) in reply.unixFDs.enumerated() where offset != Int(index) { _ = close(fd) }
                } else {
                    for fd in reply.unixFDs { _ = close(fd) }
                    logger.warning("\(member) on \(characteristic) answered without a descriptor: \(reply.body)")
                }
            case .failure(let error):
                refusal = error
                logger.info("\(member) on \(characteristic) refused (\(error.name): \(error.message))")
            }
            guard var link = links[id], link.generation == generation else {
                socket?.close()
                return
            }
            if let socket { logger.debug("\(member) on \(characteristic): socket, MTU \(socket.mtu)") }
            store(&link, socket, refusal)
            links[id] = link
            then()
        }
    }

    /// Puts `operation` back at the head of its queue and runs the queue again.
    private func retry(_ operation: Operation, on characteristic: CharacteristicPath, of id: PeripheralID, generation: Int) {
        guard var link = links[id], link.generation == generation else { return }
        link.operations[characteristic, default: []].insert(operation, at: 0)
        link.busy.remove(characteristic)
        links[id] = link
        runNext(on: characteristic, of: id)
    }

    /// A write without response as one packet on the acquired socket. A full socket is
    /// bluetoothd's back-pressure: the write waits in front until the socket drains, and
    /// ``canSendWriteWithoutResponse(on:)`` says no meanwhile.
    private func sendAcquired(_ data: Data, on characteristic: CharacteristicPath, of id: PeripheralID, generation: Int,
                              finish: @escaping @Sendable () -> Void) {
        let done: @Sendable () -> Void = { [self] in
            guard var link = links[id], link.generation == generation else { return }
            link.commandWritesInFlight -= 1
            let ready = link.commandWritesInFlight == 0 && link.wantsReadyToWrite
            if ready { link.wantsReadyToWrite = false }
            links[id] = link
            if ready { emit(.readyToWriteWithoutResponse(id)) }
            finish()
        }
        guard var link = links[id], let socket = link.writeSockets[characteristic] else {
            // runNext just saw the socket: cannot happen; never leave the queue stuck.
            return done()
        }
        // bluetoothd reads a packet into 512 bytes, and stops reading a socket that gives it
        // an empty one: neither may be sent.
        guard !data.isEmpty, data.count <= min(512, socket.mtu - 3) else {
            logger.warning("write without response to \(characteristic) dropped: \(data.count) bytes (a write socket takes 1…\(min(512, socket.mtu - 3)))")
            return done()
        }
        switch socket.send(data) {
        case .sent:
            done()
        case .wouldBlock:
            link.operations[characteristic, default: []].insert(.write(data, .withoutResponse), at: 0)
            link.parkedWrites.insert(characteristic)
            links[id] = link
            socket.whenWritable { [self] in
                guard var link = links[id], link.generation == generation, link.parkedWrites.remove(characteristic) != nil else { return }
                link.busy.remove(characteristic)
                links[id] = link
                runNext(on: characteristic, of: id)
            }
        case .closed(let reason):
            // The link is going down (its Connected=false follows), or bluetoothd restarted:
            // write over D-Bus, which reports the state of things.
            logger.info("write socket of \(characteristic) closed (\(reason)): writing over D-Bus")
            socket.close()
            link.writeSockets[characteristic] = nil
            link.writeAcquireRefused.insert(characteristic)
            links[id] = link
            retry(.write(data, .withoutResponse), on: characteristic, of: id, generation: generation)
        }
    }

    /// bluetoothd closed a notification socket we did not close. When the link went down, its
    /// `Connected=false` follows (the socket closes first) and ends everything; when it is still
    /// up, the subscription is gone and the client must hear it.
    private func notifySocketClosed(_ socket: BlueZAcquiredSocket, _ characteristic: CharacteristicPath, of id: PeripheralID,
                                    generation: Int, reason: String) {
        guard var link = links[id], link.generation == generation, link.notifySockets[characteristic] === socket,
              let owner = bluezOwner else { return }
        link.notifySockets[characteristic] = nil
        // No session is left to stop, whatever comes next.
        link.notifying.remove(characteristic)
        links[id] = link
        logger.debug("notification socket of \(characteristic) closed: \(reason)")
        // To bluetoothd's unique name: asking org.bluez could start a bluetoothd that was stopped.
        connection.call(.methodCall(destination: owner, path: link.path, interface: BlueZ.propertiesInterface, member: "Get",
                                    body: [.string(BlueZ.deviceInterface), .string("Connected")]), timeout: configuration.callTimeout) { [self] result in
            guard let link = links[id], link.generation == generation, link.reportedConnected,
                  link.notifySockets[characteristic] == nil else { return }
            if case .success(let reply) = result, reply.body.first?.bool == false { return }
            logger.warning("bluetoothd ended the subscription to \(characteristic) while connected: \(reason)")
            emit(.notificationStateUpdated(id, characteristic, isNotifying: false, .other("bluetoothd ended the subscription: \(reason)")))
        }
    }

    private func valueChanged(_ objectPath: DBusObjectPath, _ value: Data) {
        guard let deviceID = links.first(where: { $0.value.byObjectPath[objectPath] != nil })?.key,
              var link = links[deviceID], let characteristic = link.byObjectPath[objectPath],
              link.reportedConnected else { return }
        // With a notification socket a `Value` signal is only ever a read's echo (ours or
        // another program's): notifications come on the socket.
        guard link.notifySockets[characteristic] == nil else { return }
        if link.heldValues[characteristic] != nil {
            link.heldValues[characteristic]?.append(value)
            // Bounded: past this many, the oldest cannot be the read's echo (it comes last).
            var early: Data?
            if let count = link.heldValues[characteristic]?.count, count > Self.maximumHeldValues {
                early = link.heldValues[characteristic]?.removeFirst()
            }
            links[deviceID] = link
            if let early, link.notifying.contains(characteristic) { emit(.valueUpdated(deviceID, characteristic, early, nil)) }
            return
        }
        // Values of characteristics we don't subscribe to are other clients' business.
        guard link.notifying.contains(characteristic) else { return }
        emit(.valueUpdated(deviceID, characteristic, value, nil))
    }

    /// A notification from an acquired socket: reported at once (a read's echo never comes
    /// this way, so nothing is held back).
    private func socketValue(_ characteristic: CharacteristicPath, of id: PeripheralID, _ value: Data) {
        guard let link = links[id], link.reportedConnected, link.notifying.contains(characteristic) else { return }
        emit(.valueUpdated(id, characteristic, value, nil))
    }

    /// Reports what waits in the link's notification sockets: before a reply's event or the
    /// link's end, what came first is reported first.
    /// Each socket is its own source on the queue, so a notification can wait in one while
    /// another source's reply is handled: every socket of the link is drained (in full when
    /// the link ends).
    private func drainNotifications(of id: PeripheralID, completely: Bool = false) {
        guard let sockets = links[id]?.notifySockets, !sockets.isEmpty else { return }
        for (characteristic, socket) in sockets.sorted(by: { $0.key.description < $1.key.description }) {
            for value in socket.drain(completely: completely) { socketValue(characteristic, of: id, value) }
        }
    }

    // MARK: Pairing

    /// Bluetoothd's `Device1.Pair` for a connected link; `AlreadyExists` (paired before) is
    /// success. The bonding agent is the caller's, so this driver's agent answers.
    func pair(_ id: PeripheralID, completion: @escaping @Sendable (Result<Void, DriverError>) -> Void) {
        guard let link = links[id], link.reportedConnected else { return completion(.failure(.peripheralDisconnected)) }
        let path = link.path
        // bluetoothd's own bound on a pairing is its agent timeout; ours is a little longer.
        call(path, BlueZ.deviceInterface, "Pair", timeout: max(configuration.callTimeout, .seconds(90))) { [logger] result in
            switch result {
            case .success:
                logger.info("paired with \(path)")
                completion(.success(()))
            case .failure(let error) where error.name == "org.bluez.Error.AlreadyExists":
                completion(.success(()))
            case .failure(let error):
                logger.warning("pairing with \(path) failed: \(error.name): \(error.message)")
                if error.name == DBusError.noReply || error.name == "org.bluez.Error.AuthenticationTimeout" {
                    completion(.failure(.connectionTimeout))
                } else if error.name == "org.bluez.Error.NotConnected" {
                    completion(.failure(.peripheralDisconnected))
                } else if error.name == "org.bluez.Error.InProgress" {
                    completion(.failure(.other("a pairing with this device is already under way")))
                } else {
                    completion(.failure(.encryptionFailed))
                }
            }
        }
    }

    // MARK: Link queries

    func readRSSI(on id: PeripheralID) {
        guard let link = links[id], link.reportedConnected else {
            emit(.rssiRead(id, 0, .peripheralDisconnected))
            return
        }
        // BlueZ has no RSSI read for a connected LE link; the last advertisement's is all there is.
        if let rssi = mirror.properties(link.path, BlueZ.deviceInterface)?["RSSI"]?.integer {
            emit(.rssiRead(id, Int(clamping: rssi), nil))
        } else {
            emit(.rssiRead(id, 0, .other("RSSI unavailable on BlueZ for a connected device")))
        }
    }

    func maximumWriteValueLength(for type: WriteType, on id: PeripheralID) -> Int {
        switch type {
        case .withResponse:
            // BlueZ turns values longer than MTU − 3 into prepared (long) writes
            return configuration.maximumValueLength
        case .withoutResponse:
            guard let link = links[id] else { return 20 }
            let mtu = link.characteristics.values.compactMap {
                mirror.properties($0, BlueZ.characteristicInterface)?["MTU"]?.integer
            }.max()
            // `MTU` exists from BlueZ 5.62; before that only the default ATT MTU is certain.
            // No attribute value exceeds 512 bytes: at MTU 517 a 514-byte command is dropped
            // by the peripheral's stack without a word (seen with bluetoothd 5.66 on both ends).
            return min(configuration.maximumValueLength, max(20, Int(mtu ?? 23) - 3))
        }
    }

    func canSendWriteWithoutResponse(on id: PeripheralID) -> Bool {
        guard var link = links[id], link.reportedConnected else { return false }
        if link.commandWritesInFlight == 0 { return true }
        link.wantsReadyToWrite = true
        links[id] = link
        return false
    }

    // MARK: Synchronisation

    func synchronize() async {
        let owner = await onQueue { [self] in bluezOwner }
        _ = try? await connection.call(.methodCall(destination: owner ?? "org.freedesktop.DBus", path: .root,
                                                   interface: "org.freedesktop.DBus.Peer", member: "Ping"), timeout: .seconds(5))
    }

    // MARK: Shutdown

    func shutdown() async {
        let connection = self.connection
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            perform { central in
                central.shutDown = true
                central.scanRequested = false
                let remaining = LockedBox(0)
                let finishOne: @Sendable () -> Void = {
                    let left = remaining.decrement()
                    if left == 0 { continuation.resume() }
                }
                var calls: [(DBusObjectPath, String, String, [DBusValue])] = []
                if central.discoveryActive, let adapter = central.adapterPath {
                    calls.append((adapter, BlueZ.adapterInterface, "StopDiscovery", []))
                }
                for (_, link) in central.links where link.reportedConnected || link.connectInFlight {
                    calls.append((link.path, BlueZ.deviceInterface, "Disconnect", []))
                }
                if central.agentTree != nil {
                    calls.append(("/org/bluez", BlueZ.agentManagerInterface, "UnregisterAgent", [.objectPath(Self.agentPath)]))
                }
                central.discoveryActive = false
                for id in Array(central.links.keys) { central.links[id]?.closeSockets() }
                central.links.removeAll()
                remaining.value = calls.count
                if calls.isEmpty { continuation.resume() }
                for (path, interface, member, body) in calls {
                    central.call(path, interface, member, body, timeout: .seconds(5)) { _ in finishOne() }
                }
            }
        }
        connection.close()
    }
}
#endif
