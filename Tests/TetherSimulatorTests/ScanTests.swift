import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

@Suite("Scanning on the simulated radio", .timeLimit(.minutes(3)))
struct ScanTests {
    /// The default world (echo, heart-rate strap, beacon) on a test clock.
    struct World {
        let h: Harness
        init() async {
            h = await Harness()
            await h.radio.add(VirtualPeripheral(
                name: "HR Strap 42",
                advertisement: AdvertisementData(localName: "HR Strap 42", serviceUUIDs: [BluetoothUUID(UInt16(0x180D))]),
                services: [], distance: 4))
            await h.radio.add(VirtualPeripheral(
                name: nil,
                advertisement: AdvertisementData(manufacturerData: Data([0x4C, 0x00, 0x02, 0x15]), isConnectable: false),
                services: [], distance: 30))
        }

        func scan(_ filter: ScanFilter, seconds: Int = 2) async throws -> [DiscoveredPeripheral] {
            let central = h.central
            return try await h.run {
                var found: [DiscoveredPeripheral] = []
                for await peripheral in try await central.scan(filter: filter, timeout: .seconds(seconds)) { found.append(peripheral) }
                return found
            }
        }
    }

    @Test func unfilteredScanSeesEveryPeripheralOnceWithItsAdvertisement() async throws {
        let world = await World()
        let found = try await world.scan(.any)
        #expect(found.count == 3)
        #expect(Set(found.map(\.id)).count == 3)
        let echo = try #require(found.first { $0.id == world.h.echoID })
        #expect(echo.advertisement.localName == "Tether Echo")
        #expect(echo.advertisement.serviceUUIDs == [EchoPeripheral.service])
        #expect(found.contains { $0.advertisement.companyIdentifier == 0x004C && !$0.advertisement.isConnectable })
    }

    @Test func rssiFallsWithDistance() async throws {
        let world = await World()
        let found = try await world.scan(.any)
        let byName = Dictionary(uniqueKeysWithValues: found.map { ($0.displayName ?? "beacon", $0.rssi ?? .min) })
        #expect(byName["Tether Echo"]! > byName["HR Strap 42"]!)
        #expect(byName["HR Strap 42"]! > byName["beacon"]!)
    }

    @Test(arguments: [
        (ScanFilter(services: [EchoPeripheral.service]), ["Tether Echo"]),
        (ScanFilter(name: .exact("HR Strap 42")), ["HR Strap 42"]),
        (ScanFilter(name: .prefix("Tether")), ["Tether Echo"]),
        (ScanFilter(name: .contains("strap")), ["HR Strap 42"]),
        (ScanFilter(minimumRSSI: -75), ["HR Strap 42", "Tether Echo"]),
        (ScanFilter(services: [EchoPeripheral.service], name: .contains("strap"), matchServicesOrName: true), ["HR Strap 42", "Tether Echo"]),
    ])
    func filtersSelectPeripherals(filter: ScanFilter, expected: [String]) async throws {
        let world = await World()
        let found = try await world.scan(filter)
        #expect(found.compactMap(\.displayName).sorted() == expected)
    }

    @Test func scanEndsAtItsTimeout() async throws {
        let world = await World()
        let start = world.h.now
        _ = try await world.scan(.any, seconds: 3)
        #expect(world.h.now - start >= .seconds(3) && world.h.now - start < .milliseconds(3_050))
    }

    @Test func discoverThrowsScanTimeoutWhenNothingMatches() async throws {
        let world = await World()
        let central = world.h.central
        let error = try await world.h.error { _ = try await central.discover(filter: ScanFilter(name: .exact("nobody")), timeout: .seconds(2)) }
        #expect(error == .scanTimeout)
    }

    @Test func outOfRangePeripheralsAreNotSeen() async throws {
        let world = await World()
        await world.h.radio.setInRange(world.h.echoID, false)
        let found = try await world.scan(.any)
        #expect(!found.contains { $0.id == world.h.echoID })
    }

    @Test func scanningWhileBluetoothIsOffThrows() async throws {
        let h = await Harness(centralState: .poweredOff)
        let central = h.central
        let error = try await h.error { _ = try await central.scan() }
        #expect(error == .bluetoothUnavailable(.poweredOff))
    }

    @Test func powerOffEndsARunningScan() async throws {
        let world = await World()
        let central = world.h.central
        let stream = try await world.h.run { try await central.scan(filter: ScanFilter(name: .exact("nobody"))) }
        let ended = Task { () -> Bool in
            for await _ in stream {}
            return true
        }
        await world.h.advance(.seconds(1))
        await world.h.radio.setCentralState(.poweredOff)
        #expect(try await world.h.run { await ended.value })
    }

    @Test func centralStateUpdatesStartWithTheCurrentState() async throws {
        let h = await Harness()
        let central = h.central
        let states = try await h.run { () -> [CentralState] in
            var seen: [CentralState] = []
            for await state in await central.stateUpdates() {
                seen.append(state)
                if seen.count == 1 { await h.radio.setCentralState(.poweredOff) }
                if seen.count == 2 { break }
            }
            return seen
        }
        #expect(states == [.poweredOn, .poweredOff])
    }
}
