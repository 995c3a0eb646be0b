import Foundation
import Testing
@testable import Kiro
@testable import KiroEmulator
@testable import TetherCore

@Suite("Kiro view model", .timeLimit(.minutes(2)))
struct KiroViewModelTests {
    @Test func theScreenFollowsTheSessionTheLinkAndFocusTime() async throws {
        let world = try await KiroWorld()
        let model = await MainActor.run { KiroViewModel(session: world.session, connection: world.connection, logLimit: 3) }
        await model.start()
        let connection = world.connection
        try await world.start()
        try await world.time.until { await MainActor.run(body: { model.phase.name == "connected" }) }
        try await world.act({ $0.selectTask(at: 0); $0.enterTask() }, until: { $0 == .sent(.taskInPage) })
        try await world.advance(.seconds(90))
        try await world.act({ $0.completeTask() }, until: { if case .focusSessionClosed = $0 { true } else { false } })
        try await world.time.until { await MainActor.run(body: { model.focusSessions.count == 1 }) }
        let focusTime = await model.focusTime
        #expect(focusTime >= 90 && focusTime < 92, "\(focusTime)")
        #expect(await model.selectedTaskId != nil)
        // Bounded, newest first.
        #expect(await model.log.count == 3)
        let newest = await model.log.first?.event
        #expect(newest.map { if case .focusSessionClosed = $0 { true } else { false } } == true)
        try await world.run { await connection.disconnect() }
        try await world.time.until { await MainActor.run(body: { model.phase == .idle }) }
        await model.stop()
    }
}
