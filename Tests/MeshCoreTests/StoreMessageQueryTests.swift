import Foundation
import Testing
@testable import MeshCore
@testable import MeshCoreStorage

/// What `tether mesh messages` and the "N new message(s)" note read from the store.
@Suite struct StoreMessageQueryTests {
    private func message(_ direction: MeshMessage.Direction, _ kind: MeshMessage.Kind, peer: String? = nil, channel: Int? = nil,
                         _ text: String, at timestamp: UInt32) -> MeshMessage {
        MeshMessage(direction: direction, kind: kind, peer: peer, channelIndex: channel, text: text, timestamp: timestamp,
                    status: direction == .incoming ? .received : .sent)
    }

    @Test func messagesAreFilteredByContactOrChannelAndCountedAfterAMark() async throws {
        let store = try MeshStore.inMemory()
        #expect(try await store.newestMessageID() == 0)
        _ = try await store.insertMessage(message(.incoming, .direct, peer: "a1b2c3d4e5f6", "from alice", at: 1))
        let mark = try await store.newestMessageID()
        _ = try await store.insertMessage(message(.outgoing, .direct, peer: "a1b2c3d4e5f6", "to alice", at: 2))
        _ = try await store.insertMessage(message(.incoming, .direct, peer: "0102030405ff", "from bob", at: 3))
        _ = try await store.insertMessage(message(.incoming, .channel, channel: 0, "public hello", at: 4))
        _ = try await store.insertMessage(message(.incoming, .channel, channel: 2, "hashtag hello", at: 5))
        // A full key finds the messages stored under its prefix.
        let alice = try await store.messages(peer: "A1B2C3D4E5F6" + String(repeating: "00", count: 26))
        #expect(alice.map(\.text) == ["from alice", "to alice"])
        #expect(try await store.messages(peer: "0102030405ff").map(\.text) == ["from bob"])
        #expect(try await store.messages(channel: 0).map(\.text) == ["public hello"])
        #expect(try await store.messages(channel: 2).map(\.text) == ["hashtag hello"])
        #expect(try await store.messages(limit: 2).map(\.text) == ["public hello", "hashtag hello"])
        // Incoming after the mark: bob's and the two channel messages (not what we sent).
        #expect(try await store.incomingMessageCount(after: mark) == 3)
    }

    @Test func contactsKeepTheirPathsHopHashSize() async throws {
        let store = try MeshStore.inMemory()
        let wide = MeshContact(publicKey: Data(repeating: 0xAB, count: 32), type: .repeater,
                               outPath: Data([1, 2, 3, 4, 5, 6]), outPathHashSize: 3, name: "Wide")
        try await store.saveContacts([wide])
        let back = try #require(try await store.contacts().first)
        #expect(back.outPathHashSize == 3)
        #expect(back.outPathHopCount == 2)
        #expect(back == wide)
    }
}
