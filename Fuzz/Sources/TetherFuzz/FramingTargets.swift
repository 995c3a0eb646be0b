import Foundation
import TetherCore

let newlineFramer = FuzzTarget(name: "newline_framer", seeds: {
    ["R:120\r\nR:-5\nS:READY\n", "{\"event\":\"detection\"}\n\n", String(repeating: "x", count: 80) + "\nok\n"].map { chunked(Data($0.utf8)) }
}, run: { data in
    var framer = NewlineFramer(maxLineLength: 64)
    for chunk in chunks(of: data) {
        for piece in framer.pushPieces(chunk) {
            if case .line(let line) = piece { invariant(line.count <= 64, "a \(line.count)-byte line passed a 64-byte bound") }
        }
    }
})

let lengthPrefixedReassembler = FuzzTarget(name: "length_prefixed", seeds: {
    [Data([0x3E, 0x03, 0x00, 0x01, 0x02, 0x03, 0x3E, 0x01, 0x00, 0x09]), Data([0x00, 0x02, 0xAA, 0xBB, 0xFF, 0xFF])].map { chunked($0, size: 3) }
}, run: { data in
    let now = ContinuousClock.now
    var marked = LengthPrefixedReassembler<ContinuousClock.Instant>(endianness: .little, marker: 0x3E, maxFrameLength: 300, idleTimeout: nil)
    var bare = LengthPrefixedReassembler<ContinuousClock.Instant>(endianness: .big, marker: nil, maxFrameLength: 300, idleTimeout: nil)
    for chunk in chunks(of: data) {
        for frame in marked.push(chunk, at: now) { invariant(!frame.isEmpty && frame.count <= 300, "marked frame of \(frame.count) bytes") }
        for frame in bare.push(chunk, at: now) { invariant(!frame.isEmpty && frame.count <= 300, "bare frame of \(frame.count) bytes") }
    }
})
