import Foundation
import Testing

@testable import FlockFinder

/// Shared helpers for the detection store tests.
enum StoreFixtures {
    static let base = Date(timeIntervalSince1970: 1_704_307_200)

    static func detection(
        _ type: DetectionType = .flockSafety, confidence: Double = 0.9, rssi: Int = -60,
        mac: String? = "70:c9:4e:12:34:56", ssid: String? = "Flock-1", ts: UInt64? = 1000
    ) -> Detection {
        Detection(type: type, rssi: rssi, confidence: confidence, mac: mac, ssid: ssid, deviceUptimeMs: ts)
    }

    /// A fresh directory under the temporary directory, removed by `body`'s caller.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("flock-store-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    /// Parses RFC 4180 CSV (quoted fields, doubled quotes, CRLF records, embedded line breaks).
    static func parseCSV(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var inQuotes = false
        var characters = Array(text.unicodeScalars)[...]
        while let scalar = characters.popFirst() {
            if inQuotes {
                if scalar == "\"" {
                    if characters.first == "\"" {
                        field.unicodeScalars.append("\"")
                        characters.removeFirst()
                    } else {
                        inQuotes = false
                    }
                } else {
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": inQuotes = true
            case ",":
                record.append(field)
                field = ""
            case "\r" where characters.first == "\n":
                characters.removeFirst()
                record.append(field)
                records.append(record)
                record = []
                field = ""
            default: field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        return records
    }
}

/// A location provider that counts how often it is asked.
actor StoreCountingLocationProvider: LocationProvider {
    private(set) var calls = 0
    let location: Location?

    init(_ location: Location?) { self.location = location }

    func currentLocation() async -> Location? {
        calls += 1
        return location
    }
}
