import Foundation
import GripFit
import PropertyBased
import Testing
import TetherCore

/// Keeps the warnings of deliberately malformed lines out of the test output.
private let quietParser = BLEMessageParser()

extension BLEMessageParser {
    /// ``decode(_:)`` as a value to compare.
    fileprivate func parseResult(_ line: String) -> Result<GripFitMessage, ParseFailure> {
        Result { () throws(ParseFailure) in try decode(line) }
    }

    /// The message in `line`, nil when there is none.
    fileprivate func message(_ line: String) -> GripFitMessage? { try? decode(line) }
}

private typealias Failure = BLEMessageParser.ParseFailure

// MARK: - Examples

@Suite struct ParserExampleTests {
    // Guide §5.1: the four example strings.
    @Test func guideExamples() {
        #expect(quietParser.message("R:123456") == .reading(123_456))
        #expect(quietParser.message("S:TARED") == .status(.tared))
        #expect(quietParser.message("D:GRIPFIT,1.0") == .deviceInfo(firmwareVersion: "1.0"))
        #expect(quietParser.message("garbage") == nil)
        #expect(quietParser.parseResult("garbage") == .failure(.unknownTag("garbage")))
    }

    @Test(arguments: [
        ("S:READY", GripFitStatus.ready),
        ("S:NOT_READY", .notReady),
        ("S:PONG", .pong),
        ("S:TARED", .tared),
        ("S:RATE:50", .rate(ms: 50)),
        ("S:RATE:1000", .rate(ms: 1000)),
    ])
    func everyStatus(line: String, status: GripFitStatus) {
        #expect(quietParser.parseResult(line) == .success(.status(status)))
        #expect(GripFitMessage.status(status).line == line)
    }

    @Test func unknownStatusIsKeptRaw() {
        #expect(quietParser.parseResult("S:CALIBRATING") == .success(.status(.unknown("CALIBRATING"))))
        // Status matching is exact: a lower-case variant is not READY.
        #expect(quietParser.parseResult("S:ready") == .success(.status(.unknown("ready"))))
    }

    @Test(arguments: ["S:RATE:", "S:RATE:abc", "S:RATE:0", "S:RATE:-50", "S:RATE:5.5"])
    func malformedRateStatus(line: String) {
        #expect(quietParser.parseResult(line) == .failure(.invalidRate(line)))
    }

    @Test(arguments: [("R:0", Int32(0)), ("R:-1", -1), ("R:-42", -42), ("R:834572", 834_572), ("R:-834572", -834_572)])
    func readings(line: String, value: Int32) {
        #expect(quietParser.parseResult(line) == .success(.reading(value)))
    }

    @Test func twentyFourBitLimitsAreAccepted() {
        #expect(quietParser.parseResult("R:-8388608") == .success(.reading(-8_388_608)))
        #expect(quietParser.parseResult("R:8388607") == .success(.reading(8_388_607)))
    }

    @Test(arguments: [
        "R:-8388609", "R:8388608",
        "R:2147483647", "R:-2147483648",  // fit Int32 but not 24 bits
        "R:9223372036854775807", "R:-9223372036854775808",  // Int64 limits
        "R:99999999999999999999999",  // beyond Int64
    ])
    func outOfRangeReadingsAreRejected(line: String) {
        #expect(quietParser.parseResult(line) == .failure(.readingOutOfRange(line)))
        #expect(quietParser.message(line) == nil)
    }

    @Test(arguments: ["R:", "R:12a", "R: 5", "R:1.5", "R:-", "R:5 ", "R:0x10", "R:--5", "R:1e3"])
    func nonNumericReadingsAreRejected(line: String) {
        #expect(quietParser.parseResult(line) == .failure(.nonNumericReading(line)))
        #expect(quietParser.message(line) == nil)
    }

    @Test func trailingCarriageReturnIsStripped() {
        #expect(quietParser.parseResult("R:123\r") == .success(.reading(123)))
        #expect(quietParser.parseResult("S:READY\r") == .success(.status(.ready)))
        #expect(quietParser.parseResult("S:RATE:50\r") == .success(.status(.rate(ms: 50))))
        #expect(quietParser.parseResult("D:GRIPFIT,1.0\r") == .success(.deviceInfo(firmwareVersion: "1.0")))
        #expect(quietParser.parseResult("\r") == .failure(.empty))
    }

    @Test(arguments: ["D:", "D:GRIPFIT", "D:GRIPFIT,", "D:OTHER,1.0", "D:gripfit,1.0"])
    func malformedDeviceInfo(line: String) {
        #expect(quietParser.parseResult(line) == .failure(.invalidDeviceInfo(line)))
    }

    @Test func deviceInfoKeepsTheWholeVersion() {
        #expect(quietParser.message("D:GRIPFIT,2.1.0-beta") == .deviceInfo(firmwareVersion: "2.1.0-beta"))
    }

    @Test(arguments: ["X:1", "r:5", "R5", "CMD:PING", " R:5", "RR:5"])
    func unknownTags(line: String) {
        #expect(quietParser.parseResult(line) == .failure(.unknownTag(line)))
    }

    @Test func emptyLine() {
        #expect(quietParser.parseResult("") == .failure(.empty))
        #expect(quietParser.message("") == nil)
    }

    @Test func failuresDescribeTheLine() {
        let failure = Failure.nonNumericReading("R:12a")
        #expect(failure.description.contains("R:12a"))
    }
}

// MARK: - Buffering through the core framer

@Suite struct ParserBufferTests {
    // Guide §5.1: a line split across two notifications.
    @Test func fragmentedLinesAreReassembled() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(Data("R:123".utf8)) == [])
        #expect(framer.pushLines(Data("456\nR:789\n".utf8)) == ["R:123456", "R:789"])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func framedLinesParse() {
        var framer = NewlineFramer()
        let lines = framer.pushLines(Data("D:GRIPFIT,1.0\r\nR:1\nS:TA".utf8))
            + framer.pushLines(Data("RED\n".utf8))
        #expect(lines.compactMap(quietParser.message) == [
            .deviceInfo(firmwareVersion: "1.0"), .reading(1), .status(.tared),
        ])
    }

    // Guide §2.2: the buffer is cleared on disconnect, so the next connection's first line
    // is not glued onto the old partial one.
    @Test func resetDropsThePartialLine() {
        var framer = NewlineFramer()
        #expect(framer.pushLines(Data("R:12".utf8)) == [])
        #expect(framer.pendingByteCount == 4)
        framer.reset()
        #expect(framer.pendingByteCount == 0)
        #expect(framer.pushLines(Data("R:34\n".utf8)) == ["R:34"])
    }
}

// MARK: - Properties

/// Characters that reach every branch: digits, signs, separators, `\r`, tag letters and
/// multi-byte UTF-8.
private let lineBody = Gen<Character?>.element(of: Array("0123456789-+.,: \r\nRSDAETY_é한😀\u{0}")).map { $0! }
    .string(of: 0...24)

/// Prefixes that steer random lines into each tag's parser, plus some that do not.
private let linePrefix = Gen<String?>.element(of: [
    "", "R:", "R:-", "S:", "S:RATE:", "D:", "D:GRIPFIT,", "r:", "X", "CMD:",
]).map { $0! }

/// What the parser must conclude for a line, judged only by its tag.
private enum Verdict { case empty, unknownTag, reading, status, deviceInfo }

private func expectedVerdict(_ line: String) -> Verdict {
    let line = line.hasSuffix("\r") ? String(line.dropLast()) : line
    if line.isEmpty { return .empty }
    if line.hasPrefix("R:") { return .reading }
    if line.hasPrefix("S:") { return .status }
    if line.hasPrefix("D:") { return .deviceInfo }
    return .unknownTag
}

/// Checks that the parser's answer is consistent with the line's tag and with `parse(_:)`.
private func checkParserInvariants(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let result = quietParser.parseResult(line)
    #expect(quietParser.message(line) == (try? result.get()), sourceLocation: sourceLocation)

    switch (expectedVerdict(line), result) {
    case (.empty, .failure(.empty)),
        (.unknownTag, .failure(.unknownTag)),
        (.reading, .failure(.nonNumericReading)),
        (.reading, .failure(.readingOutOfRange)),
        (.status, .success(.status)),
        (.status, .failure(.invalidRate)),
        (.deviceInfo, .success(.deviceInfo)),
        (.deviceInfo, .failure(.invalidDeviceInfo)):
        break
    case (.reading, .success(.reading(let value))):
        #expect(BLEMessageParser.readingRange.contains(value), sourceLocation: sourceLocation)
    default:
        Issue.record("\(line.debugDescription) gave \(result)", sourceLocation: sourceLocation)
    }
}

/// Valid messages of every kind, as the firmware would send them.
private let validMessage = zip(
    Gen.int(in: 0...7),
    Gen.int32(in: BLEMessageParser.readingRange),
    Gen.int(in: GripFitCommand.rateRange),
    Gen.uppercaseLetter.string(of: 1...8)
).map { kind, value, ms, word -> GripFitMessage in
    switch kind {
    case 0: .status(.ready)
    case 1: .status(.notReady)
    case 2: .status(.pong)
    case 3: .status(.tared)
    case 4: .status(.rate(ms: ms))
    // The "X_" prefix keeps random words from colliding with a known status.
    case 5: .status(.unknown("X_" + word))
    case 6: .deviceInfo(firmwareVersion: "\(ms % 10).\(word.count)")
    default: .reading(value)
    }
}

@Suite struct ParserPropertyTests {
    @Test func arbitraryStringsNeverCrashAndAreClassifiedByTag() async {
        await propertyCheck(count: 500, input: linePrefix, lineBody) { prefix, body in
            checkParserInvariants(prefix + body)
        }
    }

    @Test func arbitraryBytesDecodedAsUTF8NeverCrash() async {
        await propertyCheck(count: 500, input: linePrefix, Gen.uint8().array(of: 0...40)) { prefix, bytes in
            checkParserInvariants(prefix + String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test func every24BitReadingRoundTrips() async {
        await propertyCheck(count: 500, input: Gen.int32(in: BLEMessageParser.readingRange)) { value in
            let message = quietParser.message("R:\(value)")
            #expect(message == .reading(value))
            #expect(message.flatMap { quietParser.message($0.line) } == message)
            #expect(quietParser.message("R:\(value)\r") == .reading(value))
        }
    }

    @Test func validMessagesRoundTripThroughTheirLine() async {
        await propertyCheck(count: 300, input: validMessage) { message in
            #expect(quietParser.parseResult(message.line) == .success(message))
        }
    }

    @Test func splittingAStreamAnywhereParsesTheSameMessages() async {
        let sizes = Gen.int(in: 0...20).array(of: 1...8)
        await propertyCheck(input: validMessage.array(of: 0...20), sizes, Gen.bool) { messages, sizes, crlf in
            let stream = Array(messages.map { $0.line + (crlf ? "\r\n" : "\n") }.joined().utf8)

            var whole = NewlineFramer()
            let unsplit = whole.pushLines(Data(stream)).compactMap(quietParser.message)

            var split = NewlineFramer()
            var lines: [String] = []
            var offset = 0
            var turn = 0
            // Chunk sizes cycle through `sizes`; a 0 pushes an empty chunk, and at least one
            // positive size guarantees progress.
            let sizes = sizes.contains { $0 > 0 } ? sizes : [1]
            while offset < stream.count {
                let size = min(sizes[turn % sizes.count], stream.count - offset)
                turn += 1
                lines += split.pushLines(Data(stream[offset..<offset + size]))
                offset += size
            }

            #expect(unsplit == messages)
            #expect(lines.compactMap(quietParser.message) == messages)
            #expect(split.pendingByteCount == 0)
        }
    }
}
