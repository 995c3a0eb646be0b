/// A D-Bus error: an error reply from a peer, or a local failure named like one.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name (`org.bluez.Error.Failed`, `org.freedesktop.DBus.Error.ServiceUnknown` …).
    public let name: String
    /// The human-readable text that came with it.
    public let message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The error carried by an error reply.
    public init(reply: DBusMessage) {
        self.init(name: reply.errorName ?? Self.failed, message: reply.errorMessage)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// `org.freedesktop.DBus.Error.Failed`.
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    /// No owner for the destination name.
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The destination name has no owner (returned by GetNameOwner).
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// No reply arrived in time.
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// The connection is closed.
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    /// The bus policy refused the message.
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    /// No object at the path.
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    /// No such method.
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    /// No such interface.
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    /// No such property.
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    /// Arguments of the wrong type or value.
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// The bus address could not be reached.
    public static let noServer = "org.freedesktop.DBus.Error.NoServer"
    /// Authentication failed.
    public static let authFailed = "org.freedesktop.DBus.Error.AuthFailed"
    /// The bus sent something that is not D-Bus.
    public static let protocolError = "org.freedesktop.DBus.Error.InconsistentMessage"
    /// An outgoing queue or limit was exceeded.
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// The bus address is malformed.
    public static let badAddress = "org.freedesktop.DBus.Error.BadAddress"
}
