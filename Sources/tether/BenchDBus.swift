import Foundation
import TetherDBus

/// D-Bus figures for `tether bench`: what the BlueZ driver pays per message, before bluetoothd.
enum DBusBench {
    /// The signal BlueZ sends for every notification: `PropertiesChanged` of a characteristic's
    /// `Value` (20 bytes), as it arrives from bluetoothd.
    static func notificationSignal() throws -> [UInt8] {
        var message = DBusMessage.signal(
            path: "/org/bluez/hci0/dev_00_11_22_33_44_55/service0010/char0011", interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            body: [.string("org.bluez.GattCharacteristic1"), .properties(["Value": .bytes(Data(repeating: 0x5A, count: 20))]), .strings([])])
        message.sender = ":1.7"
        return try message.encoded(serial: 42)
    }

    /// Notification signals decoded per second (millions).
    static func decodeRate(rounds: Int = 200_000) throws -> Double {
        let bytes = try notificationSignal()
        var values = 0
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            let message = try DBusMessage.decode(bytes)
            if message.body.count == 3 { values += 1 }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        guard values == rounds else { throw CLIError("decoding lost messages") }
        return Double(rounds) / elapsed / 1_000_000
    }

    /// `WriteValue` calls (20 bytes, `type=command`) encoded per second (millions).
    static func encodeRate(rounds: Int = 200_000) throws -> Double {
        let call = DBusMessage.methodCall(
            destination: "org.bluez", path: "/org/bluez/hci0/dev_00_11_22_33_44_55/service0010/char0013",
            interface: "org.bluez.GattCharacteristic1", member: "WriteValue",
            body: [.bytes(Data(repeating: 0xA5, count: 20)), .properties(["type": .string("command")])])
        var total = 0
        let start = ContinuousClock.now
        for round in 0..<rounds { total += try call.encoded(serial: UInt32(round + 1)).count }
        let elapsed = (ContinuousClock.now - start).seconds
        guard total > 0 else { throw CLIError("nothing encoded") }
        return Double(rounds) / elapsed / 1_000_000
    }

    #if os(Linux)
    /// Microseconds per method call round trip through a private `dbus-daemon` (one connection
    /// calling another's exported object), or nil when no `dbus-daemon` is installed.
    static func callRoundTrip(calls: Int = 5_000) async throws -> Double? {
        guard let daemon = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return nil
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("bus.conf")
        try """
            <busconfig><type>session</type><listen>unix:path=\(directory.path)/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--config-file=\(config.path)", "--nofork"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate() }
        let address = try DBusAddress(parsing: "unix:path=\(directory.path)/bus")
        // The socket appears once the daemon listens (bounded wait).
        let socketPath = directory.appendingPathComponent("bus").path
        for _ in 0..<250 where !FileManager.default.fileExists(atPath: socketPath) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let server = try await DBusConnection.connect(to: address, timeout: .seconds(5))
        defer { server.close() }
        let tree = DBusObjectTree(connection: server, root: "/bench")
        tree.add("/bench", interfaces: [DBusInterface(name: "org.tether.Bench", methods: ["Echo": { call in call.reply(call.message.body) }])])
        tree.export()
        let client = try await DBusConnection.connect(to: address)
        defer { client.close() }
        let message = DBusMessage.methodCall(destination: server.uniqueName, path: "/bench", interface: "org.tether.Bench", member: "Echo",
                                             body: [.bytes(Data(repeating: 1, count: 20))])
        let start = ContinuousClock.now
        for _ in 0..<calls { _ = try await client.call(message) }
        let elapsed = (ContinuousClock.now - start).seconds
        return elapsed / Double(calls) * 1_000_000
    }
    #endif
}
