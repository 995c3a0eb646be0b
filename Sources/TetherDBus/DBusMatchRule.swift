/// A D-Bus match rule: which messages the bus routes to us, and which a handler receives.
public struct DBusMatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The message type (signals by default).
    public var kind: DBusMessage.Kind?
    /// The sender: a unique name (`:1.7`) or a well-known one (`org.bluez`). Unique names and
    /// `org.freedesktop.DBus` (the bus's own signals, which nobody else can send as) match
    /// exactly. Other well-known names are resolved by the bus; locally any unique sender
    /// matches them, so compare with the name's owner where it matters.
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    /// Objects at or below this path.
    public var pathNamespace: DBusObjectPath?
    /// The first body argument, when it is a string.
    public var arg0: String?

    /// Creates a rule; nil fields match anything.
    public init(
        kind: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, arg0: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0 = arg0
    }

    /// The rule in the bus's `AddMatch` syntax.
    public var description: String {
        var parts: [String] = []
        if let kind {
            let name = switch kind {
            case .methodCall: "method_call"
            case .methodReturn: "method_return"
            case .error: "error"
            case .signal: "signal"
            }
            parts.append("type='\(name)'")
        }
        if let sender { parts.append("sender='\(sender)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace { parts.append("path_namespace='\(pathNamespace)'") }
        if let arg0 { parts.append("arg0='\(arg0.replacingOccurrences(of: "'", with: "'\\''"))'") }
        return parts.joined(separator: ",")
    }

    /// Whether `message` matches (see ``sender`` for well-known names).
    public func matches(_ message: DBusMessage) -> Bool {
        if let kind, message.kind != kind { return false }
        if let sender {
            // The bus daemon always sends as `org.freedesktop.DBus`, and a unique name is exact;
            // any other well-known name is resolved by the bus, so a unique sender may be its
            // owner (routing, not proof: compare owners where it matters).
            let exact = sender.hasPrefix(":") || sender == "org.freedesktop.DBus" || message.sender?.hasPrefix(":") == false
            if exact {
                guard message.sender == sender else { return false }
            }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isDescendant(of: pathNamespace) else { return false }
        }
        if let arg0 {
            guard case .string(let first)? = message.body.first, first == arg0 else { return false }
        }
        return true
    }
}
