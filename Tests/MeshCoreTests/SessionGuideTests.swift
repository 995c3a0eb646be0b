import Foundation
import MeshCore
import Testing

/// The PocketMesh guide's MockTransport example, as written there (this file imports only
/// `MeshCore`, as an app's tests would).
@Suite("Session guide example", .timeLimit(.minutes(1)))
struct SessionGuideTests {
    static let selfInfo = MeshCoreFrame.selfInfo(SelfInfo(publicKey: Data(repeating: 1, count: 32), name: "Mock")).encoded()

    @Test("the guide's MockTransport walk-through")
    func guideExample() async throws {
        let mock = MockTransport(streamsEndOnDisconnect: false)
        let session = MeshCoreSession(transport: mock)
        // The radio's SELF_INFO must follow APP_START: answer each frame as it is sent.
        let sent = await mock.sentFrames()
        let radio = Task {
            var iterator = sent.makeAsyncIterator()
            _ = await iterator.next()
            await mock.simulateReceive(Self.selfInfo)       // APP_START → SELF_INFO
            _ = await iterator.next()
            await mock.simulateOK()                         // SET_ADVERT_NAME → OK
            _ = await iterator.next()
            await mock.simulateOK(value: 42)                // SEND_SELF_ADVERT → OK + value
            _ = await iterator.next()
            await mock.simulateError(code: 0x01)            // GET_CHANNEL → ERR 1
        }
        try await session.start()

        let sentData = await mock.sentData
        #expect(sentData.count == 1)
        #expect(!sentData.isEmpty)
        #expect(sentData[0].first == 0x01)

        try await session.setAdvertName("Renamed")
        try await session.sendSelfAdvert(flood: true)
        let error = await #expect(throws: MeshCoreError.self) { _ = try await session.channel(3) }
        #expect(error?.radioErrorCode == .unsupportedCommand)
        await radio.value

        #expect(await mock.sentData.count == 4)
        await mock.clearSentData()
        #expect(await mock.sentData.isEmpty)
        #expect(await mock.isConnected)
    }

    @Test("OK with a value is `00` + u32 LE; ERR is `01 code`")
    func helperBytes() async throws {
        let mock = MockTransport(streamsEndOnDisconnect: false)
        let frames = await mock.receivedData
        await mock.simulateOK()
        await mock.simulateOK(value: 42)
        await mock.simulateError(code: 0x06)
        var iterator = frames.makeAsyncIterator()
        #expect(await iterator.next() == Data([0x00]))
        #expect(await iterator.next() == Data([0x00, 42, 0, 0, 0]))
        #expect(await iterator.next() == Data([0x01, 0x06]))
        #expect(try MeshCoreFrame(decoding: Data([0x00, 42, 0, 0, 0])) == .ok(value: 42))
    }
}
