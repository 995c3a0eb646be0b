import Foundation

/// A command written to the command characteristic as a bare UTF-8 string.
///
/// The real firmware acts only on `stream_on`/`stream_off` and ignores the spec's `PING`,
/// `STATUS` and `RESET`; the client offers all five and the emulator answers them all.
public enum FlockCommand: String, Sendable, Hashable, CaseIterable {
    /// Connection keep-alive (spec).
    case ping = "PING"
    /// Request device status (spec).
    case status = "STATUS"
    /// Reset detection counters (spec).
    case reset = "RESET"
    /// Start the live scan stream (firmware).
    case streamOn = "stream_on"
    /// Stop the live scan stream (firmware).
    case streamOff = "stream_off"

    /// The bytes to write: the command's UTF-8 text, no terminator.
    public var data: Data { Data(rawValue.utf8) }

    /// Recognises written bytes (exact, case-sensitive). Trailing CR, LF and NUL are ignored
    /// because terminal tools and C strings tend to add them.
    public init?(data: Data) {
        var bytes = data[...]
        while let last = bytes.last, last == 0x0D || last == 0x0A || last == 0x00 {
            bytes = bytes.dropLast()
        }
        guard let text = String(data: Data(bytes), encoding: .utf8) else { return nil }
        self.init(rawValue: text)
    }
}
