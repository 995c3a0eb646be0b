import Foundation
import TetherCore
import TetherSimulator
#if !canImport(CoreBluetooth)
import TetherCoreBluetooth
#endif

/// Builds a test harness's driver over a simulator ``VirtualRadio``: the ``SimulatedDriver``
/// itself or, where CoreBluetooth does not exist (Linux), the `CoreBluetoothDriver` on the
/// CoreBluetooth look-alike, so that one suite runs through either driver.
///
/// `TETHER_TEST_DRIVER` (`simulator`, the default, or `corebluetooth`) chooses. ``TestTime``
/// asks ``waitWhileBusy(_:)`` whenever the scheduler is idle. On Apple platforms there is no
/// look-alike (the real CoreBluetooth cannot be given a virtual radio): every kind is the
/// simulator's driver there, so every test target builds and runs on a Mac as it is.
public enum SimulatorBackedDriver {
    /// Which driver sits on the radio.
    public enum Kind: String, Sendable, CaseIterable {
        /// ``SimulatedDriver``.
        case simulator
        /// `CoreBluetoothDriver` on `CoreBluetoothLookalike` (Linux; the simulator's driver on
        /// Apple platforms).
        case corebluetooth
    }

    /// The state-restoration identifier the look-alike drivers are created with.
    public static let restoreIdentifier = "tether.simulator-backed"

    /// The kind `TETHER_TEST_DRIVER` names; `simulator` when unset or unrecognized.
    public static var environmentChoice: Kind {
        ProcessInfo.processInfo.environment["TETHER_TEST_DRIVER"].flatMap(Kind.init(rawValue:)) ?? .simulator
    }

    /// A driver of `kind` for `radio`'s first app launch. Create one per radio.
    public static func make(radio: VirtualRadio, supportsAutoReconnect: Bool = true, kind: Kind = environmentChoice) async -> any BLEDriver {
        #if !canImport(CoreBluetooth)
        if kind == .corebluetooth {
            return await CoreBluetoothDriver.onLookalike(of: radio, restoreIdentifier: restoreIdentifier, autoReconnect: supportsAutoReconnect)
        }
        #endif
        return await SimulatedDriver(radio: radio, supportsAutoReconnect: supportsAutoReconnect)
    }

    /// Simulates the OS relaunching the app (links stay up) and returns the new launch's
    /// driver, whose first events are `willRestoreState` and the radio's state.
    public static func relaunch(radio: VirtualRadio, kind: Kind = environmentChoice) async -> any BLEDriver {
        #if !canImport(CoreBluetooth)
        if kind == .corebluetooth {
            return await CoreBluetoothDriver.relaunchedOnLookalike(of: radio, restoreIdentifier: restoreIdentifier)
        }
        #endif
        return await radio.relaunchApp()
    }

    /// Waits until no look-alike callback for `radio` is in flight; true if one was (false at
    /// once for the simulator driver). ``TestTime`` asks this each time the scheduler is idle.
    public static func waitWhileBusy(_ radio: VirtualRadio) async -> Bool {
        #if !canImport(CoreBluetooth)
        return await CoreBluetoothDriver.waitWhileLookalikeBusy(of: radio)
        #else
        return false
        #endif
    }
}
