import Foundation
import Observation
import TetherCore

/// The FlockFinder app's screens' state for SwiftUI: the detector list, the connection, the
/// detections as they arrive (with counts by type and a confidence filter for the list), the
/// debug stream view and the last error, all following a ``FlockFinderClient``.
///
/// Bounded whatever the detector sends: at most ``detectionLimit`` detections and
/// ``streamLimit`` stream events are kept, newest first.
@Observable
@MainActor
public final class FlockFinderViewModel {
    /// The connection state.
    public private(set) var connectionState: ConnectionState = .disconnected
    /// Detectors found by the last scan.
    public private(set) var devices: [FlockFinderDevice] = []
    /// Detections received since ``start()``, newest first (at most ``detectionLimit``).
    public private(set) var detections: [ReceivedDetection] = []
    /// How many of each type were received since ``start()`` (all of them, not only those kept).
    public private(set) var countsByType: [DetectionType: Int] = [:]
    /// Stream events (the debug view), newest first (at most ``streamLimit``).
    public private(set) var streamEvents: [StreamEvent] = []
    /// Whether the live scan stream was turned on.
    public private(set) var isStreaming = false
    /// The connected detector's signal strength.
    public private(set) var deviceRSSI: Int?
    /// The client's last error, for an alert.
    public private(set) var lastError: FlockFinderError?
    /// Why the last command failed.
    public private(set) var commandError: String?
    /// Notifications the client could not parse.
    public private(set) var parseErrors = 0
    /// The list shows detections at or above this confidence (0…1).
    public var minimumConfidence: Double = 0
    /// How many detections are kept.
    public let detectionLimit: Int
    /// How many stream events are kept.
    public let streamLimit: Int

    /// The kept detections the confidence filter lets through, newest first.
    public var visibleDetections: [ReceivedDetection] {
        detections.filter { $0.detection.confidence >= minimumConfidence }
    }

    /// Nil for a preview (``init(preview:devices:connectionState:streamEvents:deviceRSSI:)``).
    private let client: FlockFinderClient?
    @ObservationIgnored private nonisolated let tasks = TaskBag()

    /// Creates a view model; call ``start()`` to follow the client.
    public init(client: FlockFinderClient, detectionLimit: Int = 500, streamLimit: Int = 200) {
        self.client = client
        self.detectionLimit = max(1, detectionLimit)
        self.streamLimit = max(1, streamLimit)
    }

    /// A view model showing fixed content and following no client: for SwiftUI previews and
    /// screenshots, with nothing but the FlockFinder product (no radio, no driver). Its
    /// intents change nothing and say so in ``commandError``; ``clear()`` and the confidence
    /// filter work.
    public init(
        preview detections: [ReceivedDetection],
        devices: [FlockFinderDevice] = [],
        connectionState: ConnectionState = .connected,
        streamEvents: [StreamEvent] = [],
        deviceRSSI: Int? = nil
    ) {
        client = nil
        detectionLimit = max(500, detections.count)
        streamLimit = max(200, streamEvents.count)
        self.detections = detections.sorted { $0.receivedAt > $1.receivedAt }
        self.devices = devices
        self.connectionState = connectionState
        self.streamEvents = streamEvents
        self.deviceRSSI = connectionState == .connected ? deviceRSSI : nil
        for received in detections { countsByType[received.detection.type, default: 0] += 1 }
    }

    /// Follows the client until ``stop()``; every stream is subscribed before it returns.
    /// Idempotent (and nothing for a preview).
    public func start() async {
        guard tasks.isEmpty, let client else { return }
        let states = await client.connectionStates()
        let devices = await client.deviceUpdates()
        let detections = await client.detections()
        let stream = await client.streamUpdates()
        // Another start() may have finished while this one waited.
        guard tasks.isEmpty else { return }
        tasks.add(Task { [weak self] in
            for await state in states { await self?.apply(state) }
        })
        tasks.add(Task { [weak self] in
            for await list in devices { self?.devices = list }
        })
        tasks.add(Task { [weak self] in
            for await received in detections { await self?.apply(received) }
        })
        tasks.add(Task { [weak self] in
            for await event in stream { await self?.apply(event) }
        })
    }

    /// Stops following the client.
    public func stop() {
        tasks.cancelAll()
    }

    // A screen that goes away without stop() leaves no task listening behind it.
    deinit {
        tasks.cancelAll()
    }

    // MARK: Intents

    /// Scans (and connects to the first detector that advertises the service).
    public func startScanning() async { await live()?.startScanning() }
    /// Stops scanning.
    public func stopScanning() async { await live()?.stopScanning() }
    /// Connects to a detector from ``devices``.
    public func connect(to device: FlockFinderDevice) async { await live()?.connect(to: device.id) }
    /// Disconnects.
    public func disconnect() async { await live()?.disconnect() }
    /// Turns the live scan stream on or off; a failure is in ``commandError``.
    public func setStreaming(_ on: Bool) async {
        guard let client = live() else { return }
        do {
            try await client.setStreaming(on)
            isStreaming = on
            commandError = nil
        } catch {
            commandError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }
    /// Forgets the kept detections, counts and stream events.
    public func clear() {
        detections.removeAll()
        countsByType.removeAll()
        streamEvents.removeAll()
    }

    // MARK: Following the client

    private func apply(_ state: ConnectionState) async {
        connectionState = state
        await refreshClientValues()
        if state != .connected { isStreaming = false }
    }

    private func apply(_ received: ReceivedDetection) async {
        detections.insert(received, at: 0)
        if detections.count > detectionLimit { detections.removeLast(detections.count - detectionLimit) }
        countsByType[received.detection.type, default: 0] += 1
        await refreshClientValues()
    }

    private func apply(_ event: StreamEvent) async {
        streamEvents.insert(event, at: 0)
        if streamEvents.count > streamLimit { streamEvents.removeLast(streamEvents.count - streamLimit) }
        await refreshClientValues()
    }

    /// The client, or nil (and a word in ``commandError``) for a preview.
    private func live() -> FlockFinderClient? {
        if client == nil { commandError = "a preview has no detector" }
        return client
    }

    /// Values the client keeps without an event of their own.
    private func refreshClientValues() async {
        guard let client else { return }
        deviceRSSI = await client.deviceRSSI
        parseErrors = await client.parseErrors
        lastError = await client.lastError
    }
}
