import Foundation

/// Where the mesh shell writes: standard output, one line at a time, safe to use from the
/// command being run and from the task that shows incoming messages at once.
///
/// While the interactive prompt is up, a line that arrives is written above it and the
/// prompt, with what has been typed so far, is drawn again below.
final class MeshConsole: @unchecked Sendable {
    private let lock = NSLock()
    private var editing: (prompt: String, line: String)?

    /// Writes one line (or several, separated by newlines).
    func print(_ text: String) {
        lock.withLock {
            if let editing {
                write("\r\u{1B}[2K" + text + "\n" + editing.prompt + editing.line)
            } else {
                write(text + "\n")
            }
        }
    }

    /// The prompt and the line being typed, shown under what is printed; nil when none is.
    func setEditing(prompt: String, line: String) {
        lock.withLock {
            editing = (prompt, line)
        }
    }

    /// Stops keeping a prompt.
    func endEditing() {
        lock.withLock { editing = nil }
    }

    /// Writes raw terminal output (the line editor's redraws).
    func draw(_ text: String) {
        lock.withLock { write(text) }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
