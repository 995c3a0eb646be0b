import Foundation
import TetherCore
import TetherSimulator
import Tybe
import TybeEmulator

/// The demo's Tybe chapter: "안녕하세요" to a Korean host and "hello" to an English one, then the
/// dongle unplugged and re-plugged with the pill following.
struct TybeDemoChapter {
    let central: Central
    let bridge: TybeBridgeEmulator
    let timeline: DemoTimeline

    func run() async throws {
        print("\nTybe — phone as keyboard\n")
        let client = TybeClient(central: central)
        let model = await TybeViewModel(store: FileTybeSettingsStore(path: NSTemporaryDirectory() + "tether-demo-tybe-settings.json"))
        let events = await client.events()
        let follower = Task { @MainActor in
            for await event in events { model.apply(event) }
        }
        defer { follower.cancel() }
        let host = bridge.dongle.host

        timeline.step("Connecting to \(TybeGATT.defaultBridgeName) (no frame sent)")
        try await within(20, "bridge connection") { try await client.connect() }
        let config = try await client.readConfig()
        timeline.ok("connected; bridge firmware \(config.firmwareVersion), ESB channel \(config.esbChannel)")

        for (text, source) in [("안녕하세요", TybeHost.InputSource.korean), ("hello", .english)] {
            await { @SimulationActor in host.clear(); host.inputSource = source }()
            timeline.step("Compose \"\(text)\" to a host whose input source is \(source.rawValue)")
            let (plan, statuses) = try await within(20, "compose") { try await client.compose(text) }
            await MainActor.run { model.typed(plan.keystrokes) }
            try await waitUntil(5, "the host to finish typing") { await host.text == text }
            timeline.ok("keys \(plan.keystrokes.map(\.label).joined(separator: " ")) in \(statuses.count) frame(s) → host typed \"\(await host.text)\"")
        }

        timeline.step("Unplug the dongle")
        await { @SimulationActor in bridge.dongle.unplug() }()
        try await waitUntil(8, "the dongle pill to turn red") { await model.dongle == .noAck }
        timeline.ok(await model.statusLine)
        timeline.step("Plug it back in")
        await { @SimulationActor in bridge.dongle.plug() }()
        try await waitUntil(6, "the dongle pill to turn green") { await model.dongle == .linked }
        timeline.ok(await model.statusLine)
        await client.reset()
    }

    private func waitUntil(_ seconds: Double, _ what: String, _ condition: @escaping @Sendable () async -> Bool) async throws {
        _ = try await within(seconds, "waiting for \(what)") { () -> Bool in
            while !(await condition()) { try await Task.sleep(for: .milliseconds(20)) }
            return true
        }
    }
}
