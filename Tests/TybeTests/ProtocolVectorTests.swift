import Foundation
import Testing

@testable import Tybe

/// One entry of `protocol/test-vectors.json`.
struct ProtocolTestVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let input: String
    let expectedOpcodes: String
    let startingSeq: UInt8
    let maxFrameBytes: Int
    let expectedFrames: [String]
    let untypeable: [String]
    let untypeableOffsets: [Int]?

    enum CodingKeys: String, CodingKey {
        case name, input, startingSeq, maxFrameBytes, untypeable
        case expectedOpcodes = "expected_opcodes"
        case expectedFrames = "expected_frames"
        case untypeableOffsets = "untypeable_offsets"
    }

    var testDescription: String { name }

    /// The vectors file, found from this source file so the test needs no bundle resources.
    static let fileURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TybeTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("protocol/test-vectors.json")

    static func load() throws -> [ProtocolTestVector] {
        try JSONDecoder().decode([ProtocolTestVector].self, from: Data(contentsOf: fileURL))
    }

    /// Loaded once for the parameterized test; a failure to load shows up as an empty list,
    /// which ``ProtocolVectorTests/fileIsComplete()`` reports.
    static let all: [ProtocolTestVector] = (try? load()) ?? []
}

/// Lower-case hex without separators, the vectors' format.
func protocolHex(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}

@Suite struct ProtocolVectorTests {
    @Test func fileIsComplete() throws {
        let vectors = try ProtocolTestVector.load()
        #expect(vectors.count >= 14)
        #expect(Set(vectors.map(\.name)).count == vectors.count, "vector names are unique")
        let required = try #require(vectors.first { $0.input == "안녕하세요 hello" })
        #expect(required.expectedOpcodes.hasPrefix("010700010e00"))
        #expect(vectors.contains { !$0.untypeable.isEmpty }, "some vector reports untypeable characters")
        #expect(vectors.contains { $0.expectedFrames.count > 1 }, "some vector needs several frames")
    }

    @Test(arguments: ProtocolTestVector.all)
    func vector(_ vector: ProtocolTestVector) throws {
        let plan = TybePlanner.plan(vector.input)
        #expect(protocolHex(plan.opcodes) == vector.expectedOpcodes)
        #expect(plan.opcodes == TybeOpcode.encode(plan.keystrokes))
        #expect(plan.untypeable.map(\.character) == vector.untypeable)
        if let offsets = vector.untypeableOffsets {
            #expect(plan.untypeable.map(\.offset) == offsets)
        }

        let frames = TybeFrameBuilder.chunk(
            opcodes: plan.opcodes, startingSeq: vector.startingSeq, maxFrameBytes: vector.maxFrameBytes)
        #expect(frames.map { protocolHex($0.bytes) } == vector.expectedFrames)

        // The bridge side reads the same frames back into the same keystrokes.
        var decoded: [KeyStroke] = []
        for frame in frames {
            let parsed = try TybeFrame(decoding: frame.bytes)
            #expect(parsed == frame)
            let (opcodes, error) = TybeOpcode.decode(parsed.opcodes)
            #expect(error == nil)
            for case .key(let stroke) in opcodes { decoded.append(stroke) }
        }
        #expect(decoded == plan.keystrokes)
    }
}
