#if os(macOS) || os(Linux)
import FlockFinder
import FlockFinderEmulator
import FlockFinderStorage
import Foundation
import Observation
import TetherCore
import TetherWorld

/// The FlockFinder app's screen: detections live (type, proximity from RSSI, confidence,
/// MAC/SSID), the minimum-confidence filter, the debug stream view, the stored history with
/// counts by type and a map of where detections were made (when locations are known), and
/// CSV/JSON exports. It follows a ``FlockFinderViewModel`` on a ``FlockFinderClient`` that
/// records into a ``DetectionStore``.
@Observable
@MainActor
public final class FlockFinderScreen: StudioScreen {
    public let device = "flock"
    /// The view model the screen shows.
    public let model: FlockFinderViewModel
    /// Stored detections, newest first (at most ``historyLimit``).
    public private(set) var history: [StoredDetection] = []
    /// Stored detections by type (all of them).
    public private(set) var storedCounts: [DetectionType: Int] = [:]
    /// The confidence a detection needs to be stored.
    public private(set) var recordingThreshold: Double = 0
    /// Why the history could not be read (nil once it was).
    public private(set) var historyError: String?

    /// Stored detections listed and mapped.
    public static let historyLimit = 500
    /// Live detections sent to the page.
    public static let liveLimit = 200
    /// Stream events sent to the page.
    public static let streamLimit = 200
    /// The longest a history reload waits after a detection (many detections, one reload).
    public static let historyRefreshDelay: Duration = .milliseconds(500)

    @ObservationIgnored private let client: FlockFinderClient
    @ObservationIgnored private let store: DetectionStore
    @ObservationIgnored private let emulator: FlockFinderEmulator?
    @ObservationIgnored private let drive: SimulatedDrive?
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var follower: Task<Void, Never>?
    @ObservationIgnored private var reloadPending = false
    @ObservationIgnored private let work = ScreenWork()

    /// A screen on `central`, recording into `store`; `emulator` (the simulator's detector)
    /// adds the simulator's controls, and `drive` the simulated car's position for the map.
    public init(central: Central, store: DetectionStore, emulator: FlockFinderEmulator? = nil, drive: SimulatedDrive? = nil,
                clock: any Clock<Duration> = ContinuousClock()) {
        let client = FlockFinderClient(central: central, store: store, clock: clock)
        self.client = client
        self.store = store
        self.emulator = emulator
        self.drive = drive
        self.clock = clock
        self.model = FlockFinderViewModel(client: client)
    }

    public func start() async {
        await model.start()
        recordingThreshold = await store.minimumConfidence
        model.minimumConfidence = recordingThreshold
        let detections = await client.detections()
        follower = Task { [weak self] in
            for await _ in detections { self?.historyChanged() }
        }
        await reloadHistory()
    }

    /// Stops following the detector and disconnects it.
    public func stop() async {
        follower?.cancel()
        follower = nil
        work.cancel()
        model.stop()
        await client.disconnect()
        await work.finish()
    }

    // MARK: State

    /// A detection as the page lists it.
    public struct DetectionState: Encodable, Sendable, Equatable {
        var id: Int64?
        var receivedAt: Date
        var type: String
        var rssi: Int
        var proximity: String
        var distance: String
        var confidence: Double
        var mac: String?
        var ssid: String?
        var stored: Bool
        var storageFailure: String?
        var latitude: Double?
        var longitude: Double?
    }

    /// A detector found by a scan.
    public struct DeviceState: Encodable, Sendable, Equatable {
        var id: String
        var name: String?
        var rssi: Int?
        var advertisesService: Bool
    }

    /// One line of the debug stream.
    public struct StreamState: Encodable, Sendable, Equatable {
        var evt: String
        var ts: UInt64
        var text: String
    }

    /// What the page draws.
    public struct State: Encodable, Sendable {
        var connection: String
        var dot: String
        var devices: [DeviceState]
        var rssi: Int?
        var lastError: String?
        var commandError: String?
        var parseErrors: Int
        var streaming: Bool
        var minimumConfidence: Double
        var recordingThreshold: Double
        var live: [DetectionState]
        var liveCount: Int
        var countsByType: [String: Int]
        var stream: [StreamState]
        var history: [DetectionState]
        var storedCounts: [String: Int]
        var historyError: String?
        var simulated: Bool
    }

    public func state() -> State {
        State(
            connection: model.connectionState.rawValue,
            dot: Self.dot(model.connectionState),
            devices: model.devices.map { DeviceState(id: $0.id.description, name: $0.name, rssi: $0.rssi, advertisesService: $0.advertisesService) },
            rssi: model.deviceRSSI,
            lastError: model.lastError.map(userFacingText),
            commandError: model.commandError,
            parseErrors: model.parseErrors,
            streaming: model.isStreaming,
            minimumConfidence: model.minimumConfidence,
            recordingThreshold: recordingThreshold,
            live: model.visibleDetections.prefix(Self.liveLimit).map(Self.received),
            liveCount: model.visibleDetections.count,
            countsByType: Self.counts(model.countsByType),
            stream: model.streamEvents.prefix(Self.streamLimit).map(Self.stream),
            history: history.map(Self.stored),
            storedCounts: Self.counts(storedCounts),
            historyError: historyError,
            simulated: emulator != nil)
    }

    // MARK: Actions

    public func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        if try await work.performConnectionAction(action, on: model, noun: "detector") { return }
        switch action.name {
        case "stream":
            await model.setStreaming(try action.flag("on"))
        case "command":
            let name = try action.string("command", maximumLength: 16)
            guard let command = [FlockCommand.ping, .status, .reset].first(where: { $0.rawValue == name }) else {
                throw StudioProtocolError("\"command\" must be PING, STATUS or RESET")
            }
            do { try await client.send(command) } catch {
                throw StudioProtocolError("\(name) could not be sent: \(userFacingText(error))")
            }
        case "filter":
            // The list's filter (what the page shows of the detections received).
            model.minimumConfidence = try action.number("minimum", in: 0...1)
        case "threshold":
            // What is stored from now on.
            let value = try action.number("minimum", in: 0...1)
            await store.setMinimumConfidence(value)
            recordingThreshold = await store.minimumConfidence
        case "clear":
            model.clear()
        case "simulateDriveBy":
            guard let emulator else { throw StudioProtocolError("a real detector sees real cameras") }
            await drive?.restart()
            await FlockScenario.drive(emulator)
        default:
            throw action.unknown
        }
    }

    // MARK: Exports

    /// The stored detections as `detections.csv` or `detections.json` (the store's exports).
    public func export(_ name: String) async throws(StudioProtocolError) -> StudioExport {
        do {
            switch name {
            case "detections.csv":
                return StudioExport(fileName: "flockfinder-detections.csv", contentType: "text/csv; charset=utf-8",
                                    body: Data(try await store.exportCSV().utf8))
            case "detections.json":
                return StudioExport(fileName: "flockfinder-detections.json", contentType: "application/json",
                                    body: try await store.exportJSON())
            default:
                throw StudioProtocolError("FlockFinder exports detections.csv or detections.json")
            }
        } catch let error as StudioProtocolError {
            throw error
        } catch {
            throw StudioProtocolError("the detections could not be read: \(userFacingText(error))")
        }
    }

    // MARK: History

    /// A detection arrived: the history is read again shortly (once for a burst).
    private func historyChanged() {
        guard !reloadPending else { return }
        reloadPending = true
        let clock = self.clock
        Task { [weak self] in
            try? await clock.sleep(for: Self.historyRefreshDelay)
            self?.reloadPending = false
            await self?.reloadHistory()
        }
    }

    private func reloadHistory() async {
        do {
            history = try await store.detections(limit: Self.historyLimit)
            storedCounts = try await store.countsByType()
            historyError = nil
        } catch {
            historyError = "the stored detections could not be read: \(userFacingText(error))"
        }
    }

    // MARK: Helpers

    /// Types shown by name in the counts; the rest are summed as "Other types" (a detector
    /// can name as many types as it likes).
    public static let countedTypes = 20

    /// Counts by type name: the most frequent ``countedTypes``, the rest summed.
    static func counts(_ byType: [DetectionType: Int]) -> [String: Int] {
        let ranked = byType.map { ($0.key.name, $0.value) }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        var counts: [String: Int] = [:]
        for (name, count) in ranked.prefix(countedTypes) { counts[name, default: 0] += count }
        let rest = ranked.dropFirst(countedTypes).reduce(0) { $0 + $1.1 }
        if rest > 0 { counts["Other types", default: 0] += rest }
        return counts
    }

    static func dot(_ state: ConnectionState) -> String {
        switch state {
        case .connected: "green"
        case .connecting, .discovering: "yellow"
        default: "red"
        }
    }

    private static func received(_ received: ReceivedDetection) -> DetectionState {
        var state = detection(received.detection, receivedAt: received.receivedAt, location: received.stored?.location)
        state.id = received.stored?.id
        state.stored = received.stored != nil
        state.storageFailure = received.storageFailure
        return state
    }

    private static func stored(_ stored: StoredDetection) -> DetectionState {
        var state = detection(stored.detection, receivedAt: stored.receivedAt, location: stored.location)
        state.id = stored.id
        state.stored = true
        return state
    }

    private static func detection(_ detection: Detection, receivedAt: Date, location: Location?) -> DetectionState {
        DetectionState(
            id: nil, receivedAt: receivedAt, type: detection.type.name, rssi: detection.rssi,
            proximity: detection.proximity.label, distance: detection.proximity.distance, confidence: detection.confidence,
            mac: detection.mac, ssid: detection.ssid, stored: false, storageFailure: nil,
            latitude: location?.latitude, longitude: location?.longitude)
    }

    private static func stream(_ event: StreamEvent) -> StreamState {
        let text: String = switch event {
        case let .wifiScan(ssid, mac, rssi, channel, frameType, _): "Wi-Fi \(frameType.rawValue) \"\(ssid)\" \(mac) \(rssi) dBm ch \(channel)"
        case let .bleScan(name, mac, rssi, advertisesService, _): "BLE \"\(name)\" \(mac) \(rssi) dBm\(advertisesService ? " (service)" : "")"
        case let .status(message, _): message
        case let .channel(channel, _): "channel \(channel)"
        }
        return StreamState(evt: event.evt, ts: event.ts, text: text)
    }

}

/// Where the simulated car is while it drives past the simulator's cameras: a straight road
/// at 14 m/s from a fixed start, so detections made on the simulator have places on the map.
public actor SimulatedDrive: LocationProvider {
    /// Where the drive starts (a road in Atlanta, where Flock cameras are common).
    public static let start = Location(latitude: 33.7490, longitude: -84.3880, horizontalAccuracy: 5)
    /// The car's speed, in metres per second.
    public static let speed = 14.0

    private let elapsed: @Sendable () -> Duration
    private var origin: Duration = .zero

    /// A drive timed by `clock`.
    public init<C: Clock<Duration>>(clock: C = ContinuousClock()) {
        let zero = clock.now
        self.elapsed = { zero.duration(to: clock.now) }
    }

    /// Starts the drive again from ``start``.
    public func restart() { origin = elapsed() }

    /// The car's position now: north-east along the road.
    public func currentLocation() async -> Location? {
        let driven = (elapsed() - origin).components
        let seconds = Double(driven.seconds) + Double(driven.attoseconds) / 1e18
        let metres = Self.speed * max(0, seconds)
        // Degrees per metre: latitude everywhere; longitude at this latitude.
        let north = metres * 0.6 / 111_320
        let east = metres * 0.8 / (111_320 * cos(Self.start.latitude * .pi / 180))
        return Location(latitude: Self.start.latitude + north, longitude: Self.start.longitude + east, horizontalAccuracy: 5)
    }
}
#endif
