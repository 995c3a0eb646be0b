import TetherSimulator
import Tybe

/// The computer the Tybe dongle is plugged into: a focused text field behind a US-QWERTY
/// keyboard layout and a user-managed input source.
///
/// With the English input source, `AsciiKeymap/character(for:)` decides what each keystroke
/// types; with the Korean one, letter keys go through a Dubeolsik ``KoreanInputMethod`` and
/// other keys commit the syllable being composed, then type as in English. Enter types
/// `"\n"`, Tab `"\t"`, Backspace deletes (a jamo from the syllable being composed first).
/// Keystrokes with Ctrl, Alt or GUI held are shortcuts and type nothing. LANG1 (the Korean
/// keyboard's 한/영 key) switches the input source.
@SimulationActor
public final class TybeHost {
    /// The host's keyboard input source, chosen by the user.
    public enum InputSource: String, Sendable {
        /// US English: keys type ASCII.
        case english
        /// Korean 2-set (Dubeolsik): letter keys type jamo that the input method composes.
        case korean
    }

    /// The active input source. Switching commits the syllable being composed, as real
    /// input methods do.
    public var inputSource: InputSource {
        didSet {
            if oldValue != inputSource { commitPreedit() }
            changed.send()
        }
    }

    /// The keystrokes received, in order (including ones that typed nothing): the last
    /// ``keystrokeMemory`` of them (a host typing all day keeps no more).
    public private(set) var keystrokes: [KeyStroke] = []
    /// How many keystrokes were received in all.
    public private(set) var keystrokeCount = 0

    /// Keystrokes kept in ``keystrokes``.
    public nonisolated static let keystrokeMemory = 10_000
    /// Characters the text field keeps (its end): a bounded field, like a terminal's scrollback.
    public nonisolated static let textMemory = 100_000

    /// Text committed to the text field, excluding the input method's syllable in progress.
    private var committedText = ""
    private var ime = KoreanInputMethod()
    private let changed = ChangeSignal()

    /// Creates a host with an empty text field.
    public nonisolated init(inputSource: InputSource = .english) {
        self.inputSource = inputSource
    }

    /// What the text field shows: committed text plus the input method's syllable in progress.
    public var text: String { committedText + ime.preedit }

    /// The syllable the Korean input method is composing (empty in English).
    public var preedit: String { ime.preedit }

    /// A signal for every keystroke received and every change of the text field or the input
    /// source (one for many when the observer is behind).
    public func changes() -> AsyncStream<Void> { changed.changes() }

    /// Receives one key press and release from the USB keyboard.
    public func press(_ stroke: KeyStroke) {
        defer { changed.send() }
        keystrokes.append(stroke)
        keystrokeCount += 1
        // Trimmed in steps, not at every key.
        if keystrokes.count > Self.keystrokeMemory + 1_000 { keystrokes.removeFirst(keystrokes.count - Self.keystrokeMemory) }
        let m = stroke.modifiers
        // Shortcuts (⌘C, ⌃A...) do not type; the simulated host has no commands to run.
        guard !m.hasCtrl, !m.hasAlt, !m.hasGUI else { return }
        if stroke.key == .lang1 {
            inputSource = inputSource == .english ? .korean : .english
            return
        }
        if inputSource == .korean {
            if let jamo = KoreanKeymap.jamo(for: stroke) {
                ime.input(jamo)
                flushIME()
                return
            }
            if stroke.key == .backspace, !ime.preedit.isEmpty {
                ime.backspace()
                return
            }
            commitPreedit()
        }
        if stroke.key == .backspace {
            if !committedText.isEmpty { committedText.removeLast() }
        } else if let character = AsciiKeymap.character(for: stroke) {
            committedText.append(character)
            trimText()
        }
    }

    /// Empties the text field and forgets the keystrokes.
    public func clear() {
        keystrokes.removeAll()
        keystrokeCount = 0
        committedText = ""
        ime.reset()
        changed.send()
    }

    private func commitPreedit() {
        ime.commit()
        flushIME()
    }

    /// Moves what the input method finished into the text field.
    private func flushIME() {
        committedText += ime.committed
        ime.committed = ""
        trimText()
    }

    /// Keeps the field's end. (UTF-8 length is the cheap test: a character is 1 to 4 bytes.)
    private func trimText() {
        guard committedText.utf8.count > 4 * Self.textMemory else { return }
        committedText = String(committedText.suffix(Self.textMemory))
    }
}
