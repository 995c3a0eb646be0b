import ArgumentParser
import Foundation
import TetherCore
import TetherWorld

/// `tether scan`: list what the radio sees.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "List the peripherals the radio sees.")

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "How long to scan, in seconds (at most a day).")
    var seconds: Double = 3

    @OptionGroup var output: JSONOption
    var json: Bool { output.json }

    func validate() throws {
        try Seconds.validate(seconds)
    }

    func run() async throws {
        let environment = try await Environment.make(json: json)
        do {
            let stream = try await environment.central.scan(timeout: .milliseconds(Int(seconds * 1000)))
            // A peripheral is reported again when its advertisement grows (a scan response, or
            // BlueZ's fields arriving one by one): count each once, print what is new.
            var seenIDs: Set<PeripheralID> = []
            if !json {
                print(pad("NAME", 22) + pad("DEVICE", 12) + pad("ID", 38) + pad("RSSI", 6) + "SERVICES")
            }
            for await peripheral in stream {
                seenIDs.insert(peripheral.id)
                if json {
                    print(jsonLine(ScanRecord(peripheral)))
                } else {
                    let services = peripheral.advertisement.serviceUUIDs.map(\.uuidString).joined(separator: ",")
                    let device = DeviceCatalog.entry(matching: peripheral)?.name ?? "-"
                    print(pad(terminalSafe(peripheral.displayName) ?? "(unnamed)", 22) + pad(device, 12) + pad(peripheral.id.description, 38) + pad(peripheral.rssi.map(String.init) ?? "-", 6) + (services.isEmpty ? "-" : services))
                }
            }
            if !json { print("\(seenIDs.count) peripheral(s)") }
        } catch {
            throw CLIError.from(error)
        }
    }
}

/// A `peripheral` record: one scan result.
struct ScanRecord: Encodable {
    let type = "peripheral"
    let name: String?
    /// Which of Tether's devices it is, by its advertisement (the ``DeviceCatalog`` id).
    let device: String?
    let id: String
    let rssi: Int?
    let services: [String]
    let manufacturerData: String?
    let txPower: Int?
    let connectable: Bool

    init(_ p: DiscoveredPeripheral) {
        name = p.displayName
        device = DeviceCatalog.entry(matching: p)?.id
        id = p.id.description
        rssi = p.rssi
        services = p.advertisement.serviceUUIDs.map(\.uuidString)
        manufacturerData = p.advertisement.manufacturerData?.hexString
        txPower = p.advertisement.txPowerLevel
        connectable = p.advertisement.isConnectable
    }
}

/// One `--json` line: the record with sorted keys, made safe for a terminal. A record that
/// cannot be encoded (a non-finite number) becomes an `unencodable` record saying why, so a
/// consumer still reads one object per line and nothing vanishes without a word.
func jsonLine(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
        return terminalSafeJSON(String(decoding: try encoder.encode(value), as: UTF8.self))
    } catch {
        let notice = Unencodable(record: String(describing: type(of: value)), reason: "\(error)")
        return (try? encoder.encode(notice)).map { terminalSafeJSON(String(decoding: $0, as: UTF8.self)) } ?? #"{"type":"unencodable"}"#
    }
}

/// What ``jsonLine(_:)`` prints for a record that cannot be encoded.
private struct Unencodable: Encodable {
    var type = "unencodable"
    let record: String
    let reason: String
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}
