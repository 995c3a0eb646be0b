#if os(macOS) || os(Linux)
import FlockFinder
import GripFit
import TetherCore

/// A device module's view model that scans for its devices and connects to one it found.
@MainActor
protocol ScanningViewModel: AnyObject {
    /// A device as the scan lists it.
    associatedtype Device: Identifiable where Device.ID == PeripheralID
    /// The devices the scan found.
    var devices: [Device] { get }
    func startScanning() async
    func stopScanning() async
    func connect(to device: Device) async
    func disconnect() async
}

extension GripTestViewModel: ScanningViewModel {}
extension FlockFinderViewModel: ScanningViewModel {}

extension ScreenWork {
    /// Carries out the connection actions of a screen that scans: `scan` (`on`), `connect`
    /// (`id`, a device the scan found, called a `noun` in errors) and `disconnect`. False for
    /// any other action.
    func performConnectionAction<Model: ScanningViewModel>(_ action: StudioAction, on model: Model,
                                                           noun: String) async throws(StudioProtocolError) -> Bool {
        switch action.name {
        case "scan":
            if try action.flag("on") { await model.startScanning() } else { await model.stopScanning() }
        case "connect":
            let id = PeripheralID(try action.uuid("id"))
            guard let device = model.devices.first(where: { $0.id == id }) else {
                throw StudioProtocolError("no \(noun) \(id) was found: scan first")
            }
            // In the background: Disconnect must not wait behind a connection attempt.
            guard run({ [weak model] in await model?.connect(to: device) }) else {
                throw StudioProtocolError("connections are under way: wait, or Disconnect")
            }
        case "disconnect":
            cancel()
            await model.disconnect()
        default:
            return false
        }
        return true
    }
}
#endif
