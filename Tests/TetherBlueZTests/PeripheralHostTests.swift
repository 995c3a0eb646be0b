#if os(Linux)
import Foundation
import Testing
import TetherBlueZ
@testable import TetherBlueZPeripheral
import TetherCore
import TetherDBus
@testable import TetherSimulator

/// The peripheral host on its own: re-advertising, hostile options, bluetoothd restarting.
@Suite("BlueZ peripheral host", .timeLimit(.minutes(2)))
struct PeripheralHostTests {
    @Test func reAdvertisingKeepsThePeripheralDiscoverable() async throws {
        let rig = try await BlueZRigs.shared()
        let adapters = try await rig.addFreshAdapters(2)
        let peripheralAdapter = adapters[0], centralAdapter = adapters[1]
        let radio = VirtualRadio(clock: ContinuousClock())
        await radio.add(EchoPeripheral.makePeripheral(id: DriverConformanceTests.echoID))
        let host = BlueZPeripheralHost(radio: radio, peripheral: DriverConformanceTests.echoID, configuration: BlueZPeripheralHostConfiguration(
            adapter: "hci\(peripheralAdapter.id)", busAddress: rig.busAddress, readvertiseInterval: .milliseconds(50)))
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: "hci\(centralAdapter.id)", busAddress: rig.busAddress))
        // Both sides stop and the adapters go back whether the body passes or throws.
        func close() async {
            await driver.shutdown()
            await host.stop()
            try? await rig.releaseAdapter(id: peripheralAdapter.id)
            try? await rig.releaseAdapter(id: centralAdapter.id)
        }
        do {
            try await host.start()
            let problems = Task { () -> [String] in
                var found: [String] = []
                for await activity in host.activity { if case .problem(let text) = activity { found.append(text) } }
                return found
            }
            // Several re-registrations (bounded poll: nothing signals them).
            try await within(10, "the advertisement was not registered again 3 times") {
                while await host.readvertisementCount() < 3 { try await Task.sleep(for: .milliseconds(20)) }
            }
            // A central that starts scanning now still finds it.
            let events = EventRecorder(driver)
            _ = try await events.next("poweredOn") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
            await driver.scan(services: [EchoPeripheral.service], allowDuplicates: false)
            let id = BlueZMapping.peripheralID(adapterIndex: centralAdapter.id, address: peripheralAdapter.address)!
            _ = try await events.next("discovery after re-advertising") { if case .discovered(let p) = $0 { p.id == id } else { false } }
            await host.stop()
            #expect(await problems.value.isEmpty)
        } catch {
            await close()
            throw error
        }
        await close()
    }

    @Test func aReadWithABadOffsetIsAnErrorNotACrash() async throws {
        try await DriverConformanceTests.withEchoPair { pair in
            try await pair.connect()
            // bluetoothd's call to the application, forged: the offset is a 16-bit ATT field.
            let caller = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
            defer { caller.close() }
            let (name, path) = await pair.host.objectForTesting(EchoPeripheral.info)
            let characteristic = try #require(path)
            var answered = 0
            for offset: DBusValue in [.int16(-1), .uint32(70_000), .string("x"), .int64(.min)] {
                let message = DBusMessage.methodCall(destination: name, path: characteristic, interface: "org.bluez.GattCharacteristic1",
                                                     member: "ReadValue", body: [.properties(["offset": offset])])
                let result: Result<DBusMessage, DBusError> = await withCheckedContinuation { continuation in
                    caller.call(message, timeout: .seconds(5)) { continuation.resume(returning: $0) }
                }
                if case .failure(let error) = result, error.name == "org.bluez.Error.InvalidOffset" { answered += 1 }
            }
            #expect(answered == 4, "the host answered bad offsets with InvalidOffset")
            // And it still serves.
            let id = pair.remoteID
            await pair.driver.readValue(for: EchoPeripheral.info, on: id)
            let read = try await pair.events.next("read") { if case .valueUpdated(id, EchoPeripheral.info, _, _) = $0 { true } else { false } }
            guard case .valueUpdated(_, _, let value, _) = read else { return }
            #expect(value == Data("Tether Echo 1.0".utf8))
        }
    }

    @Test func bluetoothdRestartingRegistersTheApplicationAgain() async throws {
        let rig = try await BlueZRigs.makePrivate()
        defer { rig.stop() }  // after close(): the adapters are back by then
        let adapters = try await rig.addFreshAdapters(2)
        let peripheralAdapter = adapters[0], centralAdapter = adapters[1]
        let radio = VirtualRadio(clock: ContinuousClock())
        await radio.add(EchoPeripheral.makePeripheral(id: DriverConformanceTests.echoID))
        let host = BlueZPeripheralHost(radio: radio, peripheral: DriverConformanceTests.echoID, configuration: BlueZPeripheralHostConfiguration(
            adapter: "hci\(peripheralAdapter.id)", busAddress: rig.busAddress, readvertiseInterval: BlueZRigs.readvertiseInterval))
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: "hci\(centralAdapter.id)", busAddress: rig.busAddress))
        func close() async {
            await driver.shutdown()
            await host.stop()
            try? await rig.startBluez()  // a failure may have left bluetoothd stopped
            try? await rig.releaseAdapter(id: centralAdapter.id)
            try? await rig.releaseAdapter(id: peripheralAdapter.id)
        }
        do {
            try await host.start()
            let activity = FlowStreamLog(host.activity)
            try await rig.stopBluez()
            try await activity.next("bluetoothd gone") { if case .problem(let text) = $0 { text.contains("left") } else { false } }
            try await rig.startBluez()
            try await activity.next("registered again") { if case .problem(let text) = $0 { text.contains("registered again") } else { false } }
            // A central finds it on the new bluetoothd.
            let events = EventRecorder(driver)
            _ = try await events.next("poweredOn") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
            await driver.scan(services: nil, allowDuplicates: false)
            let id = BlueZMapping.peripheralID(adapterIndex: centralAdapter.id, address: peripheralAdapter.address)!
            _ = try await events.next("discovery") { if case .discovered(let p) = $0 { p.id == id } else { false } }
        } catch {
            await close()
            throw error
        }
        await close()
    }
}

#endif
