import Foundation
import TetherCore
#if os(Linux)
import TetherBlueZPeripheral
#endif

/// Prints what happens to a served emulator, one timestamped line per event, as it happens.
///
/// Notifications are summarised so a 50 Hz stream does not flood the terminal: per
/// characteristic, the first of each second is shown, and the rest of that second as one
/// count.
final class ActivityPrinter: @unchecked Sendable {
    private let lock = NSLock()
    private let formatter: DateFormatter
    private var window: [CharacteristicPath: (count: Int, bytes: Int, latest: Data)] = [:]
    private var shownThisWindow: Set<CharacteristicPath> = []

    init() {
        formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss.SSS"
    }

    /// A timestamped line (the text must already be safe for a terminal).
    func line(_ text: String) {
        lock.withLock { emit(text) }
    }

    private func emit(_ text: String) {
        print("\(formatter.string(from: Date()))  \(text)")
        fflush(nil)
    }

    /// Notifications held back in the last second, as one line per characteristic.
    func tick() {
        lock.withLock {
            for (path, held) in window.sorted(by: { $0.key.characteristic.uuidString < $1.key.characteristic.uuidString }) {
                emit("notify ×\(held.count) more on \(path.characteristic) (\(held.bytes) bytes in the last second), latest: \(Self.preview(held.latest))")
            }
            window.removeAll()
            shownThisWindow.removeAll()
        }
    }

    /// Notifications: the first per characteristic and second shown, the rest counted.
    func notification(_ path: CharacteristicPath, _ data: Data) {
        lock.withLock {
            if shownThisWindow.insert(path).inserted {
                emit("notify \(data.count) byte(s) on \(path.characteristic): \(Self.preview(data))")
            } else {
                var held = window[path] ?? (0, 0, Data())
                held.count += 1
                held.bytes += data.count
                held.latest = data
                window[path] = held
            }
        }
    }

    /// Bytes as hex (the first 32), with the text when they are mostly printable.
    static func preview(_ data: Data) -> String {
        let hex = Data(data.prefix(32)).hexString(separator: " ") + (data.count > 32 ? " …" : "")
        let printable = data.filter { (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.count
        guard !data.isEmpty, printable * 10 >= data.count * 9 else { return hex }
        let text = String(decoding: data.prefix(64), as: UTF8.self)
        return "\"\(terminalSafe(text))\(data.count > 64 ? "…" : "")\"  (\(hex))"
    }

    #if os(Linux)
    /// One activity of the host.
    func handle(_ activity: BlueZPeripheralActivity) {
        switch activity {
        case .notification(let path, let data):
            notification(path, data)
        case .write(let path, let data, let type):
            line("\(type == .withResponse ? "write" : "write command") \(data.count) byte(s) to \(path.characteristic): \(Self.preview(data))")
        case .published(let adapter, let address, let name):
            line("advertising \(name.map { "\"\(terminalSafe($0))\"" } ?? "(no name)") on \(terminalSafe(adapter)) (\(terminalSafe(address)))")
        default:
            line(terminalSafe(activity.description))
        }
    }
    #endif
}
