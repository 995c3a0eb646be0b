import Foundation
import MeshCore
import MeshCoreStorage
import TetherCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tether bench --mesh-startup`: how long a MeshCore app takes from connecting to ready, with
/// 1, 100 and 350 contacts on the radio, for Tether and for the public Python client, against
/// the same emulated radio (a `tether mesh emulate` process on TCP) in the same run.
///
/// - In-process: the same steps, each client its own way: Tether's session pipelined (APP_START;
///   DEVICE_QUERY, clock and contacts together; every channel together; drain), and
///   `ConnectionManager.connect()` to ready with everything stored, against the Python client's
///   own timing of its one-at-a-time steps (`create_tcp`, device query, time, contacts, every
///   channel, drain).
/// - Whole-process: from starting the program to its exit (`tether mesh run info` against a
///   Python script doing the steps above), with the peak resident memory of each.
enum MeshStartupBench {
    struct Figure {
        let name: String
        let value: Double
        let unit: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs every case; `progress` gets a line per step.
    static func run(tether: String, python: String?, contactCounts: [Int] = [1, 100, 350], rounds: Int = 5,
                    progress: @escaping @Sendable (String) -> Void) async throws -> [Figure] {
        var figures: [Figure] = []
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("tether-meshcore-startup-\(getpid()).py")
        try Data(pythonScript.utf8).write(to: script)
        defer { try? FileManager.default.removeItem(at: script) }
        for count in contactCounts {
            // The demo mesh knows 6 members besides the extra nodes.
            let extra = max(0, count - 6)
            let emulator = try EmulatorProcess(tether: tether, extraContacts: extra)
            defer { emulator.stop() }
            let contacts = extra + 6
            progress("\(contacts) contacts: emulator on port \(emulator.port)")
            var inProcess: [Double] = []
            for _ in 0..<rounds { inProcess.append(try await tetherSessionSteps(port: emulator.port, contacts: contacts)) }
            let tetherMedian = median(inProcess)
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_tether_in_process", value: tetherMedian * 1000, unit: "ms"))
            var managed: [Double] = []
            for _ in 0..<rounds { managed.append(try await tetherInProcess(port: emulator.port, contacts: contacts)) }
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_tether_manager_to_ready_stored", value: median(managed) * 1000, unit: "ms"))
            var wholeRuns: [(Double, Int)] = []
            for _ in 0..<rounds {
                wholeRuns.append(try spawnMeasured(tether, ["mesh", "--tcp", "127.0.0.1:\(emulator.port)", "--database", temporaryDatabase(), "run", "info"]))
            }
            let tetherWhole = median(wholeRuns.map(\.0)), tetherMemory = wholeRuns.map(\.1).max() ?? 0
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_tether_whole_process", value: tetherWhole * 1000, unit: "ms"))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_tether_peak_memory", value: Double(tetherMemory) / 1024, unit: "MB"))
            guard let python else { continue }
            var pythonInProcess: [Double] = []
            var pythonWhole: [(Double, Int)] = []
            for _ in 0..<rounds {
                let output = FileManager.default.temporaryDirectory.appendingPathComponent("tether-py-startup-\(UUID().uuidString).json")
                defer { try? FileManager.default.removeItem(at: output) }
                pythonWhole.append(try spawnMeasured(python, [script.path, "127.0.0.1", "\(emulator.port)", "\(contacts)", output.path]))
                let result = try JSONSerialization.jsonObject(with: try Data(contentsOf: output)) as? [String: Any]
                guard let seconds = result?["seconds"] as? Double, result?["contacts"] as? Int == contacts else {
                    throw Failure(description: "the Python client's run did not report \(contacts) contacts: \(String(describing: result))")
                }
                pythonInProcess.append(seconds)
            }
            let pythonMedian = median(pythonInProcess), pythonWholeMedian = median(pythonWhole.map(\.0))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_python_in_process", value: pythonMedian * 1000, unit: "ms"))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_python_whole_process", value: pythonWholeMedian * 1000, unit: "ms"))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_python_peak_memory", value: Double(pythonWhole.map(\.1).max() ?? 0) / 1024, unit: "MB"))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_speedup_in_process", value: pythonMedian / tetherMedian, unit: "x"))
            figures.append(Figure(name: "meshcore_startup_\(contacts)_contacts_speedup_whole_process", value: pythonWholeMedian / tetherWhole, unit: "x"))
        }
        return figures
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    private static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("tether-bench-\(UUID().uuidString).sqlite").path
    }

    /// Seconds for the Python client's steps, done Tether's way, through a `MeshCoreSession`: connect, APP_START,
    /// DEVICE_QUERY, the clock and contacts (pipelined), every channel (pipelined), the
    /// message drain.
    private static func tetherSessionSteps(port: Int, contacts: Int) async throws -> Double {
        let session = MeshCoreSession(
            transport: StreamTransport.tcp(host: "127.0.0.1", port: port), configuration: .init(appName: "bench", autoFetchMessages: false))
        let start = ContinuousClock.now
        try await session.start()
        // Pipelined as the connection manager does: the reads that do not depend on each other
        // go back to back.
        let (queried, clock, listed) = try await session.perform(.deviceQuery(), .deviceTime, .contacts())
        let device = try queried.get()
        _ = try clock.get()
        let listing = try listed.get()
        for result in try await session.perform((0..<device.maxChannels).map { MeshCoreRequest.channel($0) }) { _ = try result.get() }
        _ = try await session.syncMessages()
        let elapsed = (ContinuousClock.now - start).seconds
        await session.stop()
        guard listing.contacts.count == contacts else { throw Failure(description: "Tether listed \(listing.contacts.count) contacts, not \(contacts)") }
        return elapsed
    }

    /// Seconds from `connect()` to ready, through a fresh session, manager and store: what an
    /// app does (the clock set if it drifted, contacts and channels stored in SQLite).
    private static func tetherInProcess(port: Int, contacts: Int) async throws -> Double {
        let path = temporaryDatabase()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try MeshStore(path: path)
        let session = MeshCoreSession(transport: StreamTransport.tcp(host: "127.0.0.1", port: port), configuration: .init(appName: "bench"))
        let manager = ConnectionManager(session: session, store: store)
        let start = ContinuousClock.now
        try await manager.connect()
        let elapsed = (ContinuousClock.now - start).seconds
        let listed = await manager.contacts.count
        await manager.disconnect()
        guard listed == contacts else { throw Failure(description: "Tether listed \(listed) contacts, not \(contacts)") }
        return elapsed
    }

    /// Runs a program to its end with its output discarded: seconds, and peak resident memory
    /// in KiB.
    private static func spawnMeasured(_ program: String, _ arguments: [String]) throws -> (Double, Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "cannot start \(program): \(String(cString: strerror(spawned)))") }
        // The kernel's peak for a spawned child starts at the parent's own (the address space
        // it was spawned from), so the child's high-water mark is read while it runs instead.
        var status: Int32 = 0
        var usage = rusage()
        var peak = 0
        while true {
            peak = max(peak, highWaterMark(of: pid) ?? 0)
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0, errno != EINTR { throw Failure(description: "lost \(program): \(String(cString: strerror(errno)))") }
            usleep(1_000)
        }
        let elapsed = (ContinuousClock.now - start).seconds
        // Exited normally with status 0 (the wait status's low 7 bits 0, next byte 0).
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (wait status \(status))")
        }
        return (elapsed, peak)
    }

    /// `VmHWM` of a running process, in KiB (nil where /proc has no such entry).
    private static func highWaterMark(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    /// `tether mesh emulate` on a free TCP port, until stopped.
    final class EmulatorProcess {
        let process = Process()
        let input = Pipe()
        let port: Int

        init(tether: String, extraContacts: Int) throws {
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: tether)
            process.arguments = ["mesh", "emulate", "--listen", "127.0.0.1:0", "--quiet", "--until-stdin-closes", "--contacts", "\(extraContacts)"]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = input
            try process.run()
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A, line.count < 200 {
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let port = text.split(separator: ":").last.flatMap({ Int($0) }) else {
                process.terminate()
                throw Failure(description: "the emulator did not say where it listens (\(text))")
            }
            self.port = port
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// The Python client's side: the startup steps a MeshCore app runs, timed by itself.
    static let pythonScript = #"""
        import asyncio, json, sys, time
        start_process = time.perf_counter()
        from meshcore import EventType, MeshCore

        async def main(host, port, expected, output):
            start = time.perf_counter()
            mc = await MeshCore.create_tcp(host, port)
            if mc is None:
                raise SystemExit("no SELF_INFO")
            info = await mc.commands.send_device_query()
            await mc.commands.get_time()
            contacts = await mc.commands.get_contacts()
            if contacts.type == EventType.ERROR:
                raise SystemExit(f"contacts: {contacts.payload}")
            channels = info.payload.get("max_channels", 8) if info.type == EventType.DEVICE_INFO else 8
            for index in range(channels):
                await mc.commands.get_channel(index)
            while True:
                message = await mc.commands.get_msg()
                if message.type in (EventType.NO_MORE_MSGS, EventType.ERROR):
                    break
            elapsed = time.perf_counter() - start
            await mc.disconnect()
            with open(output, "w") as handle:
                json.dump({"seconds": elapsed, "contacts": len(contacts.payload), "process_seconds": time.perf_counter() - start_process}, handle)

        asyncio.run(asyncio.wait_for(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]), 120))
        """#
}
