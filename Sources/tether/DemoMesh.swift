import Foundation
import MeshCore
import TetherCore
import TetherSimulator
import TetherWorld
import MeshCoreEmulator
import MeshCoreStorage

/// The demo's MeshCore chapter: two emulated companion radios, each with its own app, chat
/// over the simulated mesh; one radio walks out of range while the other keeps writing, and
/// every message arrives once after the reconnection.
struct MeshDemoChapter {
    let central: Central
    let radio: VirtualRadio
    let emulators: DefaultWorld.Emulators
    let timeline: DemoTimeline

    /// One app (transport, session, manager, store) on one radio.
    struct App {
        let name: String
        let manager: ConnectionManager
        let store: MeshStore
        let inbox: Inbox
    }

    /// Incoming texts, collected from a manager's events.
    actor Inbox {
        private(set) var texts: [String] = []
        private(set) var acknowledgements = 0
        func add(_ text: String) { texts.append(text) }
        func acknowledged() { acknowledgements += 1 }
    }

    func run() async throws {
        print("\nMeshCore — two companion radios on a LoRa mesh\n")
        timeline.step("Connecting an app to each radio over BLE (APP_START, device query, time, contacts, channels, queued messages)")
        let base = try await connect(DefaultWorld.IDs.meshBase, name: MeshNetwork.demoRadioName)
        let buddy = try await connect(DefaultWorld.IDs.meshBuddy, name: DefaultWorld.meshBuddyName)
        timeline.ok("both ready; \(base.name) knows \(await base.manager.contacts.count) contacts")

        guard let buddyContact = await base.manager.contact(named: buddy.name),
              let baseContact = await buddy.manager.contact(named: base.name) else {
            throw CLIError("the radios do not know each other")
        }
        timeline.step("\(base.name) → \(buddy.name): a direct message, waiting for the mesh acknowledgement")
        let first = try await within(20, "direct message") { try await base.manager.sendMessage("Meet at the ridge at noon?", to: buddyContact) }
        timeline.ok("delivered (round trip \(first.roundTrip ?? 0) ms)")
        try await waitFor(buddy, count: 1, "the message at \(buddy.name)")
        timeline.ok("\(buddy.name) received: \(await buddy.inbox.texts.last ?? "")")
        let reply = try await within(20, "reply") { try await buddy.manager.sendMessage("Yes — see you there.", to: baseContact) }
        timeline.ok("\(buddy.name) replied (round trip \(reply.roundTrip ?? 0) ms)")
        try await waitFor(base, count: 1, "the reply at \(base.name)")
        timeline.ok("\(base.name) received: \(await base.inbox.texts.last ?? "")")

        timeline.step("\(base.name) walks out of BLE range while \(buddy.name) sends five messages")
        await radio.setInRange(DefaultWorld.IDs.meshBase, false)
        let sender = Task {
            for index in 1...5 {
                _ = try? await buddy.manager.sendMessage("Trail update \(index)", to: baseContact, attempts: 3)
            }
        }
        try await Task.sleep(for: .seconds(4))
        timeline.info("\(base.name)'s app state: \(await base.manager.state)")
        timeline.step("Back in range: the app reconnects, starts the radio session again and drains the queue")
        await radio.setInRange(DefaultWorld.IDs.meshBase, true)
        await sender.value
        try await waitFor(base, count: 6, "every trail update at \(base.name)")
        try await within(20, "ready again") {
            while await base.manager.state != .ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        let texts = await base.inbox.texts
        let updates = texts.filter { $0.hasPrefix("Trail update") }
        guard updates.sorted() == (1...5).map({ "Trail update \($0)" }), Set(texts).count == texts.count else {
            throw CLIError("messages lost or duplicated: \(texts)")
        }
        let stored = try await base.store.messages().filter { $0.direction == .incoming }.count
        timeline.ok("all 5 delivered exactly once (\(stored) incoming messages stored); reconnected \(await base.manager.readyCount - 1) time(s)")

        await base.manager.disconnect()
        await buddy.manager.disconnect()
        timeline.ok("both apps disconnected")
    }

    private func connect(_ id: PeripheralID, name: String) async throws -> App {
        let transport = await BLETransport(central: central, peripheral: id)
        let session = MeshCoreSession(transport: transport, configuration: .init(appName: "tether demo"))
        let store = try MeshStore.inMemory()
        let manager = ConnectionManager(session: session, store: store)
        let inbox = Inbox()
        let events = await manager.events()
        let timeline = self.timeline
        Task {
            for await event in events {
                switch event {
                case .message(let message) where message.direction == .incoming:
                    await inbox.add(message.text)
                case .state(let state) where state != .disconnected:
                    timeline.info("\(name): \(state)")
                default:
                    break
                }
            }
        }
        try await within(30, "connecting to \(name)") { try await manager.connect() }
        return App(name: name, manager: manager, store: store, inbox: inbox)
    }

    private func waitFor(_ app: App, count: Int, _ what: String) async throws {
        try await within(40, "waiting for \(what)") {
            while await app.inbox.texts.count < count { try await Task.sleep(for: .milliseconds(50)) }
        }
    }
}
