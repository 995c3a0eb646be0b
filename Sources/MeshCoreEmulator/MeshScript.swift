import Foundation
import MeshCore

/// A declarative script of mesh activity, played by ``MeshNetwork/play(_:repeatingEvery:)``.
///
/// Names refer to nodes or radios added to the network; a step naming an unknown member is
/// logged and skipped.
public struct MeshScript: Sendable, Hashable {
    /// What happens at one step.
    public enum Action: Sendable, Hashable {
        /// Node `from` sends a direct message to the node or radio `to`.
        case directMessage(from: String, to: String, text: String)
        /// Node `from` posts on the public channel.
        case channelMessage(from: String, text: String)
        /// Node `from` advertises, flooded or zero-hop.
        case advert(from: String, flood: Bool)
        /// Node `name` goes online or offline.
        case setOnline(name: String, online: Bool)
    }

    /// One timed step.
    public struct Step: Sendable, Hashable {
        /// When, counted from the start of the play.
        public var time: Duration
        /// What happens.
        public var action: Action

        /// Creates a step.
        public init(at time: Duration, _ action: Action) {
            self.time = time
            self.action = action
        }

        /// A step at `time`, for array literals: `.at(.seconds(5), .advert(from: "Bob", flood: true))`.
        public static func at(_ time: Duration, _ action: Action) -> Step {
            Step(at: time, action)
        }
    }

    /// The steps, in any order.
    public var steps: [Step]

    /// Creates a script.
    public init(_ steps: [Step] = []) {
        self.steps = steps
    }

    /// The time of the last step.
    public var duration: Duration { steps.map(\.time).max() ?? .zero }
}
