import Foundation
import Logging
import TetherCore

/// The app's connection state, with the spec's raw strings for display.
public enum ConnectionState: String, Sendable, Hashable, CaseIterable {
    /// No device connected.
    case disconnected = "Disconnected"
    /// Looking for a detector.
    case scanning = "Scanning..."
    /// Connecting (or reconnecting after a loss).
    case connecting = "Connecting..."
    /// Connected; detections flow.
    case connected = "Connected"
    /// Discovering the detector's services.
    case discovering = "Discovering Services..."
    /// Bluetooth is turned off.
    case bluetoothOff = "Bluetooth Off"
    /// The app may not use Bluetooth.
    case unauthorized = "Bluetooth Unauthorized"
}

/// Problems the UI shows.
public enum FlockFinderError: Error, Sendable, Hashable, LocalizedError {
    /// No detector was found.
    case deviceNotFound
    /// The device has no FlockFinder service: its firmware is too old or not FlockFinder's.
    case serviceNotFound
    /// The connection failed.
    case connectionFailed(String)
    /// Bluetooth is off, not allowed or not there (``ConnectionState`` says which to the UI).
    case bluetoothUnavailable(CentralState)

    public var errorDescription: String? {
        switch self {
        case .deviceNotFound: "No FlockFinder detector was found nearby."
        case .serviceNotFound: "This device does not offer the FlockFinder service. Update its firmware to a flock-you build with the BLE GATT server (oui-spy)."
        case .connectionFailed(let why): "Could not connect to the detector: \(why)"
        case .bluetoothUnavailable(.unauthorized): "FlockFinder needs Bluetooth permission. Allow it in Settings."
        case .bluetoothUnavailable(let state): "Bluetooth is not available (\(state)). Turn it on to find your detector."
        }
    }
}

/// A detector seen while scanning.
public struct FlockFinderDevice: Sendable, Hashable, Identifiable {
    /// The peripheral to connect to.
    public let id: PeripheralID
    /// Its advertised name.
    public let name: String?
    /// Signal strength at discovery in dBm; nil when the stack had no value.
    public let rssi: Int?
    /// Whether it advertises the FlockFinder service (only those are auto-connected).
    public let advertisesService: Bool

    /// Describes a detector (the client makes them from scans; previews make their own).
    public init(id: PeripheralID, name: String?, rssi: Int?, advertisesService: Bool) {
        self.id = id
        self.name = name
        self.rssi = rssi
        self.advertisesService = advertisesService
    }
}

/// A detection as the app received it.
public struct ReceivedDetection: Sendable, Hashable {
    /// What the detector reported.
    public let detection: Detection
    /// When the phone received it (the device's `ts` is its uptime, not a clock).
    public let receivedAt: Date
    /// The stored record, or nil when below the store's minimum confidence, when there is no
    /// store, or when storing failed (``storageFailure``).
    public let stored: StoredDetection?
    /// Why the store could not keep it (a full disk, a database another process holds too
    /// long); nil when it was stored or deliberately not.
    public let storageFailure: String?

    /// Creates a received detection (for previews and tests; the client makes them).
    public init(detection: Detection, receivedAt: Date, stored: StoredDetection? = nil, storageFailure: String? = nil) {
        self.detection = detection
        self.receivedAt = receivedAt
        self.stored = stored
        self.storageFailure = storageFailure
    }
}

/// The FlockFinder app's BLE side over Tether's core: discovery by service or name, automatic
/// connection to detectors that advertise the service, automatic reconnection, detection and
/// stream parsing, commands, periodic RSSI, and storage of every detection.
public actor FlockFinderClient {
    private let central: Central
    private let store: (any DetectionRecorder)?
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let rssiInterval: Duration
    private let parser: FlockMessageParser
    private let logger: Logger
    private var link: DeviceLink?
    private var connection: ConnectionStateMachine? { link?.connection }
    /// The detector of the current link.
    private var connectedDevice: FlockFinderDevice?
    private var tasks: [Task<Void, Never>] = []
    private var scanTask: Task<Void, Never>?
    private var states = Broadcaster<ConnectionState>(bufferSize: 64)
    private var detectionStream = Broadcaster<ReceivedDetection>(bufferSize: 4096)
    private var streamEvents = Broadcaster<StreamEvent>(bufferSize: 4096)
    private var deviceList = Broadcaster<[FlockFinderDevice]>(bufferSize: 16)

    /// The connection state.
    public private(set) var connectionState: ConnectionState = .disconnected
    /// The last error, for an alert.
    public private(set) var lastError: FlockFinderError?
    /// Detectors found by the last scan.
    public private(set) var discoveredDevices: [FlockFinderDevice] = []
    /// The connected detector's signal strength, read every `rssiInterval`.
    public private(set) var deviceRSSI: Int?
    /// Notifications that could not be parsed (logged and skipped).
    public private(set) var parseErrors = 0

    /// Creates a client; detections are stored in `store` when given.
    public init(
        central: Central,
        store: (any DetectionRecorder)? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        rssiInterval: Duration = .seconds(5),
        logger: Logger = Logger(label: "tether.flock")
    ) {
        self.central = central
        self.store = store
        self.clock = clock
        self.now = now
        self.rssiInterval = rssiInterval
        self.parser = FlockMessageParser()
        self.logger = logger
    }

    /// Connection states, starting with the current one.
    public func connectionStates() -> AsyncStream<ConnectionState> { states.subscribe(initial: connectionState) }
    /// Detections as they arrive (after the confidence filter has decided whether to store them).
    public func detections() -> AsyncStream<ReceivedDetection> { detectionStream.subscribe() }
    /// Live scan data (after ``setStreaming(_:)``) and status answers.
    public func streamUpdates() -> AsyncStream<StreamEvent> { streamEvents.subscribe() }
    /// The device list whenever it changes.
    public func deviceUpdates() -> AsyncStream<[FlockFinderDevice]> { deviceList.subscribe(initial: discoveredDevices) }

    // MARK: Discovery

    /// Scans for detectors (service UUID, or a name containing one of the spec's patterns) and
    /// connects to the first one that advertises the service.
    public func startScanning(timeout: Duration = .seconds(15), autoConnect: Bool = true) async {
        switch await central.settledState() {
        case .poweredOn: break
        case .unauthorized: return setState(.unauthorized)
        default: return setState(.bluetoothOff)
        }
        discoveredDevices = []
        setState(.scanning)
        let filter = DeviceProfile.flockFinder.scanFilter
        let central = self.central
        scanTask?.cancel()
        scanTask = Task { [weak self] in
            guard let stream = try? await central.scan(filter: filter, timeout: timeout) else { return }
            for await peripheral in stream {
                guard let self else { return }
                if await self.found(peripheral), autoConnect {
                    await self.connect(to: peripheral.id)
                    return
                }
            }
            await self?.scanEnded()
        }
    }

    /// Scans for a detector that advertises the service, connects to it and returns it once
    /// detections can flow: the one-call form of ``startScanning(timeout:autoConnect:)`` for
    /// code that wants an outcome rather than a state to watch. Throws what ``lastError`` and
    /// ``connectionState`` show.
    @discardableResult
    public func connectToFirstDetector(scanTimeout: Duration = .seconds(15)) async throws(FlockFinderError) -> FlockFinderDevice {
        switch connectionState {
        case .connected:
            if let connectedDevice { return connectedDevice }
        case .scanning, .connecting, .discovering:
            // One link at a time: a scan or a connection already under way is not replaced.
            throw .connectionFailed("a scan or a connection is already under way")
        default:
            break
        }
        // Claimed before the first suspension, so a second call meanwhile sees it.
        lastError = nil
        scanTask?.cancel()
        discoveredDevices = []
        setState(.scanning)
        switch await central.settledState() {
        case .poweredOn: break
        case let state: throw bluetoothUnavailable(state)
        }
        // The scan runs as `scanTask`, so stopScanning() and disconnect() end it; so does
        // cancelling the caller.
        let central = self.central
        let search = Task { [weak self] () -> Result<DiscoveredPeripheral?, BLEError> in
            do {
                for await peripheral in try await central.scan(filter: DeviceProfile.flockFinder.scanFilter, timeout: scanTimeout) {
                    // Leaving the loop ends the scan.
                    if await self?.found(peripheral) == true { return .success(peripheral) }
                }
                return .success(nil)
            } catch {
                return .failure((error as? BLEError) ?? .disconnected("\(error)"))
            }
        }
        scanTask = Task { await withTaskCancellationHandler { _ = await search.value } onCancel: { search.cancel() } }
        let outcome = await withTaskCancellationHandler { await search.value } onCancel: { search.cancel() }
        guard connectionState == .scanning, !Task.isCancelled else {
            // Stopped (stopScanning, disconnect) or cancelled while scanning.
            if connectionState == .scanning { setState(.disconnected) }
            throw .connectionFailed("the search was stopped before a detector was found")
        }
        scanTask = nil
        let chosen: DiscoveredPeripheral
        switch outcome {
        case .success(let peripheral?):
            chosen = peripheral
        case .success(nil):
            // An empty scan may be Bluetooth going away, not an empty street.
            let state = await central.settledState()
            guard state == .poweredOn else { throw bluetoothUnavailable(state) }
            lastError = .deviceNotFound
            setState(.disconnected)
            throw .deviceNotFound
        case .failure(.bluetoothUnavailable(let state)):
            throw bluetoothUnavailable(state)
        case .failure(let error):
            fail(error)
            throw lastError ?? .connectionFailed(error.errorDescription ?? "\(error)")
        }
        guard let device = discoveredDevices.first(where: { $0.id == chosen.id }) else { throw .deviceNotFound }
        await connect(to: device.id)
        guard connectionState == .connected else {
            throw lastError ?? .connectionFailed("the connection ended while it was being made")
        }
        return device
    }

    /// Shows Bluetooth's state and returns the error that says it.
    private func bluetoothUnavailable(_ state: CentralState) -> FlockFinderError {
        setState(state == .unauthorized ? .unauthorized : .bluetoothOff)
        return .bluetoothUnavailable(state)
    }

    /// Stops scanning.
    public func stopScanning() {
        scanTask?.cancel()
        scanTask = nil
        if connectionState == .scanning { setState(.disconnected) }
    }

    /// Records a discovery; true when it advertises the service (auto-connect candidate).
    private func found(_ peripheral: DiscoveredPeripheral) -> Bool {
        let advertises = peripheral.advertisement.serviceUUIDs.contains(FlockFinderBLEConstants.serviceUUID)
        let device = FlockFinderDevice(id: peripheral.id, name: peripheral.displayName, rssi: peripheral.rssi, advertisesService: advertises)
        if let index = discoveredDevices.firstIndex(where: { $0.id == device.id }) {
            // A later advertisement may add the service (a scan response): the list says so.
            if advertises, !discoveredDevices[index].advertisesService {
                discoveredDevices[index] = device
                deviceList.yield(discoveredDevices, logger: logger)
            }
        } else {
            discoveredDevices.append(device)
            deviceList.yield(discoveredDevices, logger: logger)
        }
        return advertises
    }

    private func scanEnded() {
        guard connectionState == .scanning else { return }
        if !discoveredDevices.contains(where: \.advertisesService) { lastError = .deviceNotFound }
        setState(.disconnected)
    }

    // MARK: Connection

    /// Connects to a detector and starts receiving detections.
    public func connect(to peripheral: PeripheralID) async {
        scanTask?.cancel()
        scanTask = nil
        stopTasks()
        setState(.connecting)
        connectedDevice = nil
        if let previous = link {
            // A link to another detector (it reconnects persistently) is closed, not orphaned.
            link = nil
            await previous.close()
        }
        // Every listener armed before connecting: the detector may notify at once.
        let link = await DeviceLink.arm(
            on: central, to: peripheral,
            configuration: DeviceProfile.flockFinder.connectionConfiguration(reconnectPolicy: .persistent),
            notifications: [
                (FlockFinderBLEConstants.detection, { @Sendable [weak self] data in await self?.receivedDetection(data) }),
                (FlockFinderBLEConstants.stream, { @Sendable [weak self] data in await self?.receivedStream(data) }),
            ],
            events: { [weak self] event in await self?.handle(event) })
        self.link = link
        do {
            try await link.connect()
            // A disconnect() or another connect(to:) meanwhile owns the state now.
            guard self.link === link else { return }
            lastError = nil
            connectedDevice = discoveredDevices.first { $0.id == peripheral }
                ?? FlockFinderDevice(id: peripheral, name: nil, rssi: 0, advertisesService: true)
            setState(.connected)
            startRSSIPolling()
        } catch {
            // The link stopped its own listeners; a newer link (connect(to:) again meanwhile)
            // owns the state now.
            guard self.link === link else { return }
            stopTasks()
            fail(error)
        }
    }

    /// Disconnects and stops reconnecting.
    public func disconnect() async {
        scanTask?.cancel()
        stopTasks()
        let closing = connection
        link = nil
        connectedDevice = nil
        deviceRSSI = nil
        setState(.disconnected)
        if let closing { await closing.disconnect() }
    }

    /// Sends a command (UTF-8, written with response).
    public func send(_ command: FlockCommand) async throws {
        guard let connection, await connection.isLinkUp else { throw BLEError.notConnected }
        try await connection.write(command.data, to: FlockFinderBLEConstants.command, type: .withResponse)
    }

    /// Turns the live scan stream on or off (the firmware's `stream_on`/`stream_off`).
    public func setStreaming(_ on: Bool) async throws {
        try await send(on ? .streamOn : .streamOff)
    }

    // MARK: Events

    private func handle(_ event: ConnectionEvent) {
        switch event {
        case .phaseChanged(let phase):
            switch phase {
            case .connecting, .autoReconnecting: setState(.connecting)
            case .discoveringServices, .discoveringCharacteristics, .subscribingToNotifications, .discoveryComplete: setState(.discovering)
            case .connected: setState(.connected)
            case .idle where connectionState != .bluetoothOff && connectionState != .unauthorized: setState(.disconnected)
            default: break
            }
        case .bluetoothStateChanged(let state):
            if state == .poweredOff { setState(.bluetoothOff) }
            if state == .unauthorized { setState(.unauthorized) }
        case .disconnected(_, let error):
            logger.warning("Connection lost: \(error.map { "\($0)" } ?? "no error"); reconnecting")
        case .failed(let error):
            fail(error)
        default:
            break
        }
    }

    private func fail(_ error: BLEError) {
        switch error {
        case .serviceNotFound, .characteristicNotFound: lastError = .serviceNotFound
        case .bluetoothUnavailable(.unauthorized): lastError = nil; setState(.unauthorized); return
        case .bluetoothUnavailable: lastError = nil; setState(.bluetoothOff); return
        default: lastError = .connectionFailed(error.errorDescription ?? "\(error)")
        }
        logger.error("\(lastError?.errorDescription ?? "")")
        setState(.disconnected)
    }

    private func receivedDetection(_ data: Data) async {
        switch Result(catching: { () throws(FlockParseError) in try parser.decodeDetection(data) }) {
        case .success(let detection):
            let receivedAt = now()
            var stored: StoredDetection?
            var failure: String?
            if let store {
                do {
                    stored = try await store.record(detection, receivedAt: receivedAt)
                } catch {
                    failure = (error as? LocalizedError)?.errorDescription ?? "\(error)"
                    logger.error("Could not store a detection: \(error)")
                }
            }
            detectionStream.yield(ReceivedDetection(detection: detection, receivedAt: receivedAt, stored: stored, storageFailure: failure),
                                  logger: logger)
        case .failure(let error):
            parseErrors += 1
            logger.error("Skipping a detection notification: \(error)")
        }
    }

    private func receivedStream(_ data: Data) {
        switch Result(catching: { () throws(FlockParseError) in try parser.decodeStream(data) }) {
        case .success(let event): streamEvents.yield(event, logger: logger)
        case .failure(let error):
            parseErrors += 1
            logger.error("Skipping a stream notification: \(error)")
        }
    }

    private func startRSSIPolling() {
        guard let connection else { return }
        let clock = self.clock, interval = rssiInterval
        tasks.append(Task { [weak self] in
            while !Task.isCancelled {
                if await connection.isConnected, let rssi = try? await connection.readRSSI() {
                    await self?.setRSSI(rssi)
                }
                do { try await clock.sleep(for: interval) } catch { return }
            }
        })
    }

    private func setRSSI(_ value: Int) { deviceRSSI = value }

    private func stopTasks() {
        link?.stopListening()
        for task in tasks { task.cancel() }
        tasks.removeAll()
    }

    private func setState(_ state: ConnectionState) {
        guard state != connectionState else { return }
        connectionState = state
        states.yield(state, logger: logger)
    }
}
