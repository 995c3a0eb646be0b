import Foundation
import TetherCore

/// What went wrong, in words a grip-test screen can show (guide §4).
public enum GripFitError: Error, Sendable, Hashable {
    /// Bluetooth is turned off: ask the user to turn it on.
    case bluetoothOff
    /// The app may not use Bluetooth: send the user to Settings.
    case bluetoothUnauthorized
    /// This device has no Bluetooth LE.
    case bluetoothUnsupported
    /// No GripFit was found within the scan timeout (10 s).
    case scanTimeout
    /// The connection was not established within the connect timeout (5 s).
    case connectionTimeout
    /// The device lacks the NUS service or its TX/RX characteristics.
    case deviceNotRecognized
    /// The link dropped and could not be brought back.
    case connectionLost
    /// Pairing failed.
    case pairingFailed
    /// Any other connection failure.
    case connectionFailed(String)
}

extension GripFitError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .bluetoothOff: "Bluetooth is off. Turn it on to connect to your GripFit."
        case .bluetoothUnauthorized: "GripFit needs Bluetooth permission. Allow it in Settings."
        case .bluetoothUnsupported: "This device does not support Bluetooth Low Energy."
        case .scanTimeout: "No GripFit found. Make sure it is switched on and nearby."
        case .connectionTimeout: "The GripFit did not answer in time. Try again."
        case .deviceNotRecognized: "Device not recognized: it does not look like a GripFit."
        case .connectionLost: "The connection to the GripFit was lost."
        case .pairingFailed: "Pairing with the GripFit failed."
        case .connectionFailed(let why): "Could not connect to the GripFit: \(why)"
        }
    }
}

/// Why a command that waits for the device's confirmation (``BLEManager/tare(timeout:)``,
/// ``BLEManager/changeSampleRate(ms:timeout:)``, ``BLEManager/ping(timeout:)``) did not get it.
public enum GripFitCommandError: Error, Sendable, Hashable, LocalizedError {
    /// No GripFit is connected.
    case notConnected
    /// The write failed.
    case writeFailed(String)
    /// The device answered `S:NOT_READY`: the load cell does not respond.
    case sensorNotReady
    /// The device did not confirm the command in time.
    case noConfirmation(command: String)
    /// The link dropped (or was closed) before the confirmation came.
    case linkLost
    /// The task waiting for the confirmation was cancelled.
    case cancelled

    public var errorDescription: String? {
        switch self {
        case .notConnected: "No GripFit is connected."
        case .writeFailed(let why): "The command could not be sent: \(why)"
        case .sensorNotReady: "The GripFit reports NOT_READY: check the load cell."
        case .noConfirmation(let command): "The GripFit did not confirm \(command) in time."
        case .linkLost: "The connection to the GripFit was lost before it answered."
        case .cancelled: "The command was cancelled before the GripFit answered."
        }
    }
}

/// The manager's connection state; every error surfaces here (guide §4.2).
public enum GripFitConnectionState: Sendable, Hashable {
    /// Not connected.
    case disconnected
    /// Looking for devices.
    case scanning
    /// Connecting (or reconnecting after a drop).
    case connecting
    /// Connected: readings flow.
    case connected
    /// Something failed; the associated error says what.
    case error(GripFitError)
}

/// Whether the load cell works (guide §1.3: `S:READY` / `S:NOT_READY`).
public enum SensorReadiness: String, Sendable, Hashable, Codable {
    /// Not reported yet.
    case unknown
    /// `S:READY`.
    case ready
    /// `S:NOT_READY`: the HX711 is not responding — a hardware issue to show the user.
    case notReady
}

/// A GripFit seen while scanning, for a device picker.
public struct GripFitDevice: Sendable, Hashable, Identifiable {
    /// The peripheral to connect to.
    public let id: PeripheralID
    /// Its advertised name.
    public let name: String
    /// Signal strength at discovery in dBm; nil when the stack had no value.
    public let rssi: Int?

    /// Creates a device record.
    public init(id: PeripheralID, name: String, rssi: Int?) {
        self.id = id
        self.name = name
        self.rssi = rssi
    }
}

/// What the device says about itself (`D:GRIPFIT,<version>`).
public struct GripFitDeviceInfo: Sendable, Hashable, Codable {
    /// The firmware version.
    public let firmwareVersion: String
    /// Creates device info.
    public init(firmwareVersion: String) { self.firmwareVersion = firmwareVersion }
}

/// The GripFit manager of the integration guide (§2.1), implemented over BLE by ``BLEManager``
/// and without Bluetooth by ``MockBLEManager``.
///
/// Commands do not throw: failures show up in ``connectionState``, and the device's answers
/// (TARED, PONG, RATE) on ``statuses()``.
public protocol BLEManagerProtocol: Actor {
    /// The current connection state.
    var connectionState: GripFitConnectionState { get }
    /// Connection states as they change, starting with the current one.
    func connectionStates() -> AsyncStream<GripFitConnectionState>
    /// Devices found by the current or last scan.
    var discoveredDevices: [GripFitDevice] { get }
    /// The device list each time it changes.
    func discoveredDeviceUpdates() -> AsyncStream<[GripFitDevice]>
    /// Calibrated readings as they arrive.
    func readings() -> AsyncStream<GripReading>
    /// Status messages as they arrive.
    func statuses() -> AsyncStream<GripFitStatus>
    /// Firmware information, once the device has sent it.
    var deviceInfo: GripFitDeviceInfo? { get }
    /// Whether the load cell works.
    var sensorReadiness: SensorReadiness { get }

    /// Starts looking for GripFit devices (stops by itself after the scan timeout).
    func startScanning() async
    /// Stops looking.
    func stopScanning() async
    /// Connects to a discovered device.
    func connect(to device: GripFitDevice) async
    /// Disconnects and stops reconnecting.
    func disconnect() async
    /// Zeroes the scale at the current load (`CMD:TARE`).
    func sendTare() async
    /// Checks the link (`CMD:PING`).
    func sendPing() async
    /// Changes the sample interval, clamped to 20...1000 ms (`CMD:RATE:<ms>`).
    func setSampleRate(ms: Int) async

    /// Zeroes the scale and returns once the device confirms it (`S:TARED`), or throws why not.
    func tare(timeout: Duration) async throws(GripFitCommandError)
    /// Changes the sample interval (clamped) and returns the interval the device confirms.
    @discardableResult
    func changeSampleRate(ms: Int, timeout: Duration) async throws(GripFitCommandError) -> Int
}

extension BLEManagerProtocol {
    /// ``tare(timeout:)`` with 5 s for the confirmation.
    public func tare() async throws(GripFitCommandError) {
        try await tare(timeout: .seconds(5))
    }

    /// ``changeSampleRate(ms:timeout:)`` with 5 s for the confirmation.
    @discardableResult
    public func changeSampleRate(ms: Int) async throws(GripFitCommandError) -> Int {
        try await changeSampleRate(ms: ms, timeout: .seconds(5))
    }
}
