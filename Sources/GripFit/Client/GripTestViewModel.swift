import Foundation
import Observation
import TetherCore

/// The grip-test screen's state for SwiftUI (guide §3.2): it follows a ``BLEManagerProtocol``
/// (``BLEManager`` on a device, ``MockBLEManager`` in previews), keeps a window of readings for
/// a live chart, finds squeezes (peak, average, duration), and records a session that it saves
/// once, when the test is complete (§3.4).
///
/// Errors are values: ``error`` mirrors the manager's state, ``saveError`` a failed save.
///
/// ```swift
/// @State var model = GripTestViewModel(manager: MockBLEManager())
/// // .task { await model.start(); await model.startScanning() }
/// ```
@Observable
@MainActor
public final class GripTestViewModel {
    /// The manager's connection state.
    public private(set) var connectionState: GripFitConnectionState = .disconnected
    /// Devices found by the current or last scan.
    public private(set) var devices: [GripFitDevice] = []
    /// The newest reading.
    public private(set) var latestReading: GripReading?
    /// The newest readings, oldest first, at most ``chartWindow`` of them (for a live chart).
    public private(set) var chartReadings: [GripReading] = []
    /// Whether the load cell works (`S:NOT_READY` is a hardware issue to show).
    public private(set) var readiness: SensorReadiness = .unknown
    /// What the device said about itself.
    public private(set) var deviceInfo: GripFitDeviceInfo?
    /// The squeeze under way.
    public private(set) var currentSqueeze: Squeeze?
    /// The last finished squeeze.
    public private(set) var lastSqueeze: Squeeze?
    /// The highest squeeze peak since the view model started following (or since ``resetPeak()``).
    public private(set) var bestPeak: Double?
    /// The sample interval the device confirmed, in ms.
    public private(set) var sampleIntervalMs: Int?
    /// The session being recorded, if any.
    public private(set) var session: GripSession?
    /// The summary of the last session saved.
    public private(set) var lastSavedSession: GripSessionSummary?
    /// Why the last save failed (nil after a successful one).
    public private(set) var saveError: String?
    /// Why the last tare or rate change was not confirmed (nil after one that was).
    public private(set) var commandError: GripFitCommandError?
    /// How many readings fit the chart window.
    public let chartWindow: Int

    /// The manager's error, if its state is one.
    public var error: GripFitError? {
        if case .error(let error) = connectionState { error } else { nil }
    }

    /// Whether a session is being recorded.
    public var isRecording: Bool { session != nil }

    private let manager: any BLEManagerProtocol
    private let store: (any GripSessionStore)?
    private let now: @Sendable () -> Date
    @ObservationIgnored private var detector: SqueezeDetector
    @ObservationIgnored private nonisolated let tasks = TaskBag()

    /// Creates a view model; call ``start()`` to follow the manager.
    ///
    /// - Parameters:
    ///   - manager: the GripFit manager to follow (``BLEManager``, or ``MockBLEManager`` in previews).
    ///   - store: where ``stopRecording()`` saves sessions (none: they are only summarised).
    ///   - squeezeThreshold: force above rest that counts as a squeeze (``SqueezeDetector``).
    ///   - chartWindow: readings kept for the chart (600: a minute at 10 Hz).
    ///   - now: the time stamped on recorded sessions (a fixed clock in tests).
    public init(
        manager: any BLEManagerProtocol,
        store: (any GripSessionStore)? = nil,
        squeezeThreshold: Double = 20_000,
        chartWindow: Int = 600,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.manager = manager
        self.store = store
        self.now = now
        self.chartWindow = max(1, chartWindow)
        self.detector = SqueezeDetector(threshold: squeezeThreshold)
    }

    /// Follows the manager's states, devices, readings and statuses until ``stop()``; every
    /// stream is subscribed before it returns, so nothing that happens after is missed.
    /// Idempotent.
    public func start() async {
        guard tasks.isEmpty else { return }
        let states = await manager.connectionStates()
        let devices = await manager.discoveredDeviceUpdates()
        let readings = await manager.readings()
        let statuses = await manager.statuses()
        // Another start() may have finished while this one waited.
        guard tasks.isEmpty else { return }
        tasks.add(Task { [weak self] in
            for await state in states { await self?.apply(state) }
        })
        tasks.add(Task { [weak self] in
            for await list in devices { self?.devices = list }
        })
        tasks.add(Task { [weak self] in
            for await reading in readings { self?.apply(reading) }
        })
        tasks.add(Task { [weak self] in
            for await status in statuses { await self?.apply(status) }
        })
    }

    /// Stops following the manager (the link stays as it is).
    public func stop() {
        tasks.cancelAll()
    }

    // A screen that goes away without stop() leaves no task listening behind it.
    deinit {
        tasks.cancelAll()
    }

    // MARK: Intents

    /// Looks for devices.
    public func startScanning() async { await manager.startScanning() }
    /// Stops looking.
    public func stopScanning() async { await manager.stopScanning() }
    /// Connects to a device from ``devices``.
    public func connect(to device: GripFitDevice) async { await manager.connect(to: device) }
    /// Disconnects.
    public func disconnect() async { await manager.disconnect() }
    /// Zeroes the scale at the current load; true once the device confirmed it (otherwise
    /// ``commandError`` says why).
    @discardableResult
    public func tare() async -> Bool {
        do {
            try await manager.tare()
            commandError = nil
            return true
        } catch {
            commandError = error
            return false
        }
    }

    /// Asks for a sample interval (clamped to the firmware's range); true once the device
    /// confirmed it (otherwise ``commandError`` says why).
    @discardableResult
    public func setSampleRate(ms: Int) async -> Bool {
        do {
            try await manager.changeSampleRate(ms: ms)
            commandError = nil
            return true
        } catch {
            commandError = error
            return false
        }
    }
    /// Forgets ``bestPeak``.
    public func resetPeak() { bestPeak = nil }

    /// Starts recording a session (replacing one under way, unsaved).
    public func startRecording() {
        session = GripSession(startedAt: now())
    }

    /// Ends the session and saves it to the store; returns its summary (nil when none was
    /// recording). A failed save leaves the summary in ``lastSavedSession`` unset and says why in
    /// ``saveError``.
    @discardableResult
    public func stopRecording() async -> GripSessionSummary? {
        guard let session else { return nil }
        self.session = nil
        let ended = now()
        let summary = session.summary(endedAt: ended)
        guard let store else {
            lastSavedSession = summary
            return summary
        }
        do {
            try await store.save(session.record(endedAt: ended))
            lastSavedSession = summary
            saveError = nil
        } catch {
            saveError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return summary
    }

    // MARK: Following the manager

    private func apply(_ state: GripFitConnectionState) async {
        if state != .connected, connectionState == .connected {
            // A new link starts at a new resting level; its readiness is unknown until told.
            finishSqueeze(detector.reset())
            readiness = .unknown
        }
        connectionState = state
        if state == .disconnected || state == .scanning {
            // The link is over (not dropped and coming back): what the screen shows of that
            // device must not pass for the next one's.
            deviceInfo = nil
            latestReading = nil
            chartReadings.removeAll()
            sampleIntervalMs = nil
            readiness = .unknown
        }
        if state == .connected {
            deviceInfo = await manager.deviceInfo
            readiness = await manager.sensorReadiness
        }
    }

    private func apply(_ reading: GripReading) {
        // A calibration can make a force that is not a number: it would poison every statistic.
        guard reading.force.isFinite else { return }
        latestReading = reading
        chartReadings.append(reading)
        if chartReadings.count > chartWindow { chartReadings.removeFirst(chartReadings.count - chartWindow) }
        session?.record(reading)
        finishSqueeze(detector.push(reading))
        currentSqueeze = detector.current
    }

    /// Records a squeeze that ended (or was cut short), and clears the one under way.
    private func finishSqueeze(_ ended: Squeeze?) {
        currentSqueeze = detector.current
        guard let ended else { return }
        lastSqueeze = ended
        bestPeak = max(bestPeak ?? ended.peak, ended.peak)
    }

    private func apply(_ status: GripFitStatus) async {
        switch status {
        case .ready: readiness = .ready
        case .notReady: readiness = .notReady
        case .tared:
            finishSqueeze(detector.reset())
        case .rate(let ms): sampleIntervalMs = ms
        case .pong, .unknown: break
        }
        if deviceInfo == nil { deviceInfo = await manager.deviceInfo }
    }
}
