#if os(macOS) || os(Linux)
import Foundation
import TetherCore

// The studio's WebSocket protocol: one JSON object per text frame, with a `type` naming it.
// docs/studio-protocol.md documents every message; the page (Web/studio.js) speaks it.

/// What the page asks for.
public enum StudioRequest: Sendable, Equatable, Decodable {
    /// Start (`true`) or stop scanning.
    case scan(Bool)
    /// Connect to a peripheral the radio sees.
    case connect(PeripheralID)
    /// Disconnect from a peripheral.
    case disconnect(PeripheralID)
    /// Something for one device's screen to do.
    case action(StudioAction)

    /// The largest request accepted, in bytes.
    public static let maximumSize = 64 * 1024

    private enum Keys: String, CodingKey { case type, on, id, device, action }

    /// The longest device or action name.
    static let maximumNameLength = 64

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "scan":
            self = .scan(try container.decode(Bool.self, forKey: .on))
        case "connect", "disconnect":
            let text = try container.decode(String.self, forKey: .id)
            guard let uuid = UUID(uuidString: text) else {
                throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a peripheral identifier")
            }
            self = type == "connect" ? .connect(PeripheralID(uuid)) : .disconnect(PeripheralID(uuid))
        case "action":
            let device = try container.decode(String.self, forKey: .device)
            let name = try container.decode(String.self, forKey: .action)
            guard device.count <= Self.maximumNameLength, name.count <= Self.maximumNameLength else {
                throw DecodingError.dataCorruptedError(forKey: .action, in: container, debugDescription: "a name longer than \(Self.maximumNameLength) characters")
            }
            var arguments = try decoder.singleValueContainer().decode([String: StudioValue].self)
            for key in ["type", "device", "action"] { arguments[key] = nil }
            self = .action(StudioAction(device: device, name: name, arguments: arguments))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown request type")
        }
    }

    /// Reads one request; the error says what is wrong with it, in words for the page.
    public static func decode(_ text: String) throws(StudioProtocolError) -> StudioRequest {
        guard text.utf8.count <= maximumSize else { throw StudioProtocolError("a request longer than \(maximumSize) bytes") }
        do {
            return try JSONDecoder().decode(StudioRequest.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw StudioProtocolError(Self.explain(error))
        } catch {
            throw StudioProtocolError("not a request")
        }
    }

    private static func explain(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "a request needs \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            context.codingPath.isEmpty ? "not a JSON object" : "\"\(context.codingPath.last!.stringValue)\" has the wrong type"
        case .dataCorrupted(let context):
            context.codingPath.isEmpty ? "not a JSON object" : "\"\(context.codingPath.last!.stringValue)\": \(context.debugDescription)"
        @unknown default: "not a request"
        }
    }
}

/// The text a user reads for an error: its localized description when it has one.
func userFacingText(_ error: any Error) -> String {
    (error as? LocalizedError)?.errorDescription ?? "\(error)"
}

/// Why a request was refused (the page is told; the connection stays).
public struct StudioProtocolError: Error, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A peripheral as the Devices screen shows it.
public struct StudioPeripheral: Sendable, Equatable {
    /// Its identifier (to connect with).
    public var id: PeripheralID
    /// The name to show, if it has one.
    public var name: String?
    /// Which of Tether's devices it is (`gripfit`, `kiro`, …), if its advertisement says.
    public var device: String?
    /// The last signal strength in dBm (nil: the stack had none).
    public var rssi: Int?
    /// The signal strengths of its last discoveries, oldest first (at most ``historyLength``).
    public var rssiHistory: [Int?]
    /// The service UUIDs it advertises.
    public var services: [String]
    /// Whether it accepts connections.
    public var connectable: Bool

    /// How many signal strengths a peripheral keeps.
    public static let historyLength = 60
}

/// The PocketMesh status dot of a connection phase: red (no connection), yellow (connecting,
/// or connected with services loading), green (ready).
public enum StudioDot: String, Sendable, Equatable {
    /// No connection.
    case red
    /// Connecting, or connected with its services loading.
    case yellow
    /// Ready.
    case green

    /// The dot for a phase.
    public init(_ phase: BLEPhase) {
        switch phase {
        case .idle: self = .red
        case .connected: self = .green
        default: self = .yellow
        }
    }
}

/// What the server tells the page.
public enum StudioEvent: Sendable, Equatable, Encodable {
    /// First message on every connection: which driver runs, the radio's state, and the
    /// device screens offered.
    case hello(driver: String, bluetooth: CentralState, screens: [String] = [])
    /// The radio's state changed.
    case bluetooth(CentralState)
    /// Scanning started or stopped.
    case scanning(Bool)
    /// A peripheral was seen (again).
    case peripheral(StudioPeripheral)
    /// A peripheral was forgotten (the studio keeps a bounded number).
    case forgotten(PeripheralID)
    /// A connection's phase changed.
    case phase(PeripheralID, BLEPhase)
    /// Something failed; `message` is the user-facing text.
    case error(PeripheralID?, String)
    /// A request was refused.
    case refused(String)
    /// A device screen's action failed (told to the page that asked).
    case actionFailed(device: String, action: String, message: String)

    private enum Keys: String, CodingKey {
        case type, driver, bluetooth, screens, state, on, id, name, device, rssi, rssiHistory, services, connectable
        case phase, dot, connected, message, reason, action
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .hello(let driver, let state, let screens):
            try c.encode("hello", forKey: .type)
            try c.encode(driver, forKey: .driver)
            try c.encode("\(state)", forKey: .bluetooth)
            try c.encode(screens, forKey: .screens)
        case .bluetooth(let state):
            try c.encode("bluetooth", forKey: .type)
            try c.encode("\(state)", forKey: .state)
        case .scanning(let on):
            try c.encode("scanning", forKey: .type)
            try c.encode(on, forKey: .on)
        case .peripheral(let p):
            // Absent values are null, not missing keys: the page reads one shape per type.
            try c.encode("peripheral", forKey: .type)
            try c.encode(p.id.description, forKey: .id)
            try c.encode(p.name, forKey: .name)
            try c.encode(p.device, forKey: .device)
            try c.encode(p.rssi, forKey: .rssi)
            try c.encode(p.rssiHistory, forKey: .rssiHistory)
            try c.encode(p.services, forKey: .services)
            try c.encode(p.connectable, forKey: .connectable)
        case .forgotten(let id):
            try c.encode("forgotten", forKey: .type)
            try c.encode(id.description, forKey: .id)
        case .phase(let id, let phase):
            try c.encode("phase", forKey: .type)
            try c.encode(id.description, forKey: .id)
            try c.encode(phase.name, forKey: .phase)
            try c.encode(StudioDot(phase).rawValue, forKey: .dot)
            try c.encode(phase.isConnected, forKey: .connected)
        case .error(let id, let message):
            try c.encode("error", forKey: .type)
            try c.encode(id?.description, forKey: .id)
            try c.encode(message, forKey: .message)
        case .refused(let reason):
            try c.encode("refused", forKey: .type)
            try c.encode(reason, forKey: .reason)
        case .actionFailed(let device, let action, let message):
            try c.encode("actionFailed", forKey: .type)
            try c.encode(device, forKey: .device)
            try c.encode(action, forKey: .action)
            try c.encode(message, forKey: .message)
        }
    }

    /// The event as the JSON text of one WebSocket message.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value here encodes; the fallback only keeps the signature honest.
        guard let data = try? encoder.encode(self) else { return #"{"reason":"unencodable event","type":"refused"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
#endif
