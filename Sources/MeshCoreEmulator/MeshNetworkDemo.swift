import Foundation
import MeshCore
import TetherSimulator

extension MeshNetwork {
    /// The name of the demo mesh's first radio.
    public nonisolated static let demoRadioName = "Tether Base"

    /// A small named mesh for the CLI, the demo and end-to-end tests.
    ///
    /// Radios (by default one, "Tether Base", at 1 hop) know every member as a contact, path
    /// unknown. Nodes: "Alice" (chat, 1 hop), "Bob" (chat, 2 hops), "Echo" (echo bot, 2 hops)
    /// and "Ridge Repeater" (repeater, 1 hop). With `chatter`, a script repeats every
    /// `chatterPeriod`: Alice writes to the first radio at 20 s, posts on Public at 35 s, and
    /// Bob adverts at 50 s.
    ///
    /// - Parameters:
    ///   - clock: Virtual time (`ContinuousClock` live, a `TestClock` in tests).
    ///   - seed: Key seed.
    ///   - startEpoch: Wall-clock time at the start; the radios' clocks begin there.
    ///   - radioNames: One radio per name, each introduced to every other member.
    ///   - chatter: Whether Alice and Bob are scripted.
    ///   - chatterPeriod: How often the chatter script repeats.
    public static func demo(
        clock: any Clock<Duration>,
        seed: UInt64 = 7,
        startEpoch: UInt32 = 1_767_225_600,
        radioNames: [String] = [demoRadioName],
        chatter: Bool = true,
        chatterPeriod: Duration = .seconds(60)
    ) -> MeshNetwork {
        let network = MeshNetwork(clock: clock, seed: seed, startEpoch: startEpoch)
        for name in radioNames { network.addRadio(name: name, hops: 1) }
        network.addNode(name: "Alice", hops: 1)
        network.addNode(name: "Bob", hops: 2)
        network.addNode(name: "Echo", hops: 2, echoBot: true)
        network.addNode(name: "Ridge Repeater", hops: 1, type: .repeater)
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
