#if os(Linux)
import Foundation
import Glibc

/// The client side of D-Bus's SASL handshake.
///
/// EXTERNAL first (the kernel vouches for our uid on a Unix socket), then ANONYMOUS (what a
/// TCP-forwarded bus such as the BlueZ test guest allows); on a Unix socket the client asks
/// for descriptor passing (`NEGOTIATE_UNIX_FD`), needed by `AcquireWrite`/`AcquireNotify`.
enum DBusAuthentication {
    struct Outcome {
        let serverGUID: String
        let unixFDs: Bool
        let mechanism: String
    }

    static func authenticate(_ socket: DBusSocket, deadline: ContinuousClock.Instant) throws(DBusError) -> Outcome {
        try socket.writeAll([0], deadline: deadline)
        let uid = String(getuid())
        var offered = ["EXTERNAL", "ANONYMOUS"]
        var guid: String?
        var used = ""
        while guid == nil, !offered.isEmpty {
            let mechanism = offered.removeFirst()
            let initial = mechanism == "EXTERNAL" ? hex(uid) : hex("tether")
            try socket.writeAll(Array("AUTH \(mechanism) \(initial)\r\n".utf8), deadline: deadline)
            let line = try socket.readLine(deadline: deadline)
            if line.hasPrefix("OK ") {
                guid = String(line.dropFirst(3))
                used = mechanism
            } else if line.hasPrefix("REJECTED") {
                let accepted = Set(line.split(separator: " ").dropFirst().map(String.init))
                offered = offered.filter { accepted.contains($0) }
            } else if line.hasPrefix("DATA") {
                // A server that wants the identity as a DATA reply; EXTERNAL sends it again.
                try socket.writeAll(Array("DATA \(initial)\r\n".utf8), deadline: deadline)
                let answer = try socket.readLine(deadline: deadline)
                if answer.hasPrefix("OK ") {
                    guid = String(answer.dropFirst(3))
                    used = mechanism
                } else {
                    try socket.writeAll(Array("CANCEL\r\n".utf8), deadline: deadline)
                    _ = try socket.readLine(deadline: deadline)
                }
            } else {
                throw DBusError(name: DBusError.authFailed, message: "unexpected reply to AUTH: \(line.prefix(80))")
            }
        }
        guard let guid else {
            throw DBusError(name: DBusError.authFailed, message: "the bus accepted neither EXTERNAL (uid \(uid)) nor ANONYMOUS authentication")
        }
        var fds = false
        if socket.isUnix {
            try socket.writeAll(Array("NEGOTIATE_UNIX_FD\r\n".utf8), deadline: deadline)
            fds = try socket.readLine(deadline: deadline).hasPrefix("AGREE_UNIX_FD")
        }
        try socket.writeAll(Array("BEGIN\r\n".utf8), deadline: deadline)
        return Outcome(serverGUID: guid, unixFDs: fds, mechanism: used)
    }

    private static func hex(_ text: String) -> String {
        text.utf8.map { String(format: "%02x", $0) }.joined()
    }
}
#endif
