import Foundation

/// One Text Input write: `[seq][len][opcodes…]`.
public struct TybeFrame: Hashable, Sendable {
    /// The frame's sequence number (wraps 255 → 0); the bridge drops a repeat as a duplicate.
    public var seq: UInt8
    /// The opcode bytes (0…253 of them).
    public var opcodes: Data

    /// The longest opcode payload a frame may carry (so a frame is at most 255 bytes).
    public static let maxOpcodeBytes = 253
    /// The frame header length: seq and len.
    public static let headerBytes = 2

    /// Creates a frame. `opcodes` must hold at most 253 bytes (a programming error otherwise:
    /// frames come from ``TybeFrameBuilder``, which never exceeds it).
    public init(seq: UInt8, opcodes: Data) {
        precondition(opcodes.count <= Self.maxOpcodeBytes, "A Tybe frame carries at most 253 opcode bytes")
        self.seq = seq
        self.opcodes = opcodes
    }

    /// The wire bytes: seq, len, opcodes.
    public var bytes: Data {
        var data = Data(capacity: Self.headerBytes + opcodes.count)
        data.append(seq)
        data.append(UInt8(opcodes.count))
        data.append(opcodes)
        return data
    }

    /// Decodes a Text Input write as the bridge does: ``TybeStatusCode/malformedFrame`` when
    /// the write is shorter than the header, `len` is over 253, or `len` disagrees with the
    /// bytes written. Opcodes are not interpreted here (see ``TybeOpcode/decode(_:)``).
    public init(decoding data: Data) throws(TybeStatusCode) {
        let bytes = [UInt8](data)
        guard bytes.count >= Self.headerBytes else { throw .malformedFrame }
        let len = Int(bytes[1])
        guard len <= Self.maxOpcodeBytes, bytes.count == Self.headerBytes + len else { throw .malformedFrame }
        self.init(seq: bytes[0], opcodes: Data(bytes[Self.headerBytes...]))
    }

    /// The result of ``init(decoding:)``.
    @available(*, deprecated, renamed: "init(decoding:)")
    public static func parse(_ data: Data) -> Result<TybeFrame, TybeStatusCode> {
        Result { () throws(TybeStatusCode) in try TybeFrame(decoding: data) }
    }
}

/// Splits an opcode stream into frames.
public enum TybeFrameBuilder {
    /// The most opcode bytes one frame carries.
    public static let maxOpcodeBytes = TybeFrame.maxOpcodeBytes
    /// The smallest usable frame limit: the 2-byte header plus one 3-byte KEY.
    public static let minFrameBytes = 5

    /// Packs `opcodes` greedily into frames of at most 253 opcode bytes and at most
    /// `maxFrameBytes` bytes on the wire (pass ATT MTU − 3 for write without response).
    ///
    /// - An opcode is never split: KEY (3 bytes) and TOGGLE_INPUT_SOURCE (1 byte) stay whole.
    ///   Other bytes (not valid opcodes) are carried one at a time and a trailing truncated KEY
    ///   as it is, so the bridge reports them rather than the chunker hiding them.
    /// - Sequence numbers start at `startingSeq` and wrap 255 → 0.
    /// - Empty `opcodes` gives no frames.
    /// - `maxFrameBytes` below 5 is clamped to 5, since no smaller frame holds a KEY; values
    ///   above 255 act as 255.
    public static func chunk(opcodes: Data, startingSeq: UInt8, maxFrameBytes: Int = 255) -> [TybeFrame] {
        let limit = min(maxOpcodeBytes, max(minFrameBytes, maxFrameBytes) - TybeFrame.headerBytes)
        let bytes = [UInt8](opcodes)
        var frames: [TybeFrame] = []
        var seq = startingSeq
        var start = 0
        var end = 0
        while end < bytes.count {
            let unit = bytes[end] == TybeOpcode.keyByte ? min(3, bytes.count - end) : 1
            if end + unit - start > limit {
                frames.append(TybeFrame(seq: seq, opcodes: Data(bytes[start..<end])))
                seq &+= 1
                start = end
            }
            end += unit
        }
        if end > start { frames.append(TybeFrame(seq: seq, opcodes: Data(bytes[start..<end]))) }
        return frames
    }

    /// Plans `text` and chunks its opcodes; see ``TybePlanner/plan(_:)`` and
    /// ``chunk(opcodes:startingSeq:maxFrameBytes:)``.
    public static func frames(for text: String, startingSeq: UInt8, maxFrameBytes: Int = 255) -> (frames: [TybeFrame], plan: TybePlan) {
        let plan = TybePlanner.plan(text)
        return (chunk(opcodes: plan.opcodes, startingSeq: startingSeq, maxFrameBytes: maxFrameBytes), plan)
    }
}
