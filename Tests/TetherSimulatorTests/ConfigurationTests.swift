import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

/// One connection per peripheral, and a second configuration for it is adopted, never ignored.
@Suite("A connection's configuration", .timeLimit(.minutes(2)))
struct ConfigurationTests {
    @Test func anIdleConnectionTakesASecondConfigurationAtOnce() async throws {
        let h = await Harness()
        let first = await h.connection()
        var other = Harness.echoConfiguration
        other.reconnectPolicy = .never
        let second = await h.central.connection(to: h.echoID, configuration: other)
        #expect(first === second, "one connection per peripheral")
        #expect(await first.configuration == other)
        #expect(await first.pendingConfiguration == nil)
    }

    @Test func aConnectedLinkKeepsItsConfigurationUntilTheNextConnect() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        var other = Harness.echoConfiguration
        other.notifyCharacteristics = []
        _ = await h.central.connection(to: h.echoID, configuration: other)
        #expect(await connection.configuration == Harness.echoConfiguration, "the link in use keeps what it was made with")
        #expect(await connection.pendingConfiguration == other)
        try await h.run { await connection.disconnect() }
        try await h.run { try await connection.connect() }
        #expect(await connection.configuration == other)
        #expect(await connection.pendingConfiguration == nil)
    }

    @Test func theSameConfigurationChangesNothingAndExistingConnectionOnlyLooks() async throws {
        let h = await Harness()
        #expect(await h.central.existingConnection(to: h.echoID) == nil)
        let connection = try await h.connected()
        _ = await h.central.connection(to: h.echoID, configuration: Harness.echoConfiguration)
        #expect(await connection.pendingConfiguration == nil)
        #expect(await h.central.existingConnection(to: h.echoID) === connection)
        #expect(await connection.configuration == Harness.echoConfiguration)
    }
}
