import Foundation

/// One Text Input opcode.
public enum TybeOpcode: Hashable, Sendable {
    /// `0x01 keycode modifiers`: press and release one key.
    case key(KeyStroke)
    /// `0x02`: reserved for compatibility; clients never emit it.
    case toggleInputSource

    /// The KEY opcode byte.
    public static let keyByte: UInt8 = 0x01
    /// The TOGGLE_INPUT_SOURCE opcode byte.
    public static let toggleInputSourceByte: UInt8 = 0x02

    /// The opcode's wire bytes.
    public var bytes: Data {
        switch self {
        case .key(let stroke): Data([Self.keyByte, stroke.key.rawValue, stroke.modifiers.rawValue])
        case .toggleInputSource: Data([Self.toggleInputSourceByte])
        }
    }

    /// The wire length of this opcode.
    public var byteCount: Int {
        switch self {
        case .key: 3
        case .toggleInputSource: 1
        }
    }

    /// Encodes keystrokes as consecutive KEY opcodes.
    public static func encode(_ strokes: [KeyStroke]) -> Data {
        var data = Data(capacity: strokes.count * 3)
        for stroke in strokes {
            data.append(contentsOf: [keyByte, stroke.key.rawValue, stroke.modifiers.rawValue])
        }
        return data
    }

    /// Decodes an opcode stream as the bridge does: everything up to the first problem.
    ///
    /// `error` is nil when the whole stream parsed, `0x02` (UNKNOWN_OPCODE) at an unknown
    /// opcode byte, `0x01` (MALFORMED_FRAME) for a KEY cut short; the opcodes before the
    /// problem are still returned (the bridge sends those keys). Keycodes are not range-checked
    /// here: see ``HIDKey/isValid`` for INVALID_KEY.
    public static func decode(_ data: Data) -> (opcodes: [TybeOpcode], error: UInt8?) {
        let bytes = [UInt8](data)
        var opcodes: [TybeOpcode] = []
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case keyByte:
                guard i + 3 <= bytes.count else {
                    return (opcodes, TybeStatusCode.malformedFrame.rawValue)
                }
                opcodes.append(.key(KeyStroke(HIDKey(rawValue: bytes[i + 1]), HIDModifiers(rawValue: bytes[i + 2]))))
                i += 3
            case toggleInputSourceByte:
                opcodes.append(.toggleInputSource)
                i += 1
            default:
                return (opcodes, TybeStatusCode.unknownOpcode.rawValue)
            }
        }
        return (opcodes, nil)
    }
}
