#if os(Linux)
import Foundation
import Testing

/// What the forwarded bus cannot carry, run inside the guest by `BlueZGuestProbe` (a static
/// build on the 9p share, `BLUEZ_VM_PROBE`) next to the real bluetoothd, on two adapters lent by
/// the rig: the Unix-socket bus with EXTERNAL authentication, acquired sockets, back-pressure on
/// writes without response, pairing through the agents. The probe prints facts; these tests
/// assert them.
extension RealStackTests {
    /// Runs one probe case on two fresh adapters; returns its facts. A probe that fails throws
    /// with its output.
    private func probe(_ probeCase: String) async throws -> [String: String] {
        let made = try await BlueZRigs.shared()
        let rig = try #require(made as? GuestRig)
        let probe = try #require(ProcessInfo.processInfo.environment["BLUEZ_VM_PROBE"],
                                 "no BLUEZ_VM_PROBE: ./scripts/test-real-bluez builds the probe and shares it with the guest")
        let adapters = try await rig.addFreshAdapters(2)
        // Released (bonds and caches forgotten) whether the probe passed or not.
        let output: String
        do {
            output = try await rig.shell("\(probe) \(probeCase) hci\(adapters[0].id) hci\(adapters[1].id) 2>&1", within: 170)
        } catch {
            for adapter in adapters { try? await rig.releaseAdapter(id: adapter.id) }
            throw BlueZTestError("\(error)\n\(await bluetoothdState(rig))")
        }
        do {
            for adapter in adapters { try await rig.releaseAdapter(id: adapter.id) }
        } catch {
            throw BlueZTestError("after the probe: \(error)\n\(await bluetoothdState(rig))\nthe probe said: \(output.suffix(3000))")
        }
        let line = try #require(output.split(separator: "\n").last(where: { $0.hasPrefix("PROBE-RESULT ") }), "no result in: \(output.suffix(2000))")
        let facts = try JSONDecoder().decode([String: String].self, from: Data(line.dropFirst("PROBE-RESULT ".count).utf8))
        print("probe \(probeCase): \(facts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        return facts
    }

    /// Whether bluetoothd runs, and the end of its log: what a failure needs to be understood.
    private func bluetoothdState(_ rig: GuestRig) async -> String {
        (try? await rig.shell("echo bluetoothd: $(pidof bluetoothd || echo not running); tail -n 25 /tmp/bluetoothd.log", within: 30))
            ?? "(the guest shell did not answer)"
    }

    @Test func theSystemBusTakesExternalAuthenticationAndPassesDescriptors() async throws {
        let facts = try await probe("bus")
        #expect(facts["address"] == "unix:path=/run/dbus/system_bus_socket")
        #expect(facts["mechanism"] == "EXTERNAL")
        #expect(facts["unixFDs"] == "true")
        // The uid the bus daemon has for the connection is the one the kernel vouched for.
        #expect(facts["busUID"] != nil && facts["busUID"] == facts["processUID"])
        #expect(Int(facts["adapters"] ?? "") ?? 0 >= 2)
    }

    @Test func notificationsAndWritesWithoutResponseTravelOnAcquiredSockets() async throws {
        let facts = try await probe("sockets")
        #expect(facts["notifyAcquired"] == "true", "bluetoothd says the driver holds the notification socket")
        #expect(facts["writeAcquired"] == "true", "bluetoothd says the driver holds the write socket")
        #expect(facts["mtu"] == "517")
        #expect(facts["maximumWriteWithoutResponse"] == "510")
        #expect(facts["echoIntact"] == "true", "the longest write crossed the write socket and came back on the notification socket")
        #expect(facts["notifyAcquiredAfterUnsubscribing"] == "false", "closing the socket ends the subscription")
        #expect(facts["secondEcho"] == "again")
        #expect(facts["notifyAcquiredAgain"] == "true", "a second subscription gets a socket again")
    }

    @Test func aBurstOf1000WritesWithoutResponseIsHeldBackThenArrivesWholeAndInOrder() async throws {
        let facts = try await probe("burst")
        #expect(facts["writeAcquired"] == "true")
        #expect(facts["notifyAcquired"] == "true")
        // With bluetoothd stopped the socket fills: the driver takes some, then says no and
        // keeps saying no until bluetoothd drains it.
        let accepted = try #require(Int(facts["acceptedWithBluetoothdStopped"] ?? ""))
        #expect(accepted > 0 && accepted < 999)
        #expect(facts["refusingWhileStopped"] == "true")
        #expect(facts["peripheralReceivedBytes"] == "510000")
        #expect(facts["peripheralReceivedAllInOrder"] == "true")
        #expect(facts["echoesInOrder"] == "true", "1,000 notifications back on the socket, none lost, none reordered")
    }

    @Test func justWorksPairingHappensByItselfOnAnEncryptedCharacteristic() async throws {
        let facts = try await probe("just-works")
        #expect(facts["agentCapability"] == "NoInputNoOutput")
        #expect(facts["read"] == "Tether Echo 1.0", "the encrypt-read characteristic was read after the stack paired")
        #expect(facts["paired"] == "true")
        #expect(facts["bonded"] == "true")
    }

    @Test func passkeyPairingThroughTheAgentsAuthenticatesTheLink() async throws {
        let facts = try await probe("passkey")
        #expect(facts["agentCapability"] == "KeyboardOnly")
        let shown = try #require(facts["passkeyShown"])
        #expect(shown.count == 6 && shown.allSatisfy { $0.isASCII && $0.isNumber }, "the peripheral's agent showed a passkey")
        #expect(facts["passkeyTyped"] == shown)
        #expect(facts["pair"] == "ok")
        #expect(facts["paired"] == "true")
        #expect(facts["read"] == "Tether Echo 1.0", "the encrypt-authenticated-read characteristic opened")
    }

    @Test func aWrongPasskeyFailsThePairingAndTheCharacteristicStaysClosed() async throws {
        let facts = try await probe("wrong-passkey")
        let shown = try #require(facts["passkeyShown"])
        #expect(facts["passkeyTyped"] != shown)
        #expect(facts["pair"] == "encryption failed")
        #expect(facts["paired"] == "false")
        #expect(facts["read"]?.hasPrefix("error:") == true, "nothing was read without the pairing")
    }
}
#endif
