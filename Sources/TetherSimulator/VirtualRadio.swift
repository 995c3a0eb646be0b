import Foundation
import Logging
import TetherCore

/// The virtual world: a central's radio, the peripherals around it, and the links between them.
///
/// Everything happens in the virtual time of the injected clock: advertisements, connection
/// setup, discovery round trips, and connection events that carry a bounded number of packets.
/// Faults (Bluetooth off, out of range, ignored connects, ATT errors, lost responses,
/// peripheral disconnects) are injected through its methods. ``SimulatedDriver`` is the
/// central's view of it.
@SimulationActor
public final class VirtualRadio {
    /// Virtual time since the radio started.
    public nonisolated let timeline: Timeline
    let logger: Logger
    var rng: SplitMix64
    let pathLoss = PathLoss()

    /// The central radio's state.
    public private(set) var centralState: CentralState
    /// The largest ATT MTU the central offers.
    public var centralMaximumMTU = 517
    /// The peripherals in the world, in the order they were added.
    public private(set) var peripherals: [VirtualPeripheral] = []
    /// Traffic counters per peripheral.
    public private(set) var statistics: [PeripheralID: LinkStatistics] = [:]

    var links: [PeripheralID: Link] = [:]
    var pendingConnects: [PeripheralID: (options: ConnectOptions, attempt: Int)] = [:]
    var contexts: [PeripheralID: PeripheralContext] = [:]
    var faults: [FaultRule] = []
    var serviceChangeObservers: [PeripheralID: [@Sendable ([BluetoothUUID]) -> Void]] = [:]
    var scanning: (services: [BluetoothUUID]?, allowDuplicates: Bool, generation: Int, reported: Set<PeripheralID>)?
    var scanGeneration = 0
    var linkSerial = 0
    var connectSerial = 0

    private var eventContinuation: AsyncStream<BLEDriverEvent>.Continuation
    private var currentEvents: AsyncStream<BLEDriverEvent>

    /// Creates a radio whose time comes from `clock`. The same `seed` replays the same RSSI
    /// noise and advertising jitter.
    public nonisolated init(
        clock: some Clock<Duration>,
        seed: UInt64 = 1,
        centralState: CentralState = .poweredOn,
        logger: Logger = Logger(label: "tether.simulator")
    ) {
        timeline = Timeline(clock: clock)
        rng = SplitMix64(seed: seed)
        self.centralState = centralState
        self.logger = logger
        // Unbounded on purpose: dropping a driver event would wedge the state machine, and the
        // link model itself bounds how fast events are produced.
        let (stream, continuation) = AsyncStream.makeStream(of: BLEDriverEvent.self, bufferingPolicy: .unbounded)
        currentEvents = stream
        eventContinuation = continuation
        continuation.yield(.stateChanged(centralState))
    }

    /// The event stream of the current app instance.
    var events: AsyncStream<BLEDriverEvent> { currentEvents }

    func emit(_ event: BLEDriverEvent) {
        eventContinuation.yield(event)
    }

    // MARK: World

    /// Adds a peripheral; it starts advertising at once.
    public func add(_ peripheral: VirtualPeripheral) {
        peripherals.append(peripheral)
        contexts[peripheral.id] = PeripheralContext(radio: self, peripheral: peripheral.id)
        if let scanning { startAdvertising(peripheral, scanGeneration: scanning.generation) }
    }

    /// Removes a peripheral (dropping its link as if out of range, immediately).
    public func remove(_ id: PeripheralID) {
        if let link = links[id] { loseLink(link, error: .connectionTimeout) }
        pendingConnects[id] = nil
        peripherals.removeAll { $0.id == id }
        contexts[id] = nil
    }

    /// The peripheral with this identifier.
    public func virtualPeripheral(_ id: PeripheralID) -> VirtualPeripheral? {
        peripherals.first { $0.id == id }
    }

    /// Zeroes the traffic counters.
    public func resetStatistics() { statistics.removeAll() }

    /// The context handed to a peripheral's behaviour.
    public func context(for id: PeripheralID) -> PeripheralContext? { contexts[id] }

    func link(for id: PeripheralID) -> Link? { links[id] }

    /// True while the peripheral has a link to the central.
    public func isConnected(_ id: PeripheralID) -> Bool { links[id] != nil }

    /// The negotiated MTU of the peripheral's link.
    public func mtu(of id: PeripheralID) -> Int? { links[id]?.mtu }

    /// Changes the ATT MTU of the link to `id` (23…517), as an MTU exchange after the
    /// connection does: for a bridge whose real link, on another stack, negotiated it.
    public func exchangeMTU(_ mtu: Int, on id: PeripheralID) {
        guard let link = links[id] else { return }
        link.mtu = min(517, max(23, mtu))
        logger.debug("MTU exchanged", metadata: ["peripheral": "\(id)", "mtu": "\(link.mtu)"])
    }

    // MARK: Faults

    /// Changes the central radio's state. Anything but `poweredOn` drops every link and scan
    /// without disconnection callbacks, as CoreBluetooth does.
    public func setCentralState(_ state: CentralState) {
        guard state != centralState else { return }
        logger.info("Central state → \(state)")
        centralState = state
        if state != .poweredOn {
            scanning = nil
            scanGeneration += 1
            pendingConnects.removeAll()
            for link in Array(links.values) { tearDown(link) }
        }
        emit(.stateChanged(state))
    }

    /// Moves a peripheral in or out of range. Out of range, its link is lost after the
    /// supervision timeout; back in range, pending (and OS auto-) reconnects complete.
    public func setInRange(_ id: PeripheralID, _ inRange: Bool) {
        guard let peripheral = virtualPeripheral(id) else { return }
        peripheral.isInRange = inRange
        if inRange {
            links[id]?.supervisionTimer?.cancel()
            links[id]?.supervisionTimer = nil
            if let link = links[id] { ensurePump(link) }
            tryEstablish(id)
            if let scanning { startAdvertising(peripheral, scanGeneration: scanning.generation) }
        } else if let link = links[id], link.supervisionTimer == nil {
            let timeout = link.parameters.supervisionTimeout
            link.supervisionTimer = Task { @SimulationActor [weak self, weak link] in
                guard let self else { return }
                do { try await self.timeline.sleep(for: timeout) } catch { return }
                guard let link, self.links[id] === link, !link.peripheral.isInRange else { return }
                self.logger.info("Supervision timeout", metadata: ["peripheral": "\(id)"])
                self.loseLink(link, error: .connectionTimeout)
            }
        }
    }

    /// Makes a peripheral ignore (or answer again) connection requests.
    public func setIgnoresConnections(_ id: PeripheralID, _ ignores: Bool) {
        virtualPeripheral(id)?.ignoresConnections = ignores
        if !ignores { tryEstablish(id) }
    }

    /// Adds an ATT fault.
    public func inject(_ fault: FaultRule) { faults.append(fault) }

    /// Removes every injected ATT fault.
    public func clearFaults() { faults.removeAll() }

    /// Changes a peripheral's GATT database, as a firmware update or a dynamic GATT server
    /// does, and tells a connected central with a Service Changed indication.
    ///
    /// `change` edits the database (``VirtualPeripheral/addService(_:)``,
    /// ``VirtualPeripheral/removeService(_:)``). On a link, the subscriptions to the
    /// `invalidated` services end (their handles moved; the behaviour hears them disabled),
    /// and the driver reports `BLEDriverEvent.servicesInvalidated` one round trip later.
    /// Without a link the change waits for the next connection's discovery, as with a bonded
    /// central's cached database checked by its hash.
    public func changeServices(of id: PeripheralID, invalidating invalidated: [BluetoothUUID], _ change: @SimulationActor (VirtualPeripheral) -> Void = { _ in }) {
        guard let peripheral = virtualPeripheral(id) else { return }
        change(peripheral)
        for observer in serviceChangeObservers[id] ?? [] { observer(invalidated) }
        guard let link = links[id] else { return }
        logger.info("Services changed", metadata: ["peripheral": "\(id)", "invalidated": "\(invalidated)"])
        let lost = link.subscriptions.filter { invalidated.contains($0.service) }
        link.subscriptions.subtract(lost)
        if let context = contexts[id] {
            for path in lost.sorted(by: { $0.description < $1.description }) {
                peripheral.behavior?.didChangeSubscription(path, enabled: false, context: context)
            }
        }
        after(link.parameters.connectionInterval * 2, on: link) { radio in radio.emit(.servicesInvalidated(id, invalidated)) }
    }

    /// Calls `observer` after every ``changeServices(of:invalidating:_:)`` of `id`, whether a
    /// central is connected or not: whoever serves the peripheral elsewhere (a BlueZ peripheral
    /// host) publishes the new database with it.
    public func observeServiceChanges(of id: PeripheralID, _ observer: @escaping @Sendable ([BluetoothUUID]) -> Void) {
        serviceChangeObservers[id, default: []].append(observer)
    }

    /// Closes a link from the peripheral's side (with OS auto-reconnect, the OS reconnects).
    public func peripheralDisconnect(_ id: PeripheralID) {
        guard let link = links[id] else { return }
        loseLink(link, error: .peripheralDisconnected)
    }

    /// Simulates the OS relaunching the app: the links stay up, a new driver event stream
    /// starts with the radio's state and `willRestoreState` for every connected peripheral.
    /// The previous stream ends. Returns a driver for the relaunched app.
    public func relaunchApp() -> SimulatedDriver {
        eventContinuation.finish()
        let (stream, continuation) = AsyncStream.makeStream(of: BLEDriverEvent.self, bufferingPolicy: .unbounded)
        currentEvents = stream
        eventContinuation = continuation
        let restored = peripherals.map(\.id).filter { links[$0] != nil || pendingConnects[$0] != nil }
        continuation.yield(.willRestoreState(restored))
        continuation.yield(.stateChanged(centralState))
        return SimulatedDriver(radio: self, events: stream)
    }

    // MARK: Scanning

    func startScan(services: [BluetoothUUID]?, allowDuplicates: Bool) {
        guard centralState == .poweredOn else {
            logger.warning("Scan requested while Bluetooth is \(centralState)")
            return
        }
        scanGeneration += 1
        scanning = (services, allowDuplicates, scanGeneration, [])
        for peripheral in peripherals { startAdvertising(peripheral, scanGeneration: scanGeneration) }
    }

    func stopScan() {
        scanning = nil
        scanGeneration += 1
    }

    private func startAdvertising(_ peripheral: VirtualPeripheral, scanGeneration generation: Int) {
        let firstDelay = peripheral.advertisingInterval * rng.nextUnit()
        Task { @SimulationActor [weak self, weak peripheral] in
            guard let self else { return }
            var next = self.timeline.now + firstDelay
            while true {
                do { try await self.timeline.sleep(until: next) } catch { return }
                guard let peripheral, let scan = self.scanning, scan.generation == generation,
                      self.virtualPeripheral(peripheral.id) === peripheral, peripheral.isInRange else { return }
                next += peripheral.advertisingInterval
                if self.links[peripheral.id] != nil, !peripheral.advertisesWhileConnected { continue }
                if let wanted = scan.services, !wanted.contains(where: peripheral.advertisement.serviceUUIDs.contains) { return }
                if !scan.allowDuplicates {
                    guard !scan.reported.contains(peripheral.id) else { return }
                    self.scanning?.reported.insert(peripheral.id)
                }
                let rssi = self.pathLoss.rssi(distance: peripheral.distance, using: &self.rng)
                self.emit(.discovered(DiscoveredPeripheral(id: peripheral.id, name: peripheral.name, advertisement: peripheral.advertisement, rssi: rssi)))
                if !scan.allowDuplicates { return }
            }
        }
    }

    // MARK: Connections

    func connect(_ id: PeripheralID, options: ConnectOptions) {
        guard centralState == .poweredOn else {
            logger.warning("Connect requested while Bluetooth is \(centralState)")
            return
        }
        guard virtualPeripheral(id) != nil else {
            emit(.failedToConnect(id, .connectionFailed("unknown peripheral")))
            return
        }
        if links[id] != nil {
            // Already connected (for example a restored link): report it again.
            emit(.connected(id))
            return
        }
        connectSerial += 1
        pendingConnects[id] = (options, connectSerial)
        tryEstablish(id)
    }

    func tryEstablish(_ id: PeripheralID) {
        guard let pending = pendingConnects[id], links[id] == nil, let peripheral = virtualPeripheral(id),
              peripheral.isInRange, !peripheral.ignoresConnections, peripheral.advertisement.isConnectable,
              centralState == .poweredOn else { return }
        // The central connects on the next advertisement it hears, then sets the link up.
        let delay = peripheral.advertisingInterval * rng.nextUnit() + peripheral.linkParameters.connectionSetupTime
        let attempt = pending.attempt
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            do { try await self.timeline.sleep(for: delay) } catch { return }
            guard let current = self.pendingConnects[id], current.attempt == attempt, self.links[id] == nil,
                  let peripheral = self.virtualPeripheral(id), peripheral.isInRange, !peripheral.ignoresConnections,
                  self.centralState == .poweredOn else { return }
            self.pendingConnects[id] = nil
            self.linkSerial += 1
            let link = Link(
                serial: self.linkSerial, peripheral: peripheral, options: current.options,
                anchor: self.timeline.now,
                mtu: peripheral.linkParameters.negotiatedMTU(centralMaximum: self.centralMaximumMTU))
            self.links[id] = link
            self.logger.debug("Link up", metadata: ["peripheral": "\(id)", "mtu": "\(link.mtu)"])
            self.emit(.connected(id))
            if let context = self.contexts[id] { peripheral.behavior?.didConnect(context) }
        }
    }

    func cancelConnection(_ id: PeripheralID) {
        if pendingConnects.removeValue(forKey: id) != nil, links[id] == nil {
            emit(.disconnected(id, error: nil, isReconnecting: false))
            return
        }
        guard let link = links[id] else { return }
        let interval = link.parameters.connectionInterval
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            try? await self.timeline.sleep(for: interval)
            guard self.links[id] === link else { return }
            self.tearDown(link)
            self.emit(.disconnected(id, error: nil, isReconnecting: false))
        }
    }

    /// Ends a link for a reason other than the central's request; with OS auto-reconnect the
    /// connection request stays pending.
    func loseLink(_ link: Link, error: DriverError) {
        let id = link.peripheral.id
        tearDown(link)
        let reconnecting = link.options.enableAutoReconnect && centralState == .poweredOn
        emit(.disconnected(id, error: error, isReconnecting: reconnecting))
        if reconnecting {
            connectSerial += 1
            pendingConnects[id] = (link.options, connectSerial)
            tryEstablish(id)
        }
    }

    private func tearDown(_ link: Link) {
        let id = link.peripheral.id
        guard links[id] === link else { return }
        links[id] = nil
        link.supervisionTimer?.cancel()
        link.outbound.removeAll()
        link.inbound.removeAll()
        if let context = contexts[id] { link.peripheral.behavior?.didDisconnect(context) }
    }

    // MARK: GATT

    func discoverServices(_ wanted: [BluetoothUUID]?, on id: PeripheralID) {
        guard let link = links[id] else { return }
        let all = link.peripheral.services
        let found = all.filter { wanted == nil || wanted!.contains($0.uuid) }.map { GATTService(uuid: $0.uuid) }
        // One ATT round trip (two connection events) per service found, plus the final one.
        let delay = link.parameters.connectionInterval * (2 * (all.count + 1))
        answerInOrder(after: delay, on: link) { radio in radio.emit(.servicesDiscovered(id, found, nil)) }
    }

    func discoverCharacteristics(_ wanted: [BluetoothUUID]?, for service: BluetoothUUID, on id: PeripheralID) {
        guard let link = links[id] else { return }
        guard let definition = link.peripheral.services.first(where: { $0.uuid == service }) else {
            answerInOrder(after: link.parameters.connectionInterval * 2, on: link) { radio in
                radio.emit(.characteristicsDiscovered(id, service: service, [], .invalidHandle))
            }
            return
        }
        let found = definition.characteristics
            .filter { wanted == nil || wanted!.contains($0.uuid) }
            .map { GATTCharacteristic(
                path: CharacteristicPath(service: service, characteristic: $0.uuid),
                properties: $0.properties,
                descriptors: $0.properties.isDisjoint(with: [.notify, .indicate]) ? [] : [GATTDescriptor(uuid: GATTDescriptor.clientCharacteristicConfiguration)]) }
        let delay = link.parameters.connectionInterval * (2 * (definition.characteristics.count + 1))
        answerInOrder(after: delay, on: link) { radio in radio.emit(.characteristicsDiscovered(id, service: service, found, nil)) }
    }

    func setNotify(_ enabled: Bool, for path: CharacteristicPath, on id: PeripheralID) {
        enqueue(.request(.subscribe(path, enabled), deliverAtEvent: nil), on: id)
    }

    func read(_ path: CharacteristicPath, on id: PeripheralID) {
        enqueue(.request(.read(path), deliverAtEvent: nil), on: id)
    }

    func write(_ value: Data, to path: CharacteristicPath, type: WriteType, on id: PeripheralID) {
        guard let link = links[id] else { return }
        switch type {
        case .withResponse:
            enqueue(.request(.write(path, value), deliverAtEvent: nil), on: id)
        case .withoutResponse:
            guard link.canAcceptCommand else {
                // CoreBluetooth silently drops writes past its buffer; count it so tests see it.
                statistics[id, default: LinkStatistics()].writesDropped += 1
                link.flowBlocked = true
                logger.warning("Write without response dropped: buffer full", metadata: ["peripheral": "\(id)"])
                return
            }
            link.queuedCommands += 1
            if !link.canAcceptCommand { link.flowBlocked = true }
            enqueue(.command(path, value), on: id)
        }
    }

    func readRSSI(on id: PeripheralID) {
        guard let link = links[id] else { return }
        after(link.parameters.connectionInterval, on: link) { radio in
            let rssi = radio.pathLoss.rssi(distance: link.peripheral.distance, using: &radio.rng)
            radio.emit(.rssiRead(id, rssi, nil))
        }
    }

    func maximumWriteValueLength(for type: WriteType, on id: PeripheralID) -> Int {
        switch type {
        case .withResponse: 512
        // An attribute value is at most 512 bytes, whatever the MTU (517 allows 514).
        case .withoutResponse: min(512, (links[id]?.mtu ?? 23) - 3)
        }
    }

    func canSendWriteWithoutResponse(on id: PeripheralID) -> Bool {
        guard let link = links[id] else { return false }
        if !link.canAcceptCommand { link.flowBlocked = true }
        return link.canAcceptCommand
    }

    func notify(_ value: Data, on path: CharacteristicPath, from id: PeripheralID) -> Bool {
        guard let link = links[id], link.subscriptions.contains(path),
              link.queuedNotifications < link.parameters.notificationQueueCapacity else { return false }
        let longest = min(512, link.mtu - 3)
        let payload = value.count > longest ? value.prefix(longest) : value
        link.queuedNotifications += 1
        link.inbound.append((link.nextEvent(after: timeline.now).index, .notification(path, Data(payload))))
        ensurePump(link)
        return true
    }

    // MARK: Connection events

    private func after(_ delay: Duration, on link: Link, _ action: @escaping @SimulationActor (VirtualRadio) -> Void) {
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            do { try await self.timeline.sleep(for: delay) } catch { return }
            guard self.links[link.peripheral.id] === link else { return }
            action(self)
        }
    }

    /// Answers a discovery request after `delay`, but never before an earlier request's answer:
    /// one ATT bearer answers a link's requests in order.
    private func answerInOrder(after delay: Duration, on link: Link, _ action: @escaping @SimulationActor (VirtualRadio) -> Void) {
        let due = max(timeline.now + delay, link.discoveryAnswered)
        link.discoveryAnswered = due
        after(due - timeline.now, on: link, action)
    }

    private func enqueue(_ item: Link.Outbound, on id: PeripheralID) {
        guard let link = links[id] else { return }
        link.outbound.append(item)
        ensurePump(link)
    }

    private func ensurePump(_ link: Link) {
        guard !link.pumping, link.hasWork else { return }
        link.pumping = true
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            while self.links[link.peripheral.id] === link, link.hasWork, link.peripheral.isInRange {
                let next = link.nextEvent(after: self.timeline.now)
                do { try await self.timeline.sleep(until: next.time) } catch { break }
                guard self.links[link.peripheral.id] === link, link.peripheral.isInRange else { break }
                self.connectionEvent(link, index: next.index)
            }
            link.pumping = false
        }
    }

    private func connectionEvent(_ link: Link, index: Int) {
        link.lastEvent = index
        let id = link.peripheral.id
        let now = timeline.now
        var budget = link.parameters.packetsPerConnectionEvent
        var carried = false

        // Central → peripheral.
        while budget > 0, let head = link.outbound.first {
            switch head {
            case .command(let path, let value):
                link.outbound.removeFirst()
                link.queuedCommands -= 1
                deliverCommand(value, to: path, link: link, at: now)
            case .request(let request, let deliverAt):
                let due = deliverAt ?? index + 2 * (roundsFor(request, link) - 1)
                if deliverAt == nil, due > index {
                    link.outbound[0] = .request(request, deliverAtEvent: due)
                }
                guard index >= due else {
                    budget = 0
                    continue
                }
                link.outbound.removeFirst()
                deliverRequest(request, link: link, event: index, at: now)
            }
            budget -= 1
            carried = true
        }
        if link.flowBlocked, link.canAcceptCommand {
            link.flowBlocked = false
            emit(.readyToWriteWithoutResponse(id))
        }

        // Peripheral → central.
        budget = link.parameters.packetsPerConnectionEvent
        // In order, as ATT over L2CAP is: nothing overtakes an item that is not due yet.
        while budget > 0, let (notBefore, item) = link.inbound.first {
            guard notBefore <= index else { break }
            link.inbound.removeFirst()
            budget -= 1
            carried = true
            switch item {
            case .notification(let path, let value):
                link.queuedNotifications -= 1
                statistics[id, default: LinkStatistics()].notificationsDelivered += 1
                emit(.valueUpdated(id, path, value, nil))
            case .writeResponse(let path, let error):
                emit(.writeCompleted(id, path, error.map(DriverError.att)))
            case .readResponse(let path, let result):
                switch result {
                case .success(let value): emit(.valueUpdated(id, path, value, nil))
                case .failure(let error): emit(.valueUpdated(id, path, Data(), .att(error)))
                }
            case .subscribeResponse(let path, let enabled, let error):
                emit(.notificationStateUpdated(id, path, isNotifying: error == nil ? enabled : !enabled, error.map(DriverError.att)))
            }
        }
        if carried { statistics[id, default: LinkStatistics()].busyConnectionEvents += 1 }
    }

    private func roundsFor(_ request: Link.Request, _ link: Link) -> Int {
        if case .write(_, let value) = request { return link.rounds(forWriteOf: value.count) }
        return 1
    }

    /// Returns the fault for this operation, consuming one use of it.
    private func fault(_ operation: GATTOperation, _ path: CharacteristicPath, _ id: PeripheralID) -> FaultRule.Action? {
        guard let index = faults.firstIndex(where: { $0.matches(operation, path, id) }) else { return nil }
        if let remaining = faults[index].remaining { faults[index].remaining = remaining - 1 }
        return faults[index].action
    }

    private func recordDelivery(_ count: Int, withResponse: Bool, id: PeripheralID, at now: Duration) {
        var stats = statistics[id, default: LinkStatistics()]
        if withResponse { stats.bytesWithResponse += count } else { stats.bytesWithoutResponse += count }
        stats.writesDelivered += 1
        if stats.firstDelivery == nil { stats.firstDelivery = now }
        stats.lastDelivery = now
        statistics[id] = stats
    }

    private func deliverCommand(_ value: Data, to path: CharacteristicPath, link: Link, at now: Duration) {
        let id = link.peripheral.id
        guard let definition = link.peripheral.characteristic(path),
              definition.properties.contains(.writeWithoutResponse) else {
            logger.debug("Write command to a characteristic that does not take it", metadata: ["characteristic": "\(path)"])
            return
        }
        if fault(.writeWithoutResponse, path, id) != nil { return }
        recordDelivery(value.count, withResponse: false, id: id, at: now)
        if let context = contexts[id] {
            _ = link.peripheral.behavior?.didWrite(value, to: path, type: .withoutResponse, context: context)
        }
    }

    private func deliverRequest(_ request: Link.Request, link: Link, event: Int, at now: Duration) {
        let id = link.peripheral.id
        let context = contexts[id]
        let respond: (Link.Inbound) -> Void = { link.inbound.append((event + 1, $0)) }
        switch request {
        case .write(let path, let value):
            guard let definition = link.peripheral.characteristic(path) else { return respond(.writeResponse(path, .invalidHandle)) }
            guard definition.properties.contains(.write) else { return respond(.writeResponse(path, .writeNotPermitted)) }
            guard value.count <= 512 else { return respond(.writeResponse(path, .invalidAttributeValueLength)) }
            switch fault(.write, path, id) {
            case .noResponse?: return
            case .error(let error)?: return respond(.writeResponse(path, error))
            case nil: break
            }
            recordDelivery(value.count, withResponse: true, id: id, at: now)
            let error = context.flatMap { link.peripheral.behavior?.didWrite(value, to: path, type: .withResponse, context: $0) }
            respond(.writeResponse(path, error))
        case .read(let path):
            guard let definition = link.peripheral.characteristic(path) else { return respond(.readResponse(path, .failure(.invalidHandle))) }
            guard definition.properties.contains(.read) else { return respond(.readResponse(path, .failure(.readNotPermitted))) }
            switch fault(.read, path, id) {
            case .noResponse?: return
            case .error(let error)?: return respond(.readResponse(path, .failure(error)))
            case nil: break
            }
            let result = context.flatMap { link.peripheral.behavior?.didRead(path, context: $0) } ?? .success(definition.value)
            respond(.readResponse(path, result))
        case .subscribe(let path, let enabled):
            guard let definition = link.peripheral.characteristic(path) else { return respond(.subscribeResponse(path, enabled, .invalidHandle)) }
            guard !definition.properties.isDisjoint(with: [.notify, .indicate]) else {
                return respond(.subscribeResponse(path, enabled, .requestNotSupported))
            }
            switch fault(.subscribe, path, id) {
            case .noResponse?: return
            case .error(let error)?: return respond(.subscribeResponse(path, enabled, error))
            case nil: break
            }
            if enabled { link.subscriptions.insert(path) } else { link.subscriptions.remove(path) }
            // The response goes out before anything the firmware sends on subscription.
            respond(.subscribeResponse(path, enabled, nil))
            if let context { link.peripheral.behavior?.didChangeSubscription(path, enabled: enabled, context: context) }
        }
    }
}
