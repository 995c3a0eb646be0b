#if os(macOS) || os(Linux)
import Foundation
import GripFit
import GripFitEmulator
import Observation
import TetherCore

/// The GripFit app's screen (guide §3): the dynamometer's live force-time chart (calibrated and
/// raw), the squeeze under way (peak, average, duration), tare, the sample rate, sensor
/// readiness, recording a session that is saved when it stops, and the saved sessions with
/// each one's curve and a trend; sessions export as CSV. It follows a ``GripTestViewModel`` on
/// a ``BLEManager``: the screen adds only what the page needs (a session picked, the history).
@Observable
@MainActor
public final class GripFitScreen: StudioScreen {
    public let device = "gripfit"
    /// The view model the screen shows.
    public let model: GripTestViewModel
    /// Sessions saved, newest first (at most ``historyLimit``).
    public private(set) var sessions: [GripSessionSummary] = []
    /// The session picked in the history, with its samples.
    public private(set) var selected: GripSessionRecord?
    /// The calibration readings are shown with (nil: raw counts).
    public private(set) var calibration: LinearCalibration?
    /// Why the history could not be read (nil once it was).
    public private(set) var historyError: String?
    /// On the simulator: whether the emulated hand squeezes every 5 s by itself.
    public private(set) var autoSqueezes = false

    /// Sessions listed in the history.
    public static let historyLimit = 200
    /// Readings kept for the live chart (30 s at 10 Hz).
    public static let chartWindow = 300
    /// Points of a saved session's curve sent to the page (longer sessions are thinned).
    public static let curvePoints = 600

    @ObservationIgnored private let manager: BLEManager
    @ObservationIgnored private let store: any GripSessionStore
    @ObservationIgnored private let emulator: GripFitEmulator?
    @ObservationIgnored private let work = ScreenWork()

    /// A screen on `central`, saving sessions to `store`; `emulator` (the simulator's GripFit)
    /// adds the simulator's controls.
    public init(central: Central, store: any GripSessionStore, emulator: GripFitEmulator? = nil) {
        let manager = BLEManager(central: central)
        self.manager = manager
        self.store = store
        self.emulator = emulator
        self.model = GripTestViewModel(manager: manager, store: store, chartWindow: Self.chartWindow)
    }

    public func start() async {
        await model.start()
        if let emulator { autoSqueezes = await emulator.profile.period != nil }
        await reloadHistory()
    }

    /// Saves a session being recorded, then disconnects.
    public func stop() async {
        if model.isRecording {
            await model.stopRecording()
            await reloadHistory()
        }
        work.cancel()
        model.stop()
        await manager.disconnect()
        await work.finish()
    }

    // MARK: State

    /// A squeeze: its peak, average and duration.
    public struct SqueezeState: Encodable, Sendable, Equatable {
        var peak: Double
        var average: Double
        var duration: Double
        var samples: Int
    }

    /// A GripFit found by a scan.
    public struct DeviceState: Encodable, Sendable, Equatable {
        var id: String
        var name: String
        var rssi: Int?
    }

    /// A saved session as the history lists it.
    public struct SessionState: Encodable, Sendable, Equatable {
        var id: String
        var startedAt: Date
        var duration: Double
        var maxForce: Double
        var averageForce: Double
        var samples: Int
    }

    /// What the page draws.
    public struct State: Encodable, Sendable {
        /// `disconnected`, `scanning`, `connecting`, `connected`, `error`.
        var connection: String
        var dot: String
        var error: String?
        var devices: [DeviceState]
        var readiness: String
        var firmware: String?
        var sampleIntervalMs: Int?
        /// Chart points: [seconds since the window's first reading, force, raw].
        var chart: [[Double]]
        var chartStartedAt: Date?
        var latest: [Double]?
        var squeeze: SqueezeState?
        var lastSqueeze: SqueezeState?
        var bestPeak: Double?
        var recording: Bool
        var recordingSamples: Int
        var lastSaved: SessionState?
        var saveError: String?
        var commandError: String?
        var calibration: [String: Double]?
        var sessions: [SessionState]
        var selected: SessionState?
        /// The picked session's curve: [seconds from its start, force].
        var selectedCurve: [[Double]]
        var historyError: String?
        /// Whether the simulator's controls are offered.
        var simulated: Bool
        /// On the simulator: whether the emulated hand squeezes every 5 s by itself.
        var autoSqueezes: Bool
    }

    public func state() -> State {
        let readings = model.chartReadings
        let origin = readings.first?.receivedAt
        return State(
            connection: Self.name(model.connectionState),
            dot: Self.dot(model.connectionState),
            error: model.error?.errorDescription,
            devices: model.devices.map { DeviceState(id: $0.id.description, name: $0.name, rssi: $0.rssi) },
            readiness: model.readiness.rawValue,
            firmware: model.deviceInfo?.firmwareVersion,
            sampleIntervalMs: model.sampleIntervalMs,
            chart: readings.map { [Self.round($0.receivedAt.timeIntervalSince(origin ?? $0.receivedAt), 3), $0.force, Double($0.raw)] },
            chartStartedAt: origin,
            latest: model.latestReading.map { [$0.force, Double($0.raw)] },
            squeeze: model.currentSqueeze.map(Self.squeeze),
            lastSqueeze: model.lastSqueeze.map(Self.squeeze),
            bestPeak: model.bestPeak,
            recording: model.isRecording,
            recordingSamples: model.session?.count ?? 0,
            lastSaved: model.lastSavedSession.map(Self.session),
            saveError: model.saveError,
            commandError: model.commandError?.errorDescription,
            calibration: calibration.map { ["slope": $0.slope, "zeroOffset": Double($0.zeroOffset)] },
            sessions: sessions.map(Self.session),
            selected: selected.map { Self.session($0.summary) },
            selectedCurve: selected.map { Self.curve($0.samples) } ?? [],
            historyError: historyError,
            simulated: emulator != nil,
            autoSqueezes: autoSqueezes)
    }

    // MARK: Actions

    public func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        if try await work.performConnectionAction(action, on: model, noun: "GripFit") { return }
        switch action.name {
        case "tare":
            // The view model keeps why it failed (commandError); the page shows it.
            await model.tare()
        case "rate":
            await model.setSampleRate(ms: try action.integer("ms", in: GripFitCommand.rateRange))
        case "record":
            if try action.flag("on") {
                guard !model.isRecording else { throw StudioProtocolError("a session is being recorded: stop it first") }
                model.startRecording()
            } else {
                await model.stopRecording()
                await reloadHistory()
            }
        case "resetPeak":
            model.resetPeak()
        case "calibrate":
            if case .bool(true)? = action.arguments["raw"] {
                calibration = nil
                await manager.setCalibration(RawCalibration())
            } else {
                let slope = try action.number("slope", in: -1_000...1_000)
                guard slope != 0 else { throw StudioProtocolError("\"slope\" must not be 0") }
                let offset = try action.integer("zeroOffset", in: -8_388_608...8_388_607)
                let linear = LinearCalibration(slope: slope, zeroOffset: Int32(offset))
                calibration = linear
                await manager.setCalibration(linear)
            }
        case "select":
            let id = try action.uuid("id")
            do {
                guard let record = try await store.session(id: id) else { throw StudioProtocolError("no saved session \(id)") }
                selected = record
            } catch let error as StudioProtocolError {
                throw error
            } catch {
                throw StudioProtocolError("the session could not be read: \(userFacingText(error))")
            }
        case "delete":
            let id = try action.uuid("id")
            do { try await store.deleteSession(id: id) } catch {
                throw StudioProtocolError("the session could not be deleted: \(userFacingText(error))")
            }
            if selected?.id == id { selected = nil }
            await reloadHistory()
        case "simulateSqueeze":
            guard let emulator else { throw StudioProtocolError("a real GripFit is squeezed by hand") }
            let peak = try action.integer("peak", in: 1_000...8_000_000)
            await emulator.squeeze(in: .milliseconds(100), peak: Int32(peak))
        case "simulateSqueezes":
            guard let emulator else { throw StudioProtocolError("a real GripFit is squeezed by hand") }
            let on = try action.flag("on")
            await emulator.setProfile(on ? .standard : .idle)
            autoSqueezes = on
        case "simulateSensorFault":
            guard let emulator else { throw StudioProtocolError("only the simulator's GripFit can fake a fault") }
            await emulator.setSensorFault(try action.flag("on"))
        default:
            throw action.unknown
        }
    }

    // MARK: Exports

    /// A saved session's samples as CSV (`offset_s,raw,force`), or every session's summary
    /// (`sessions.csv`).
    public func export(_ name: String) async throws(StudioProtocolError) -> StudioExport {
        if name == "sessions.csv" {
            var csv = "id,started_at,duration_s,max_force,average_force,samples\n"
            do {
                for summary in try await store.allSessions() {
                    csv += "\(summary.id.uuidString),\(Self.iso8601(summary.startedAt)),\(summary.duration),\(summary.maxForce),\(summary.averageForce),\(summary.sampleCount)\n"
                }
            } catch {
                throw StudioProtocolError("the sessions could not be read: \(userFacingText(error))")
            }
            return StudioExport(fileName: "gripfit-sessions.csv", contentType: "text/csv; charset=utf-8", body: Data(csv.utf8))
        }
        guard name.hasSuffix(".csv"), let id = UUID(uuidString: String(name.dropLast(4))) else {
            throw StudioProtocolError("GripFit exports sessions.csv or <session id>.csv")
        }
        let record: GripSessionRecord?
        do { record = try await store.session(id: id) } catch {
            throw StudioProtocolError("the session could not be read: \(userFacingText(error))")
        }
        guard let record else { throw StudioProtocolError("no saved session \(id)") }
        var csv = "offset_s,raw,force\n"
        csv.reserveCapacity(record.samples.count * 24)
        for sample in record.samples { csv += "\(sample.offset),\(sample.raw),\(sample.force)\n" }
        return StudioExport(fileName: "gripfit-\(id.uuidString).csv", contentType: "text/csv; charset=utf-8", body: Data(csv.utf8))
    }

    // MARK: Helpers

    private func reloadHistory() async {
        do {
            sessions = Array(try await store.allSessions().prefix(Self.historyLimit))
            historyError = nil
        } catch {
            historyError = "the saved sessions could not be read: \(userFacingText(error))"
        }
    }

    static func name(_ state: GripFitConnectionState) -> String {
        switch state {
        case .disconnected: "disconnected"
        case .scanning: "scanning"
        case .connecting: "connecting"
        case .connected: "connected"
        case .error: "error"
        }
    }

    static func dot(_ state: GripFitConnectionState) -> String {
        switch state {
        case .connected: "green"
        case .connecting: "yellow"
        default: "red"
        }
    }

    private static func squeeze(_ squeeze: Squeeze) -> SqueezeState {
        SqueezeState(peak: squeeze.peak, average: squeeze.average, duration: round(squeeze.duration, 3), samples: squeeze.sampleCount)
    }

    private static func session(_ summary: GripSessionSummary) -> SessionState {
        SessionState(id: summary.id.uuidString, startedAt: summary.startedAt, duration: round(summary.duration, 3),
                     maxForce: summary.maxForce, averageForce: summary.averageForce, samples: summary.sampleCount)
    }

    /// At most ``curvePoints`` points, evenly thinned, the last sample kept.
    static func curve(_ samples: [GripSample]) -> [[Double]] {
        guard samples.count > curvePoints else { return samples.map { [round($0.offset, 3), $0.force] } }
        let step = Double(samples.count - 1) / Double(curvePoints - 1)
        return (0..<curvePoints).map { index in
            let sample = samples[min(samples.count - 1, Int((Double(index) * step).rounded()))]
            return [round(sample.offset, 3), sample.force]
        }
    }

    private static func round(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }

    private static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

}
#endif
