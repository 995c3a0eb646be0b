import Foundation

/// Errors of a ``MeshCoreSession`` and the ``ConnectionManager``.
public enum MeshCoreError: Error, Sendable, Hashable, LocalizedError {
    /// A command was issued before ``MeshCoreSession/start()`` succeeded.
    case notStarted
    /// The radio did not answer `command` in time.
    case timeout(command: String)
    /// The radio answered `command` with ERR `code`.
    case commandFailed(command: String, code: MeshCoreErrorCode)
    /// The radio answered DISABLED (the feature is off in its firmware).
    case disabled(command: String)
    /// The command could not be encoded.
    case invalidCommand(MeshCoreEncodeError)
    /// No acknowledgement arrived for a direct message after every attempt.
    case notAcknowledged(attempts: Int)
    /// The link went down while the command was in flight.
    case linkLost
    /// The transport failed.
    case transport(String)
    /// No contact matches the name or key given.
    case unknownContact(String)
    /// A startup step of the connection manager failed.
    case startupFailed(step: String, reason: String)
    /// The radio's reply to `command` went on far beyond any real one (`frames` so far).
    case replyTooLong(command: String, frames: Int)
    /// The node refused the login (wrong password, or not in its access list).
    case loginFailed(server: String)
    /// The node did not answer `request` within `timeout` (the radio sent it; the mesh or the
    /// node stayed silent).
    case noAnswer(request: String, timeout: Duration)
    /// The radio answered `command` with something that cannot be what it asked for.
    case malformedReply(command: String, reason: String)

    public var errorDescription: String? {
        switch self {
        case .notStarted: "The radio session has not started"
        case .timeout(let command): "The radio did not answer \(command) in time"
        case .commandFailed(let command, let code): "The radio refused \(command): \(code)"
        case .disabled(let command): "\(command) is disabled on this radio"
        case .invalidCommand(let error): "Invalid command: \(error)"
        case .notAcknowledged(let attempts): "No acknowledgement after \(attempts) attempt\(attempts == 1 ? "" : "s")"
        case .linkLost: "The link to the radio was lost"
        case .transport(let reason): "Transport: \(reason)"
        case .unknownContact(let name): "No contact named \(name)"
        case .startupFailed(let step, let reason): "Startup step \(step) failed: \(reason)"
        case .replyTooLong(let command, let frames): "The radio's reply to \(command) did not end after \(frames) frames"
        case .loginFailed(let server): "\(server) refused the login"
        case .noAnswer(let request, let timeout): "No answer to \(request) within \(timeout)"
        case .malformedReply(let command, let reason): "The radio's reply to \(command) is unusable: \(reason)"
        }
    }

    /// The ERR code when the radio refused the command.
    public var radioErrorCode: MeshCoreErrorCode? {
        if case .commandFailed(_, let code) = self { code } else { nil }
    }
}
