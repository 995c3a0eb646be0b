#if os(macOS) || os(Linux)
import Foundation

/// One device's app screen in the studio: it follows the device module's client and state
/// object (no second copy of device logic), shows their state, and carries out what the page
/// asks for.
///
/// The state is read under observation tracking: whatever ``state()`` reads from an
/// `@Observable` object is what makes the screen publish again when it changes (at most every
/// ``StudioScreens/publishInterval``).
@MainActor
public protocol StudioScreen: AnyObject {
    /// The screen's state as the page draws it.
    associatedtype State: Encodable

    /// Which device the screen is for (`gripfit`, `kiro`, `tybe`, `flock`, `mesh`): the
    /// `device` of its messages.
    var device: String { get }

    /// Starts following the device's client (subscribes; connects to nothing).
    func start() async

    /// Stops following it and ends its work: a recording in progress is saved, its link closed.
    func stop() async

    /// The state now. Reads of `@Observable` objects here are tracked.
    func state() -> State

    /// Carries out one request from the page; a thrown error's text is shown to that page.
    func perform(_ action: StudioAction) async throws(StudioProtocolError)

    /// A file the page downloads (`GET /export/<device>/<name>`): a session as CSV, say.
    func export(_ name: String) async throws(StudioProtocolError) -> StudioExport
}

extension StudioScreen {
    /// No exports.
    public func export(_ name: String) async throws(StudioProtocolError) -> StudioExport {
        throw StudioProtocolError("the \(device) screen has nothing to export")
    }
}

/// A file a screen exports.
public struct StudioExport: Sendable, Equatable {
    /// The name the browser saves it under.
    public var fileName: String
    /// Its media type (`text/csv; charset=utf-8`).
    public var contentType: String
    /// Its bytes.
    public var body: Data

    /// Creates an export.
    public init(fileName: String, contentType: String, body: Data) {
        self.fileName = fileName
        self.contentType = contentType
        self.body = body
    }
}

/// A request a page makes of one device's screen: `{"type":"action","device":…,"action":…, …}`
/// with the action's own arguments beside.
public struct StudioAction: Sendable, Equatable {
    /// The device screen it is for.
    public var device: String
    /// What to do (`tare`, `connect`, …).
    public var name: String
    /// The other members of the request.
    public var arguments: [String: StudioValue]

    /// Creates an action (tests make them directly).
    public init(device: String, name: String, arguments: [String: StudioValue] = [:]) {
        self.device = device
        self.name = name
        self.arguments = arguments
    }

    /// The text argument `key`, at most `maximumLength` characters.
    public func string(_ key: String, maximumLength: Int = 4096) throws(StudioProtocolError) -> String {
        guard case .string(let text)? = arguments[key] else { throw StudioProtocolError("\(name) needs \"\(key)\" (text)") }
        guard text.count <= maximumLength else { throw StudioProtocolError("\"\(key)\" is longer than \(maximumLength) characters") }
        return text
    }

    /// The number argument `key`, which must lie in `range`.
    public func number(_ key: String, in range: ClosedRange<Double>) throws(StudioProtocolError) -> Double {
        guard case .number(let value)? = arguments[key] else { throw StudioProtocolError("\(name) needs \"\(key)\" (a number)") }
        guard value.isFinite, range.contains(value) else {
            throw StudioProtocolError("\"\(key)\" must be \(Self.format(range.lowerBound))…\(Self.format(range.upperBound))")
        }
        return value
    }

    /// The whole-number argument `key`, which must lie in `range`.
    public func integer(_ key: String, in range: ClosedRange<Int>) throws(StudioProtocolError) -> Int {
        let value = try number(key, in: Double(range.lowerBound)...Double(range.upperBound))
        guard value.rounded() == value else { throw StudioProtocolError("\"\(key)\" must be a whole number") }
        return Int(value)
    }

    /// The true-or-false argument `key`.
    public func flag(_ key: String) throws(StudioProtocolError) -> Bool {
        guard case .bool(let value)? = arguments[key] else { throw StudioProtocolError("\(name) needs \"\(key)\" (true or false)") }
        return value
    }

    /// The text argument `key` as a UUID.
    public func uuid(_ key: String) throws(StudioProtocolError) -> UUID {
        guard let uuid = UUID(uuidString: try string(key, maximumLength: 64)) else {
            throw StudioProtocolError("\"\(key)\" is not an identifier")
        }
        return uuid
    }

    /// An error for an action this screen does not have.
    public var unknown: StudioProtocolError { StudioProtocolError("the \(device) screen has no action \"\(name)\"") }

    private static func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A JSON value from a page's request (the requests are at most 64 KiB, so it is bounded).
public enum StudioValue: Sendable, Equatable, Decodable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([StudioValue])
    /// An object.
    case object([String: StudioValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([StudioValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: StudioValue].self))
        }
    }
}
#endif

#if os(macOS) || os(Linux)
/// A screen's long work (a connection, a compose) run apart from its action queue, so an
/// action that must interrupt it (Disconnect, Reset) is not queued behind it. One piece at a
/// time, in order, at most ``capacity`` started or waiting.
@MainActor
final class ScreenWork {
    /// Pieces of work started or waiting at once; more are refused.
    static let capacity = 4

    private var tasks: [Int: Task<Void, Never>] = [:]
    private var last: Task<Void, Never>?
    private var serial = 0

    /// Runs `body` after the work before it ends, then `finally` — also when the work was
    /// cancelled before `body` began, so what it promised to undo (a "composing" flag) is
    /// undone. False (nothing runs) when ``capacity`` pieces are started or waiting.
    @discardableResult
    func run(_ body: @escaping @MainActor () async -> Void, finally: (@MainActor () -> Void)? = nil) -> Bool {
        guard tasks.count < Self.capacity else { return false }
        serial += 1
        let id = serial
        let previous = last
        let task = Task { [weak self] in
            await previous?.value
            if !Task.isCancelled { await body() }
            finally?()
            self?.tasks[id] = nil
        }
        tasks[id] = task
        last = task
        return true
    }

    /// Cancels every piece started or waiting (what one under way does on cancellation is its
    /// own; those waiting do not begin).
    func cancel() {
        for task in tasks.values { task.cancel() }
    }

    /// Waits for every piece started or waiting to end.
    func finish() async {
        for task in Array(tasks.values) { await task.value }
    }
}
#endif
