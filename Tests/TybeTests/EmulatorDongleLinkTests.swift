import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator
@testable import Tybe

@Suite("Tybe bridge emulator: dongle link", .timeLimit(.minutes(2)))
struct EmulatorDongleLinkTests {
    @Test func idleLinkStaysLinkedThroughHeartbeatPings() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        try await world.advance(.seconds(11))
        let entries = await world.log.entries
        #expect(entries.count == 6)
        #expect(entries.allSatisfy { $0.status.dongleLinked })
    }

    @Test func unpluggedDongleGivesNoACKAndLinkedClearsAfterFourSeconds() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        #expect(try await world.send(seq: 1, [KeyStroke(.a)]).dongleLinked)
        try await world.drain()
        await world.bridge { $0.dongle.unplug() }
        let lastACK = try #require(await world.bridge { $0.lastDongleAckAt })

        let lost = try await world.send(seq: 2, [KeyStroke(.b)])
        #expect(lost.error == .dongleNoAck)
        #expect(!lost.ackReceived)
        // Sticky: one missed ACK does not clear the flag.
        #expect(lost.dongleLinked)

        try #require(world.now < lastACK + .milliseconds(3_950))
        try await world.advance(lastACK + .milliseconds(3_950) - world.now)
        #expect(await world.bridge { $0.isDongleLinked })
        try await world.advance(lastACK + .milliseconds(4_010) - world.now)
        #expect(await !world.bridge { $0.isDongleLinked })

        // The next heartbeat reports it, for the last frame (not acknowledged, no error).
        let unlinked = try await world.status { !$0.dongleLinked }
        #expect(unlinked.at >= lastACK + .seconds(4))
        #expect(unlinked.at <= lastACK + .milliseconds(6_100))
        #expect(unlinked.status == TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: false, seq: 2, errorCode: 0))
        #expect(await world.log.entries.filter { $0.at < lastACK + .seconds(4) }.allSatisfy { $0.status.dongleLinked })
        try await world.drain()
        #expect(await world.hostText == "a")
    }

    @Test func replugShowsLinkedAtTheNextHeartbeat() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        await world.bridge { $0.dongle.unplug() }
        try await world.status { !$0.dongleLinked }
        try await world.advance(.milliseconds(700))
        await world.bridge { $0.dongle.plug() }
        let pluggedAt = world.now
        let start = await world.log.count
        // No typing: the heartbeat's probe finds the dongle.
        let linked = try await world.status(from: start) { $0.dongleLinked }
        #expect(linked.at - pluggedAt <= .milliseconds(2_050))
        #expect(await world.log.entries.dropFirst(start).first?.status.dongleLinked == true)
    }

    @Test func replugShowsLinkedOnTheNextFrame() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        await world.bridge { $0.dongle.unplug() }
        try await world.status { !$0.dongleLinked }
        await world.bridge { $0.dongle.plug() }
        let pluggedAt = world.now
        let status = try await world.send(seq: 7, [KeyStroke(.z)])
        #expect(status == TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 7, errorCode: 0))
        #expect(world.now - pluggedAt < .milliseconds(100))
        try await world.drain()
        #expect(await world.hostText == "z")
    }

    @Test func newConnectionWithTheDongleUnpluggedReportsItUnlinked() async throws {
        let world = await EmulatorWorld()
        await world.bridge { $0.dongle.unplug() }
        try await world.connect()
        let first = try await world.status().status
        #expect(first == TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: false, seq: 0, errorCode: 0))
    }

    @Test func keysStillBeingTypedAreLostWhenTheDongleIsPulled() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let strokes = Array(repeating: KeyStroke(.x), count: 20)
        #expect(try await world.send(seq: 1, strokes).ackReceived)
        // 8 ms per key: pulled after roughly a third of the frame.
        try await world.advance(.milliseconds(50))
        await world.bridge { $0.dongle.unplug() }
        try await world.drain()
        let typed = await world.hostText.count
        #expect(typed > 0 && typed < 20)
    }
}
