import Foundation
import Logging
import TetherCore
import TetherSimulator

/// Binds look-alike `CBCentralManager`s to a simulator ``VirtualRadio`` (Linux only; nothing
/// like it exists on Apple platforms).
///
/// A `CBCentralManager` finds its radio through the backend bound to the creating task:
///
/// ```swift
/// let backend = await CBLookalikeBackend.backend(for: radio)
/// let manager = CBLookalikeBackend.$current.withValue(backend) {
///     CBCentralManager(delegate: delegate, queue: queue, options: nil)
/// }
/// ```
///
/// A task-local binding (rather than a process-wide one) lets tests running in parallel each
/// bind their own radio. A manager created with no backend bound reports `.unsupported`, like a
/// machine without Bluetooth LE.
///
/// One backend serves one radio. Each simulated app launch gets one manager: the first from
/// ``backend(for:)``, later ones after ``relaunchApp()``, which keeps the radio's links up and
/// hands the next manager `willRestoreState`.
public final class CBLookalikeBackend: @unchecked Sendable {
    /// The backend bound to the current task; `CBCentralManager.init` reads it.
    @TaskLocal public static var current: CBLookalikeBackend?

    /// The radio behind this backend.
    public let radio: VirtualRadio
    /// Counts work between the radio and the delegate queue (see ``waitWhileInFlight()``).
    let inFlight = InFlightCounter()
    /// Wall-clock anchor for disconnection timestamps; deltas follow the radio's virtual time.
    let referenceTime = Date().timeIntervalSinceReferenceDate
    let logger = Logger(label: "CoreBluetooth")

    private let lock = NSLock()
    private var unclaimedLaunch: SimulatedDriver?
    private var authorizationValue: CBManagerAuthorization = .allowedAlways
    private var background: Set<UUID> = []
    private var noRSSI: Set<UUID> = []
    private var info: [String: any Sendable] = ["UIBackgroundModes": ["bluetooth-central"]]
    private var exceptions: [String] = []
    private var managers: [WeakManager] = []
    private var misuses: [String] = []

    private struct WeakManager { weak var manager: CBCentralManager? }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: WeakBackend] = [:]
    private struct WeakBackend { weak var backend: CBLookalikeBackend? }

    private init(radio: VirtualRadio, launch: SimulatedDriver) {
        self.radio = radio
        self.unclaimedLaunch = launch
    }

    /// The backend of `radio`, created (with the radio's first app launch) on first use.
    public static func backend(for radio: VirtualRadio) async -> CBLookalikeBackend {
        if let existing = existing(for: radio) { return existing }
        let launch = await SimulatedDriver(radio: radio)
        return registryLock.withLock {
            let key = ObjectIdentifier(radio)
            if let backend = registry[key]?.backend, backend.radio === radio { return backend }
            let backend = CBLookalikeBackend(radio: radio, launch: launch)
            registry = registry.filter { $0.value.backend != nil }
            registry[key] = WeakBackend(backend: backend)
            return backend
        }
    }

    /// The backend of `radio` if one exists (a manager keeps it alive).
    public static func existing(for radio: VirtualRadio) -> CBLookalikeBackend? {
        registryLock.withLock {
            guard let backend = registry[ObjectIdentifier(radio)]?.backend, backend.radio === radio else { return nil }
            return backend
        }
    }

    /// Simulates the system relaunching the app: the radio keeps its links, the previous
    /// manager's callbacks stop, and the next `CBCentralManager` created with a
    /// `CBCentralManagerOptionRestoreIdentifierKey` receives `willRestoreState` first.
    public func relaunchApp() async {
        let launch = await radio.relaunchApp()
        lock.withLock { unclaimedLaunch = launch }
    }

    /// Takes the current launch's event stream for a new manager (one manager per launch).
    func claimLaunch() -> SimulatedDriver? {
        lock.withLock {
            defer { unclaimedLaunch = nil }
            return unclaimedLaunch
        }
    }

    /// Remembers a manager so authorization changes reach it.
    func register(_ manager: CBCentralManager) {
        lock.withLock {
            managers.removeAll { $0.manager == nil }
            managers.append(WeakManager(manager: manager))
        }
    }

    /// The app's Bluetooth authorization. `.denied` and `.restricted` make every manager of this
    /// backend report `.unauthorized`; `.notDetermined` makes them report `.unknown` (the
    /// system is asking the user). Changing it delivers `centralManagerDidUpdateState`.
    public var authorization: CBManagerAuthorization {
        get { lock.withLock { authorizationValue } }
        set {
            let live = lock.withLock {
                authorizationValue = newValue
                return managers.compactMap(\.manager)
            }
            for manager in live { manager.authorizationChanged() }
        }
    }

    /// Peripherals advertising from an app in the background on iOS: their service UUIDs travel
    /// only in the advertisement's overflow area (`CBAdvertisementDataOverflowServiceUUIDsKey`),
    /// without a local name, and only scans that ask for one of those services see them.
    public var backgroundAdvertisers: Set<UUID> {
        get { lock.withLock { background } }
        set { lock.withLock { background = newValue } }
    }

    /// Peripherals whose signal strength CoreBluetooth has no value for: their discoveries and
    /// RSSI reads report 127, Apple's "not available".
    public var rssiUnavailable: Set<UUID> {
        get { lock.withLock { noRSSI } }
        set { lock.withLock { noRSSI = newValue } }
    }

    /// The simulated app's Info.plist keys that CoreBluetooth checks: by default an app that
    /// declares the `bluetooth-central` background mode (`UIBackgroundModes`).
    public var appInfo: [String: any Sendable] {
        get { lock.withLock { info } }
        set { lock.withLock { info = newValue } }
    }

    /// The Objective-C exceptions Apple's CoreBluetooth would have raised (and crashed the app
    /// with), oldest first: here they are recorded and the call goes on without the option.
    public var raisedExceptions: [String] { lock.withLock { exceptions } }

    func raise(_ reason: String) {
        lock.withLock { exceptions.append(reason) }
        logger.error("*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '\(reason)'")
    }

    /// Every "API MISUSE" this backend's managers logged, oldest first (a look-alike diagnostic).
    public var apiMisuses: [String] { lock.withLock { misuses } }

    func recordMisuse(_ message: String) {
        lock.withLock { misuses.append(message) }
        logger.warning("API MISUSE: \(message)")
    }

    /// Waits until no radio command and no delegate callback of this backend is in flight; true
    /// if it had to wait.
    ///
    /// Delegate callbacks run on a dispatch queue, on a thread the Swift scheduler does not see:
    /// a test that moves a virtual clock once every task is idle asks this too, so that time
    /// never moves while a callback is still on its way.
    public func waitWhileInFlight() async -> Bool {
        var waited = await inFlight.waitWhileBusy()
        // A delegate may hand work on through its own queue (the CoreBluetooth driver hops
        // through it): let every manager's queue run what it holds.
        let queues = lock.withLock { managers.compactMap(\.manager).map(\.queue) }
        for queue in queues {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
        }
        if inFlight.count > 0 { waited = true }
        return waited
    }
}
