import Foundation
import MeshCore
import TetherSimulator

extension MeshNetwork {
    /// The name of the demo mesh's first radio.
    public nonisolated static let demoRadioName = "Tether Base"

    /// The most extra chat nodes ``demo(clock:seed:startEpoch:radioNames:chatter:chatterPeriod:extraContacts:)``
    /// adds (a firmware table holds at most a few hundred).
    public nonisolated static let demoMaximumExtraContacts = 5_000

    /// A small named mesh for the CLI, the demo and end-to-end tests.
    ///
    /// Radios (by default one, "Tether Base", at 1 hop) know every member as a contact, path
    /// unknown. Nodes: "Alice" (chat, 1 hop), "Bob" (chat, 2 hops), "Echo" (echo bot, 2 hops),
    /// "Ridge Repeater" (repeater, 1 hop), "Trail Club" (room server, 2 hops) and "Weather
    /// Station" (sensor, 1 hop); the servers take the administrator password "password" and the
    /// guest password "hello". With `chatter`, a script repeats every `chatterPeriod`: Alice
    /// writes to the first radio at 20 s, posts on Public at 35 s, and Bob adverts at 50 s.
    ///
    /// - Parameters:
    ///   - clock: Virtual time (`ContinuousClock` live, a `TestClock` in tests).
    ///   - seed: Key seed.
    ///   - startEpoch: Wall-clock time at the start; the radios' clocks begin there.
    ///   - radioNames: One radio per name, each introduced to every other member.
    ///   - chatter: Whether Alice and Bob are scripted.
    ///   - chatterPeriod: How often the chatter script repeats.
    ///   - extraContacts: More chat nodes ("Node 0001", …, 1 to 3 hops away), known to the radios
    ///     as well (for contact-sync tests and benchmarks); the radios' tables grow to hold them.
    public static func demo(
        clock: any Clock<Duration>,
        seed: UInt64 = 7,
        startEpoch: UInt32 = 1_767_225_600,
        radioNames: [String] = [demoRadioName],
        chatter: Bool = true,
        chatterPeriod: Duration = .seconds(60),
        extraContacts: Int = 0
    ) -> MeshNetwork {
        let network = MeshNetwork(clock: clock, seed: seed, startEpoch: startEpoch)
        let extra = min(max(extraContacts, 0), demoMaximumExtraContacts)
        var configuration = CompanionRadio.Configuration()
        configuration.maxContacts = max(configuration.maxContacts, extra + 16)
        for name in radioNames { network.addRadio(name: name, hops: 1, configuration: configuration) }
        network.addNode(name: "Alice", hops: 1)
        network.addNode(name: "Bob", hops: 2)
        network.addNode(name: "Echo", hops: 2, echoBot: true)
        network.addNode(name: "Ridge Repeater", hops: 1, type: .repeater)
        network.addNode(name: "Trail Club", hops: 2, type: .room)
        network.addNode(name: "Weather Station", hops: 1, type: .sensor)
        for index in 0..<extra {
            network.addNode(name: String(format: "Node %04d", index + 1), hops: 1 + index % 3)
        }
        for radio in network.radios { network.introduceAll(to: radio) }
        if chatter, let first = radioNames.first {
            network.play(MeshScript([
                .at(.seconds(20), .directMessage(from: "Alice", to: first, text: "Hi from Alice! Are you on the trail?")),
                .at(.seconds(35), .channelMessage(from: "Alice", text: "Anyone near the ridge today?")),
                .at(.seconds(50), .advert(from: "Bob", flood: true)),
            ]), repeatingEvery: chatterPeriod)
        }
        return network
    }
}
