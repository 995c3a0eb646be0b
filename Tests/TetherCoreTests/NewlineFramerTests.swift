import Foundation
import Logging
import PropertyBased
import Testing

@testable import TetherCore

// MARK: - Helpers

/// Collects what a framer logs, so tests can check that warnings are not repeated per chunk.
private final class LineLogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Logger.Level] = []

    func record(_ level: Logger.Level) {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(level)
    }

    var warningCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return recorded.filter { $0 == .warning }.count
    }

    var logger: Logger {
        Logger(label: "test.newline") { _ in LineRecordingHandler(recorder: self) }
    }
}

private struct LineRecordingHandler: LogHandler {
    let recorder: LineLogRecorder
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.record(event.level)
    }
}

/// Feeds `bytes` in chunks whose sizes cycle through `sizes`; a size of 0 pushes an empty chunk.
private func feedChunked(
    _ framer: inout NewlineFramer, _ bytes: [UInt8], sizes: [Int]
) -> [Data] {
    let sizes = sizes.contains { $0 > 0 } ? sizes : [max(bytes.count, 1)]
    var lines: [Data] = []
    var offset = 0
    var turn = 0
    while offset < bytes.count {
        let size = min(sizes[turn % sizes.count], bytes.count - offset)
        turn += 1
        lines += framer.push(Data(bytes[offset..<offset + size]))
        offset += size
    }
    return lines
}

private func data(_ text: String) -> Data { Data(text.utf8) }

/// Keeps deliberate floods of discards out of the test output.
private let quietLogger = Logger(label: "test.quiet") { _ in SwiftLogNoOpLogHandler() }

/// Characters that exercise 1- to 4-byte UTF-8 sequences, including Korean.
private let lineAlphabet: [Character] = Array("aZ09:, R=한국어가나다é€😀\t")

/// Bytes biased towards `\n` and `\r` so that terminators, lone carriage returns and
/// `\r\n` pairs straddling chunk boundaries all show up often.
private let hostileByte = Gen.uint8().map { b -> UInt8 in
    switch b {
    case 0..<32: 0x0A
    case 32..<64: 0x0D
    default: b
    }
}

// MARK: - Property tests

@Suite struct NewlineFramerPropertyTests {
    @Test func splittingTextAnywhereYieldsTheSameLines() async {
        let lines = Gen<Character?>.element(of: lineAlphabet).map { $0! }
            .string(of: 0...30).array(of: 0...12)
        let terminators = Gen.bool.array(of: 1...12)
        let sizes = Gen.int(in: 0...17).array(of: 1...8)
        await propertyCheck(input: lines, terminators, sizes) { lines, useCRLF, sizes in
            var stream = [UInt8]()
            for (i, line) in lines.enumerated() {
                stream += Array(line.utf8)
                stream += useCRLF[i % useCRLF.count] ? [0x0D, 0x0A] : [0x0A]
            }

            var whole = NewlineFramer()
            let wholeLines = whole.pushLines(Data(stream))
            var split = NewlineFramer()
            let splitLines = feedChunked(&split, stream, sizes: sizes)
                .map { String(decoding: $0, as: UTF8.self) }

            #expect(wholeLines == lines)
            #expect(splitLines == lines)
            #expect(split.pendingByteCount == 0)
        }
    }

    @Test func splittingArbitraryBytesAnywhereYieldsTheSameFrames() async {
        let bytes = hostileByte.array(of: 0...400)
        let sizes = Gen.int(in: 0...40).array(of: 1...8)
        let maxLength = Gen.int(in: 1...24)
        await propertyCheck(input: bytes, sizes, maxLength) { bytes, sizes, maxLength in
            var whole = NewlineFramer(maxLineLength: maxLength, logger: quietLogger)
            let wholeLines = whole.push(Data(bytes))
            var split = NewlineFramer(maxLineLength: maxLength, logger: quietLogger)
            let splitLines = feedChunked(&split, bytes, sizes: sizes)

            #expect(splitLines == wholeLines)
            #expect(split.discardedLineCount == whole.discardedLineCount)
            #expect(split.pendingByteCount == whole.pendingByteCount)
            #expect(wholeLines.allSatisfy { $0.count <= maxLength })
            #expect(split.pendingByteCount <= maxLength + 1)
        }
    }

    @Test func bytePerBytePushingMatchesAReferenceSplit() async {
        // An independent, obviously-correct model: split on \n, strip one trailing \r,
        // drop what is too long, keep the unterminated tail pending.
        let bytes = hostileByte.array(of: 0...300)
        let maxLength = Gen.int(in: 1...16)
        await propertyCheck(input: bytes, maxLength) { bytes, maxLength in
            var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            var tail = Array(pieces.removeLast())  // empty after a final \n
            if tail.last == 0x0D { tail.removeLast() }  // may still become a terminator
            let expected = pieces.compactMap { piece -> Data? in
                var line = Array(piece)
                if line.last == 0x0D { line.removeLast() }
                return line.count <= maxLength ? Data(line) : nil
            }

            var framer = NewlineFramer(maxLineLength: maxLength, logger: quietLogger)
            let actual = feedChunked(&framer, bytes, sizes: [1])

            #expect(actual == expected)
            // An unterminated tail is already counted once it is known to be too long.
            let tailDiscarded = tail.count > maxLength ? 1 : 0
            #expect(framer.discardedLineCount == pieces.count - expected.count + tailDiscarded)
            let consumed = pieces.reduce(0) { $0 + $1.count + 1 }
            #expect(framer.pendingByteCount == (tailDiscarded == 1 ? 0 : bytes.count - consumed))
        }
    }
}

// MARK: - Example-based tests

@Suite struct NewlineFramerTests {
    @Test func emitsEveryCompleteLineAndKeepsTheTail() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(data("R:1234\nR:12")) == ["R:1234"])
        #expect(framer.pendingByteCount == 4)
        #expect(framer.pushLines(data("35\nR:1236\n")) == ["R:1235", "R:1236"])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func returnsRawLineBytesWithoutTerminators() {
        var framer = NewlineFramer()
        let lines = framer.push(Data([0x01, 0xFF, 0x0D, 0x0A, 0x00, 0x0A]))
        #expect(lines == [Data([0x01, 0xFF]), Data([0x00])])
    }

    @Test func stripsCRLFIncludingWhenSplitBetweenChunks() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(data("A:1\r\nB:2\r")) == ["A:1"])
        #expect(framer.pendingByteCount == 4)
        #expect(framer.pushLines(data("\n")) == ["B:2"])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func keepsCarriageReturnsThatAreNotBeforeTheNewline() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(data("a\rb\n")) == ["a\rb"])
        // A chunk-final \r followed by something other than \n is content after all.
        #expect(framer.pushLines(data("c\r")) == [])
        #expect(framer.pushLines(data("d\n")) == ["c\rd"])
        // Only one \r is part of the terminator.
        #expect(framer.pushLines(data("e\r\r\n")) == ["e\r"])
    }

    @Test func emitsEmptyLines() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(data("\n\r\nx\n\n")) == ["", "", "x", ""])
        #expect(framer.push(data("\n")) == [Data()])
    }

    @Test func reassemblesUTF8SplitInsideACharacter() {
        let text = "안녕하세요 😀"
        let bytes = Array((text + "\n").utf8)
        for cut in 1..<bytes.count {
            var framer = NewlineFramer()
            let first = framer.pushLines(Data(bytes[..<cut]))
            let second = framer.pushLines(Data(bytes[cut...]))
            #expect(first.isEmpty, "cut at \(cut)")
            #expect(second == [text], "cut at \(cut)")
        }
    }

    @Test func lineOfExactlyMaxLengthIsKeptEvenWithSplitCRLF() {
        var framer = NewlineFramer(maxLineLength: 4)
        #expect(framer.pushLines(data("abcd\n")) == ["abcd"])
        #expect(framer.pushLines(data("wxyz\r")) == [])
        #expect(framer.pendingByteCount == 5)
        #expect(framer.pushLines(data("\n")) == ["wxyz"])
        #expect(framer.discardedLineCount == 0)
    }

    @Test func overlongLineIsDiscardedAndFramingResumes() {
        let recorder = LineLogRecorder()
        var framer = NewlineFramer(maxLineLength: 4, logger: recorder.logger)
        #expect(framer.pushLines(data("ok\nabcde\nfine\n")) == ["ok", "fine"])
        #expect(framer.discardedLineCount == 1)
        #expect(recorder.warningCount == 1)

        // Over-long across chunks: nothing of it leaks into the next line.
        #expect(framer.pushLines(data("123")) == [])
        #expect(framer.pushLines(data("45")) == [])
        #expect(framer.pendingByteCount == 0)
        #expect(framer.pushLines(data("678")) == [])
        #expect(framer.pushLines(data("9\nnext\n")) == ["next"])
        #expect(framer.discardedLineCount == 2)
        #expect(recorder.warningCount == 2)
    }

    @Test func heldCarriageReturnThatOverflowsDiscardsTheLine() {
        var framer = NewlineFramer(maxLineLength: 4)
        #expect(framer.pushLines(data("abcd\r")) == [])
        // The \r turns out to be content, making the line 5 bytes long.
        #expect(framer.pushLines(data("e\nok\n")) == ["ok"])
        #expect(framer.discardedLineCount == 1)
    }

    @Test func neverEndingLineStaysBounded() {
        let recorder = LineLogRecorder()
        var framer = NewlineFramer(maxLineLength: 1024, logger: recorder.logger)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 244)
        var maxPending = 0
        var emitted = 0
        for _ in 0..<(10 * 1024 * 1024 / 244) {
            emitted += framer.push(chunk).count
            maxPending = max(maxPending, framer.pendingByteCount)
        }
        #expect(emitted == 0)
        #expect(maxPending <= 1024)
        #expect(maxPending > 1024 - 244)  // it did buffer up to the limit before giving up
        #expect(framer.discardedLineCount == 1)
        #expect(recorder.warningCount == 1)
        #expect(framer.pushLines(data("tail\nR:1\n")) == ["R:1"])
    }

    @Test func randomGarbageNeverExceedsTheBound() {
        var rng = SystemRandomNumberGenerator()
        var framer = NewlineFramer(maxLineLength: 64, logger: quietLogger)
        for _ in 0..<2_000 {
            let chunk = Data((0..<Int.random(in: 0...300, using: &rng)).map { _ in
                UInt8.random(in: 0...255, using: &rng)
            })
            for line in framer.push(chunk) {
                #expect(line.count <= 64)
                #expect(!line.contains(0x0A))
            }
            #expect(framer.pendingByteCount <= 65)
        }
    }

    @Test func resetDropsPartialLineAndDiscardState() {
        var framer = NewlineFramer(maxLineLength: 4)
        _ = framer.push(data("abc"))
        framer.reset()
        #expect(framer.pendingByteCount == 0)
        #expect(framer.pushLines(data("d\n")) == ["d"])

        _ = framer.push(data("toolong"))
        framer.reset()
        #expect(framer.pushLines(data("ok\n")) == ["ok"])

        _ = framer.push(data("x\r"))
        framer.reset()
        #expect(framer.pendingByteCount == 0)
        #expect(framer.pushLines(data("\ny\n")) == ["", "y"])
        #expect(framer.discardedLineCount == 1)
    }

    @Test func emptyChunksChangeNothing() {
        var framer = NewlineFramer()
        _ = framer.push(data("ab\r"))
        #expect(framer.push(Data()) == [])
        #expect(framer.pendingByteCount == 3)
        #expect(framer.pushLines(data("\n")) == ["ab"])
    }

    @Test func acceptsDataSlicesWithNonZeroStartIndex() {
        let backing = data("junkR:7\nR:8\n")
        var framer = NewlineFramer()
        #expect(framer.pushLines(backing[4...]) == ["R:7", "R:8"])
    }
}

/// Over-long lines are not lost without a word: `pushPieces` says where each one was dropped.
@Suite struct NewlineFramerPieceTests {
    @Test func anOverlongLineIsReportedInItsPlaceWithinAChunk() {
        var framer = NewlineFramer(maxLineLength: 4)
        let pieces = framer.pushPieces(Data("ab\nTOOLONG\ncd\n".utf8))
        #expect(pieces == [.line(Data("ab".utf8)), .overlongLine(seenBytes: 7), .line(Data("cd".utf8))])
        #expect(framer.discardedLineCount == 1)
    }

    @Test func anOverlongLineSpreadOverChunksIsReportedOnceWhereItBegan() {
        var framer = NewlineFramer(maxLineLength: 4)
        var pieces = framer.pushPieces(Data("ab\nTOO".utf8))
        pieces += framer.pushPieces(Data("LONG".utf8))
        pieces += framer.pushPieces(Data("AND LONGER".utf8))
        pieces += framer.pushPieces(Data("\ncd\n".utf8))
        #expect(pieces == [.line(Data("ab".utf8)), .overlongLine(seenBytes: 7), .line(Data("cd".utf8))])
        // Nothing of the discarded line is kept meanwhile.
        #expect(framer.pendingByteCount == 0)
    }

    @Test func pushKeepsOnlyTheLines() {
        var framer = NewlineFramer(maxLineLength: 4)
        #expect(framer.push(Data("ab\nTOOLONG\ncd\n".utf8)) == [Data("ab".utf8), Data("cd".utf8)])
    }
}
