import Foundation
import Logging
import TetherCore

/// A GripFit manager without Bluetooth, for previews and UI work (guide §2.3).
///
/// Scanning finds one fake device after a moment, connecting takes 0.5 s, readings arrive every
/// 100 ms along a ``ForceProfile`` squeeze curve, and tare, ping and rate changes are answered
/// at once. Time comes from the injected clock.
public actor MockBLEManager: BLEManagerProtocol {
    /// The fake device the mock "finds".
    public static let device = GripFitDevice(
        id: PeripheralID(UUID(uuidString: "6E400001-0000-4000-8000-00000000F17F")!), name: GripFitBLEConstants.deviceNamePrefix, rssi: -52)

    private let clock: any Clock<Duration>
    private let timeline: Timeline
    private let now: @Sendable () -> Date
    private let profile: ForceProfile
    private var hub: GripFitHub
    private var rng = SplitMix64(seed: 7)
    private var tareOffset: Int32 = 0
    private var rateMs = 100
    private var origin: Duration = .zero
    private var work: Task<Void, Never>?
    private var stream: Task<Void, Never>?
    /// The calibration applied to every reading.
    public var calibration: any GripCalibration

    /// Creates a mock.
    public init(
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        profile: ForceProfile = .standard,
        calibration: any GripCalibration = RawCalibration()
    ) {
        self.clock = clock
        self.timeline = Timeline(clock)
        self.now = now
        self.profile = profile
        self.calibration = calibration
        self.hub = GripFitHub(logger: Logger(label: "tether.gripfit.mock"))
    }

    public var connectionState: GripFitConnectionState { hub.state }
    public func connectionStates() -> AsyncStream<GripFitConnectionState> { hub.stateStream() }
    public var discoveredDevices: [GripFitDevice] { hub.devices }
    public func discoveredDeviceUpdates() -> AsyncStream<[GripFitDevice]> { hub.deviceStream() }
    public func readings() -> AsyncStream<GripReading> { hub.readings() }
    public func statuses() -> AsyncStream<GripFitStatus> { hub.statuses() }
    public var deviceInfo: GripFitDeviceInfo? { hub.deviceInfo }
    public var sensorReadiness: SensorReadiness { hub.readiness }

    public func startScanning() async {
        guard hub.state == .disconnected || isError else { return }
        hub.setDevices([])
        hub.setState(.scanning)
        work = after(.milliseconds(300)) { $0.hub.addDevice(Self.device) }
    }

    public func stopScanning() async {
        work?.cancel()
        if hub.state == .scanning { hub.setState(.disconnected) }
    }

    public func connect(to device: GripFitDevice) async {
        work?.cancel()
        hub.setState(.connecting)
        work = after(.milliseconds(500)) { mock in
            mock.hub.setState(.connected)
            mock.origin = mock.timeline.now
            mock.deliver(.deviceInfo(firmwareVersion: "1.0-mock"))
            mock.deliver(.status(.ready))
            mock.startStreaming()
        }
    }

    public func disconnect() async {
        work?.cancel()
        stream?.cancel()
        hub.resetDeviceState()
        hub.setState(.disconnected)
    }

    public func sendTare() async {
        guard hub.state == .connected else { return }
        tareOffset = profile.value(at: timeline.now - origin)
        deliver(.status(.tared))
    }

    public func sendPing() async {
        guard hub.state == .connected else { return }
        deliver(.status(.pong))
    }

    public func setSampleRate(ms: Int) async {
        guard hub.state == .connected else { return }
        rateMs = min(max(ms, GripFitCommand.rateRange.lowerBound), GripFitCommand.rateRange.upperBound)
        deliver(.status(.rate(ms: rateMs)))
        startStreaming()
    }

    /// Tares at once (the mock device always confirms).
    public func tare(timeout: Duration) async throws(GripFitCommandError) {
        guard hub.state == .connected else { throw .notConnected }
        await sendTare()
    }

    /// Applies the clamped interval at once and returns it.
    @discardableResult
    public func changeSampleRate(ms: Int, timeout: Duration) async throws(GripFitCommandError) -> Int {
        guard hub.state == .connected else { throw .notConnected }
        await setSampleRate(ms: ms)
        return rateMs
    }

    private var isError: Bool {
        if case .error = hub.state { return true }
        return false
    }

    private func deliver(_ message: GripFitMessage) {
        hub.publish(message, calibration: calibration, at: now())
    }

    private func tick() {
        let raw = profile.value(at: timeline.now - origin, noiseSample: rng.nextUnit())
        deliver(.reading(ForceProfile.clamp(Double(raw) - Double(tareOffset))))
    }

    private func startStreaming() {
        stream?.cancel()
        let interval = Duration.milliseconds(rateMs)
        let timeline = self.timeline
        stream = Task { [weak self] in
            var next = timeline.now + interval
            while !Task.isCancelled {
                do { try await timeline.sleep(until: next) } catch { return }
                await self?.tick()
                next += interval
            }
        }
    }

    private func after(_ delay: Duration, _ action: @escaping @Sendable (isolated MockBLEManager) -> Void) -> Task<Void, Never> {
        let clock = self.clock
        return Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            guard let self else { return }
            await self.run(action)
        }
    }

    private func run(_ action: @Sendable (isolated MockBLEManager) -> Void) { action(self) }
}
