import Foundation

/// One of the board-specific settings `GET_CUSTOM_VARS` lists and `SET_CUSTOM_VAR` changes
/// (for example `gps` or `gps_interval` on boards with a GPS).
///
/// The radio lists them as `name:value` pairs separated by commas, with no escaping, so a
/// name holds neither `:` nor `,` and a value no `,`.
public struct MeshCustomVariable: Sendable, Hashable, Codable {
    /// The variable's name.
    public var name: String
    /// Its value, as text.
    public var value: String

    /// Creates a name and value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name:value`, after checking that the radio could list it back.
    func encoded() throws(MeshCoreEncodeError) -> String {
        guard !name.isEmpty, !name.contains(":"), !name.contains(",") else {
            throw .invalidArgument("a custom variable's name must be non-empty, without ':' or ',': \(name.debugDescription)")
        }
        guard !value.contains(",") else {
            throw .invalidArgument("a custom variable's value cannot contain ',': \(value.debugDescription)")
        }
        return name + ":" + value
    }

    /// Parses `SET_CUSTOM_VAR`'s text as the firmware does: split at the first `:`.
    static func parse(pair text: String) -> MeshCustomVariable? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        return MeshCustomVariable(name: String(text[..<colon]), value: String(text[text.index(after: colon)...]))
    }

    /// Parses the `CUSTOM_VARS` list (empty text: no variables). A piece without `:` belongs to
    /// the value before it (a value the board wrote with a comma in it); nil when the list
    /// starts with such a piece.
    static func parse(list text: String) -> [MeshCustomVariable]? {
        guard !text.isEmpty else { return [] }
        var variables: [MeshCustomVariable] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            if let variable = parse(pair: String(piece)) {
                variables.append(variable)
            } else if !variables.isEmpty {
                variables[variables.count - 1].value += "," + piece
            } else {
                return nil
            }
        }
        return variables
    }

    /// The list's text: pairs joined by commas.
    static func list(_ variables: [MeshCustomVariable]) -> String {
        variables.map { $0.name + ":" + $0.value }.joined(separator: ",")
    }

    /// The variables a radio lists in one `CUSTOM_VARS` frame: it stops adding once the text
    /// reaches 140 bytes, and a frame holds 175.
    package static func fitting(_ variables: [MeshCustomVariable]) -> [MeshCustomVariable] {
        var text = 0
        var kept: [MeshCustomVariable] = []
        for variable in variables {
            guard text < 140 else { break }
            let next = text + (kept.isEmpty ? 0 : 1) + variable.name.utf8.count + 1 + variable.value.utf8.count
            guard next <= MeshCoreFrameLimits.maximumFrameSize - 1 else { break }
            kept.append(variable)
            text = next
        }
        return kept
    }
}
