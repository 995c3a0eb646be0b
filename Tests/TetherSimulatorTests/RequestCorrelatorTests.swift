import Foundation
import Testing
@testable import TetherCore
import TetherTesting

/// The request/reply pairing MeshCore's commands and Tybe's statuses share, on a test clock.
@Suite("Request correlator", .timeLimit(.minutes(1)))
struct RequestCorrelatorTests {
    @Test func aReplyThatArrivesBeforeTheWaitIsKeptForIt() async throws {
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let ticket = correlator.arm { $0 == 7 ? .complete : .notMine }
        #expect(!correlator.deliver(6), "nobody asked for 6")
        #expect(correlator.deliver(7))
        let reply = try await correlator.reply(to: ticket, timeout: .seconds(1))
        #expect(reply.messages == [7] && reply.omitted == 0)
        #expect(correlator.armedCount == 0)
        await #expect(throws: RequestCorrelatorError.unknownTicket) { try await correlator.reply(to: ticket, timeout: .seconds(1)) }
    }

    @Test func requestsTakeTheirOwnRepliesOldestFirst() async throws {
        let correlator = RequestCorrelator<String>(clock: ManualClock())
        let first = correlator.arm { $0.hasPrefix("a") ? .complete : .notMine }
        let second = correlator.arm { $0.hasPrefix("a") || $0.hasPrefix("b") ? .complete : .notMine }
        #expect(correlator.deliver("b1"))   // only the second takes b
        #expect(correlator.deliver("a1"))   // both take a: the oldest wins
        #expect(try await correlator.reply(to: first, timeout: .seconds(1)).messages == ["a1"])
        #expect(try await correlator.reply(to: second, timeout: .seconds(1)).messages == ["b1"])
    }

    @Test func aMultiMessageReplyIsBoundedAndEachPartRestartsTheTimeout() async throws {
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock, maximumMessages: 3)
        let ticket = correlator.arm { $0 == 0 ? .complete : .more }
        let waiting = Task { try await correlator.reply(to: ticket, timeout: .seconds(1)) }
        for part in 1...5 {
            await time.advance(.milliseconds(900))
            #expect(correlator.deliver(part))
        }
        await time.advance(.milliseconds(900))
        #expect(correlator.deliver(0))
        let reply = try await waiting.value
        #expect(reply.messages == [1, 2, 3, 0] && reply.omitted == 2)
    }

    @Test func silenceTimesOutOnTheInjectedClockAndALateReplyIsNotTaken() async throws {
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock)
        let ticket = correlator.arm { _ in .complete }
        let waiting = Task { try await correlator.reply(to: ticket, timeout: .seconds(3)) }
        await time.advance(.milliseconds(2_900))
        #expect(correlator.oldestWaiting == ticket, "still waiting before its 3 s")
        await time.advance(.milliseconds(200))
        await #expect(throws: RequestCorrelatorError.timedOut(.seconds(3))) { try await waiting.value }
        #expect(!correlator.deliver(1), "the timed-out request is gone")
        #expect(correlator.armedCount == 0)
    }

    @Test func aLinkLossFailsEveryRequestWaitingOrNot() async throws {
        struct Lost: Error, Equatable {}
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let waited = correlator.arm { _ in .complete }
        let notYet = correlator.arm { _ in .complete }
        let waiting = Task { try await correlator.reply(to: waited, timeout: .seconds(5)) }
        await TestScheduler.shared.idle()
        correlator.failAll(Lost())
        await #expect(throws: Lost.self) { try await waiting.value }
        await #expect(throws: Lost.self) { try await correlator.reply(to: notYet, timeout: .seconds(5)) }
        #expect(correlator.armedCount == 0)
    }

    @Test func cancellingTheWaitOrTheTicketLeavesNothingBehind() async throws {
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let ticket = correlator.arm { _ in .complete }
        let waiting = Task { try await correlator.reply(to: ticket, timeout: .seconds(5)) }
        await TestScheduler.shared.idle()
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        let abandoned = correlator.arm { _ in .complete }
        correlator.cancel(abandoned)
        #expect(!correlator.deliver(1))
        #expect(correlator.armedCount == 0)
    }

    @Test func anErrorReplyFailsTheOldestWaitingRequest() async throws {
        struct Refused: Error {}
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let first = correlator.arm { _ in .notMine }
        _ = correlator.arm { _ in .notMine }
        let oldest = try #require(correlator.oldestWaiting)
        #expect(oldest == first)
        correlator.fail(oldest, with: Refused())
        await #expect(throws: Refused.self) { try await correlator.reply(to: first, timeout: .seconds(1)) }
    }

    @Test func aSecondWaitForTheSameTicketIsRefusedAndTheFirstStillGetsItsReply() async throws {
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let ticket = correlator.arm { _ in .complete }
        let first = Task { try await correlator.reply(to: ticket, timeout: .seconds(5)) }
        for _ in 0..<50 { await Task.yield() }
        await #expect(throws: RequestCorrelatorError.alreadyWaiting) { try await correlator.reply(to: ticket, timeout: .seconds(5)) }
        // A refused second waiter that is cancelled does not end the first one's wait.
        let refused = Task { try await correlator.reply(to: ticket, timeout: .seconds(5)) }
        refused.cancel()
        _ = try? await refused.value
        #expect(correlator.oldestWaiting == ticket)
        #expect(correlator.deliver(9))
        #expect(try await first.value.messages == [9])
    }

    @Test func aReplyThatNeverEndsIsAbandoned() async throws {
        let correlator = RequestCorrelator<Int>(clock: ManualClock(), maximumMessages: 2, abandonAfter: 5)
        let ticket = correlator.arm { _ in .more }
        for value in 1...6 { #expect(correlator.deliver(value)) }
        await #expect(throws: RequestCorrelatorError.replyTooLong(messages: 6)) { try await correlator.reply(to: ticket, timeout: .seconds(1)) }
        #expect(!correlator.deliver(7), "the abandoned request takes nothing more")
    }

    @Test func aCancelledWaitThatKeepsItsRequestArmedStillTakesItsReplyAndErrorInOrder() async throws {
        struct Refused: Error {}
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock)
        let first = correlator.arm { $0 == 1 ? .complete : .notMine }
        let second = correlator.arm { $0 == 1 ? .complete : .notMine }
        let third = correlator.arm { $0 == 1 ? .complete : .notMine }
        let waiting = Task { try await correlator.reply(to: first, timeout: .seconds(5), keepingArmedOnCancel: true) }
        await TestScheduler.shared.idle()
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        correlator.abandon(second, timeout: .seconds(5))
        // The first's reply, then an error for the second: neither reaches the third.
        #expect(correlator.deliver(1))
        #expect(correlator.oldestWaiting == second)
        correlator.fail(try #require(correlator.oldestWaiting), with: Refused())
        #expect(correlator.oldestWaiting == third)
        #expect(correlator.deliver(1))
        #expect(try await correlator.reply(to: third, timeout: .seconds(1)).messages == [1])
        #expect(correlator.armedCount == 0)
    }

    @Test func anAbandonedRequestWhoseReplyNeverComesIsForgottenAfterItsTimeout() async throws {
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock)
        let silent = correlator.arm { $0 == 9 ? .complete : .notMine }
        let answered = correlator.arm { _ in .complete }
        #expect(correlator.deliver(1))
        correlator.abandon(answered, timeout: .seconds(2))
        #expect(correlator.armedCount == 1, "a reply already in is dropped at once")
        correlator.abandon(silent, timeout: .seconds(2))
        await time.advance(.milliseconds(1_900))
        #expect(correlator.armedCount == 1)
        await time.advance(.milliseconds(200))
        #expect(correlator.armedCount == 0)
        #expect(!correlator.deliver(2))
    }

    @Test func aWaitFromAnAlreadyCancelledTaskEndsAtOnceAndTheRequestStaysArmed() async throws {
        let correlator = RequestCorrelator<Int>(clock: ManualClock())
        let ticket = correlator.arm { $0 == 1 ? .complete : .notMine }
        let later = correlator.arm { $0 == 1 ? .complete : .notMine }
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await correlator.reply(to: ticket, timeout: .seconds(5), keepingArmedOnCancel: true)
        }
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(correlator.deliver(1))
        #expect(correlator.oldestWaiting == later, "the cancelled request took its own reply")
    }

    @Test func aTimedOutRequestLeavesAStandInThatTakesItsLateReply() async throws {
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock)
        let slow = correlator.arm(timeout: .seconds(1), lingering: .seconds(3)) { $0 == 1 ? .complete : .notMine }
        let next = correlator.arm(timeout: .seconds(10)) { $0 == 1 ? .complete : .notMine }
        await time.advance(.milliseconds(1_100))
        await #expect(throws: RequestCorrelatorError.timedOut(.seconds(1))) { try await correlator.reply(to: slow, timeout: .seconds(1)) }
        #expect(correlator.offer(1) == .absorbed, "the late reply goes to the stand-in")
        #expect(correlator.offer(1) == .taken)
        #expect(try await correlator.reply(to: next, timeout: .seconds(1)).messages == [1])
        #expect(correlator.armedCount == 0)
    }

    @Test func aStandInIsDroppedOnceALaterRequestIsAnswered() async throws {
        let time = TestTime(), clock = time.clock
        let correlator = RequestCorrelator<Int>(clock: clock)
        let lost = correlator.arm(timeout: .seconds(1), lingering: .seconds(3)) { $0 == 1 ? .complete : .notMine }
        let later = correlator.arm(timeout: .seconds(10)) { $0 == 2 ? .complete : .notMine }
        let waiting = Task { try? await correlator.reply(to: lost, timeout: .seconds(1)) }
        await time.advance(.milliseconds(1_100))
        _ = await waiting.value
        #expect(correlator.armedCount == 2, "a stand-in for the lost reply, and the later request")
        // The peer answers the later request: it has moved past the lost reply.
        #expect(correlator.offer(2) == .taken)
        #expect(correlator.offer(1) == .notTaken, "the stand-in is gone")
        #expect(try await correlator.reply(to: later, timeout: .seconds(1)).messages == [2])
        #expect(correlator.armedCount == 0)
    }
}
