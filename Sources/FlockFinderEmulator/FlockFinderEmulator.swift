import Foundation
import FlockFinder
import Logging
import TetherCore
import TetherSimulator

/// The FlockFinder ESP32-S3 firmware (a flock-you / oui-spy fork) as a virtual
/// `FlockFinder-S3` peripheral, listening to a world of ``FlockEmitter``s.
///
/// Every ``scanInterval`` it hops the WiFi sniffer to the next channel (1…13) and "hears" each
/// emitter whose current distance is within ``maximumRange`` and whose RSSI (log-distance
/// model with seeded noise, clamped to −100…−30 dBm) is above ``rssiThreshold``. It applies the
/// firmware's rules (``FlockFirmwareHeuristics``) to what it hears and reports each emitter at
/// most once per ``detectionCooldown``:
///
/// - **Detection** (notify): one firmware JSON per notification, only while the central is
///   subscribed; the link truncates it past MTU − 3 as real stacks do. `ts` is ``uptimeMs``.
/// - **Stream** (notify): after `stream_on` until `stream_off`, a `channel` event per scan and a
///   `wifi_scan` / `ble_scan` event for every emitter heard (suspicious or not).
/// - **Command** (write): `stream_on`, `stream_off`; `PING` answers a `status` event "pong" and
///   `STATUS` one with the counters, streaming or not; `RESET` clears the counters and the
///   cooldowns. Anything else is ignored, as the firmware does.
///
/// The firmware keeps scanning while no central is connected (detections then go nowhere).
/// It learns the simulation's clock from its first connection, or from ``powerOn(_:)``; its
/// uptime is the time since the virtual radio started.
@SimulationActor
public final class FlockFinderEmulator: PeripheralBehavior {
    /// The weakest signal the firmware reports, in dBm: quieter frames are ignored.
    public nonisolated static let rssiThreshold = -95
    /// Emitters farther than this (metres) are never heard, whatever the noise.
    public nonisolated static let maximumRange = 80.0
    /// RSSI at one metre for the log-distance model, in dBm.
    public nonisolated static let rssiAtOneMetre = -45.0
    /// Path-loss exponent of the log-distance model (outdoors, street level).
    public nonisolated static let pathLossExponent = 2.5
    /// The 2.4 GHz channels the sniffer hops through.
    public nonisolated static let channels = 1...13
    /// The `status` message that answers `PING`.
    public nonisolated static let pongMessage = "pong"

    /// Time between scans (and channel hops).
    public nonisolated let scanInterval: Duration
    /// How long an emitter stays quiet after being reported (the firmware's de-duplication).
    public nonisolated let detectionCooldown: Duration

    /// When true, WiFi emitters are heard only while the sniffer sits on their channel, as a
    /// promiscuous-mode radio does; when false (the default) every WiFi emitter in range is
    /// heard on every scan.
    public var listensOnCurrentChannelOnly = false
    /// Detections notified on the Detection characteristic (accepted by the link), in order.
    public private(set) var detectionsSent: [Detection] = []
    /// Stream events notified on the Stream characteristic (accepted by the link), in order.
    public private(set) var streamEventsSent: [StreamEvent] = []
    /// True between `stream_on` and `stream_off` (kept across reconnections, like firmware RAM).
    public private(set) var streaming = false
    /// Detections made since power-up or the last `RESET`, sent or not.
    public private(set) var counters: (wifi: Int, ble: Int) = (0, 0)
    /// The channel of the latest scan (0 before the first scan).
    public private(set) var channel = 0
    /// Scans run since power-up.
    public private(set) var scansCompleted = 0
    /// Notifications the link refused while the central was subscribed (queue full).
    public private(set) var notificationsDropped = 0
    /// Every command write received, as text, in order.
    public private(set) var commandsReceived: [String] = []

    /// The emitters in the world, in the order added.
    public var emitters: [FlockEmitter] { placed.map(\.emitter) }

    /// Virtual time since power-up in milliseconds: the firmware's `ts` (0 until the clock is
    /// known).
    public var uptimeMs: UInt64 {
        timeline.map { Self.milliseconds($0.now) } ?? 0
    }

    /// Whole milliseconds of a non-negative duration.
    private nonisolated static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
    }

    /// An emitter and when it was added (nil until the clock is known).
    private struct Placed {
        var emitter: FlockEmitter
        var addedAt: Duration?
    }

    private var placed: [Placed] = []
    /// When each MAC was last reported, for the cooldown.
    private var lastReported: [String: Duration] = [:]
    private var timeline: Timeline?
    private var context: PeripheralContext?
    private var rng: SplitMix64
    private let logger = Logger(label: "tether.flockfinder.emulator")

    /// Creates the firmware. `seed` drives the RSSI noise and the faults' random bytes.
    public nonisolated init(seed: UInt64 = 7, scanInterval: Duration = .milliseconds(500), detectionCooldown: Duration = .seconds(10)) {
        self.rng = SplitMix64(seed: seed)
        self.scanInterval = max(scanInterval, .milliseconds(1))
        self.detectionCooldown = detectionCooldown
    }

    /// A virtual `FlockFinder-S3` running this firmware: the FlockFinder service with Detection
    /// (notify), Command (write) and Stream (notify).
    public nonisolated func makePeripheral(id: PeripheralID = PeripheralID(UUID()), distance: Double = 0.5) -> VirtualPeripheral {
        VirtualPeripheral(profile: .flockFinder, id: id, behavior: self, distance: distance)
    }

    /// The mean RSSI (no noise, before clamping) the model gives at `distance` metres.
    public nonisolated static func meanRSSI(distance: Double) -> Double {
        rssiAtOneMetre - 10 * pathLossExponent * log10(max(0.1, distance))
    }

    // MARK: World

    /// Starts the firmware's clock and scanning on `timeline` if it has not started yet (the
    /// first connection does this too). Call it to have the device scan before anyone connects.
    public func powerOn(_ timeline: Timeline) {
        guard self.timeline == nil else { return }
        self.timeline = timeline
        for index in placed.indices where placed[index].addedAt == nil {
            placed[index].addedAt = timeline.now
        }
        let interval = scanInterval
        // Runs for the emulator's lifetime, connected or not, as the firmware's loop() does.
        Task { @SimulationActor [weak self] in
            var next = timeline.now + interval
            while !Task.isCancelled {
                do { try await timeline.sleep(until: next) } catch { return }
                guard let self else { return }
                // Stamp with the scheduled time: the task may resume a clock step late.
                self.scan(at: next)
                next += interval
            }
        }
    }

    /// Adds an emitter (replacing one with the same MAC); its path starts now.
    public func add(_ emitter: FlockEmitter) {
        placed.removeAll { $0.emitter.id == emitter.id }
        placed.append(Placed(emitter: emitter, addedAt: timeline?.now))
    }

    /// Removes the emitter with this MAC.
    public func remove(id: String) {
        placed.removeAll { $0.emitter.id == id.lowercased() }
    }

    /// Removes every emitter.
    public func removeAll() {
        placed.removeAll()
    }

    // MARK: Faults

    /// Notifies a detection JSON cut off two thirds of the way, as a smaller MTU would cut it.
    public func sendTruncatedDetection() {
        let json = (detectionsSent.last ?? syntheticDetection()).firmwareJSON()
        send(json.prefix(max(1, json.count * 2 / 3)), on: FlockFinderBLEConstants.detection)
    }

    /// Notifies random bytes (invalid UTF-8, not JSON) on the Detection characteristic.
    public func sendGarbage() {
        let count = 12 + Int(rng.next() % 29)
        // A leading 0xFF is never valid UTF-8, so no parser can mistake this for JSON.
        var bytes = Data([0xFF])
        for _ in 1..<count { bytes.append(UInt8(truncatingIfNeeded: rng.next())) }
        send(bytes, on: FlockFinderBLEConstants.detection)
    }

    /// Makes `count` Flock Safety WiFi detections (distinct MACs) back to back, as a parking lot
    /// of cameras would. Notifications beyond the link's queue are dropped and counted in
    /// ``notificationsDropped``.
    public func burst(_ count: Int) {
        for _ in 0..<max(0, count) {
            let detection = syntheticDetection()
            counters.wifi += 1
            sendDetection(detection)
        }
    }

    // MARK: PeripheralBehavior

    public func didConnect(_ context: PeripheralContext) {
        self.context = context
        powerOn(context.timeline)
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        guard characteristic == FlockFinderBLEConstants.command else { return .writeNotPermitted }
        self.context = context
        commandsReceived.append(String(decoding: value, as: UTF8.self))
        switch FlockCommand(data: value) {
        case .streamOn?:
            streaming = true
        case .streamOff?:
            streaming = false
        case .ping?:
            sendStream(.status(message: Self.pongMessage, ts: uptimeMs), always: true)
        case .status?:
            sendStream(.status(message: statusSummary, ts: uptimeMs), always: true)
        case .reset?:
            counters = (0, 0)
            lastReported.removeAll()
        case nil:
            // The firmware ignores what it does not know, without an ATT error.
            logger.debug("Ignoring unknown command", metadata: ["bytes": "\(value.count)"])
        }
        return nil
    }

    /// The `STATUS` reply: `wifi=<n> ble=<n> ch=<channel> streaming=on|off`.
    public var statusSummary: String {
        "wifi=\(counters.wifi) ble=\(counters.ble) ch=\(channel) streaming=\(streaming ? "on" : "off")"
    }

    // MARK: Scanning

    /// One scan at `now` (since power-up): hop, listen, report.
    private func scan(at now: Duration) {
        let ts = Self.milliseconds(now)
        scansCompleted += 1
        channel = channel % Self.channels.upperBound + 1
        sendStream(.channel(channel, ts: ts))
        for entry in placed {
            guard let addedAt = entry.addedAt, let rssi = hear(at: entry.emitter.distance(at: now - addedAt)) else { continue }
            let emitter = entry.emitter
            switch emitter.kind {
            case .wifiAccessPoint(let ssid, let emitterChannel), .wifiProbe(let ssid, let emitterChannel):
                if listensOnCurrentChannelOnly, emitterChannel != channel { continue }
                let frameType: WiFiFrameType = if case .wifiProbe = emitter.kind { .probe } else { .beacon }
                sendStream(.wifiScan(ssid: ssid, mac: emitter.mac, rssi: rssi, channel: emitterChannel, frameType: frameType, ts: ts))
                guard let type = FlockFirmwareHeuristics.wifiType(ssid: ssid, mac: emitter.mac), cooledDown(emitter.mac, now) else { continue }
                counters.wifi += 1
                sendDetection(Detection(type: type, rssi: rssi, confidence: FlockFirmwareHeuristics.wifiConfidence,
                                        mac: emitter.mac, ssid: ssid, deviceUptimeMs: ts))
            case .bleDevice(let name, let serviceUUIDs):
                sendStream(.bleScan(name: name, mac: emitter.mac, rssi: rssi, advertisesService: !serviceUUIDs.isEmpty, ts: ts))
                guard let type = FlockFirmwareHeuristics.bleType(name: name, mac: emitter.mac, serviceUUIDs: serviceUUIDs),
                      cooledDown(emitter.mac, now) else { continue }
                counters.ble += 1
                // The firmware puts a BLE device's name where a WiFi hit has its SSID.
                sendDetection(Detection(type: type, rssi: rssi, confidence: FlockFirmwareHeuristics.bleConfidence,
                                        mac: emitter.mac, ssid: name.isEmpty ? nil : name, deviceUptimeMs: ts))
            }
        }
    }

    /// The RSSI heard at `distance`, or nil when out of range or below the threshold.
    private func hear(at distance: Double) -> Int? {
        guard distance.isFinite, distance <= Self.maximumRange else { return nil }
        // Sum of uniforms: cheap, bounded (±3 dB), roughly normal jitter.
        let jitter = (rng.nextUnit() + rng.nextUnit() + rng.nextUnit() - 1.5) * 2
        let rssi = min(-30, max(-100, Int((Self.meanRSSI(distance: distance) + jitter).rounded())))
        return rssi > Self.rssiThreshold ? rssi : nil
    }

    /// True (and the cooldown restarted) when `mac` was not reported within the cooldown.
    private func cooledDown(_ mac: String, _ now: Duration) -> Bool {
        if let last = lastReported[mac], now - last < detectionCooldown { return false }
        lastReported[mac] = now
        return true
    }

    /// A Flock camera detection with a fresh MAC (faults and bursts).
    private func syntheticDetection() -> Detection {
        let ouis = FlockFirmwareHeuristics.flockWiFiOUIs
        let oui = ouis[Int(rng.next() % UInt64(ouis.count))]
        let suffix = (0..<3).map { _ in String(format: "%02x", UInt8(truncatingIfNeeded: rng.next())) }
        let rssi = -50 - Int(rng.next() % 40)
        return Detection(type: .flockSafety, rssi: rssi, confidence: FlockFirmwareHeuristics.wifiConfidence,
                         mac: ([oui] + suffix).joined(separator: ":"),
                         ssid: "Flock-" + suffix.joined().uppercased(), deviceUptimeMs: uptimeMs)
    }

    // MARK: Notifications

    private func sendDetection(_ detection: Detection) {
        if send(detection.firmwareJSON(), on: FlockFinderBLEConstants.detection) {
            detectionsSent.append(detection)
        }
    }

    /// Sends a stream event while streaming (or `always`, for command replies).
    private func sendStream(_ event: StreamEvent, always: Bool = false) {
        guard streaming || always else { return }
        if send(event.firmwareJSON(), on: FlockFinderBLEConstants.stream) {
            streamEventsSent.append(event)
        }
    }

    /// Notifies `value` if the central is subscribed; returns whether the link took it.
    @discardableResult
    private func send(_ value: Data, on path: CharacteristicPath) -> Bool {
        guard let context, context.isSubscribed(path) else { return false }
        guard context.notify(value, on: path) else {
            notificationsDropped += 1
            return false
        }
        return true
    }
}
