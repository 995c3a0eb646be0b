#if !canImport(CoreBluetooth)
@_spi(Simulation) import CoreBluetoothLookalike
import Foundation
import Logging
import TetherCore
import TetherSimulator

/// Where CoreBluetooth does not exist (Linux), the driver runs on the CoreBluetooth look-alike
/// of a simulator `VirtualRadio`: what `tether --driver corebluetooth` uses there, and how the
/// test suites run through this driver.
extension CoreBluetoothDriver {
    /// The driver on the look-alike of `radio`, for the radio's first app launch (create one per
    /// radio; ``relaunchedOnLookalike(of:restoreIdentifier:)`` for the next).
    package static func onLookalike(
        of radio: VirtualRadio, restoreIdentifier: String? = nil, autoReconnect: Bool = true,
        queue: DispatchQueue? = nil, peripheralCacheLimit: Int = 256
    ) async -> CoreBluetoothDriver {
        let backend = await CBLookalikeBackend.backend(for: radio)
        return CBLookalikeBackend.$current.withValue(backend) {
            CoreBluetoothDriver(queue: queue, restoreIdentifier: restoreIdentifier, showPowerAlert: false, autoReconnect: autoReconnect,
                                peripheralCacheLimit: peripheralCacheLimit, logger: Logger(label: "tether.corebluetooth"))
        }
    }

    /// Simulates the OS relaunching the app (links stay up) and returns the new launch's driver,
    /// whose first events are `willRestoreState` and the radio's state.
    package static func relaunchedOnLookalike(of radio: VirtualRadio, restoreIdentifier: String?) async -> CoreBluetoothDriver {
        let backend = await CBLookalikeBackend.backend(for: radio)
        await backend.relaunchApp()
        return CBLookalikeBackend.$current.withValue(backend) {
            CoreBluetoothDriver(restoreIdentifier: restoreIdentifier)
        }
    }

    /// Waits until no look-alike command or callback for `radio` is in flight; true if one was.
    package static func waitWhileLookalikeBusy(of radio: VirtualRadio) async -> Bool {
        await CBLookalikeBackend.existing(for: radio)?.waitWhileInFlight() ?? false
    }
}
#endif
