#if !canImport(CoreBluetooth)
@_spi(Simulation) import CoreBluetoothLookalike
import Foundation
import Logging
import Testing
import TetherTesting
@testable import TetherCore
@testable import TetherCoreBluetooth
@testable import TetherSimulator

@Suite("CoreBluetoothDriver on the look-alike", .timeLimit(.minutes(2)))
struct CoreBluetoothDriverTests {
    /// A central on the CoreBluetooth driver over `w`'s radio.
    static func central(_ w: LookalikeWorld) async -> Central {
        let driver = await SimulatorBackedDriver.make(radio: w.radio, kind: .corebluetooth)
        #expect(driver.name == "corebluetooth")
        let central = Central(driver: driver, clock: w.clock)
        await central.start()
        return central
    }

    @Test(arguments: [(UInt8(5), PairingFailureReason.insufficientAuthentication), (8, .insufficientAuthorization),
                      (14, .pairingInformationRemoved), (15, .insufficientEncryption)])
    func attPairingErrorsBecomePairingFailures(code: UInt8, reason: PairingFailureReason) async throws {
        let w = await LookalikeWorld()
        let central = await Self.central(w)
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        await w.radio.inject(FaultRule(.write, action: .error(ATTError(code)), count: 1))
        let outcome = Outcome()
        try await w.run {
            do { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) } catch let error as BLEError { await outcome.set(error) } catch {}
        }
        #expect(await outcome.error == .pairingFailed(reason))
        #expect(await connection.isConnected)
    }

    @Test func coreBluetoothErrorsMapToDriverErrors() {
        func map(_ domain: String, _ code: Int) -> DriverError? {
            CoreBluetoothDriver.driverError(NSError(domain: domain, code: code, userInfo: [NSLocalizedDescriptionKey: "text"]))
        }
        for code in [5, 8, 14, 15] {
            #expect(map(CBATTErrorDomain, code) == .att(ATTError(UInt8(code))))
            #expect(BLEError.from(map(CBATTErrorDomain, code)!, otherwise: BLEError.writeFailed) == .pairingFailed(PairingFailureReason(ATTError(UInt8(code)))!))
        }
        #expect(map(CBATTErrorDomain, 3) == .att(.writeNotPermitted))
        #expect(map(CBErrorDomain, CBError.Code.connectionTimeout.rawValue) == .connectionTimeout)
        #expect(map(CBErrorDomain, CBError.Code.peripheralDisconnected.rawValue) == .peripheralDisconnected)
        #expect(map(CBErrorDomain, CBError.Code.connectionFailed.rawValue) == .connectionFailed("text"))
        #expect(map(CBErrorDomain, CBError.Code.encryptionTimedOut.rawValue) == .encryptionFailed)
        #expect(BLEError.from(map(CBErrorDomain, CBError.Code.peerRemovedPairingInformation.rawValue)!, otherwise: { .connectionFailed($0.description) }) == .pairingFailed(.pairingInformationRemoved))
        #expect(map("SomeOtherDomain", 1) == .other("text"))
        #expect(CoreBluetoothDriver.driverError(nil) == nil)
    }

    @Test func relaunchedDriverStartsWithWillRestoreStateThenTheState() async throws {
        let w = await LookalikeWorld()
        let central = await Self.central(w)
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        let driver = await SimulatorBackedDriver.relaunch(radio: w.radio, kind: .corebluetooth)
        let first = try await w.firstEvents(of: driver, count: 2)
        guard case .willRestoreState(let ids) = first[0], case .stateChanged(.poweredOn) = first[1] else {
            Issue.record("unexpected first events \(first)")
            return
        }
        #expect(ids == [w.echoID])
    }

    @Test func aRestoreIdentifierWithoutTheBackgroundModeTurnsRestorationOffInsteadOfCrashing() async throws {
        let w = await LookalikeWorld()
        w.backend.appInfo = [:]
        let driver = await CoreBluetoothDriver.onLookalike(of: w.radio, restoreIdentifier: "tether.tests")
        let central = Central(driver: driver, clock: w.clock)
        await central.start()
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        #expect(w.backend.raisedExceptions.isEmpty, "CoreBluetooth would have crashed the app")
        // Relaunched, the app is not restored: its first event is the state.
        let relaunched = await CoreBluetoothDriver.relaunchedOnLookalike(of: w.radio, restoreIdentifier: "tether.tests")
        let first = try await w.firstEvents(of: relaunched, count: 1)
        guard case .stateChanged(.poweredOn) = first[0] else {
            Issue.record("unexpected first event \(first)")
            return
        }
        #expect(w.backend.raisedExceptions.isEmpty)
    }

    @Test func deniedAuthorizationMakesBluetoothUnavailable() async throws {
        let w = await LookalikeWorld(authorization: .denied)
        let central = await Self.central(w)
        try await w.until { await central.state == .unauthorized }
        #expect(CBLookalikeBackend.$current.withValue(w.backend) { CoreBluetoothDriver.authorization } == .denied)
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        let outcome = Outcome()
        try await w.run {
            do { try await connection.connect() } catch let error as BLEError { await outcome.set(error) } catch {}
        }
        #expect(await outcome.error == .bluetoothUnavailable(.unauthorized))
        w.backend.authorization = .allowedAlways
        try await w.until { await central.state == .poweredOn }
    }

    @Test func aBackgroundedAdvertiserIsFoundByItsServiceThroughTheOverflowArea() async throws {
        let w = await LookalikeWorld()
        w.backend.backgroundAdvertisers = [w.echoID.uuid]
        let central = await Self.central(w)
        // A scan for everything sees it without its services (only a scan naming one of them
        // reads the overflow area)…
        let unfiltered = try await w.run { () -> [DiscoveredPeripheral] in
            var seen: [DiscoveredPeripheral] = []
            for await found in try await central.scan(timeout: .seconds(3)) { seen.append(found) }
            return seen
        }
        #expect(unfiltered.first { $0.id == w.echoID }?.advertisement.serviceUUIDs == [])
        #expect(unfiltered.first { $0.id == w.echoID }?.displayName == nil)
        // …a scan for its service does, with the service among the advertised ones.
        let found = try await w.run { () -> DiscoveredPeripheral? in
            for await found in try await central.scan(filter: ScanFilter(services: [EchoPeripheral.service]), timeout: .seconds(3)) {
                return found
            }
            return nil
        }
        #expect(found?.id == w.echoID)
        #expect(found?.advertisement.serviceUUIDs == [EchoPeripheral.service])
        #expect(found?.advertisement.localName == nil)
    }

    @Test func aResetMakesTheDriverForgetItsPeripheralObjectsAndReconnectWithFreshOnes() async throws {
        let w = await LookalikeWorld()
        let central = await Self.central(w)
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        await w.radio.setCentralState(.resetting)
        try await w.until { await connection.phase == .idle }
        await w.radio.setCentralState(.poweredOn)
        try await w.until { await connection.isConnected }
        try await w.run { try await connection.write(Data([7]), to: EchoPeripheral.input, type: .withResponse) }
        // Nothing touched a stale object.
        #expect(!w.backend.apiMisuses.contains { $0.contains("invalid") })
    }

    @Test func theMainQueueOrTheCallersOwnQueueCanBeGiven() async throws {
        let w = await LookalikeWorld()
        // Created on the very queue it is given (a sync onto it from there would deadlock).
        let callerQueue = DispatchQueue(label: "caller")
        let backend = w.backend
        let made = await withCheckedContinuation { (done: CheckedContinuation<CoreBluetoothDriver, Never>) in
            callerQueue.async {
                let driver = CBLookalikeBackend.$current.withValue(backend) {
                    CoreBluetoothDriver(queue: callerQueue, restoreIdentifier: nil, showPowerAlert: false, autoReconnect: true,
                                        peripheralCacheLimit: 256, logger: Logger(label: "test"))
                }
                done.resume(returning: driver)
            }
        }
        let central = Central(driver: made, clock: w.clock)
        await central.start()
        try await w.until { await central.state == .poweredOn }
    }

    @Test func aConcurrentQueueStillGetsTheCallbacksOneAtATimeInOrder() async throws {
        let w = await LookalikeWorld()
        let driver = await CoreBluetoothDriver.onLookalike(of: w.radio, queue: DispatchQueue(label: "caller", attributes: .concurrent))
        let central = Central(driver: driver, clock: w.clock)
        await central.start()
        try await Self.expectEchoesInOrder(w, central)
    }

    @Test func peripheralsSeenAreKeptUpToALimitAndLinkedOnesAlways() async throws {
        let w = await LookalikeWorld()
        for index in 0..<6 {
            let id = PeripheralID(UUID(uuidString: String(format: "E0E0E0E0-0000-4000-8000-%012X", 0x100 + index))!)
            await w.radio.add(EchoPeripheral.makePeripheral(id: id, distance: 2, linkParameters: LinkParameters(), behavior: EchoPeripheral()))
        }
        let driver = await CoreBluetoothDriver.onLookalike(of: w.radio, peripheralCacheLimit: 2)
        let central = Central(driver: driver, clock: w.clock)
        await central.start()
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        let seen = try await w.run { () -> Set<PeripheralID> in
            var seen: Set<PeripheralID> = []
            for await found in try await central.scan(timeout: .seconds(5), allowDuplicates: true) { seen.insert(found.id) }
            return seen
        }
        #expect(seen.count >= 6)
        #expect(driver.cachedPeripheralCount <= 3, "two seen, and the connected one")
        // The connected peripheral was kept (CoreBluetooth cancels the link of one released).
        try await w.run { try await connection.write(Data([9]), to: EchoPeripheral.input, type: .withResponse) }
        #expect(await connection.isConnected)
        #expect(!w.backend.apiMisuses.contains { $0.contains("released") })
    }

    @Test func eventsKeepTheOrderOfTheCallbacks() async throws {
        let w = await LookalikeWorld()
        try await Self.expectEchoesInOrder(w, await Self.central(w))
    }

    /// 200 writes without response to the echo come back as notifications in their order.
    static func expectEchoesInOrder(_ w: LookalikeWorld, _ central: Central) async throws {
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let collector = Task { () -> [UInt8] in
            var seen: [UInt8] = []
            for await value in stream {
                seen += value
                if seen.count == 200 { break }
            }
            return seen
        }
        try await w.run {
            for index in 0..<200 { try? await connection.write(Data([UInt8(index)]), to: EchoPeripheral.input, type: .withoutResponse) }
        }
        let received = Outcome()
        try await w.run { await received.set(await collector.value) }
        #expect(await received.values == Array(0..<200))
    }

    @Test func rssi127IsNoValue() async throws {
        let w = await LookalikeWorld()
        w.backend.rssiUnavailable = [w.echoID.uuid]
        let central = await Self.central(w)
        let found = try await w.run { try await central.discover(filter: ScanFilter(services: [EchoPeripheral.service]), timeout: .seconds(5)) }
        #expect(found.id == w.echoID)
        #expect(found.rssi == nil)
        // A minimum signal strength cannot be met by a discovery without one.
        #expect(!ScanFilter(minimumRSSI: -127).matches(found))
        let connection = await central.connection(to: w.echoID, configuration: Harness.echoConfiguration)
        try await w.run { try await connection.connect() }
        let outcome = Outcome()
        try await w.run {
            do { _ = try await connection.readRSSI() } catch let error as BLEError { await outcome.set(error) }
        }
        #expect(await outcome.error == .readFailed(.other("the link's signal strength is not available")))
        // With a value again, it reads.
        w.backend.rssiUnavailable = []
        let rssi = try await w.run { try await connection.readRSSI() }
        #expect(rssi < 0 && rssi > -127)
    }
}

/// Carries a result out of a `@Sendable` closure.
actor Outcome {
    private(set) var error: BLEError?
    private(set) var values: [UInt8] = []
    func set(_ error: BLEError) { self.error = error }
    func set(_ values: [UInt8]) { self.values = values }
}

extension LookalikeWorld {
    /// The first `count` events of `driver`, read in virtual time.
    func firstEvents(of driver: any BLEDriver, count: Int) async throws -> [BLEDriverEvent] {
        let box = EventBox()
        try await until {
            for await event in driver.events {
                await box.append(event)
                if await box.events.count == count { break }
            }
            return true
        }
        return await box.events
    }
}

actor EventBox {
    private(set) var events: [BLEDriverEvent] = []
    func append(_ event: BLEDriverEvent) { events.append(event) }
}
#endif
