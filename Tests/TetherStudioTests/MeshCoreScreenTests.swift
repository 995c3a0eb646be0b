#if os(macOS) || os(Linux)
import Foundation
import MeshCore
import Testing
import TetherCore
@testable import TetherStudio

@Suite("Tether Studio: the MeshCore screen")
struct MeshCoreScreenTests {
    /// A started screen, connecting to the simulated base radio its scan found.
    @MainActor
    func connectedToTheBase(_ world: DeviceScreenWorld) async throws -> MeshCoreScreen {
        let screen = MeshCoreScreen(central: world.central, store: InMemoryMeshMessageStore(), network: world.emulators.mesh)
        await screen.start()
        try await screen.perform("scan", ["on": .bool(true)])
        let found = try await until(screen, 15, "the base radio found") { $0.radios.contains { $0.name?.contains("Tether Base") == true } }
        let base = try #require(found.radios.first { $0.name?.contains("Tether Base") == true })
        try await screen.perform("connect", ["id": .string(base.id)])
        return screen
    }

    @MainActor
    @Test func aMessageToTheEchoBotIsConfirmedAndAnsweredAndANewNodeAppears() async throws {
        let screen = try await connectedToTheBase(DeviceScreenWorld())
        let ready = try await until(screen, 30, "the radio ready") { $0.connection == "ready" && !$0.contacts.isEmpty && !$0.channels.isEmpty }
        #expect(ready.dot == "green")
        // The battery is read once the radio is ready, unasked.
        _ = try await until(screen, 15, "the battery read on connect") { $0.battery?["millivolts"] != nil }
        #expect(ready.selfInfo?.first == ["Name", "Tether Base"])
        #expect(!ready.channels.isEmpty)
        let echo = try #require(ready.contacts.first { $0.name == "Echo" })

        try await screen.perform("select", ["contact": .string(echo.key)])
        try await screen.perform("send", ["text": .string("hello from the studio")])
        let answered = try await until(screen, 30, "delivered and answered") { state in
            state.messages.contains { $0.direction == "outgoing" && $0.status == "delivered" }
                && state.messages.contains { $0.direction == "incoming" && $0.text == "echo: hello from the studio" }
        }
        #expect(answered.chatTitle == "Chat with Echo")
        #expect(answered.contacts.first { $0.name == "Echo" }?.messages == 2)

        // A node whose name is markup: a contact like any other (the page shows it as text).
        try await screen.perform("simulateNode", ["name": .string("<script>x()</script>")])
        _ = try await until(screen, 30, "the new node a contact") { $0.contacts.contains { $0.name == "<script>x()</script>" } }

        try await screen.perform("battery")
        #expect(screen.state().battery?["millivolts"] != nil)
        try await screen.perform("disconnect")
        _ = try await until(screen, 10, "disconnected") { $0.connection == "disconnected" && $0.dot == "red" }
        await screen.stop()
    }

    @MainActor
    @Test func aChannelIsPickedAndAMessageSentOnIt() async throws {
        let screen = try await connectedToTheBase(DeviceScreenWorld())
        let ready = try await until(screen, 30, "the radio ready") { $0.connection == "ready" && !$0.channels.isEmpty }
        let channel = try #require(ready.channels.first)
        try await screen.perform("select", ["channel": .number(Double(channel.index))])
        #expect(screen.state().chatTitle == "Channel \(channel.name)")
        #expect(screen.state().chat == ["channel": String(channel.index)])

        try await screen.perform("send", ["text": .string("hello, channel")])
        let sent = try await until(screen, 30, "the message in the channel's chat") { state in
            state.messages.contains { $0.direction == "outgoing" && $0.text == "hello, channel" }
        }
        #expect(sent.actionError == nil)
        // Handed to the radio (a channel message has no acknowledgement).
        #expect(sent.messages.first { $0.text == "hello, channel" }?.status == "sent")
        await screen.stop()
    }

    @MainActor
    @Test func aDisconnectDuringTheStartupLeavesTheRadioDisconnected() async throws {
        let screen = try await connectedToTheBase(DeviceScreenWorld())
        _ = try await until(screen, 15, "the startup under way") { $0.connection != "disconnected" }
        try await screen.perform("disconnect")
        _ = try await until(screen, 15, "disconnected") { $0.connection == "disconnected" }
        // It stays so: the startup does not bring the link back.
        try await screen.perform("scan", ["on": .bool(true)])
        _ = try await until(screen, 15, "a second scan's radio") { !$0.radios.isEmpty }
        #expect(screen.state().connection == "disconnected")
        await screen.stop()
    }

    @MainActor
    @Test func badActionsSayWhy() async throws {
        let world = await DeviceScreenWorld()
        let screen = MeshCoreScreen(central: world.central, store: InMemoryMeshMessageStore())
        await screen.start()
        await #expect(throws: StudioProtocolError("connect to a radio first")) { try await screen.perform("send", ["text": .string("hi")]) }
        await #expect(throws: StudioProtocolError("a message needs text")) { try await screen.perform("send", ["text": .string("  ")]) }
        await #expect(throws: StudioProtocolError("\"text\" is longer than 160 characters")) {
            try await screen.perform("send", ["text": .string(String(repeating: "a", count: 161))])
        }
        await #expect(throws: StudioProtocolError("\"contact\" is a key prefix of 12 hex digits")) {
            try await screen.perform("select", ["contact": .string("zz")])
        }
        await #expect(throws: StudioProtocolError("\"channel\" must be 0…255")) { try await screen.perform("select", ["channel": .number(300)]) }
        await #expect(throws: StudioProtocolError("real nodes announce themselves")) {
            try await screen.perform("simulateNode", ["name": .string("x")])
        }
        let stranger = UUID().uuidString
        await #expect(throws: StudioProtocolError("no radio \(stranger) was found: scan first")) {
            try await screen.perform("connect", ["id": .string(stranger)])
        }
        #expect(screen.state().connection == "disconnected" && !screen.state().simulated)
        await screen.stop()
    }
}
#endif
