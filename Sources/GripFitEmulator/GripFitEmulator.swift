import Foundation
import TetherCore
import TetherSimulator
import GripFit

/// The GripFit firmware as a virtual `_GRIPFIT` peripheral (guide §1).
///
/// On subscription it sends `D:GRIPFIT,<version>` and `S:READY`, then streams `R:<value>` at
/// the current rate along a `ForceProfile`; it answers `CMD:PING`, `CMD:TARE`, `CMD:RATE:<ms>`
/// and `CMD:INFO`, keeps the tare offset in RAM (lost on power cycle), and can be put into the
/// HX711 `NOT_READY` fault. Notifications can carry one line each, or fixed-size chunks that
/// split and merge lines as a UART bridge does.
@SimulationActor
public final class GripFitEmulator: PeripheralBehavior {
    /// How lines are cut into notifications.
    public enum NotificationFraming: Sendable, Hashable {
        /// One complete line per notification.
        case linePerNotification
        /// A byte stream cut into notifications of at most this many bytes: lines split across
        /// notifications and several lines share one.
        case chunks(Int)
    }

    /// The firmware version in `D:GRIPFIT,<version>`.
    public var firmwareVersion: String
    /// The force curve the load cell sees.
    public var profile: ForceProfile
    /// How lines become notifications.
    public var framing: NotificationFraming
    /// The current sample interval in ms.
    public private(set) var rateMs = 100
    /// The tare offset in raw counts (RAM only).
    public private(set) var tareOffset: Int32 = 0
    /// True while the HX711 fault is active.
    public private(set) var sensorFault = false
    /// Readings sent since power-up.
    public private(set) var readingsSent = 0
    /// Every command line received, in order.
    public private(set) var commandsReceived: [String] = []
    /// When false the firmware stops answering PING (a wedged link for stale-link tests).
    public var answersPing = true

    private var context: PeripheralContext?
    private var streamTask: Task<Void, Never>?
    private var flushTask: Task<Void, Never>?
    private var commandFramer = NewlineFramer(maxLineLength: 64)
    private var pending = Data()
    private var rng: SplitMix64
    /// Power-up time: the force profile's clock runs from here, across reconnections.
    private var origin: Duration = .zero

    /// Creates the firmware.
    public nonisolated init(
        firmwareVersion: String = "1.0",
        profile: ForceProfile = .standard,
        framing: NotificationFraming = .linePerNotification,
        seed: UInt64 = 42
    ) {
        self.firmwareVersion = firmwareVersion
        self.profile = profile
        self.framing = framing
        self.rng = SplitMix64(seed: seed)
    }

    /// A virtual `_GRIPFIT` peripheral running this firmware.
    public nonisolated func makePeripheral(id: PeripheralID = PeripheralID(UUID()), distance: Double = 0.8) -> VirtualPeripheral {
        VirtualPeripheral(profile: .gripFit, id: id, behavior: self, distance: distance)
    }

    // MARK: Faults and physical actions

    /// Starts or clears the HX711 fault; the device reports it with `S:NOT_READY` / `S:READY`.
    public func setSensorFault(_ fault: Bool) {
        guard fault != sensorFault else { return }
        sensorFault = fault
        send(fault ? "S:NOT_READY" : "S:READY")
    }

    /// A power cycle: the tare offset and rate are forgotten, links drop.
    public func powerCycle() {
        origin = context?.now ?? .zero
        tareOffset = 0
        rateMs = 100
        context?.disconnect()
    }

    /// Replaces the force curve (for example `.idle`, so nobody is squeezing).
    public func setProfile(_ profile: ForceProfile) {
        self.profile = profile
    }

    /// Scripts one squeeze starting `delay` from now (replacing any repeating profile), as a
    /// person picking up the device would.
    public func squeeze(in delay: Duration, peak: Int32, ramp: Duration = .milliseconds(800), hold: Duration = .milliseconds(1200), release: Duration = .milliseconds(600)) {
        let now = (context?.now ?? .zero) - origin
        var script = profile
        if script.period != nil {
            script.squeezes = []
            script.period = nil
        }
        script.squeezes.append(ForceProfile.Squeeze(start: now + delay, ramp: ramp, hold: hold, release: release, peak: peak))
        profile = script
    }

    /// The raw value the HX711 would report now (before tare).
    public func currentRawValue() -> Int32 {
        let now = context?.now ?? .zero
        return profile.value(at: now - origin, noiseSample: rng.nextUnit())
    }

    // MARK: PeripheralBehavior

    public func didConnect(_ context: PeripheralContext) {
        self.context = context
        commandFramer.reset()
        pending.removeAll()
    }

    public func didDisconnect(_ context: PeripheralContext) {
        streamTask?.cancel()
        streamTask = nil
        flushTask?.cancel()
        pending.removeAll()
        commandFramer.reset()
    }

    public func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        guard characteristic == GripFitBLEConstants.notifyCharacteristic else { return }
        self.context = context
        if enabled {
            send("\(GripFitBLEConstants.firmwareMessagePrefix)\(firmwareVersion)")
            send(sensorFault ? "S:NOT_READY" : "S:READY")
            startStreaming()
        } else {
            streamTask?.cancel()
            streamTask = nil
        }
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        guard characteristic == GripFitBLEConstants.writeCharacteristic else { return .writeNotPermitted }
        self.context = context
        for line in commandFramer.pushLines(value) { handle(line) }
        return nil
    }

    // MARK: Firmware

    private func handle(_ line: String) {
        commandsReceived.append(line)
        switch GripFitCommand(line: line) {
        case .ping?:
            if answersPing { send("S:PONG") }
        case .tare?:
            if sensorFault {
                send("S:NOT_READY")
            } else {
                tareOffset = currentRawValue()
                send("S:TARED")
            }
        case .setRate(let ms)?:
            // The firmware clamps rather than rejects, and confirms what it applied.
            rateMs = min(max(ms, GripFitCommand.rateRange.lowerBound), GripFitCommand.rateRange.upperBound)
            send("S:RATE:\(rateMs)")
            startStreaming()
        case .info?:
            send("\(GripFitBLEConstants.firmwareMessagePrefix)\(firmwareVersion)")
        case nil:
            send("S:UNKNOWN_CMD")
        }
    }

    private func startStreaming() {
        streamTask?.cancel()
        guard let context, context.isSubscribed(GripFitBLEConstants.notifyCharacteristic) else { return }
        streamTask = context.every(.milliseconds(rateMs)) { [weak self] in
            guard let self, !self.sensorFault else { return }
            let value = ForceProfile.clamp(Double(self.currentRawValue()) - Double(self.tareOffset))
            self.readingsSent += 1
            self.send("R:\(value)")
        }
    }

    private func send(_ line: String) {
        guard let context else { return }
        let bytes = Data((line + "\n").utf8)
        switch framing {
        case .linePerNotification:
            context.notify(bytes, on: GripFitBLEConstants.notifyCharacteristic)
        case .chunks(let size):
            let size = max(1, min(size, context.mtu - 3))
            pending.append(bytes)
            while pending.count >= size {
                context.notify(pending.prefix(size), on: GripFitBLEConstants.notifyCharacteristic)
                pending.removeFirst(size)
            }
            // Flush a tail that no further line completes, as a UART bridge's idle timer does.
            flushTask?.cancel()
            flushTask = context.after(.milliseconds(15)) { [weak self] in
                guard let self, !self.pending.isEmpty, let context = self.context else { return }
                context.notify(self.pending, on: GripFitBLEConstants.notifyCharacteristic)
                self.pending.removeAll()
            }
        }
    }
}
