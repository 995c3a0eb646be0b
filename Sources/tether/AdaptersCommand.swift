import ArgumentParser
import Foundation
#if os(Linux)
import Logging
import TetherBlueZ
import TetherDBus
#endif

/// `tether adapters`: the Bluetooth adapters each driver can use.
struct AdaptersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the Bluetooth adapters each driver can use.",
        discussion: """
            With --driver (or $TETHER_DRIVER) only that driver's adapters, else every driver's. \
            BlueZ adapters come from bluetoothd (org.bluez on the system bus): name, address, \
            powered, discovering, alias. When BlueZ has none the line says why (no bluetoothd, \
            no adapter). Exit status: 0 when the question was answered, "none" included; 1 when \
            --driver bluez was asked for and the system bus cannot be reached or refuses (the \
            question could not be answered).
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var output: JSONOption
    var json: Bool { output.json }

    func run() async throws {
        let selection = DriverSelection.current
        let drivers: [DriverChoice] = selection.isExplicit && selection.driver != .auto
            ? [selection.driver] : [.bluez, .simulator, .corebluetooth]
        if !json { print(pad("DRIVER", 14) + pad("NAME", 10) + pad("ADDRESS", 19) + pad("POWERED", 9) + pad("DISCOVERING", 13) + "ALIAS") }
        var failed = false
        for driver in drivers {
            let (rows, busFailed) = await Self.adapters(of: driver)
            failed = failed || busFailed
            for row in rows { print(json ? jsonLine(row) : row.text) }
        }
        flushOutput()
        // Only a driver asked for by name makes its failure the command's.
        if failed, drivers == [.bluez] { throw ExitCode(1) }
    }

    /// A driver's adapters, and whether the question failed (rather than the answer being none).
    static func adapters(of driver: DriverChoice) async -> ([AdapterRow], Bool) {
        switch driver {
        case .bluez:
            #if os(Linux)
            return await bluezAdapters()
            #else
            return ([AdapterRow(driver: "bluez", reason: "BlueZ is Linux-only")], false)
            #endif
        case .simulator:
            return ([AdapterRow(driver: "simulator", name: "virtual", powered: true, discovering: false, alias: "virtual radio with every device emulator")], false)
        case .corebluetooth:
            #if canImport(CoreBluetooth)
            return ([AdapterRow(driver: "corebluetooth", name: "system", alias: "this machine's radio (CoreBluetooth does not list adapters)")], false)
            #else
            return ([AdapterRow(driver: "corebluetooth", name: "virtual", powered: true, discovering: false, alias: "CoreBluetooth look-alike over the simulator's virtual radio")], false)
            #endif
        case .auto:
            return ([], false)
        }
    }

    #if os(Linux)
    /// Asks bluetoothd for its `org.bluez.Adapter1` objects.
    static func bluezAdapters() async -> ([AdapterRow], Bool) {
        func none(_ reason: String, failed: Bool) -> ([AdapterRow], Bool) {
            ([AdapterRow(driver: "bluez", reason: reason)], failed)
        }
        let environment = ProcessInfo.processInfo.environment
        let address: DBusAddress
        do throws(DBusError) {
            address = try DBusAddress.systemBus(environment: environment)
        } catch {
            return none("bad D-Bus system bus address: \(error.message)", failed: true)
        }
        let connection: DBusConnection
        do throws(DBusError) {
            connection = try await DBusConnection.connectToSystemBus(
                environment: environment, label: "tether.adapters", timeout: .seconds(5), logger: BlueZSupport.logger("tether.dbus"))
        } catch {
            return none("no D-Bus system bus at \(address) (\(error.message))", failed: true)
        }
        defer { connection.close() }
        // GetNameOwner first: a method call to org.bluez could start bluetoothd by bus activation.
        do throws(DBusError) {
            _ = try await connection.call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                      interface: "org.freedesktop.DBus", member: "GetNameOwner",
                                                      body: [.string(BlueZ.service)]), timeout: .seconds(5))
        } catch {
            if error.name == DBusError.nameHasNoOwner { return none("bluetoothd is not running (no owner of org.bluez)", failed: false) }
            return none("the system bus did not answer: \(error.description)", failed: true)
        }
        let mirror: BlueZObjectMirror
        do throws(DBusError) {
            mirror = try await BlueZObjectMirror.read(from: connection, timeout: .seconds(10))
        } catch {
            if error.name == DBusError.accessDenied {
                return none("the bus policy does not let this user talk to bluetoothd (\(error.message)); join the bluetooth group", failed: true)
            }
            if error.name == DBusError.serviceUnknown || error.name == DBusError.nameHasNoOwner {
                return none("bluetoothd is not running (no owner of org.bluez)", failed: false)
            }
            return none("bluetoothd did not answer: \(error.description)", failed: true)
        }
        let rows = mirror.paths(with: BlueZ.adapterInterface).map { path in
            let properties = mirror.properties(path, BlueZ.adapterInterface) ?? [:]
            return AdapterRow(
                driver: "bluez", name: path.lastElement, address: properties["Address"]?.string,
                powered: properties["Powered"]?.bool, discovering: properties["Discovering"]?.bool,
                alias: properties["Alias"]?.string ?? properties["Name"]?.string)
        }
        guard !rows.isEmpty else { return none("no Bluetooth adapter", failed: false) }
        return (rows.sorted { ($0.name ?? "").localizedStandardCompare($1.name ?? "") == .orderedAscending }, false)
    }
    #endif
}

/// An `adapter` record: one adapter, or a driver without any (then `reason` says why).
struct AdapterRow: Encodable {
    var type = "adapter"
    let driver: String
    var name: String?
    var address: String?
    var powered: Bool?
    var discovering: Bool?
    var alias: String?
    var available: Bool
    var reason: String?

    init(driver: String, name: String? = nil, address: String? = nil, powered: Bool? = nil, discovering: Bool? = nil, alias: String? = nil) {
        self.driver = driver
        self.name = name
        self.address = address
        self.powered = powered
        self.discovering = discovering
        self.alias = alias
        available = true
    }

    init(driver: String, reason: String) {
        self.driver = driver
        available = false
        self.reason = reason
    }

    var text: String {
        guard available else { return pad(driver, 14) + "none: " + terminalSafe(reason ?? "?") }
        func yesNo(_ value: Bool?) -> String { value.map { $0 ? "yes" : "no" } ?? "?" }
        return pad(driver, 14) + pad(terminalSafe(name ?? "?"), 10) + pad(terminalSafe(address ?? "-"), 19)
            + pad(yesNo(powered), 9) + pad(yesNo(discovering), 13) + terminalSafe(alias ?? "")
    }
}
