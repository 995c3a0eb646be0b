import Foundation
import Logging
import TetherCore
import TetherSimulator

/// Binds look-alike `CBCentralManager`s to a simulator `VirtualRadio` (Linux only; nothing
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
/// One backend serves one radio. A simulated app launch may create several managers, as an
/// app may on Apple platforms: each hears the radio's state, the discoveries of its own scans
/// (the radio scans for what every manager asks) and the events of the peripherals it connects.
/// ``relaunchApp()`` starts the next launch: the radio keeps its links, the earlier managers
/// hear nothing more, and the launch's managers with a restore identifier get `willRestoreState`.
///
/// System programming interface `Simulation` (`@_spi(Simulation) import CoreBluetoothLookalike`):
/// nothing like it exists in Apple's CoreBluetooth, so code that means to build there cannot
/// reach it by accident (`scripts/check-apple-shape` builds the look-alike as `CoreBluetooth`).
@_spi(Simulation)
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
    /// The current launch: its driver (the radio's event stream) and its managers.
    private var launch: Launch
    private var authorizationValue: CBManagerAuthorization = .allowedAlways
    private var background: Set<UUID> = []
    private var noRSSI: Set<UUID> = []
    private var info: [String: any Sendable] = ["UIBackgroundModes": ["bluetooth-central"]]
    private var exceptions: [String] = []
    private var managers: [WeakManager] = []
    private var misuses: [String] = []

    private struct WeakManager { weak var manager: CBCentralManager? }

    private struct Launch {
        let driver: SimulatedDriver
        var managers: [WeakManager] = []
        var pumping = false
        /// The radio's state as this launch's events last said (for managers created later).
        var radioState: CentralState?
    }

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: WeakBackend] = [:]
    private struct WeakBackend { weak var backend: CBLookalikeBackend? }

    private init(radio: VirtualRadio, launch: SimulatedDriver) {
        self.radio = radio
        self.launch = Launch(driver: launch)
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
        let driver = await radio.relaunchApp()
        lock.withLock {
            launch = Launch(driver: driver)
        }
    }

    /// The current launch's driver, through which a new manager's commands reach the radio.
    func currentLaunch() -> SimulatedDriver {
        lock.withLock { launch.driver }
    }

    /// Adds `manager` to the current launch (whose driver it was given): from now on it hears
    /// the radio's state and what it asked for. The first manager starts the launch's event
    /// pump; a later one is told the state the others already heard.
    func join(_ manager: CBCentralManager, launchedWith driver: SimulatedDriver) {
        let start: Bool = lock.withLock {
            guard launch.driver === driver else { return false }
            launch.managers.removeAll { $0.manager == nil }
            launch.managers.append(WeakManager(manager: manager))
            if launch.pumping, let state = launch.radioState {
                // Queued under the lock: a newer state the pump routes next comes after it.
                inFlight.begin()
                manager.receive(.stateChanged(state), links: [:])
            }
            defer { launch.pumping = true }
            return !launch.pumping
        }
        if start { pump(driver) }
    }

    /// Delivers the launch's events, in order, to the managers they concern.
    private func pump(_ driver: SimulatedDriver) {
        let inFlight = self.inFlight
        let events = driver.events
        // The launch's first event (the radio's state) is already waiting: count it from now,
        // so `waitWhileInFlight()` cannot return before the delegates have heard it.
        inFlight.begin()
        Task { [weak self] in
            var first = true
            defer { if first { inFlight.end() } }
            for await event in events {
                guard let self else { return }
                inFlight.begin()
                let targets = self.managers(for: event, of: driver)
                let links = targets.isEmpty ? [:] : await CBCentralManager.linkInfo(for: event, radio: self.radio)
                for manager in targets {
                    inFlight.begin()
                    manager.receive(event, links: links)
                }
                inFlight.end()
                if first {
                    first = false
                    inFlight.end()
                }
            }
        }
    }

    /// The managers of `driver`'s launch that `event` concerns: all for the state, scanning
    /// ones for a discovery, those with a restore identifier for `willRestoreState`, and those
    /// that connected (or restored) the peripheral for the rest.
    private func managers(for event: BLEDriverEvent, of driver: SimulatedDriver) -> [CBCentralManager] {
        let all: [CBCentralManager] = lock.withLock {
            guard launch.driver === driver else { return [] }
            if case .stateChanged(let state) = event { launch.radioState = state }
            return launch.managers.compactMap(\.manager)
        }
        switch event {
        case .stateChanged:
            return all
        case .discovered:
            return all.filter(\.isScanning)
        case .willRestoreState(let ids):
            // Adopted now, not when the delegate hears it: the events that follow are routed
            // before that.
            let restored = all.filter { $0.restoreIdentifier != nil }
            for manager in restored { manager.adopt(ids) }
            return restored
        case .failedToConnect(let id, _), .disconnected(let id, _, false):
            // The connection asked for is over: the next one is whoever asks for it then.
            let owners = all.filter { $0.owns(id) }
            for manager in owners { manager.disown(id) }
            return owners
        case .connected(let id), .disconnected(let id, _, true),
             .servicesDiscovered(let id, _, _), .characteristicsDiscovered(let id, _, _, _),
             .notificationStateUpdated(let id, _, _, _), .valueUpdated(let id, _, _, _),
             .writeCompleted(let id, _, _), .readyToWriteWithoutResponse(let id), .rssiRead(let id, _, _),
             .servicesInvalidated(let id, _):
            return all.filter { $0.owns(id) }
        }
    }

    /// What the radio scans for: every scanning manager's services (nil when one wants all),
    /// duplicates when one allows them; nil when none scans.
    func combinedScan(of driver: SimulatedDriver) -> (services: [BluetoothUUID]?, allowDuplicates: Bool)? {
        let scans: [(services: [BluetoothUUID]?, allowDuplicates: Bool)] = lock.withLock {
            guard launch.driver === driver else { return [] }
            return launch.managers.compactMap(\.manager).compactMap(\.scanRequest)
        }
        guard !scans.isEmpty else { return nil }
        var services: [BluetoothUUID]? = []
        for scan in scans {
            guard let wanted = scan.services else {
                services = nil
                break
            }
            for uuid in wanted where services?.contains(uuid) == false { services?.append(uuid) }
        }
        return (services, scans.contains { $0.allowDuplicates })
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
