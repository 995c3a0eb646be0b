import Foundation
import Testing

@testable import Kiro

/// §3.2 strings with firmware-facts truncation: at most N characters, at most 255 bytes,
/// cut only between characters.
struct ProtocolStringTests {
    /// Checks the invariants of one encoding of `text` with `limit`, and that it keeps as much as
    /// the rules allow.
    private func checkEncoding(_ text: String, limit: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let encoded = Array(KiroString.encode(text, maxCharacters: limit))
        guard let length = encoded.first else {
            Issue.record("no length byte", sourceLocation: sourceLocation)
            return
        }
        let body = Array(encoded.dropFirst())
        #expect(Int(length) == body.count, sourceLocation: sourceLocation)
        #expect(body.count <= 255, sourceLocation: sourceLocation)
        guard let decoded = String(bytes: body, encoding: .utf8) else {
            Issue.record("invalid UTF-8 for \(text.count) characters, limit \(limit)", sourceLocation: sourceLocation)
            return
        }
        #expect(decoded.count <= max(limit, 0), sourceLocation: sourceLocation)
        let characters = Array(text)
        #expect(Array(decoded) == Array(characters.prefix(decoded.count)), sourceLocation: sourceLocation)
        // Maximal: stopping early is only allowed when the next character would overflow 255 bytes.
        if decoded.count < min(characters.count, max(limit, 0)) {
            let next = characters[decoded.count]
            #expect(body.count + next.utf8.count > 255, sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["한", "😀", "👨‍👩‍👧‍👦", "🇰🇷", "e\u{301}", "a", "é", "日本", "a😀한"])
    func truncationNeverSplitsACharacter(_ unit: String) {
        for repeats in 0...90 {
            let text = String(repeating: unit, count: repeats)
            for limit in [-1, 0, 1, 2, 3, 10, 15, 20, 25, 30, 36, 40, 50, 60, 63, 64, 85, 86, 100, 255, 300] {
                checkEncoding(text, limit: limit)
            }
        }
    }

    @Test func truncationAtEveryBoundaryOfAMixedString() {
        let text = "Hi 안녕 😀👍🏽 🇰🇷 café\u{301} 👨‍👩‍👧 ok"
        for limit in 0...(text.count + 2) {
            let decoded = String(decoding: KiroString.encode(text, maxCharacters: limit).dropFirst(), as: UTF8.self)
            #expect(decoded == String(text.prefix(limit)))
            checkEncoding(text, limit: limit)
        }
    }

    @Test func knownByteCaps() {
        // 3-byte Hangul: 85 characters fill 255 bytes exactly.
        let korean = Array(KiroString.encode(String(repeating: "가", count: 100), maxCharacters: 100))
        #expect(korean.first == 255)
        #expect(korean.count == 256)
        // 4-byte emoji: 63 fit (252 bytes), a 64th would make 256.
        let emoji = Array(KiroString.encode(String(repeating: "😀", count: 100), maxCharacters: 100))
        #expect(emoji.first == 252)
        // A 25-byte family emoji is one character: 10 fit in 250 bytes.
        let family = Array(KiroString.encode(String(repeating: "👨‍👩‍👧‍👦", count: 20), maxCharacters: 20))
        #expect(family.first == 250)
        // ASCII stops at 255 bytes even with a larger character limit.
        let ascii = Array(KiroString.encode(String(repeating: "a", count: 300), maxCharacters: 300))
        #expect(ascii.first == 255)
        #expect(ascii.count == 256)
    }

    @Test func exactBytesForShortStrings() {
        #expect(KiroString.encode("", maxCharacters: 20) == Data([0x00]))
        #expect(KiroString.encode("abc", maxCharacters: 0) == Data([0x00]))
        #expect(KiroString.encode("abc", maxCharacters: -5) == Data([0x00]))
        #expect(KiroString.encode("abc", maxCharacters: 2) == protocolHex("02 61 62"))
        #expect(KiroString.encode("한글", maxCharacters: 1) == protocolHex("03 ED 95 9C"))
        #expect(KiroString.encode("😀x", maxCharacters: 1) == protocolHex("04 F0 9F 98 80"))
        #expect(KiroString.encode("e\u{301}x", maxCharacters: 1) == protocolHex("03 65 CC 81"))
    }

    @Test func aCharacterLongerThan255BytesIsDroppedWhole() {
        let huge = "e" + String(repeating: "\u{301}", count: 200)  // one character, 401 bytes
        #expect(huge.count == 1)
        #expect(KiroString.encode(huge, maxCharacters: 10) == Data([0x00]))
        #expect(KiroString.encode("ab" + huge, maxCharacters: 10) == protocolHex("02 61 62"))
    }

    @Test func truncatedHonoursACustomByteBudget() {
        #expect(KiroString.truncated("한글날", maxCharacters: 10, maxBytes: 8) == "한글")
        #expect(KiroString.truncated("한글날", maxCharacters: 10, maxBytes: 2) == "")
        #expect(KiroString.truncated("abc", maxCharacters: .max) == "abc")
    }
}
