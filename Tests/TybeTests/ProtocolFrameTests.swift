import Foundation
import Testing

@testable import Tybe

@Suite struct ProtocolFrameTests {
    /// An opcode stream of `keys` KEY opcodes with a 1-byte toggle every `toggleEvery` keys
    /// (0 for none), so chunk boundaries meet both opcode sizes.
    static func stream(keys: Int, toggleEvery: Int = 0) -> Data {
        var data = Data()
        for i in 0..<keys {
            data += TybeOpcode.key(KeyStroke(HIDKey(rawValue: UInt8(4 + i % 26)))).bytes
            if toggleEvery > 0, i % toggleEvery == toggleEvery - 1 { data += TybeOpcode.toggleInputSource.bytes }
        }
        return data
    }

    @Test(arguments: [5, 6, 7, 8, 20, 23 - 3, 185 - 3, 247 - 3, 255, 256, 512])
    func chunkingRespectsLimits(maxFrameBytes: Int) throws {
        for toggleEvery in [0, 1, 4] {
            for keys in [1, 2, 84, 85, 300, 1000] {
                let opcodes = Self.stream(keys: keys, toggleEvery: toggleEvery)
                let frames = TybeFrameBuilder.chunk(opcodes: opcodes, startingSeq: 200, maxFrameBytes: maxFrameBytes)
                var joined = Data()
                var decoded: [TybeOpcode] = []
                for (index, frame) in frames.enumerated() {
                    #expect(frame.bytes.count <= min(maxFrameBytes, 255))
                    #expect(frame.opcodes.count <= 253)
                    #expect(!frame.opcodes.isEmpty)
                    #expect(frame.seq == UInt8(truncatingIfNeeded: 200 + index))
                    // Each frame decodes on its own: no opcode was split.
                    let (ops, error) = TybeOpcode.decode(frame.opcodes)
                    #expect(error == nil)
                    decoded += ops
                    joined += frame.opcodes
                }
                #expect(joined == opcodes)
                #expect(TybeOpcode.decode(opcodes).opcodes == decoded)
                // Greedy: no two neighbours could have been merged.
                let capacity = min(253, maxFrameBytes - 2)
                for (a, b) in zip(frames, frames.dropFirst()) {
                    let firstOpcodeOfB = b.opcodes.first == TybeOpcode.keyByte ? 3 : 1
                    #expect(a.opcodes.count + firstOpcodeOfB > capacity)
                }
            }
        }
    }

    @Test func seqWrapsFrom255To0() {
        let frames = TybeFrameBuilder.chunk(opcodes: Self.stream(keys: 5), startingSeq: 254, maxFrameBytes: 5)
        #expect(frames.map(\.seq) == [254, 255, 0, 1, 2])
        #expect(frames.allSatisfy { $0.bytes.count == 5 })
    }

    @Test func fullFramesCarry84KeysAt255() {
        let frames = TybeFrameBuilder.chunk(opcodes: Self.stream(keys: 200), startingSeq: 0)
        #expect(frames.map(\.opcodes.count) == [252, 252, 96])
        #expect(frames.map { $0.bytes.count } == [254, 254, 98])
        // Toggles fill the last byte of a 253-byte payload.
        let withToggle = Self.stream(keys: 84) + TybeOpcode.toggleInputSource.bytes + Self.stream(keys: 1)
        #expect(TybeFrameBuilder.chunk(opcodes: withToggle, startingSeq: 0).map(\.opcodes.count) == [253, 3])
    }

    @Test func emptyOpcodesMakeNoFrames() {
        #expect(TybeFrameBuilder.chunk(opcodes: Data(), startingSeq: 9).isEmpty)
        #expect(TybeFrameBuilder.chunk(opcodes: Data(), startingSeq: 9, maxFrameBytes: 1).isEmpty)
    }

    @Test(arguments: [Int.min, -1, 0, 1, 2, 3, 4])
    func tinyLimitsClampToFiveBytes(maxFrameBytes: Int) {
        let frames = TybeFrameBuilder.chunk(opcodes: Self.stream(keys: 3), startingSeq: 0, maxFrameBytes: maxFrameBytes)
        #expect(frames.count == 3)
        #expect(frames.allSatisfy { $0.bytes.count == TybeFrameBuilder.minFrameBytes })
    }

    @Test func malformedStreamsAreCarriedWithoutSplittingKeys() {
        // An unknown byte travels alone; a truncated trailing KEY stays together.
        let data = Data([0x01, 0x04, 0x00, 0x7E, 0x01, 0x05, 0x00, 0x01, 0x06])
        let frames = TybeFrameBuilder.chunk(opcodes: data, startingSeq: 0, maxFrameBytes: 5)
        #expect(frames.map { [UInt8]($0.opcodes) } == [[0x01, 0x04, 0x00], [0x7E], [0x01, 0x05, 0x00], [0x01, 0x06]])
    }

    @Test func frameBytesAndParse() throws {
        let frame = TybeFrame(seq: 7, opcodes: Data([0x01, 0x04, 0x02]))
        #expect(frame.bytes == Data([7, 3, 0x01, 0x04, 0x02]))
        #expect(try TybeFrame(decoding: frame.bytes) == frame)
        #expect(try TybeFrame(decoding: Data([9, 0])) == TybeFrame(seq: 9, opcodes: Data()))
        let full = TybeFrame(seq: 1, opcodes: Data(repeating: 0x02, count: 253))
        #expect(full.bytes.count == 255)
        #expect(try TybeFrame(decoding: full.bytes) == full)
    }

    @Test(arguments: [
        Data(), Data([0]), Data([0, 1]), Data([0, 2, 0x01]), Data([0, 1, 0x02, 0x02]),
        Data([0, 254]) + Data(repeating: 0x02, count: 254), Data([0, 255]) + Data(repeating: 0x02, count: 255),
    ])
    func parseRejectsMalformedFrames(data: Data) {
        #expect(throws: TybeStatusCode.malformedFrame) { try TybeFrame(decoding: data) }
    }

    @Test func parseHandlesDataSlices() throws {
        let backing = Data([0xAA, 0xBB, 5, 3, 0x01, 0x04, 0x00])
        let slice = backing[2...]
        #expect(try TybeFrame(decoding: slice) == TybeFrame(seq: 5, opcodes: Data([0x01, 0x04, 0x00])))
        #expect(TybeOpcode.decode(backing[4...]).opcodes == [.key(KeyStroke(.a))])
    }

    @Test func opcodeBytesAndDecode() {
        #expect(TybeOpcode.key(KeyStroke(.a, .leftShift)).bytes == Data([0x01, 0x04, 0x02]))
        #expect(TybeOpcode.toggleInputSource.bytes == Data([0x02]))
        #expect(TybeOpcode.encode([KeyStroke(.h), KeyStroke(.i, .rightShift)]) == Data([1, 0x0B, 0, 1, 0x0C, 0x20]))

        let good = TybeOpcode.decode(Data([0x01, 0x04, 0x00, 0x02, 0x01, 0x28, 0x08]))
        #expect(good.opcodes == [.key(KeyStroke(.a)), .toggleInputSource, .key(KeyStroke(.enter, .leftGUI))])
        #expect(good.error == nil)

        let unknown = TybeOpcode.decode(Data([0x01, 0x04, 0x00, 0x03, 0x01, 0x05, 0x00]))
        #expect(unknown.opcodes == [.key(KeyStroke(.a))])
        #expect(unknown.error == TybeStatusCode.unknownOpcode.rawValue)

        let truncated = TybeOpcode.decode(Data([0x01, 0x04, 0x00, 0x01, 0x05]))
        #expect(truncated.opcodes == [.key(KeyStroke(.a))])
        #expect(truncated.error == TybeStatusCode.malformedFrame.rawValue)

        #expect(TybeOpcode.decode(Data([0x00])).error == 0x02)
        #expect(TybeOpcode.decode(Data()).opcodes.isEmpty)
        // Keycodes are passed through; INVALID_KEY is the bridge's range check.
        #expect(TybeOpcode.decode(Data([0x01, 0x00, 0x00])).opcodes == [.key(KeyStroke(HIDKey(rawValue: 0)))])
    }
}
