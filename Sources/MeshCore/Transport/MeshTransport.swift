import Foundation
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A byte pipe to a MeshCore companion radio that carries one companion-protocol frame per
/// ``send(_:)`` and one per element of ``receivedData`` (PocketMesh's transport abstraction).
///
/// ``BLETransport`` (Nordic UART), ``StreamTransport`` (TCP and serial) and ``MockTransport``
/// conform. Transports that can report link changes also conform to ``MeshLinkReporting``.
public protocol MeshTransport: Sendable {
    /// Frames from the radio, one element per frame.
    var receivedData: AsyncStream<Data> { get async }
    /// True while frames can flow.
    var isConnected: Bool { get async }
    /// Opens the link (connect, discover and subscribe on BLE).
    func connect() async throws
    /// Closes the link.
    func disconnect() async
    /// Sends one frame; throws when the link is down.
    func send(_ data: Data) async throws
    /// How many commands may await their replies at once without the radio dropping any: the
    /// window of ``MeshCoreSession``'s pipelined batches. 1 unless the transport knows better.
    var maximumCommandsInFlight: Int { get }
}

extension MeshTransport {
    /// One: a transport that does not know the radio's queues sends a command only once the
    /// previous one was answered.
    public var maximumCommandsInFlight: Int { 1 }
}

/// A change of a transport's link, for the session and the connection manager.
public enum MeshLinkEvent: Sendable, Equatable {
    /// The link came up (after ``MeshTransport/connect()``).
    case connected
    /// The link went down unexpectedly; the transport (or the OS) is reconnecting by itself.
    case reconnecting
    /// The link came back by itself; the radio's app session must be started again.
    case reconnected
    /// The link went down and the transport will not bring it back by itself.
    case disconnected(reason: String?)
}

/// A transport that reports its link changes. The connection manager relies on it to never
/// show "connected" for a link that is down.
public protocol MeshLinkReporting: Sendable {
    /// Link changes from now on.
    func linkEvents() async -> AsyncStream<MeshLinkEvent>
}

/// Errors of the byte-stream transports (BLE and the `MockTransport` report `TetherCore/BLEError`).
public enum MeshTransportError: Error, Sendable, Hashable, LocalizedError {
    /// `send` before `connect`, or after the link went down.
    case notConnected
    /// The radio could not be reached.
    case connectionFailed(String)
    /// A frame longer than the protocol allows.
    case frameTooLarge(Int)
    /// The serial device could not be opened or configured.
    case serialPort(String)
    /// The radio has left so much of what was sent unread that nothing more is queued.
    case radioNotReading

    public var errorDescription: String? {
        switch self {
        case .notConnected: "Not connected to the radio"
        case .connectionFailed(let reason): "Could not reach the radio: \(reason)"
        case .frameTooLarge(let size): "A \(size)-byte frame is longer than the radio accepts"
        case .serialPort(let reason): "Serial port: \(reason)"
        case .radioNotReading: "The radio is not reading what is sent to it"
        }
    }

    /// One line for a networking error, in words rather than type names: the OS's reason
    /// for a system call that failed, the last reason for a connection attempt. Errors that
    /// are no networking errors give their `LocalizedError` description, else their own.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return String(cString: strerror(error.errnoCode))
        case let error as NIOConnectionError:
            if let last = error.connectionErrors.last { return describe(last.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "cannot resolve \(error.host)" }
            return "no address for \(error.host)"
        case let error as ChannelError:
            switch error {
            case .connectTimeout(let timeout): return "no answer within \(timeout.nanoseconds / 1_000_000) ms"
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return "the connection was closed"
            default: return "\(error)"
            }
        case let error as any LocalizedError:
            return error.errorDescription ?? "\(error)"
        default:
            return "\(error)"
        }
    }
}
