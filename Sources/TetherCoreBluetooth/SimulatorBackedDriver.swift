#if !canImport(CoreBluetooth)
import CoreBluetoothLookalike
import Foundation
import TetherCore
import TetherSimulator

/// Builds a driver over a simulator ``VirtualRadio``: the ``SimulatedDriver`` itself, or the
/// ``CoreBluetoothDriver`` on the CoreBluetooth look-alike (Linux only).
///
/// Test harnesses build their driver here so that one suite runs through either driver; the
/// `TETHER_TEST_DRIVER` environment variable (`simulator`, the default, or `corebluetooth`)
/// chooses. Harnesses that advance a test clock await ``settle(_:)`` before each advance.
public enum SimulatorBackedDriver {
    /// Which driver sits on the radio.
    public enum Kind: String, Sendable, CaseIterable {
        /// ``SimulatedDriver``.
        case simulator
        /// ``CoreBluetoothDriver`` on `CoreBluetoothLookalike`.
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
        switch kind {
        case .simulator:
            return await SimulatedDriver(radio: radio, supportsAutoReconnect: supportsAutoReconnect)
        case .corebluetooth:
            let backend = await CBLookalikeBackend.backend(for: radio)
            return CBLookalikeBackend.$current.withValue(backend) {
                CoreBluetoothDriver(restoreIdentifier: restoreIdentifier, autoReconnect: supportsAutoReconnect)
            }
        }
    }

    /// Simulates the OS relaunching the app (links stay up) and returns the new launch's
    /// driver, whose first events are `willRestoreState` and the radio's state.
    public static func relaunch(radio: VirtualRadio, kind: Kind = environmentChoice) async -> any BLEDriver {
        switch kind {
        case .simulator:
            return await radio.relaunchApp()
        case .corebluetooth:
            let backend = await CBLookalikeBackend.backend(for: radio)
            await backend.relaunchApp()
            return CBLookalikeBackend.$current.withValue(backend) {
                CoreBluetoothDriver(restoreIdentifier: restoreIdentifier)
            }
        }
    }

    /// Waits until no look-alike callback for `radio` is in flight (returns at once for the
    /// simulator driver, whose events never leave the Swift scheduler).
    public static func settle(_ radio: VirtualRadio) async {
        await CBLookalikeBackend.existing(for: radio)?.settle()
    }
}
#endif
