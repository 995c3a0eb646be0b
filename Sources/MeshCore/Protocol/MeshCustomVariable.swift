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

    /// Parses the `CUSTOM_VARS` list (empty text: no variables); nil when a piece has no `:`.
    static func parse(list text: String) -> [MeshCustomVariable]? {
        guard !text.isEmpty else { return [] }
        var variables: [MeshCustomVariable] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let variable = parse(pair: String(piece)) else { return nil }
            variables.append(variable)
        }
        return variables
    }

    /// Lists variables as the firmware does: pairs joined by commas, stopping before the
    /// text would pass `limit` bytes.
    static func list(_ variables: [MeshCustomVariable], limit: Int) -> String {
        var text = ""
        for variable in variables {
            let pair = variable.name + ":" + variable.value
            let next = text.isEmpty ? pair : text + "," + pair
            guard next.utf8.count <= limit else { break }
            text = next
        }
        return text
    }
}
