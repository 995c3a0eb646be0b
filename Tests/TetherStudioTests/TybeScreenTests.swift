#if os(macOS) || os(Linux)
import Foundation
import Testing
import TetherCore
@testable import TetherStudio
import Tybe

/// Settings kept in memory.
final class MemorySettings: TybeSettingsStore, @unchecked Sendable {
    private let lock = NSLock()
    private var stored = TybeSettings()
    func load() -> TybeSettings { lock.withLock { stored } }
    func save(_ settings: TybeSettings) throws { lock.withLock { stored = settings } }
}

@Suite("Tether Studio: the Tybe screen")
struct TybeScreenTests {
    @MainActor
    @Test func keysBecomeFramesThePillsTurnGreenAndTheHostTypes() async throws {
        let world = await DeviceScreenWorld()
        let screen = TybeScreen(central: world.central, settings: MemorySettings(), emulator: world.emulators.tybe)
        await screen.start()
        #expect(screen.state().link.colour == "grey" && screen.state().bridge.text == "Bridge: —")
        for key in ["h", "I", "Enter"] { try await screen.perform("key", ["key": .string(key)]) }
        let typed = try await until(screen, 15, "three frames acknowledged and typed") { $0.host?.text == "hI\n" && $0.frames == 3 }
        #expect(typed.link == TybeScreen.Pill(text: "BLE: connected", colour: "green"))
        #expect(typed.bridge == TybeScreen.Pill(text: "Bridge: OK", colour: "green"))
        #expect(typed.dongle == TybeScreen.Pill(text: "Dongle: linked", colour: "green"))
        #expect(typed.keys == 3 && typed.errors == 0)
        #expect(typed.lastKey == "↩")
        #expect(typed.recentKeys == ["h", "⇧i", "↩"])
        #expect(typed.log.contains { $0.level == "OK" })

        // Shortcuts carry their modifiers (the host types nothing for them); Korean is one frame per syllable.
        try await screen.perform("key", ["key": .string("c"), "ctrl": .bool(true)])
        try await screen.perform("hostInputSource", ["source": .string("korean")])
        try await screen.perform("text", ["text": .string("한글")])
        let korean = try await until(screen, 15, "the syllables typed") { $0.host?.text == "hI\n한글" }
        #expect(korean.frames == 6)
        #expect(korean.host?.inputSource == "korean")
        #expect(korean.recentKeys.contains("⌃c"))

        // Untypeable keys are logged, not sent.
        try await screen.perform("key", ["key": .string("€")])
        #expect(screen.state().log.last?.message == "not sent: € is no key the bridge can type")
        try await screen.perform("text", ["text": .string("😀")])
        #expect(screen.state().log.last?.level == "WARN")
        await screen.stop()
    }

    @MainActor
    @Test func aComposeReachesTheKoreanHostWithProgress() async throws {
        let world = await DeviceScreenWorld()
        let screen = TybeScreen(central: world.central, settings: MemorySettings(), emulator: world.emulators.tybe)
        await screen.start()
        try await screen.perform("mode", ["mode": .string("compose")])
        try await screen.perform("hostInputSource", ["source": .string("korean")])
        try await screen.perform("compose", ["text": .string("안녕하세요 hello")])
        #expect(screen.state().composing)
        await #expect(throws: StudioProtocolError("a compose is being sent: wait for it, or Reset")) {
            try await screen.perform("compose", ["text": .string("again")])
        }
        let planned = TybePlanner.plan("안녕하세요 hello").keystrokes.count
        let done = try await until(screen, 20, "the compose sent, acknowledged and typed") {
            !$0.composing && $0.progress?["acknowledged"] == $0.progress?["total"] && $0.host?.keystrokes == planned
        }
        // A Korean 2-set host types the Latin keys as jamo: the input source is the user's to set (§2.3).
        #expect(done.host?.keystrokes == planned, "\(done.log.map(\.message))")
        #expect(done.host?.text == "안녕하세요 ㅗ디ㅣㅐ")
        #expect(done.progress?["total"] == done.progress?["acknowledged"])
        #expect((done.progress?["total"] ?? 0) >= 1)
        #expect(done.mode == "compose")
        #expect(done.keys == planned)
        await screen.stop()
    }

    @MainActor
    @Test func resetStopsAComposeEvenOneNotBegunAndKeysWaitingAreDroppedWithAWord() async throws {
        let world = await DeviceScreenWorld()
        let screen = TybeScreen(central: world.central, settings: MemorySettings(), emulator: world.emulators.tybe)
        await screen.start()
        // A compose queued behind a connection, then Reset before either ends.
        try await screen.perform("connect")
        try await screen.perform("compose", ["text": .string(String(repeating: "reset me ", count: 200))])
        try await screen.perform("reset")
        _ = try await until(screen, 10, "no compose under way") { !$0.composing }
        // The screen is usable again.
        try await screen.perform("compose", ["text": .string("ok")])
        _ = try await until(screen, 20, "the next compose typed") { !$0.composing && $0.host?.text.hasSuffix("ok") == true }
        await screen.stop()
    }

    @MainActor
    @Test func settingsPersistAndBadActionsSayWhy() async throws {
        let world = await DeviceScreenWorld()
        let settings = MemorySettings()
        let screen = TybeScreen(central: world.central, settings: settings)
        await screen.start()
        try await screen.perform("bridgeName", ["name": .string("  Desk Bridge ")])
        try await screen.perform("settings", ["showLogByDefault": .bool(true), "resetBLEOnForeground": .bool(true)])
        #expect(settings.load().bridgeName == "Desk Bridge")
        #expect(settings.load().showLogByDefault && settings.load().resetBLEOnForeground)
        #expect(screen.state().bridgeName == "Desk Bridge")
        await #expect(throws: StudioProtocolError("a bridge name is 1 to 64 printable characters")) {
            try await screen.perform("bridgeName", ["name": .string("a\u{0}b")])
        }
        await #expect(throws: StudioProtocolError("\"mode\" must be keyboard or compose")) { try await screen.perform("mode", ["mode": .string("x")]) }
        await #expect(throws: StudioProtocolError("a real host's input source is set on the host")) {
            try await screen.perform("hostInputSource", ["source": .string("korean")])
        }
        await #expect(throws: StudioProtocolError("\"text\" is longer than 256 characters")) {
            try await screen.perform("text", ["text": .string(String(repeating: "a", count: 300))])
        }
        try await screen.perform("showLog", ["on": .bool(true)])
        #expect(screen.state().showLog)
        try await screen.perform("clearLog")
        #expect(screen.state().log.isEmpty)
        #expect(!screen.state().simulated && screen.state().host == nil)
        await screen.stop()
    }

    @MainActor
    @Test func foregroundResetsTheLinkOnlyWhenSetAndHostClearEmptiesTheHost() async throws {
        let world = await DeviceScreenWorld()
        let screen = TybeScreen(central: world.central, settings: MemorySettings(), emulator: world.emulators.tybe)
        await screen.start()
        try await screen.perform("key", ["key": .string("a")])
        _ = try await until(screen, 15, "the key typed") { $0.host?.text == "a" && $0.link.colour == "green" }
        func connections(_ state: TybeScreen.State) -> Int { state.log.filter { $0.message == "BLE: connected" }.count }

        // Off (the default): the link stays, so the next key needs no second connection.
        #expect(!screen.state().resetBLEOnForeground)
        try await screen.perform("foreground")
        try await screen.perform("key", ["key": .string("b")])
        let kept = try await until(screen, 15, "the next key typed") { $0.host?.text == "ab" }
        #expect(connections(kept) == 1)
        #expect(kept.link.colour == "green")

        // On: coming back into view drops the link.
        try await screen.perform("settings", ["resetBLEOnForeground": .bool(true)])
        try await screen.perform("foreground")
        let reset = try await until(screen, 15, "the link dropped") { $0.link.colour == "grey" }
        #expect(reset.link.text == "BLE: idle")

        try await screen.perform("hostClear")
        #expect(screen.state().host?.text == "")
        #expect(screen.state().host?.keystrokes == 0)
        await screen.stop()
    }

    @MainActor
    @Test func browserKeysMapToHIDKeys() throws {
        func keys(_ key: String, _ extra: [String: StudioValue] = [:]) throws -> [KeyStroke]? {
            var arguments = extra
            arguments["key"] = .string(key)
            return try TybeScreen.keystrokes(for: StudioAction(device: "tybe", name: "key", arguments: arguments))
        }
        #expect(try keys("Tab") == [KeyStroke(.tab)])
        #expect(try keys("Escape") == [KeyStroke(.escape)])
        #expect(try keys("ArrowLeft") == [KeyStroke(.arrowLeft)])
        #expect(try keys("ArrowRight", ["shift": .bool(true)]) == [KeyStroke(.arrowRight, .leftShift)])
        #expect(try keys("a", ["meta": .bool(true)]) == [KeyStroke(.a, .leftGUI)])
        #expect(try keys("A", ["shift": .bool(true)]) == [KeyStroke(.a, .leftShift)])
        #expect(try keys(" ") == [KeyStroke(.space)])
        #expect(try keys("한") == TybePlanner.keystrokes(for: "한"))
        #expect(try keys("한", ["ctrl": .bool(true)]) == nil)
        #expect(try keys("MediaPlay") == nil)
        #expect(try keys("€") == nil)
    }
}
#endif
