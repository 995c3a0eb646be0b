import Foundation
import Testing
@testable import GripFit
@testable import TetherCore

/// The JSON `tether gripfit parse --json` prints, fed by the framer and parser as the CLI does.
@Suite struct ParseReportTests {
    static func reports(for chunks: String...) -> [String] {
        var framer = NewlineFramer(maxLineLength: 256)
        let parser = BLEMessageParser()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return chunks.flatMap { framer.pushLines(Data($0.utf8)) }.map { line in
            String(decoding: try! encoder.encode(GripFitParseReport(Result { () throws(BLEMessageParser.ParseFailure) in try parser.decode(line) }, raw: line)), as: UTF8.self)
        }
    }

    @Test func everyKindHasItsDocumentedShape() {
        #expect(Self.reports(for: "R:834572\nS:TARED\nS:RATE:50\nD:GRIPFIT,1.0\nR:abc\n") == [
            #"{"raw":834572,"type":"reading"}"#,
            #"{"status":"TARED","type":"status"}"#,
            #"{"ms":50,"status":"RATE","type":"status"}"#,
            #"{"type":"deviceInfo","version":"1.0"}"#,
            #"{"input":"R:abc","reason":"non-numeric reading \"R:abc\"","type":"invalid"}"#,
        ])
    }

    @Test func fragmentedInputGivesTheSameReports() {
        let fragmented = Self.reports(for: "R:123", "456\nR:789\n")
        #expect(fragmented == Self.reports(for: "R:123456\nR:789\n"))
        #expect(fragmented == [#"{"raw":123456,"type":"reading"}"#, #"{"raw":789,"type":"reading"}"#])
    }
}
