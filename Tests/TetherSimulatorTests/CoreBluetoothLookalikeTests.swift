#if !canImport(CoreBluetooth)
@testable @_spi(Simulation) import CoreBluetoothLookalike
import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

@Suite("CoreBluetooth look-alike: callbacks, ordering and semantics", .timeLimit(.minutes(2)))
struct CoreBluetoothLookalikeTests {
    @Test func callbacksFollowCoreBluetoothsOrderOnTheGivenQueue() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        try await w.until { r.log.contains("state:poweredOn") }
        manager.scanForPeripherals(withServices: [LookalikeWorld.service], options: [CBCentralManagerScanOptionAllowDuplicatesKey: false])
        #expect(manager.isScanning)
        try await w.until { r.log.contains { $0.hasPrefix("discover") } }
        // Duplicates off: one discovery however many advertisements follow.
        try await w.advance(.seconds(1))
        manager.stopScan()
        #expect(!manager.isScanning)
        // The discovered object was not retained (the manager holds its peripherals weakly, as
        // Apple's does): this one is new, and needs its delegate.
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [w.echoID.uuid]).first)
        peripheral.delegate = r
        manager.connect(peripheral, options: nil)
        #expect(peripheral.state == .connecting)
        try await w.until { r.log.last == "connect" }
        #expect(peripheral.state == .connected)
        #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == 244)
        #expect(peripheral.maximumWriteValueLength(for: .withResponse) == 512)
        peripheral.discoverServices(nil)
        try await w.until { r.log.last?.hasPrefix("services") == true }
        let service = try #require(peripheral.services?.first)
        #expect(service.peripheral === peripheral)
        peripheral.discoverCharacteristics(nil, for: service)
        try await w.until { r.log.last?.hasPrefix("characteristics") == true }
        let output = try #require(service.characteristics?.first { $0.uuid == LookalikeWorld.output })
        let input = try #require(service.characteristics?.first { $0.uuid == LookalikeWorld.input })
        #expect(output.service === service)
        #expect(output.properties == .notify)
        #expect(input.properties == [.write, .writeWithoutResponse])
        peripheral.setNotifyValue(true, for: output)
        try await w.until { r.log.last?.hasPrefix("notify") == true }
        #expect(output.isNotifying)
        peripheral.writeValue(Data("hi".utf8), for: input, type: .withResponse)
        try await w.until { r.log.contains("write:nil") && r.log.contains("value:hi") }
        #expect(output.value == Data("hi".utf8))
        #expect(Array(r.log.prefix(6)) == ["state:poweredOn", "discover:Tether Echo", "connect", "services:1", "characteristics:3", "notify:true"])
        #expect(Set(r.log.dropFirst(6)) == ["write:nil", "value:hi"])
        #expect(r.offQueue == 0)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func autoReconnectReportsIsReconnectingAndTheOSReconnects() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r, options: [CBConnectPeripheralOptionEnableAutoReconnect: true])
        await w.radio.peripheralDisconnect(w.echoID)
        try await w.until { r.log.contains { $0.hasPrefix("disconnect") } }
        #expect(r.log.last == "disconnect:reconnecting=true:\(CBErrorDomain)/\(CBError.Code.peripheralDisconnected.rawValue)")
        #expect(peripheral.state == .connecting)
        #expect(peripheral.services == nil)
        try await w.until { r.count("connect") == 2 }
        #expect(peripheral.state == .connected)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func withoutAutoReconnectTheDisconnectionIsFinal() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        await w.radio.setInRange(w.echoID, false)
        try await w.until { r.log.contains { $0.hasPrefix("disconnect") } }
        #expect(r.log.last == "disconnect:reconnecting=false:\(CBErrorDomain)/\(CBError.Code.connectionTimeout.rawValue)")
        await w.radio.setInRange(w.echoID, true)
        try await w.advance(.seconds(2))
        #expect(r.count("connect") == 1)
        #expect(peripheral.state == .disconnected)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func cancellingReportsADisconnectionWithoutError() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        manager.cancelPeripheralConnection(peripheral)
        try await w.until { r.log.last?.hasPrefix("disconnect") == true }
        #expect(r.log.last == "disconnect:reconnecting=false:nil")
        #expect(peripheral.state == .disconnected)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func aDelegateWithOnlyTheLegacyDisconnectCallbackStillHearsIt() async throws {
        let w = await LookalikeWorld()
        let legacy = LegacyDisconnectRecorder()
        let manager = CBLookalikeBackend.$current.withValue(w.backend) { CBCentralManager(delegate: legacy, queue: w.queue) }
        try await w.until { legacy.log.contains("state:poweredOn") }
        let peripheral = manager.retrievePeripherals(withIdentifiers: [w.echoID.uuid])[0]
        manager.connect(peripheral)
        try await w.until { legacy.log.contains("connect") }
        await w.radio.peripheralDisconnect(w.echoID)
        try await w.until { legacy.log.count == 3 }
        #expect(legacy.log.last == "legacyDisconnect:\(CBErrorDomain)/7")
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func stateRestorationHandsBackTheLinkBeforeTheFirstStateUpdate() async throws {
        let w = await LookalikeWorld()
        let first = w.recorder()
        let manager = w.manager(first, restoreIdentifier: "tests")
        _ = try await w.connectEcho(manager, first)
        await w.backend.relaunchApp()
        let second = w.recorder()
        let relaunched = w.manager(second, restoreIdentifier: "tests")
        try await w.until { second.log.count >= 2 }
        #expect(second.log == ["restore:1", "state:poweredOn"])
        let restored = try #require(second.restored.first)
        #expect(restored.identifier == w.echoID.uuid)
        #expect(restored.state == .connected)
        // The link is still up: connecting to a restored peripheral completes at once.
        restored.delegate = second
        relaunched.connect(restored)
        try await w.until { second.log.last == "connect" }
        #expect(await w.radio.isConnected(w.echoID))
        #expect(second.offQueue == 0)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime((manager, relaunched)) {}
    }

    @Test func aManagerWithoutARestoreIdentifierIsNotRestored() async throws {
        let w = await LookalikeWorld()
        let first = w.recorder()
        let manager = w.manager(first)
        // Retained: a peripheral released while connected has its connection cancelled.
        let peripheral = try await w.connectEcho(manager, first)
        await w.backend.relaunchApp()
        let second = w.recorder()
        let relaunched = w.manager(second)
        try await w.until { !second.log.isEmpty }
        try await w.advance(.milliseconds(100))
        #expect(second.log == ["state:poweredOn"])
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime((manager, relaunched, peripheral)) {}
    }

    @Test func writesWithoutResponseStopAtTheBufferAndResumeOnReadiness() async throws {
        let w = await LookalikeWorld(link: LinkParameters(preferredMTU: 23, packetsPerConnectionEvent: 1, writeWithoutResponseBuffer: 2))
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        let input = try #require(peripheral.services?.first?.characteristics?.first { $0.uuid == LookalikeWorld.input })
        #expect(peripheral.canSendWriteWithoutResponse)
        // Readiness is only ever reported after `canSendWriteWithoutResponse` was false.
        #expect(r.count("ready") == 0)
        var sent = 0
        while peripheral.canSendWriteWithoutResponse, sent < 100 {
            peripheral.writeValue(Data([UInt8(sent)]), for: input, type: .withoutResponse)
            sent += 1
        }
        #expect(sent == 2)
        #expect(!peripheral.canSendWriteWithoutResponse)
        // A full buffer is not ready: readiness follows a packet leaving it (the radio may send
        // at once when the writes land on a connection event, so one may already have gone).
        await w.time.settle()
        let radio = w.radio, id = w.echoID
        let delivered = await radio.statistics[id]?.writesDelivered ?? 0
        #expect(r.count("ready") <= delivered)
        try await w.until { r.count("ready") == 1 }
        #expect(peripheral.canSendWriteWithoutResponse)
        peripheral.writeValue(Data([9]), for: input, type: .withoutResponse)
        try await w.until { r.count("ready") == 2 }
        try await w.until { await radio.statistics[id]?.writesDelivered == 3 }
        #expect(await radio.statistics[id]?.writesDropped == 0)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test(arguments: [ATTError.insufficientAuthentication, .insufficientAuthorization, .unlikelyError, .insufficientEncryption, .writeNotPermitted])
    func attErrorsArriveAsCBATTErrorDomainErrors(error: ATTError) async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        let characteristics = peripheral.services?.first?.characteristics ?? []
        let input = try #require(characteristics.first { $0.uuid == LookalikeWorld.input })
        let info = try #require(characteristics.first { $0.uuid == LookalikeWorld.info })
        await w.radio.inject(FaultRule(.write, action: .error(error), count: 1))
        await w.radio.inject(FaultRule(.read, action: .error(error), count: 1))
        peripheral.writeValue(Data([1]), for: input, type: .withResponse)
        peripheral.readValue(for: info)
        try await w.until { r.errors.count == 2 }
        #expect(r.errors.map(\.domain) == [CBATTErrorDomain, CBATTErrorDomain])
        #expect(r.errors.map(\.code) == [Int(error.code), Int(error.code)])
        #expect(info.value == nil)
        #expect(peripheral.state == .connected)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func commandsWhilePoweredOffAreIgnoredAsAPIMisuse() async throws {
        let w = await LookalikeWorld(centralState: .poweredOff)
        let r = w.recorder()
        let manager = w.manager(r)
        try await w.until { r.log == ["state:poweredOff"] }
        manager.scanForPeripherals(withServices: nil)
        #expect(!manager.isScanning)
        let peripheral = manager.retrievePeripherals(withIdentifiers: [w.echoID.uuid])[0]
        peripheral.delegate = r
        manager.connect(peripheral)
        peripheral.discoverServices(nil)
        try await w.advance(.seconds(2))
        #expect(r.log == ["state:poweredOff"])
        #expect(peripheral.state == .disconnected)
        let misuses = w.backend.apiMisuses
        #expect(misuses.count == 3)
        #expect(misuses.first?.contains("powered on state") == true)
        #expect(misuses.last?.contains("connected state") == true)
        #expect(await !w.radio.isConnected(w.echoID))
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func peripheralCommandsNeedAConnection() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        try await w.until { r.log.contains("state:poweredOn") }
        let peripheral = manager.retrievePeripherals(withIdentifiers: [w.echoID.uuid])[0]
        peripheral.delegate = r
        peripheral.discoverServices(nil)
        peripheral.readRSSI()
        try await w.advance(.seconds(1))
        #expect(r.log == ["state:poweredOn"])
        #expect(w.backend.apiMisuses.count == 2)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func poweringOffDropsLinksWithoutDisconnectionCallbacks() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        await w.radio.setCentralState(.poweredOff)
        try await w.until { r.log.last == "state:poweredOff" }
        #expect(peripheral.state == .disconnected)
        #expect(!r.log.contains { $0.hasPrefix("disconnect") })
        #expect(manager.state == .poweredOff)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func aResetDropsLinksWithoutCallbacksAndInvalidatesEveryPeripheralObject() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let stale = try await w.connectEcho(manager, r)
        await w.radio.setCentralState(.resetting)
        try await w.until { r.log.last == "state:resetting" }
        #expect(stale.state == .disconnected)
        #expect(!r.log.contains { $0.hasPrefix("disconnect") })
        await w.radio.setCentralState(.poweredOn)
        try await w.until { r.log.last == "state:poweredOn" }
        // The object handed out before the reset is stale: using it is a misuse and does nothing.
        let misuses = w.backend.apiMisuses.count
        manager.connect(stale, options: nil)
        #expect(w.backend.apiMisuses.count == misuses + 1)
        #expect(w.backend.apiMisuses.last?.contains("invalid") == true)
        // A fresh object for the same identifier works.
        let fresh = try #require(manager.retrievePeripherals(withIdentifiers: [stale.identifier]).first)
        #expect(fresh !== stale)
        #expect(fresh.identifier == stale.identifier)
        withExtendedLifetime(manager) {}
    }

    @Test func aPeripheralReleasedWhileConnectedHasItsConnectionCancelled() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        var peripheral: CBPeripheral? = try await w.connectEcho(manager, r)
        #expect(peripheral?.state == .connected)
        peripheral = nil
        try await w.until { await !w.radio.isConnected(w.echoID) }
        #expect(w.backend.apiMisuses.last?.contains("released while connecting or connected") == true)
        withExtendedLifetime(manager) {}
    }

    @Test func aRestoreIdentifierWithoutTheBackgroundModeRaisesAsCoreBluetoothDoes() async throws {
        let w = await LookalikeWorld()
        w.backend.appInfo = ["UIBackgroundModes": ["audio"]]
        let r = w.recorder()
        let manager = w.manager(r, restoreIdentifier: "tether.tests")
        #expect(w.backend.raisedExceptions.count == 1)
        #expect(w.backend.raisedExceptions.first?.contains("bluetooth-central") == true)
        try await w.until { r.log.contains("state:poweredOn") }
        withExtendedLifetime(manager) {}
    }

    @Test func authorizationDecidesTheManagersState() async throws {
        let w = await LookalikeWorld(authorization: .denied)
        let r = w.recorder()
        let manager = w.manager(r)
        try await w.until { r.log == ["state:unauthorized"] }
        #expect(manager.state == .unauthorized)
        #expect(CBLookalikeBackend.$current.withValue(w.backend) { CBManager.authorization } == .denied)
        w.backend.authorization = .allowedAlways
        try await w.until { r.log.last == "state:poweredOn" }
        #expect(CBLookalikeBackend.$current.withValue(w.backend) { CBManager.authorization } == .allowedAlways)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func anUndecidedUserKeepsTheStateUnknown() async throws {
        let w = await LookalikeWorld(authorization: .notDetermined)
        let r = w.recorder()
        let manager = w.manager(r)
        try await w.advance(.seconds(1))
        #expect(r.log.isEmpty)
        #expect(manager.state == .unknown)
        w.backend.authorization = .restricted
        try await w.until { r.log == ["state:unauthorized"] }
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func aManagerWithoutABackendIsUnsupported() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = CBCentralManager(delegate: r, queue: w.queue)
        await w.drainQueue()
        #expect(r.log == ["state:unsupported"])
        #expect(manager.state == .unsupported)
        // Managers stop calling back once released; keep them for the whole test.
        withExtendedLifetime(manager) {}
    }

    @Test func aServicesChangeTakesTheServiceObjectsAwayBeforeTheDelegateHears() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let peripheral = try await w.connectEcho(manager, r)
        var stale = peripheral.services?.first { $0.uuid == LookalikeWorld.service }?.characteristics?.first { $0.uuid == LookalikeWorld.input }
        #expect(stale != nil)
        await w.radio.changeServices(of: w.echoID, invalidating: [EchoPeripheral.service])
        try await w.until { r.log.last?.hasPrefix("modified:") == true }
        // Already gone from `services` while the delegate heard it.
        #expect(r.log.last == "modified:\(LookalikeWorld.service.uuidString);left:")
        // A characteristic of the invalidated service is dead: writing to it is a misuse.
        let misuses = w.backend.apiMisuses.count
        if let characteristic = stale { peripheral.writeValue(Data([1]), for: characteristic, type: .withResponse) }
        #expect(w.backend.apiMisuses.count == misuses + 1)
        stale = nil
        // Discovered again, the service is back with its characteristics.
        peripheral.discoverServices([LookalikeWorld.service])
        try await w.until { r.log.last?.hasPrefix("services") == true }
        let service = try #require(peripheral.services?.first { $0.uuid == LookalikeWorld.service })
        peripheral.discoverCharacteristics(nil, for: service)
        try await w.until { r.log.last?.hasPrefix("characteristics") == true }
        #expect(service.characteristics?.count == 3)
        withExtendedLifetime(manager) {}
    }

    @Test func severalManagersShareTheRadioAndEachHearsItsOwn() async throws {
        let w = await LookalikeWorld()
        let r1 = w.recorder(), r2 = w.recorder()
        let m1 = w.manager(r1), m2 = w.manager(r2)
        try await w.until { r1.log.contains("state:poweredOn") && r2.log.contains("state:poweredOn") }
        // The radio scans for both: each hears only what its own scan asked for.
        m1.scanForPeripherals(withServices: [LookalikeWorld.service])
        m2.scanForPeripherals(withServices: [CBUUID(string: "54455448-4543-484F-8000-0000000000F0")])
        try await w.until { r1.log.contains("discover:Tether Echo") }
        try await w.advance(.seconds(2))
        #expect(r1.count("discover:Tether Echo") == 1)
        #expect(!r2.log.contains { $0.hasPrefix("discover:") })
        m1.stopScan()
        m2.stopScan()
        // A manager created later is told the state at once, and scans on its own.
        let r3 = w.recorder()
        let m3 = w.manager(r3)
        try await w.until { r3.log.contains("state:poweredOn") }
        m3.scanForPeripherals(withServices: nil)
        try await w.until { r3.log.contains { $0.hasPrefix("discover:") } }
        m3.stopScan()
        // m1 no longer scans: m3's scan is not m1's.
        #expect(r1.count("discover:Tether Echo") == 1)
        // A connection is the connecting manager's: the others hear nothing of it.
        let echo = try await w.connectEcho(m1, r1)
        #expect(!r2.log.contains("connect") && !r3.log.contains("connect"))
        // Once that connection ends, the peripheral is nobody's: m2 connecting it hears it.
        m1.cancelPeripheralConnection(echo)
        try await w.until { r1.log.last?.hasPrefix("disconnect") == true }
        let seenByM2 = m2.retrievePeripherals(withIdentifiers: [w.echoID.uuid])[0]
        m2.connect(seenByM2, options: nil)
        try await w.until { r2.log.contains("connect") }
        #expect(r1.count("connect") == 1)
        withExtendedLifetime(seenByM2) {}
        #expect(w.backend.apiMisuses.isEmpty)
        withExtendedLifetime((m1, m2, m3, echo)) {}
    }

    @Test func aConnectRightAfterACancelStaysTheManagers() async throws {
        let w = await LookalikeWorld()
        let r = w.recorder()
        let manager = w.manager(r)
        let echo = try await w.connectEcho(manager, r)
        manager.cancelPeripheralConnection(echo)
        manager.connect(echo, options: nil)
        // The cancel's disconnection is routed after the second connect was asked for: the
        // peripheral's events are still this manager's.
        try await w.until { r.log.contains { $0.hasPrefix("disconnect") } }
        #expect(manager.owns(w.echoID))
        withExtendedLifetime((manager, echo)) {}
    }
}
#endif
