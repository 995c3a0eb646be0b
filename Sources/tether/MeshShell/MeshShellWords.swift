/// Splits a command line into words as a shell does: spaces separate words, `"…"` and `'…'`
/// group them, a backslash takes the next character as it is.
///
/// Returns nil for an unterminated quote.
func meshShellWords(_ line: String) -> [String]? {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
        if escaped {
            current.append(character)
            escaped = false
            inWord = true
            continue
        }
        if character == "\\" && quote != "'" {
            escaped = true
            continue
        }
        if let open = quote {
            if character == open { quote = nil } else { current.append(character) }
            continue
        }
        switch character {
        case "\"", "'":
            quote = character
            inWord = true
        case " ", "\t":
            if inWord { words.append(current) }
            current = ""
            inWord = false
        default:
            current.append(character)
            inWord = true
        }
    }
    guard quote == nil, !escaped else { return nil }
    if inWord { words.append(current) }
    return words
}

/// Quotes `word` so that ``meshShellWords(_:)`` reads it back as one word.
func meshShellQuoted(_ word: String) -> String {
    guard word.isEmpty || word.contains(where: { " \t\"'\\".contains($0) }) else { return word }
    return "\"" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
