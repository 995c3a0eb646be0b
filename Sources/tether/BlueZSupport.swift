#if os(Linux)
import Foundation
import Logging
import TetherBlueZ
import TetherCore

/// The CLI's use of the BlueZ driver: making one, probing for `auto`, judging its status.
enum BlueZSupport {
    /// How long `auto` waits for bluetoothd before choosing the simulator.
    static let probeSeconds = 2.0

    /// The outcome of probing bluetoothd.
    enum Probe {
        /// bluetoothd has an adapter: use this driver (already registered for shutdown).
        case bluez(BlueZDriver, BlueZStatus)
        /// No BlueZ to use, and why.
        case unavailable(String)
    }

    /// A logger for BlueZ code: quiet unless `TETHER_LOG` asks (the CLI reports the radio's
    /// state itself, in one line).
    static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        if ProcessInfo.processInfo.environment["TETHER_LOG"].flatMap(Logger.Level.init(rawValue:)) == nil {
            logger.logLevel = .critical
        }
        return logger
    }

    /// A driver on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the standard socket), shut
    /// down when the process exits or is interrupted: BlueZ keeps links up after a client dies.
    static func makeDriver(adapter: String?, pin: String?) -> BlueZDriver {
        let configuration = BlueZDriverConfiguration(adapter: adapter, agent: BlueZPairingAgent(pin: pin))
        let driver = BlueZDriver(configuration: configuration, logger: logger("tether.bluez"))
        ExitCleanup.shared.add(handlingSignals: true) { await driver.shutdown() }
        return driver
    }

    /// Asks bluetoothd (at most ``probeSeconds``) whether there is an adapter.
    static func probe(adapter: String?, pin: String?) async -> Probe {
        let configuration = BlueZDriverConfiguration(adapter: adapter, agent: BlueZPairingAgent(pin: pin))
        let driver = BlueZDriver(configuration: configuration, logger: logger("tether.bluez"))
        guard let status = await resultWithin(probeSeconds, { await driver.status() }) else {
            // Still connecting or reading the tree: let it finish and close on its own; the
            // process does not wait for it.
            Task { await driver.shutdown() }
            return .unavailable("bluetoothd did not answer within \(Int(probeSeconds)) s")
        }
        if status.adapter != nil, status.state == .poweredOn || status.state == .poweredOff {
            ExitCleanup.shared.add(handlingSignals: true) { await driver.shutdown() }
            return .bluez(driver, status)
        }
        await driver.shutdown()
        return .unavailable(status.reason ?? "Bluetooth is \(status.state)")
    }

    /// Throws the one line that says why the radio cannot be used, unless it is powered on.
    static func requireUsable(_ status: BlueZStatus, hint: String?) throws {
        guard status.state != .poweredOn else { return }
        var text = "Bluetooth unavailable: \(status)"
        if status.state == .poweredOff { text += " (power it on: bluetoothctl power on\(hint.map { "; " + $0 } ?? ""))" } else if let hint { text += " (\(hint))" }
        throw CLIError(text)
    }
}
#endif
