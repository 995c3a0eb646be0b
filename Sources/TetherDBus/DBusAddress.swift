/// A D-Bus server address (`unix:path=/run/dbus/system_bus_socket`, `tcp:host=…,port=…`),
/// possibly several alternatives separated by `;`, tried in order.
public struct DBusAddress: Hashable, Sendable, CustomStringConvertible {
    /// One transport of an address.
    public enum Transport: Hashable, Sendable {
        /// A Unix socket at a filesystem path.
        case unixPath(String)
        /// A Unix socket in the abstract namespace (Linux).
        case unixAbstract(String)
        /// TCP; authentication falls back to ANONYMOUS and file descriptors cannot be passed.
        case tcp(host: String, port: UInt16)
    }

    /// The alternatives, in order.
    public let transports: [Transport]
    /// The text it was parsed from.
    public let text: String

    /// The system bus's default address when `DBUS_SYSTEM_BUS_ADDRESS` is unset.
    public static let defaultSystemBus = "unix:path=/run/dbus/system_bus_socket"

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else ``defaultSystemBus``.
    public static func systemBus(environment: [String: String]) throws(DBusError) -> DBusAddress {
        try systemBus(override: nil, environment: environment)
    }

    /// `override` when given (a configuration's explicit address), else the system bus.
    public static func systemBus(override: String?, environment: [String: String]) throws(DBusError) -> DBusAddress {
        let text = override ?? environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultSystemBus
        return try DBusAddress(parsing: text)
    }

    /// Parses an address; transports Tether cannot use (`launchd:`, `nonce-tcp:` …) are
    /// skipped, and an address with none it can use is an error.
    public init(parsing text: String) throws(DBusError) {
        var transports: [Transport] = []
        var unsupported: [String] = []
        for entry in text.split(separator: ";") where !entry.isEmpty {
            guard let colon = entry.firstIndex(of: ":") else {
                throw DBusError(name: DBusError.badAddress, message: "'\(entry)' has no transport name")
            }
            let method = String(entry[..<colon])
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") where !pair.isEmpty {
                guard let equals = pair.firstIndex(of: "=") else {
                    throw DBusError(name: DBusError.badAddress, message: "'\(pair)' is not key=value")
                }
                keys[String(pair[..<equals])] = try Self.unescape(String(pair[pair.index(after: equals)...]))
            }
            switch method {
            case "unix":
                if let path = keys["path"] {
                    transports.append(.unixPath(path))
                } else if let name = keys["abstract"] {
                    transports.append(.unixAbstract(name))
                } else {
                    unsupported.append(String(entry))
                }
            case "tcp":
                guard let host = keys["host"], let portText = keys["port"], let port = UInt16(portText) else {
                    throw DBusError(name: DBusError.badAddress, message: "'\(entry)' needs host= and a numeric port=")
                }
                transports.append(.tcp(host: host, port: port))
            default:
                unsupported.append(String(entry))
            }
        }
        guard !transports.isEmpty else {
            throw DBusError(name: DBusError.badAddress, message: unsupported.isEmpty
                ? "empty D-Bus address" : "no supported transport in '\(text)' (Tether speaks unix:path, unix:abstract and tcp)")
        }
        self.transports = transports
        self.text = text
    }

    public var description: String { text }

    private static func unescape(_ value: String) throws(DBusError) -> String {
        guard value.contains("%") else { return value }
        var bytes: [UInt8] = []
        var iterator = Array(value.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                    throw DBusError(name: DBusError.badAddress, message: "bad %-escape in '\(value)'")
                }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
