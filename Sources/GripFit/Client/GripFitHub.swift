import Foundation
import Logging
import TetherCore

/// The observable state both managers share: connection state, devices, device info,
/// readiness, and the streams that publish them.
struct GripFitHub {
    private(set) var state: GripFitConnectionState = .disconnected
    private(set) var devices: [GripFitDevice] = []
    private(set) var deviceInfo: GripFitDeviceInfo?
    private(set) var readiness: SensorReadiness = .unknown
    private var states = Broadcaster<GripFitConnectionState>(bufferSize: 64)
    private var deviceLists = Broadcaster<[GripFitDevice]>(bufferSize: 16)
    private var readingStream = Broadcaster<GripReading>(bufferSize: 4096)
    private var statusStream = Broadcaster<GripFitStatus>(bufferSize: 256)
    let logger: Logger

    init(logger: Logger) { self.logger = logger }

    mutating func stateStream() -> AsyncStream<GripFitConnectionState> {
        states.subscribe(initial: state)
    }

    mutating func deviceStream() -> AsyncStream<[GripFitDevice]> {
        deviceLists.subscribe(initial: devices)
    }

    mutating func readings() -> AsyncStream<GripReading> { readingStream.subscribe() }
    mutating func statuses() -> AsyncStream<GripFitStatus> { statusStream.subscribe() }

    mutating func setState(_ new: GripFitConnectionState) {
        guard new != state else { return }
        logger.info("State \(state) → \(new)")
        state = new
        states.yield(new, logger: logger)
    }

    mutating func setDevices(_ list: [GripFitDevice]) {
        devices = list
        deviceLists.yield(list, logger: logger)
    }

    mutating func addDevice(_ device: GripFitDevice) {
        guard !devices.contains(where: { $0.id == device.id }) else { return }
        setDevices(devices + [device])
    }

    /// A link went away: the device's state is unknown until it speaks again.
    mutating func resetDeviceState() {
        readiness = .unknown
    }

    /// Routes one parsed message: readings through the calibration, statuses to readiness.
    mutating func publish(_ message: GripFitMessage, calibration: any GripCalibration, at date: Date) {
        switch message {
        case .reading(let raw):
            if readiness == .unknown { readiness = .ready }
            readingStream.yield(GripReading(raw: raw, force: calibration.force(fromRaw: raw), receivedAt: date), logger: logger)
        case .status(let status):
            switch status {
            case .ready: readiness = .ready
            case .notReady:
                readiness = .notReady
                logger.warning("The GripFit reports NOT_READY: the load cell is not responding")
            default: break
            }
            statusStream.yield(status, logger: logger)
        case .deviceInfo(let version):
            deviceInfo = GripFitDeviceInfo(firmwareVersion: version)
        }
    }
}
