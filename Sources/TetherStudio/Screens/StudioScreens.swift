#if os(macOS) || os(Linux)
import Foundation
import Logging
import Observation

/// The device screens of a studio: publishes each screen's state to the pages when it changes,
/// and carries out the pages' actions, one screen's in the order they came.
///
/// Bounded whatever the pages send: each screen takes at most ``actionQueueCapacity`` actions
/// waiting; one more is refused (the page is told) rather than queued. A screen's state is
/// published at most once per ``publishInterval``, however fast its device talks: changes in
/// between are coalesced into the next publication.
@MainActor
public final class StudioScreens {
    /// Actions a screen may have waiting before more are refused.
    public static let actionQueueCapacity = 64

    /// The screens, by device.
    public let screens: [String: any StudioScreen]
    /// The shortest time between two publications of one screen.
    public let publishInterval: Duration

    private let hub: StudioHub
    private let clock: any Clock<Duration>
    private let logger: Logger
    private var queues: [String: AsyncStream<Queued>.Continuation] = [:]
    private var tasks: [Task<Void, Never>] = []
    private var started = false

    private struct Queued: Sendable {
        let action: StudioAction
        let client: Int
    }

    /// Screens publishing to `hub` (which routes the pages' actions here once ``start()`` ran).
    public init(_ screens: [any StudioScreen], hub: StudioHub, publishInterval: Duration = .milliseconds(100),
                clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "tether.studio")) {
        self.screens = Dictionary(screens.map { ($0.device, $0) }, uniquingKeysWith: { first, _ in first })
        self.hub = hub
        self.publishInterval = publishInterval
        self.clock = clock
        self.logger = logger
    }

    /// Starts every screen and its publication, and attaches them to the hub. Idempotent.
    public func start() async {
        guard !started else { return }
        started = true
        for device in screens.keys.sorted() {
            guard let screen = screens[device] else { continue }
            await screen.start()
            // Stopped while this screen started.
            guard started else { return }
            let (stream, continuation) = AsyncStream.makeStream(of: Queued.self, bufferingPolicy: .bufferingOldest(Self.actionQueueCapacity))
            queues[device] = continuation
            tasks.append(carryOut(stream, on: screen))
            tasks.append(publish(screen))
        }
        await hub.attach(self, devices: screens.keys.sorted())
    }

    /// Stops publishing and carrying out actions, and stops every screen.
    public func stop() async {
        guard started else { return }
        started = false
        let running = tasks
        tasks.removeAll()
        for task in running { task.cancel() }
        for queue in queues.values { queue.finish() }
        queues.removeAll()
        // An action under way finishes first: it cannot bring a link up after the screen stopped.
        for task in running { await task.value }
        for device in screens.keys.sorted() { await screens[device]?.stop() }
    }

    /// Queues an action from page `client`; nil when queued, otherwise why not.
    func submit(_ action: StudioAction, from client: Int) -> String? {
        guard screens[action.device] != nil else {
            return "no \(action.device) screen: the studio has \(screens.keys.sorted().joined(separator: ", "))"
        }
        guard let queue = queues[action.device] else { return "the \(action.device) screen is not running" }
        switch queue.yield(Queued(action: action, client: client)) {
        case .enqueued: return nil
        case .dropped: return "the \(action.device) screen has \(Self.actionQueueCapacity) actions waiting: try again shortly"
        case .terminated: return "the \(action.device) screen is not running"
        @unknown default: return "the \(action.device) screen did not take the action"
        }
    }

    /// The file `name` exported by the `device` screen.
    func export(device: String, name: String) async throws(StudioProtocolError) -> StudioExport {
        guard let screen = screens[device] else { throw StudioProtocolError("no \(device) screen") }
        return try await screen.export(name)
    }

    /// The screen's state as one WebSocket message (`{"device":…,"state":…,"type":"screen"}`).
    static func message<S: StudioScreen>(for screen: S) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        encoder.dateEncodingStrategy = .millisecondsSince1970
        do {
            let device = String(decoding: try encoder.encode(screen.device), as: UTF8.self)
            let state = String(decoding: try encoder.encode(screen.state()), as: UTF8.self)
            return #"{"device":"# + device + #","state":"# + state + #","type":"screen"}"#
        } catch {
            // Not kept as the screen's state: the next one that encodes is published.
            Logger(label: "tether.studio").error("The \(screen.device) screen's state could not be encoded: \(error)")
            return nil
        }
    }

    private func carryOut(_ actions: AsyncStream<Queued>, on screen: any StudioScreen) -> Task<Void, Never> {
        let hub = self.hub
        let logger = self.logger
        return Task { @MainActor in
            for await queued in actions {
                // Stopped: what is still buffered is not carried out.
                guard !Task.isCancelled else { break }
                do throws(StudioProtocolError) {
                    try await screen.perform(queued.action)
                } catch {
                    logger.debug("studio: \(queued.action.device) \(queued.action.name) failed: \(error.message)")
                    await hub.actionFailed(queued.action, error.message, to: queued.client)
                }
            }
        }
    }

    /// Publishes the screen's state now and after each change, at most once per interval.
    private func publish(_ screen: any StudioScreen) -> Task<Void, Never> {
        let hub = self.hub
        let clock = self.clock
        let interval = publishInterval
        return Task { @MainActor in
            while !Task.isCancelled {
                let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
                let text = withObservationTracking { Self.message(for: screen) } onChange: { changed.yield() }
                if let text { await hub.publishScreen(screen.device, text) }
                var iterator = changes.makeAsyncIterator()
                // Nil when cancelled.
                guard await iterator.next() != nil else { return }
                do { try await clock.sleep(for: interval) } catch { return }
            }
        }
    }
}
#endif
