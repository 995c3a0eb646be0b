import Foundation
import Logging
import TetherCore

/// The GripFit manager over Bluetooth (guide §2.2), built on Tether's `Central` and
/// `ConnectionStateMachine`.
///
/// It scans for the NUS service with `_GRIPFIT` as confirmation, connects within 5 s, subscribes
/// to TX, buffers notifications into lines with the core's `NewlineFramer`, parses them with
/// ``BLEMessageParser`` and publishes calibrated readings. A dropped link reconnects with backoff
/// (1 s doubling to 30 s); a silent one (no reading for 2 s and no answer to `CMD:PING`) is
/// treated as lost and reconnected the same way.
public actor BLEManager: BLEManagerProtocol {
    /// Timeouts and policies; the defaults are the shipped app's.
    public struct Configuration: Sendable {
        /// Give up scanning after this long without a device (guide §4.2: 10 s).
        public var scanTimeout: Duration = .seconds(10)
        /// Give up connecting after this long (guide §4.2: 5 s).
        public var connectionTimeout: Duration = .seconds(5)
        /// Discovery and subscription time allowed after the link is up.
        public var discoveryTimeout: Duration = .seconds(10)
        /// No reading for this long makes the link suspect (guide §4.3: 2 s).
        public var staleAfter: Duration = .seconds(2)
        /// How long to wait for `S:PONG` before declaring the link lost.
        public var pongTimeout: Duration = .seconds(2)
        /// How long a command write may take.
        public var writeTimeout: Duration = .seconds(5)
        /// Reconnection backoff (guide §2.2: 1 s doubling to 30 s).
        public var reconnectPolicy: ReconnectPolicy = .persistent

        /// The shipped app's values.
        public init() {}
    }

    private let central: Central
    private let now: @Sendable () -> Date
    private let configuration: Configuration
    private let parser: BLEMessageParser
    private let logger: Logger
    /// The calibration applied to every reading (raw by default).
    public var calibration: any GripCalibration

    private var hub: GripFitHub
    private var framer = NewlineFramer(maxLineLength: 256)
    private var link: DeviceLink?
    private var connection: ConnectionStateMachine? { link?.connection }
    private var scanTask: Task<Void, Never>?
    /// No reading for `staleAfter` sends `CMD:PING`; no answer within `pongTimeout` loses the link.
    private let liveness: LivenessWatchdog
    private var hasConnected = false
    /// The device of the current (or last) link.
    private var currentDevice: GripFitDevice?
    /// Commands waiting for the status that confirms them (TARED, RATE, PONG).
    private let confirmations: RequestCorrelator<GripFitStatus>

    /// Creates a manager on `central`, taking time from `clock` and timestamps from `now`.
    public init(
        central: Central,
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        configuration: Configuration = Configuration(),
        calibration: any GripCalibration = RawCalibration(),
        logger: Logger = Logger(label: "tether.gripfit")
    ) {
        self.central = central
        self.liveness = LivenessWatchdog(clock: clock, silence: configuration.staleAfter, probeWindow: configuration.pongTimeout)
        self.confirmations = RequestCorrelator(clock: clock, maximumMessages: 1)
        self.now = now
        self.configuration = configuration
        self.calibration = calibration
        self.parser = BLEMessageParser()
        self.logger = logger
        self.hub = GripFitHub(logger: logger)
    }

    // MARK: BLEManagerProtocol state

    public var connectionState: GripFitConnectionState { hub.state }
    public func connectionStates() -> AsyncStream<GripFitConnectionState> { hub.stateStream() }
    public var discoveredDevices: [GripFitDevice] { hub.devices }
    public func discoveredDeviceUpdates() -> AsyncStream<[GripFitDevice]> { hub.deviceStream() }
    public func readings() -> AsyncStream<GripReading> { hub.readings() }
    public func statuses() -> AsyncStream<GripFitStatus> { hub.statuses() }
    public var deviceInfo: GripFitDeviceInfo? { hub.deviceInfo }
    public var sensorReadiness: SensorReadiness { hub.readiness }

    /// Replaces the calibration (for example once the device's factor is known).
    public func setCalibration(_ calibration: any GripCalibration) { self.calibration = calibration }

    // MARK: Scanning

    public func startScanning() async {
        switch hub.state {
        case .connected, .connecting, .scanning: return
        default: break
        }
        guard await bluetoothIsUsable() else { return }
        hub.setDevices([])
        hub.setState(.scanning)
        let central = self.central
        let filter = DeviceProfile.gripFit.scanFilter
        let timeout = configuration.scanTimeout
        scanTask = Task { [weak self] in
            do {
                for await peripheral in try await central.scan(filter: filter, timeout: timeout) {
                    await self?.found(peripheral)
                }
                await self?.scanEnded(error: nil)
            } catch {
                await self?.scanEnded(error: error)
            }
        }
    }

    public func stopScanning() async {
        scanTask?.cancel()
        scanTask = nil
        if hub.state == .scanning { hub.setState(.disconnected) }
    }

    private func found(_ peripheral: DiscoveredPeripheral) {
        let device = GripFitDevice(id: peripheral.id, name: peripheral.displayName ?? GripFitBLEConstants.deviceNamePrefix, rssi: peripheral.rssi)
        logger.info("Found \(device.name) (\(DiscoveredPeripheral.describe(rssi: device.rssi)))")
        hub.addDevice(device)
    }

    private func scanEnded(error: (any Error)?) {
        guard hub.state == .scanning else { return }
        if let error {
            hub.setState(.error(map(error)))
        } else {
            hub.setState(hub.devices.isEmpty ? .error(.scanTimeout) : .disconnected)
        }
    }

    private func bluetoothIsUsable() async -> Bool {
        switch await central.settledState() {
        case .poweredOn: return true
        case .unauthorized: hub.setState(.error(.bluetoothUnauthorized))
        case .unsupported: hub.setState(.error(.bluetoothUnsupported))
        default: hub.setState(.error(.bluetoothOff))
        }
        return false
    }

    // MARK: Connecting

    public func connect(to device: GripFitDevice) async {
        if case .connected = hub.state { return }
        scanTask?.cancel()
        scanTask = nil
        guard await bluetoothIsUsable() else { return }
        currentDevice = device
        hub.setState(.connecting)
        stopLinkTasks()
        if let previous = link, previous.connection.peripheral != device.id {
            // A link to another device (it may be reconnecting) is closed, not orphaned.
            link = nil
            await previous.close()
        }
        // Listeners armed before connecting: the device speaks as soon as notifications are on.
        let link = await DeviceLink.arm(
            on: central, to: device.id,
            configuration: DeviceProfile.gripFit.connectionConfiguration(
                connectionTimeout: configuration.connectionTimeout,
                discoveryTimeout: configuration.discoveryTimeout,
                writeTimeout: configuration.writeTimeout,
                reconnectPolicy: configuration.reconnectPolicy),
            notifications: [(GripFitBLEConstants.notifyCharacteristic, { @Sendable [weak self] chunk in await self?.received(chunk) })],
            events: { [weak self] event in await self?.handle(event) })
        self.link = link
        hasConnected = false
        do {
            try await link.connect()
        } catch {
            // A disconnect() (or another connect) meanwhile owns the state now.
            guard self.link === link else { return }
            stopLinkTasks()
            hub.setState(.error(map(error)))
            return
        }
        let connection = link.connection
        let writable = await connection.discoveredCharacteristics
            .first(where: { $0.path == GripFitBLEConstants.writeCharacteristic })?.properties.contains(.write) == true
        guard self.link === link else { return }
        guard writable else {
            logger.error("The RX characteristic does not take writes with response")
            stopLinkTasks()
            self.link = nil
            hub.setState(.error(.deviceNotRecognized))
            await connection.disconnect()
            return
        }
        linkUp()
    }

    /// Scans until the first GripFit appears, connects to it, and returns it once readings can
    /// flow: the one-call form of ``startScanning()`` and ``connect(to:)``, for code that wants
    /// an outcome rather than a state to watch. Throws what ``connectionState`` shows.
    @discardableResult
    public func connectToFirstDevice() async throws(GripFitError) -> GripFitDevice {
        switch hub.state {
        case .connected:
            if let currentDevice { return currentDevice }
            throw .connectionFailed("connected to a device this manager did not record")
        case .connecting, .scanning:
            // One link at a time: a scan or a (re)connection already under way is not replaced.
            throw .connectionFailed("a scan or a connection is already under way")
        default:
            break
        }
        scanTask?.cancel()
        scanTask = nil
        // Claimed before the first suspension, so a second call meanwhile sees it.
        hub.setDevices([])
        hub.setState(.scanning)
        guard await bluetoothIsUsable() else { throw Self.error(in: hub.state) ?? .bluetoothOff }
        let peripheral: DiscoveredPeripheral
        do {
            peripheral = try await central.discover(filter: DeviceProfile.gripFit.scanFilter, timeout: configuration.scanTimeout)
        } catch {
            let failure = map(error)
            hub.setState(.error(failure))
            throw failure
        }
        found(peripheral)
        guard let device = hub.devices.first(where: { $0.id == peripheral.id }) else { throw .scanTimeout }
        await connect(to: device)
        switch hub.state {
        case .connected: return device
        case .error(let failure): throw failure
        default: throw .connectionFailed("the connection ended while it was being made")
        }
    }

    private static func error(in state: GripFitConnectionState) -> GripFitError? {
        if case .error(let error) = state { error } else { nil }
    }

    public func disconnect() async {
        scanTask?.cancel()
        stopLinkTasks()
        // State first, the await last: a link opened meanwhile is not the one let go here.
        let closing = link
        link = nil
        framer.reset()
        hub.resetDeviceState()
        hub.setState(.disconnected)
        if let closing { await closing.connection.disconnect() }
    }

    private func stopLinkTasks() {
        link?.stopListening()
        liveness.stop()
        // No confirmation can come over a link nobody listens to any more.
        confirmations.failAll(GripFitCommandError.linkLost)
    }

    private func linkUp() {
        hasConnected = true
        hub.setState(.connected)
        liveness.start(probe: { [weak self] in await self?.probe() }, dead: { [weak self] in await self?.linkLost() })
    }

    private func handle(_ event: ConnectionEvent) {
        switch event {
        case .disconnected(_, let error):
            logger.warning("Link lost: \(error.map { "\($0)" } ?? "no error"); reconnecting")
            confirmations.failAll(GripFitCommandError.linkLost)
            // A partial line from the old link must not glue onto the new one.
            framer.reset()
            hub.resetDeviceState()
            liveness.stop()
            // Bluetooth going away was already shown as an error; a drop is "reconnecting".
            if hasConnected, !Self.isError(hub.state) { hub.setState(.connecting) }
        case .reconnected:
            framer.reset()
            linkUp()
        case .phaseChanged(.idle) where hasConnected && hub.state == .connecting:
            // Dropped for good (a policy without attempts): nothing will bring it back.
            hub.setState(.error(.connectionLost))
        case .failed(let error):
            guard hasConnected else { return }
            hub.setState(.error(mapLost(error)))
        case .bluetoothStateChanged(let state) where hasConnected && state != .poweredOn:
            hub.setState(.error(state == .unauthorized ? .bluetoothUnauthorized : .bluetoothOff))
        case .bluetoothStateChanged(.poweredOn) where hasConnected:
            hub.setState(.connecting)
        default:
            break
        }
    }

    private static func isError(_ state: GripFitConnectionState) -> Bool {
        if case .error = state { true } else { false }
    }

    private func received(_ chunk: Data) {
        let date = now()
        for line in framer.pushLines(chunk) {
            let message: GripFitMessage
            do {
                message = try parser.decode(line)
            } catch {
                logger.warning("Skipping a malformed message: \(error)")
                continue
            }
            switch message {
            // Readings and PONGs are the signs of life (a NOT_READY device still answers PING).
            case .reading, .status(.pong): liveness.heard()
            default: break
            }
            if case .status(let status) = message { confirmations.deliver(status) }
            hub.publish(message, calibration: calibration, at: date)
        }
    }

    // MARK: Commands

    public func sendTare() async { await send(.tare) }
    public func sendPing() async { await send(.ping) }

    public func setSampleRate(ms: Int) async {
        let clamped = min(max(ms, GripFitCommand.rateRange.lowerBound), GripFitCommand.rateRange.upperBound)
        if clamped != ms { logger.notice("Sample interval \(ms) ms clamped to \(clamped) ms") }
        await send(.setRate(ms: clamped))
    }

    /// Zeroes the scale and returns once the device confirms it (`S:TARED`).
    ///
    /// - Throws: ``GripFitCommandError/sensorNotReady`` when the device answers `S:NOT_READY`,
    ///   ``GripFitCommandError/noConfirmation(command:)`` when it does not answer within
    ///   `timeout`, or why the command could not be sent.
    public func tare(timeout: Duration) async throws(GripFitCommandError) {
        let status = try await command(.tare, timeout: timeout) { status in
            status == .tared || status == .notReady
        }
        if status == .notReady { throw .sensorNotReady }
    }

    /// Changes the sample interval (clamped to 20…1000 ms) and returns the interval the device
    /// confirms (`S:RATE:<ms>`).
    @discardableResult
    public func changeSampleRate(ms: Int, timeout: Duration) async throws(GripFitCommandError) -> Int {
        let clamped = min(max(ms, GripFitCommand.rateRange.lowerBound), GripFitCommand.rateRange.upperBound)
        let status = try await command(.setRate(ms: clamped), timeout: timeout) { status in
            if case .rate = status { true } else { false }
        }
        guard case .rate(let confirmed) = status else { throw .noConfirmation(command: "RATE") }
        return confirmed
    }

    /// Asks the device whether it is there and returns once it answers (`S:PONG`).
    public func ping(timeout: Duration = .seconds(2)) async throws(GripFitCommandError) {
        _ = try await command(.ping, timeout: timeout) { $0 == .pong }
    }

    /// Writes `command` and waits for the status `confirms` accepts (armed before the write).
    private func command(
        _ command: GripFitCommand, timeout: Duration, confirmedBy confirms: @escaping @Sendable (GripFitStatus) -> Bool
    ) async throws(GripFitCommandError) -> GripFitStatus {
        guard hub.state == .connected, let connection else { throw .notConnected }
        let ticket = confirmations.arm { confirms($0) ? .complete : .notMine }
        do {
            try await connection.write(command.data, to: GripFitBLEConstants.writeCharacteristic, type: .withResponse)
        } catch {
            confirmations.cancel(ticket)
            switch error as? BLEError {
            case .notConnected?, .disconnected?, .cancelled?:
                // The link went away under the write (a disconnect, a drop).
                throw .linkLost
            default:
                throw .writeFailed((error as? BLEError)?.errorDescription ?? "\(error)")
            }
        }
        do {
            guard let status = try await confirmations.reply(to: ticket, timeout: timeout).messages.last else {
                throw GripFitCommandError.noConfirmation(command: command.text)
            }
            return status
        } catch RequestCorrelatorError.timedOut {
            throw .noConfirmation(command: command.text)
        } catch let error as GripFitCommandError {
            throw error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .linkLost
        }
    }

    private func send(_ command: GripFitCommand) async {
        guard hub.state == .connected, let connection else {
            logger.warning("\(command.text) not sent: not connected")
            return
        }
        do {
            try await connection.write(command.data, to: GripFitBLEConstants.writeCharacteristic, type: .withResponse)
        } catch {
            logger.warning("\(command.text) failed: \(error)")
        }
    }

    // MARK: Stale link

    /// Asks a silent device whether it is there (it answers `S:PONG`).
    private func probe() async {
        logger.notice("No reading for \(configuration.staleAfter); sending PING")
        await sendPing()
    }

    /// The link is up but the device is silent: the connection drops it and reconnects by
    /// its policy, as after any lost link.
    private func linkLost() async {
        guard let connection, hub.state == .connected else { return }
        logger.warning("No PONG: treating the link as lost")
        await connection.linkLost(reason: .disconnected("no answer to PING"))
    }

    // MARK: Errors

    private func map(_ error: any Error) -> GripFitError {
        guard let error = error as? BLEError else { return .connectionFailed("\(error)") }
        switch error {
        case .bluetoothUnavailable(.unauthorized): return .bluetoothUnauthorized
        case .bluetoothUnavailable(.unsupported): return .bluetoothUnsupported
        case .bluetoothUnavailable: return .bluetoothOff
        case .scanTimeout, .deviceNotFound: return .scanTimeout
        case .connectionTimeout: return .connectionTimeout
        case .serviceNotFound, .characteristicNotFound: return .deviceNotRecognized
        case .pairingFailed: return .pairingFailed
        default: return .connectionFailed(error.errorDescription ?? "\(error)")
        }
    }

    private func mapLost(_ error: BLEError) -> GripFitError {
        switch error {
        case .bluetoothUnavailable: map(error)
        default: .connectionLost
        }
    }
}
