import Foundation
import Testing
@testable import MeshCore

@Suite("MeshCore view model", .timeLimit(.minutes(2)))
struct MeshCoreViewModelTests {
    @Test func theDotsFollowTheManagerAndMessagesArriveBounded() async throws {
        let queue = MessageQueue([])
        let world = try await ManagerWorld(reply: { command in
            if case .syncNextMessage = command { return [queue.next() ?? Data([0x0A])] }
            return FakeRadio.standard(command)
        })
        let model = await MainActor.run { MeshCoreViewModel(manager: world.manager, messageLimit: 2) }
        await model.start()
        #expect(await model.dot == .red)
        try await world.base.run { await model.connect() }
        try await world.base.until { await MainActor.run { model.dot == .green } }
        #expect(await model.selfInfo != nil)
        #expect(await model.contacts == [FakeRadio.alice])
        #expect(await model.channels.map(\.name) == ["Public"])
        // Three messages from Alice: the view keeps the newest two.
        for index in 0..<3 {
            queue.push(MeshCoreFrame.contactMessage(ContactMessage(senderPrefix: FakeRadio.aliceKey.prefix(6), pathLength: 1,
                                                                   timestamp: UInt32(2000 + index), text: "m\(index)")).encoded())
        }
        await world.radio.mock.simulateReceive(Data([0x83]))
        try await world.base.until { await MainActor.run { model.messages.last?.text == "m2" } }
        #expect(await model.messages.map(\.text) == ["m1", "m2"])
        #expect(await model.conversation(with: FakeRadio.alice).map(\.text) == ["m1", "m2"])
        #expect(await model.conversation(channel: 0).isEmpty)
        try await world.base.run { await model.send("hi", to: FakeRadio.alice) }
        // The fake radio never confirms delivery: the failure is a value, the message is shown.
        #expect(await model.actionError == "No acknowledgement after 3 attempts")
        #expect(await model.messages.last?.text == "hi")
        #expect(await model.messages.last?.status == .failed, "the outcome reaches the screen")
        #expect(await model.messages.filter { $0.text == "hi" }.count == 1, "the same message, updated")
        #expect(await model.messages.last?.direction == .outgoing)
        try await world.base.run { await model.refreshBattery() }
        #expect(await model.battery?.millivolts == 4120)
        await world.radio.mock.simulateLinkLoss(reconnecting: true)
        try await world.base.until { await MainActor.run { model.dot == .yellow } }
        try await world.base.run { await model.disconnect() }
        try await world.base.until { await MainActor.run { model.dot == .red } }
        await model.stop()
    }

    @Test func anInMemoryStoreKeepsMessagesOnceAndBounded() async throws {
        let store = InMemoryMeshMessageStore(messageLimit: 2)
        func message(_ text: String, _ timestamp: UInt32) -> MeshMessage {
            MeshMessage(direction: .incoming, kind: .direct, peer: "aabbcc", text: text, timestamp: timestamp, status: .received)
        }
        let first = try await store.insertMessage(message("a", 1))
        #expect(first?.id == 1)
        #expect(try await store.insertMessage(message("a", 1)) == nil, "a duplicate is not stored twice")
        _ = try await store.insertMessage(message("b", 2))
        _ = try await store.insertMessage(message("c", 3))
        #expect(await store.messages.map(\.text) == ["b", "c"])
        try await store.updateDelivery(id: 3, status: .delivered, ack: 7, roundTrip: 90)
        #expect(await store.messages.last?.status == .delivered)
        #expect(await store.messages.last?.roundTrip == 90)
        try await store.saveContacts([FakeRadio.alice])
        #expect(await store.contacts[FakeRadio.alice.publicKey] == FakeRadio.alice)
        try await store.replaceContacts([])
        #expect(await store.contacts.isEmpty)
    }
}
