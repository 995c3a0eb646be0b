import ArgumentParser
import Clocks
import Foundation
import TetherCore
import TetherSimulator

/// `tether bench`: figures for the framer, the notification path and the modelled link.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure framer throughput, per-notification cost, Tybe and MeshCore client costs, and link efficiency.",
        discussion: "Build with -c release for meaningful figures. Link efficiency runs in virtual time on a test clock.")

    @OptionGroup var global: GlobalOptions

    @OptionGroup var output: JSONOption
    var json: Bool { output.json }

    @Option(help: "Megabytes fed to the newline framer.")
    var megabytes = 64

    @Option(help: "Notifications pushed through the driver-to-consumer path.")
    var notifications = 200_000

    @Flag(help: ArgumentHelp("Measure one link end to end in real time instead: scan, connect, discovery, write round trip, notification rate, write-without-response throughput.",
                             discussion: "On the simulator by default (its link model); with --driver bluez the echo peripheral is hosted on --peripheral-adapter and reached from --adapter (default hci0), on the system bus: bluezoo, or bluetoothd with two controllers."))
    var link = false

    @Flag(help: ArgumentHelp("Measure resident memory while hostile peers flood MeshCore byte streams instead, in real time: an app that floods the emulator's TCP host and never reads; a radio that floods the client with random bytes, valid pushes or MSG_WAITING.",
                             discussion: "Each case floods for --seconds; a bound on memory shows as a small, flat growth."))
    var hostileStreams = false

    @Flag(help: ArgumentHelp("Measure a MeshCore app's startup instead, in real time: connect to ready with 1, 100 and 350 contacts over TCP against an emulator process, Tether and the Python meshcore client side by side, in process and whole process, with peak memory.",
                             discussion: "The Python side runs --python (default .venv/bin/python, installed by scripts/test-peers); without it only Tether's figures are printed, and the run says so."))
    var meshStartup = false

    @Option(help: "With --mesh-startup: the Python interpreter that has the meshcore package.")
    var python = ".venv/bin/python"

    @Option(help: "With --mesh-startup: runs of each case (the median is reported).")
    var rounds = 5

    @Option(parsing: .unconditional, help: "With --hostile-streams: how long each case floods, in seconds (at most 60).")
    var seconds = 2.0

    @Option(help: "With --link and --driver bluez: the adapter that hosts the echo peripheral.")
    var peripheralAdapter = "hci1"

    @Option(help: "With --link and --driver bluez: the longest value to write (1…512; 510 for bluetoothd 5.66–5.68, which refuses 511 and 512).")
    var maximumValueLength = 512

    func validate() throws {
        // Each bounded: a negative or zero count trapped or hung before.
        guard (1...4096).contains(megabytes) else { throw ValidationError("--megabytes must be between 1 and 4096") }
        guard (1...10_000_000).contains(notifications) else { throw ValidationError("--notifications must be between 1 and 10000000") }
        guard (1...512).contains(maximumValueLength) else { throw ValidationError("--maximum-value-length must be between 1 and 512") }
        try Seconds.validate(seconds, maximum: 60)
        guard [link, hostileStreams, meshStartup].filter({ $0 }).count <= 1 else {
            throw ValidationError("--link, --hostile-streams and --mesh-startup are separate runs: give one")
        }
        guard (1...50).contains(rounds) else { throw ValidationError("--rounds must be between 1 and 50") }
    }

    func run() async throws {
        let selection = DriverSelection.current
        if hostileStreams {
            let figures: [StreamBench.Figure]
            do {
                figures = try await StreamBench.run(seconds: seconds) { line in
                    FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
                }
            } catch {
                throw CLIError.from(error)
            }
            for figure in figures { report(figure.name, figure.value, figure.unit) }
            return
        }
        if link {
            try await runLink(selection)
            return
        }
        if meshStartup {
            try await runMeshStartup()
            return
        }
        if selection.driver == .bluez {
            throw CLIError("bench measures Tether's own paths on the simulator (in virtual time); it cannot run on \(selection.origin)")
        }
        do {
            report("newline_framer_throughput", try framerThroughput(), "MB/s")
            report("notification_cost", try await notificationCost(), "us/notification")
            let keys = try await TybeBench.keyLatencyP99()
            report("tybe_key_to_driver_write_p50", keys.p50, "us")
            report("tybe_key_to_driver_write_p99", keys.p99, "us")
            let korean = try await TybeBench.koreanDelivery()
            report("tybe_korean_2000_chars_delivery_time_mtu185_15ms", korean.seconds, "s_virtual")
            report("tybe_korean_2000_chars_fraction_of_link_capacity", korean.fraction, "fraction_of_capacity")
            // The same text with a host that types instantly: what the client and link alone achieve.
            let linkOnly = try await TybeBench.koreanDelivery(keyInterval: .microseconds(1))
            report("tybe_korean_2000_chars_delivery_time_instant_host", linkOnly.seconds, "s_virtual")
            report("tybe_korean_2000_chars_fraction_of_link_capacity_instant_host", linkOnly.fraction, "fraction_of_capacity")
            report("meshcore_frame_decode_rate", try MeshBench.decodeRate(), "M frames/s")
            report("meshcore_session_command_round_trip", try await MeshBench.commandRoundTrip(), "us/command")
            report("dbus_notification_signal_decode_rate", try DBusBench.decodeRate(), "M messages/s")
            report("dbus_write_command_encode_rate", try DBusBench.encodeRate(), "M messages/s")
            #if os(Linux)
            if let roundTrip = try await DBusBench.callRoundTrip() {
                report("dbus_call_round_trip_through_dbus_daemon", roundTrip, "us/call")
            }
            #endif
            for mtu in [23, 185, 247] {
                let figures = try await linkEfficiency(mtu: mtu)
                report("write_without_response_throughput_mtu\(mtu)", figures.withoutResponseRate / 1000, "kB/s")
                report("write_without_response_efficiency_mtu\(mtu)", figures.withoutResponse, "fraction_of_capacity")
                report("write_with_response_throughput_mtu\(mtu)", figures.withResponseRate / 1000, "kB/s")
                report("write_with_response_efficiency_mtu\(mtu)", figures.withResponse, "fraction_of_bound")
            }
        } catch {
            throw CLIError.from(error)
        }
    }

    private func runMeshStartup() async throws {
        let progress: @Sendable (String) -> Void = { line in
            FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
        }
        guard let tether = Bundle.main.executableURL?.resolvingSymlinksInPath().path else {
            throw CLIError("cannot find this program's own path to start the emulator")
        }
        let interpreter = FileManager.default.isExecutableFile(atPath: python) ? URL(fileURLWithPath: python).standardizedFileURL.path : nil
        if interpreter == nil {
            progress("no Python at \(python) (scripts/test-peers installs it): Tether's figures only")
        }
        do {
            for figure in try await MeshStartupBench.run(tether: tether, python: interpreter, rounds: rounds, progress: progress) {
                report(figure.name, figure.value, figure.unit)
            }
        } catch let failure as MeshStartupBench.Failure {
            throw CLIError("bench --mesh-startup: \(failure.description)")
        } catch {
            throw CLIError.from(error)
        }
    }

    private func runLink(_ selection: DriverSelection) async throws {
        let progress: @Sendable (String) -> Void = { line in
            FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
        }
        let figures: LinkBench.Figures
        let through: String
        do {
            if selection.driver == .bluez {
                #if os(Linux)
                let central = selection.adapter ?? "hci0"
                guard DriverSelection.isAdapterName(peripheralAdapter), peripheralAdapter != central else {
                    throw CLIError("--peripheral-adapter must be an adapter name (hciN) other than the central's \(central)")
                }
                through = "bluez_\(central)_to_\(peripheralAdapter)"
                guard (1...512).contains(maximumValueLength) else { throw CLIError("--maximum-value-length must be between 1 and 512") }
                figures = try await LinkBench.onBlueZ(centralAdapter: central, peripheralAdapter: peripheralAdapter,
                                                      maximumValueLength: maximumValueLength, progress: progress)
                #else
                throw CLIError("the BlueZ driver exists on Linux only")
                #endif
            } else {
                through = "simulator"
                figures = try await LinkBench.onSimulator(progress: progress)
            }
        } catch let failure as LinkBench.Failure {
            throw CLIError("bench --link: \(failure.description)")
        } catch {
            throw CLIError.from(error)
        }
        report("link_\(through)_scan_to_discovered", figures.scanToDiscovered.seconds * 1000, "ms")
        report("link_\(through)_connect", figures.connect.seconds * 1000, "ms")
        report("link_\(through)_service_discovery", figures.discovery.seconds * 1000, "ms")
        report("link_\(through)_write_round_trip_p50", figures.writeRoundTripP50.seconds * 1000, "ms")
        report("link_\(through)_write_round_trip_p90", figures.writeRoundTripP90.seconds * 1000, "ms")
        report("link_\(through)_notification_rate", figures.notificationsPerSecond, "notifications/s")
        report("link_\(through)_notification_throughput", figures.notificationBytesPerSecond / 1000, "kB/s")
        report("link_\(through)_write_without_response_throughput", figures.commandBytesPerSecond / 1000, "kB/s")
        report("link_\(through)_write_without_response_length", Double(figures.commandLength), "bytes")
    }

    private func report(_ name: String, _ value: Double, _ unit: String) {
        if json {
            struct Figure: Encodable { var type = "figure"; let name: String; let value: Double; let unit: String }
            print(jsonLine(Figure(name: name, value: (value * 10_000).rounded() / 10_000, unit: unit)))
        } else {
            print(pad(name, 44) + String(format: "%12.4f  ", value) + unit)
        }
        flushOutput()
    }

    /// Lines of ~20 bytes with CRLF, fed in 244-byte chunks (a 247-MTU notification's payload).
    private func framerThroughput() throws -> Double {
        var text = Data()
        var n = 0
        while text.count < 1 << 20 {
            text.append(contentsOf: Array("R:\(n % 8_388_607),\(n)\r\n".utf8))
            n += 1
        }
        let chunks = stride(from: 0, to: text.count, by: 244).map { text[$0..<min($0 + 244, text.count)] }.map { Data($0) }
        var framer = NewlineFramer()
        var lines = 0
        let start = ContinuousClock.now
        for _ in 0..<megabytes {
            for chunk in chunks { lines += framer.push(chunk).count }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        guard lines > 0 else { throw CLIError("the framer produced no lines") }
        return Double(megabytes * text.count) / 1_000_000 / elapsed
    }

    /// Wall time per notification from the driver's event stream to a stream consumer.
    private func notificationCost() async throws -> Double {
        let radio = await SimulatedWorld.makeDefault(clock: ContinuousClock())
        let driver = await SimulatedDriver(radio: radio)
        let central = Central(driver: driver)
        let id = SimulatedWorld.IDs.echo
        let connection = await central.connection(to: id, configuration: ConnectionConfiguration(
            services: [EchoPeripheral.service], notifyCharacteristics: [EchoPeripheral.output],
            notificationBufferSize: notifications))
        try await connection.connect()
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let total = notifications
        let consumer = Task { () -> Int in
            var count = 0
            for await _ in stream {
                count += 1
                if count == total { break }
            }
            return count
        }
        let payload = Data(repeating: 0x42, count: 20)
        let start = ContinuousClock.now
        var sent = 0
        while sent < total {
            let batch = min(1024, total - sent)
            await driver.inject(.valueUpdated(id, EchoPeripheral.output, payload, nil), count: batch)
            sent += batch
        }
        let received = await consumer.value
        let elapsed = (ContinuousClock.now - start).seconds
        await connection.disconnect()
        guard received == total else { throw CLIError("lost notifications: \(received) of \(total)") }
        return elapsed / Double(total) * 1_000_000
    }

    /// Bulk transfer on the modelled link, as a fraction of its modelled capacity.
    private func linkEfficiency(mtu: Int) async throws -> (withoutResponse: Double, withoutResponseRate: Double, withResponse: Double, withResponseRate: Double) {
        let clock = TestClock<Duration>()
        let parameters = LinkParameters(preferredMTU: mtu)
        let radio = VirtualRadio(clock: clock)
        let id = PeripheralID(UUID())
        await radio.add(EchoPeripheral.makePeripheral(id: id, linkParameters: parameters, behavior: EchoPeripheral(echoes: false)))
        let driver = await SimulatedDriver(radio: radio)
        let central = Central(driver: driver, clock: clock)
        let connection = await central.connection(to: id, configuration: ConnectionConfiguration(
            services: [EchoPeripheral.service], requiredCharacteristics: [EchoPeripheral.input]))
        let advance: @Sendable (Duration) async -> Void = { await clock.advance(by: $0) }
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) { try await connection.connect() }
        let negotiated = await radio.mtu(of: id) ?? 23
        guard negotiated == mtu else { throw CLIError("negotiated MTU \(negotiated), expected \(mtu)") }
        let interval = parameters.connectionInterval.seconds

        // Without response: 2,000 packets.
        let unacked = Data(repeating: 0xA5, count: 2_000 * (mtu - 3))
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) {
            try await connection.write(unacked, to: EchoPeripheral.input, type: .withoutResponse)
        }
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) {
            while await radio.statistics[id]?.bytesWithoutResponse ?? 0 < unacked.count { await Task.yield() }
        }
        var stats = await radio.statistics[id] ?? LinkStatistics()
        guard stats.writesDropped == 0 else { throw CLIError("the controller dropped \(stats.writesDropped) writes") }
        // N busy events span (N-1) intervals; capacity is measured over N.
        let spanWithout = ((stats.lastDelivery ?? .zero) - (stats.firstDelivery ?? .zero)).seconds + interval
        let withoutResponseRate = Double(unacked.count) / spanWithout
        let withoutResponse = withoutResponseRate / parameters.writeWithoutResponseCapacity(mtu: mtu)

        // With response: 200 writes of one packet each.
        await radio.resetStatistics()
        let piece = Data(repeating: 0x5A, count: mtu - 3)
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) {
            for _ in 0..<200 { try await connection.write(piece, to: EchoPeripheral.input, type: .withResponse) }
        }
        stats = await radio.statistics[id] ?? LinkStatistics()
        let sentWith = stats.bytesWithResponse
        guard sentWith == 200 * piece.count else { throw CLIError("only \(sentWith) bytes arrived with response") }
        // W writes land on events k, k+2, ..., k+2(W-1): the bound's time for W writes is 2·W intervals.
        let spanWith = ((stats.lastDelivery ?? .zero) - (stats.firstDelivery ?? .zero)).seconds + 2 * interval
        let withResponseRate = Double(sentWith) / spanWith
        let withResponse = withResponseRate / parameters.writeWithResponseBound(mtu: mtu)
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) { await connection.disconnect() }
        return (withoutResponse, withoutResponseRate, withResponse, withResponseRate)
    }
}
