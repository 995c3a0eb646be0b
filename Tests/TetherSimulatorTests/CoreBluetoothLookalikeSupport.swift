#if !canImport(CoreBluetooth)
@_spi(Simulation) import CoreBluetoothLookalike
import Foundation
import TetherCore
import TetherCoreBluetooth
import TetherSimulator
import TetherTesting

/// An echo peripheral on a virtual radio bound to a CoreBluetooth look-alike backend, and a
/// queue for delegate callbacks; time moves only through ``until(limit:_:)``.
struct LookalikeWorld {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let backend: CBLookalikeBackend
    let queue = DispatchQueue(label: "tether.tests.lookalike")
    let queueKey = DispatchSpecificKey<Int>()
    let echoID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-0000000000CB")!)

    static let service = CBUUID(string: EchoPeripheral.service.uuidString)
    static let input = CBUUID(string: EchoPeripheral.input.characteristic.uuidString)
    static let output = CBUUID(string: EchoPeripheral.output.characteristic.uuidString)
    static let info = CBUUID(string: EchoPeripheral.info.characteristic.uuidString)

    init(centralState: CentralState = .poweredOn, link: LinkParameters = LinkParameters(), authorization: CBManagerAuthorization = .allowedAlways) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 7, centralState: centralState)
        await radio.add(EchoPeripheral.makePeripheral(id: echoID, distance: 1.5, linkParameters: link, behavior: EchoPeripheral()))
        let backend = await CBLookalikeBackend.backend(for: radio)
        self.backend = backend
        time = TestTime(clock: clock, maximumStep: .milliseconds(10)) { await backend.waitWhileInFlight() }
        backend.authorization = authorization
        queue.setSpecific(key: queueKey, value: 1)
    }

    /// A manager on this world's queue, bound to its backend.
    func manager(_ delegate: Recorder, restoreIdentifier: String? = nil) -> CBCentralManager {
        let options = restoreIdentifier.map { [CBCentralManagerOptionRestoreIdentifierKey: $0] as [String: Any] }
        return CBLookalikeBackend.$current.withValue(backend) {
            CBCentralManager(delegate: delegate, queue: queue, options: options)
        }
    }

    /// A recorder that checks every callback against this world's queue.
    func recorder() -> Recorder { Recorder(queueKey: queueKey) }

    /// Advances virtual time (callbacks land before each step) until `condition` holds.
    func until(limit: Duration = .seconds(30), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    /// Lets `duration` of virtual time pass.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(limit: Duration = .seconds(30), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Connects the echo peripheral through `manager` and discovers its service and
    /// characteristics; returns the peripheral.
    func connectEcho(_ manager: CBCentralManager, _ recorder: Recorder, options: [String: Any]? = nil) async throws -> CBPeripheral {
        try await until { recorder.log.contains("state:poweredOn") }
        let peripheral = manager.retrievePeripherals(withIdentifiers: [echoID.uuid])[0]
        peripheral.delegate = recorder
        let connectsBefore = recorder.count("connect")
        manager.connect(peripheral, options: options)
        try await until { recorder.count("connect") > connectsBefore }
        peripheral.discoverServices(nil)
        try await until { recorder.log.last?.hasPrefix("services") == true }
        let service = try #require(peripheral.services?.first { $0.uuid == Self.service })
        peripheral.discoverCharacteristics(nil, for: service)
        try await until { recorder.log.last?.hasPrefix("characteristics") == true }
        return peripheral
    }

    /// Waits until the queue has run everything submitted so far.
    func drainQueue() async {
        let queue = self.queue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in queue.async { continuation.resume() } }
    }
}

import Testing

/// A central and peripheral delegate that records every callback as a short string.
final class Recorder: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private let queueKey: DispatchSpecificKey<Int>
    private var entries: [String] = []
    private var offQueueCallbacks = 0
    private var lastErrors: [NSError] = []
    private var restoredPeripherals: [CBPeripheral] = []

    init(queueKey: DispatchSpecificKey<Int>) { self.queueKey = queueKey }

    var log: [String] { lock.withLock { entries } }
    var offQueue: Int { lock.withLock { offQueueCallbacks } }
    var errors: [NSError] { lock.withLock { lastErrors } }
    var restored: [CBPeripheral] { lock.withLock { restoredPeripherals } }
    func count(_ entry: String) -> Int { log.filter { $0 == entry }.count }

    private func record(_ entry: String, error: (any Error)? = nil) {
        let onQueue = DispatchQueue.getSpecific(key: queueKey) == 1
        lock.withLock {
            entries.append(entry)
            if !onQueue || Thread.isMainThread { offQueueCallbacks += 1 }
            if let error { lastErrors.append(error as NSError) }
        }
    }

    static func describe(_ error: (any Error)?) -> String {
        guard let error else { return "nil" }
        let nsError = error as NSError
        return "\(nsError.domain)/\(nsError.code)"
    }

    func centralManagerDidUpdateState(_ central: CBCentralManager) { record("state:\(central.state)") }
    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {
        let peripherals = dict[CBCentralManagerRestoredStatePeripheralsKey] as? [CBPeripheral] ?? []
        lock.withLock { restoredPeripherals = peripherals }
        record("restore:\(peripherals.count)")
    }
    func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber) {
        peripheral.delegate = self
        record("discover:\(advertisementData[CBAdvertisementDataLocalNameKey] as? String ?? "?")")
    }
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) { record("connect") }
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        record("fail:\(Self.describe(error))", error: error)
    }
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?) {
        record("disconnect:reconnecting=\(isReconnecting):\(Self.describe(error))", error: error)
    }
    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
        record("services:\(peripheral.services?.count ?? 0)", error: error)
    }
    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {
        record("characteristics:\(service.characteristics?.count ?? 0)", error: error)
    }
    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {
        record("notify:\(characteristic.isNotifying)", error: error)
    }
    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        record(error == nil ? "value:\(String(decoding: characteristic.value ?? Data(), as: UTF8.self))" : "value:\(Self.describe(error))", error: error)
    }
    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        record("write:\(Self.describe(error))", error: error)
    }
    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) { record("ready") }
    func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?) { record("rssi", error: error) }
    func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
        // What `services` holds while the delegate hears it (Apple has taken them out by then).
        let left = (peripheral.services ?? []).map(\.uuid.uuidString).sorted().joined(separator: ",")
        record("modified:\(invalidatedServices.map(\.uuid.uuidString).sorted().joined(separator: ","));left:\(left)")
    }
}

/// A delegate that implements only the legacy disconnection callback.
final class LegacyDisconnectRecorder: NSObject, CBCentralManagerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    var log: [String] { lock.withLock { entries } }
    func centralManagerDidUpdateState(_ central: CBCentralManager) { lock.withLock { entries.append("state:\(central.state)") } }
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) { lock.withLock { entries.append("connect") } }
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?) {
        lock.withLock { entries.append("legacyDisconnect:\(Recorder.describe(error))") }
    }
}
#endif
