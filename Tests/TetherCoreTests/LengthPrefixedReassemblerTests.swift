import Foundation
import Logging
import PropertyBased
import Testing

@testable import TetherCore

// MARK: - Helpers

/// A manually advanced instant, so idle timeouts are tested without sleeping.
private struct FakeInstant: InstantProtocol {
    var offset: Duration

    static let zero = FakeInstant(offset: .zero)

    func advanced(by duration: Duration) -> FakeInstant {
        FakeInstant(offset: offset + duration)
    }

    func duration(to other: FakeInstant) -> Duration {
        other.offset - offset
    }

    static func < (lhs: FakeInstant, rhs: FakeInstant) -> Bool {
        lhs.offset < rhs.offset
    }
}

private typealias Reassembler = LengthPrefixedReassembler<FakeInstant>

/// Collects what a reassembler logs, so tests can check that discards are reported.
private final class FrameLogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Logger.Level] = []

    func record(_ level: Logger.Level) {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(level)
    }

    func count(_ level: Logger.Level) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return recorded.filter { $0 == level }.count
    }

    var logger: Logger {
        Logger(label: "test.frames") { _ in FrameRecordingHandler(recorder: self) }
    }
}

private struct FrameRecordingHandler: LogHandler {
    let recorder: FrameLogRecorder
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

/// Feeds `bytes` in chunks whose sizes cycle through `sizes`, all at the same instant;
/// a size of 0 pushes an empty chunk.
private func feedChunked(
    _ reassembler: inout Reassembler, _ bytes: [UInt8], sizes: [Int]
) -> [Data] {
    let sizes = sizes.contains { $0 > 0 } ? sizes : [max(bytes.count, 1)]
    var payloads: [Data] = []
    var offset = 0
    var turn = 0
    while offset < bytes.count {
        let size = min(sizes[turn % sizes.count], bytes.count - offset)
        turn += 1
        payloads += reassembler.push(Data(bytes[offset..<offset + size]), at: .zero)
        offset += size
    }
    return payloads
}

private func frame(
    _ payload: [UInt8], _ endianness: Reassembler.Endianness = .big, marker: UInt8? = nil
) -> [UInt8] {
    // Test payloads are small, so encoding cannot fail.
    Array(try! Reassembler.frame(Data(payload), endianness: endianness, marker: marker))
}

private let meshMarker: UInt8 = 0x3E  // ">", MeshCore radio-to-host

/// Keeps deliberate floods of discards out of the test output.
private let quietLogger = Logger(label: "test.quiet") { _ in SwiftLogNoOpLogHandler() }

// MARK: - Property tests

@Suite struct LengthPrefixedReassemblerPropertyTests {
    @Test func splittingFramesAnywhereYieldsTheSamePayloads() async {
        let payloads = Gen.uint8().array(of: 1...80).array(of: 0...8)
        let littleEndian = Gen.bool
        let useMarker = Gen.bool
        let sizes = Gen.int(in: 0...23).array(of: 1...8)
        await propertyCheck(input: payloads, littleEndian, useMarker, sizes) {
            payloads, littleEndian, useMarker, sizes in
            let endianness: Reassembler.Endianness = littleEndian ? .little : .big
            let marker = useMarker ? meshMarker : nil
            let stream = payloads.flatMap { frame($0, endianness, marker: marker) }

            let make = {
                Reassembler(
                    endianness: endianness, marker: marker, maxFrameLength: 80, logger: quietLogger)
            }
            var whole = make()
            let wholePayloads = whole.push(Data(stream), at: .zero)
            var split = make()
            let splitPayloads = feedChunked(&split, stream, sizes: sizes)

            let expected = payloads.map { Data($0) }
            #expect(wholePayloads == expected)
            #expect(splitPayloads == expected)
            #expect(split.pendingByteCount == 0)
            #expect(split.discardedFrameCount == 0)
            #expect(split.skippedByteCount == 0)
        }
    }

    @Test func splittingGarbageAnywhereYieldsTheSameOutputWithAMarker() async {
        // Resynchronisation on a marker depends only on the bytes, never on chunk edges.
        // Bytes are biased towards the marker and small lengths so that plausible headers,
        // rejected headers and real frames all occur.
        let byte = Gen.uint8().map { b -> UInt8 in
            switch b {
            case 0..<40: meshMarker
            case 40..<120: b % 6
            default: b
            }
        }
        let bytes = byte.array(of: 0...300)
        let littleEndian = Gen.bool
        let sizes = Gen.int(in: 0...19).array(of: 1...8)
        await propertyCheck(input: bytes, littleEndian, sizes) { bytes, littleEndian, sizes in
            let endianness: Reassembler.Endianness = littleEndian ? .little : .big
            let make = {
                Reassembler(
                    endianness: endianness, marker: meshMarker, maxFrameLength: 5, logger: quietLogger)
            }
            var whole = make()
            let wholePayloads = whole.push(Data(bytes), at: .zero)
            var split = make()
            let splitPayloads = feedChunked(&split, bytes, sizes: sizes)

            #expect(splitPayloads == wholePayloads)
            #expect(split.discardedFrameCount == whole.discardedFrameCount)
            #expect(split.skippedByteCount == whole.skippedByteCount)
            #expect(split.pendingByteCount == whole.pendingByteCount)
            #expect(split.pendingByteCount <= 3 + 5)
            #expect(wholePayloads.allSatisfy { (1...5).contains($0.count) })
        }
    }

    @Test func garbageWithoutAMarkerStaysBounded() async {
        let bytes = Gen.uint8().array(of: 0...300)
        let littleEndian = Gen.bool
        let sizes = Gen.int(in: 0...19).array(of: 1...8)
        await propertyCheck(input: bytes, littleEndian, sizes) { bytes, littleEndian, sizes in
            let endianness: Reassembler.Endianness = littleEndian ? .little : .big
            var reassembler = Reassembler(endianness: endianness, maxFrameLength: 300, logger: quietLogger)
            let sizes = sizes.contains { $0 > 0 } ? sizes : [1]
            var offset = 0
            var turn = 0
            var accounted = 0
            while offset < bytes.count {
                let size = min(sizes[turn % sizes.count], bytes.count - offset)
                turn += 1
                let payloads = reassembler.push(Data(bytes[offset..<offset + size]), at: .zero)
                accounted += payloads.reduce(0) { $0 + 2 + $1.count }
                #expect(reassembler.pendingByteCount <= 2 + 300)
                offset += size
            }
            // Every byte is either in a payload or header, pending, skipped, or part of a
            // rejected 2-byte header.
            accounted += reassembler.pendingByteCount + reassembler.skippedByteCount
                + 2 * reassembler.discardedFrameCount
            #expect(accounted == bytes.count)
        }
    }
}

// MARK: - Example-based tests

@Suite struct LengthPrefixedReassemblerTests {
    @Test func encodesBothEndiannessesWithAndWithoutMarker() throws {
        let payload = Data([0xAA, 0xBB, 0xCC])
        #expect(try Reassembler.frame(payload) == Data([0x00, 0x03, 0xAA, 0xBB, 0xCC]))
        #expect(
            try Reassembler.frame(payload, endianness: .little, marker: 0x3C)
                == Data([0x3C, 0x03, 0x00, 0xAA, 0xBB, 0xCC]))
        let long = Data(repeating: 7, count: 0x0102)
        #expect(try Reassembler.frame(long, endianness: .big).prefix(2) == Data([0x01, 0x02]))
        #expect(try Reassembler.frame(long, endianness: .little).prefix(2) == Data([0x02, 0x01]))
    }

    @Test func encoderRejectsPayloadsTooLongForTheLengthField() throws {
        let maxPayload = Data(count: 65_535)
        #expect(try Reassembler.frame(maxPayload).count == 65_537)
        #expect(throws: FramingError.frameTooLong(length: 65_536, max: 65_535)) {
            try Reassembler.frame(Data(count: 65_536), marker: 0x3E)
        }
    }

    @Test func decodesMeshCoreStyleLittleEndianFrames() {
        var reassembler = Reassembler(endianness: .little, marker: meshMarker)
        let bytes: [UInt8] = [0x3E, 0x02, 0x00, 0x05, 0x06, 0x3E, 0x01, 0x00, 0x07]
        #expect(reassembler.push(Data(bytes), at: .zero) == [Data([5, 6]), Data([7])])
    }

    @Test func keepsPartialFramesAcrossChunks() {
        var reassembler = Reassembler()
        #expect(reassembler.push(Data([0x00]), at: .zero) == [])
        #expect(reassembler.pendingByteCount == 1)
        #expect(reassembler.push(Data([0x03, 0x01]), at: .zero) == [])
        #expect(reassembler.pendingByteCount == 3)
        #expect(reassembler.push(Data([0x02, 0x03, 0x00]), at: .zero) == [Data([1, 2, 3])])
        #expect(reassembler.pendingByteCount == 1)
    }

    @Test func skipsGarbageBeforeTheMarker() {
        let recorder = FrameLogRecorder()
        var reassembler = Reassembler(marker: meshMarker, logger: recorder.logger)
        let bytes: [UInt8] = [0x01, 0x02, 0x03] + frame([9, 9], marker: meshMarker)
        #expect(reassembler.push(Data(bytes), at: .zero) == [Data([9, 9])])
        #expect(reassembler.skippedByteCount == 3)
        #expect(reassembler.discardedFrameCount == 0)
        #expect(recorder.count(.notice) == 1)
        // A chunk with no marker at all is skipped whole and leaves nothing pending.
        #expect(reassembler.push(Data([0x10, 0x20]), at: .zero) == [])
        #expect(reassembler.skippedByteCount == 5)
        #expect(reassembler.pendingByteCount == 0)
    }

    @Test func zeroLengthHeaderIsRejectedAndResynchronisedWithAMarker() {
        let recorder = FrameLogRecorder()
        var reassembler = Reassembler(marker: meshMarker, logger: recorder.logger)
        let bytes: [UInt8] = [0x3E, 0x00, 0x00] + frame([1], marker: meshMarker)
        #expect(reassembler.push(Data(bytes), at: .zero) == [Data([1])])
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.skippedByteCount == 2)  // the rejected header's length bytes
        #expect(recorder.count(.warning) == 1)
    }

    @Test func zeroLengthHeaderWithoutMarkerDropsTheRestOfTheChunk() {
        var reassembler = Reassembler()
        #expect(reassembler.push(Data([0x00, 0x00, 0x00, 0x01, 0x42]), at: .zero) == [])
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.skippedByteCount == 3)
        #expect(reassembler.pendingByteCount == 0)
        // The next chunk starts a fresh frame.
        #expect(reassembler.push(Data(frame([0x42])), at: .zero) == [Data([0x42])])
    }

    @Test func oversizedHeaderWithoutMarkerIsRejected() {
        var reassembler = Reassembler(maxFrameLength: 16)
        #expect(reassembler.push(Data([0xFF, 0xFF] + [UInt8](repeating: 1, count: 100)), at: .zero) == [])
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.pendingByteCount == 0)
        #expect(reassembler.push(Data(frame([1, 2], .big)), at: .zero) == [Data([1, 2])])
    }

    @Test func oversizedHeaderSplitAcrossChunksIsRejected() {
        var reassembler = Reassembler(endianness: .little, maxFrameLength: 16)
        #expect(reassembler.push(Data([0x11]), at: .zero) == [])
        #expect(reassembler.push(Data([0x00, 0xAA]), at: .zero) == [])  // 17 > 16
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.pendingByteCount == 0)
    }

    @Test func frameOfExactlyMaxLengthIsAccepted() {
        var reassembler = Reassembler(marker: meshMarker, maxFrameLength: 16)
        let payload = [UInt8](repeating: 0x3E, count: 16)  // markers inside a payload are data
        #expect(reassembler.push(Data(frame(payload, marker: meshMarker)), at: .zero) == [Data(payload)])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func markerHiddenInARejectedHeaderIsFound() {
        // 3E 3E 02 read little-endian announces 0x023E bytes; dropping only the first
        // marker lets the real frame starting at the second 3E through.
        var reassembler = Reassembler(endianness: .little, marker: meshMarker, maxFrameLength: 16)
        let bytes: [UInt8] = [0x3E, 0x3E, 0x02, 0x00, 0xAA, 0xBB]
        #expect(reassembler.push(Data(bytes), at: .zero) == [Data([0xAA, 0xBB])])
        #expect(reassembler.discardedFrameCount == 1)

        // The same when every byte arrives alone.
        var bytewise = Reassembler(endianness: .little, marker: meshMarker, maxFrameLength: 16)
        let payloads = bytes.flatMap { bytewise.push(Data([$0]), at: .zero) }
        #expect(payloads == [Data([0xAA, 0xBB])])
        #expect(bytewise.discardedFrameCount == 1)
    }

    @Test func idleTimeoutDiscardsAStalePartialFrame() {
        let recorder = FrameLogRecorder()
        var reassembler = Reassembler(
            marker: meshMarker, idleTimeout: .seconds(2), logger: recorder.logger)
        let start = FakeInstant.zero
        #expect(reassembler.push(Data([0x3E, 0x00, 0x04, 0x01]), at: start) == [])
        // The rest arrives too late: the partial frame is dropped and the late bytes,
        // lacking a marker, are skipped.
        let late = start.advanced(by: .milliseconds(2_001))
        #expect(reassembler.push(Data([0x02, 0x03, 0x04]), at: late) == [])
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.skippedByteCount == 3)
        #expect(recorder.count(.warning) == 1)
        #expect(reassembler.push(Data(frame([5], marker: meshMarker)), at: late) == [Data([5])])
    }

    @Test func aPauseOfTheReaderIsNotTheSendersSilence() {
        var reassembler = Reassembler(marker: meshMarker, idleTimeout: .seconds(2))
        let start = FakeInstant.zero
        // A read ends inside a frame; the reader then stops for 3 s (its consumer is full)
        // while the rest waits in the socket, and reads again.
        #expect(reassembler.push(Data([0x3E, 0x00, 0x04, 0x01]), at: start) == [])
        let resumed = start.advanced(by: .seconds(3))
        reassembler.resumeReading(at: resumed)
        #expect(reassembler.push(Data([0x02, 0x03, 0x04]), at: resumed.advanced(by: .milliseconds(1))) == [Data([1, 2, 3, 4])])
        #expect(reassembler.discardedFrameCount == 0)
        // With nothing pending, resuming starts no wait: a later partial frame times out from its own bytes.
        reassembler.resumeReading(at: resumed.advanced(by: .seconds(10)))
        let later = resumed.advanced(by: .seconds(20))
        #expect(reassembler.push(Data([0x3E, 0x00, 0x02, 0x09]), at: later) == [])
        #expect(reassembler.push(Data([0x0A]), at: later.advanced(by: .seconds(1))) == [Data([9, 10])])
    }

    @Test func idleTimeoutMeasuresFromTheLastByte() {
        var reassembler = Reassembler(idleTimeout: .seconds(2))
        var now = FakeInstant.zero
        let bytes = frame([1, 2, 3, 4])
        var payloads: [Data] = []
        // Each gap is under the timeout, though the whole frame takes far longer.
        for byte in bytes {
            payloads += reassembler.push(Data([byte]), at: now)
            now = now.advanced(by: .milliseconds(1_500))
        }
        #expect(payloads == [Data([1, 2, 3, 4])])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func gapOfExactlyTheIdleTimeoutIsTolerated() {
        var reassembler = Reassembler(idleTimeout: .seconds(2))
        _ = reassembler.push(Data([0x00, 0x01]), at: .zero)
        let edge = FakeInstant.zero.advanced(by: .seconds(2))
        #expect(reassembler.push(Data([0x7F]), at: edge) == [Data([0x7F])])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func idleTimeoutDoesNotCountWhenNothingIsPending() {
        var reassembler = Reassembler(idleTimeout: .seconds(2))
        _ = reassembler.push(Data(frame([1])), at: .zero)
        let later = FakeInstant.zero.advanced(by: .seconds(60))
        #expect(reassembler.push(Data(frame([2])), at: later) == [Data([2])])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func withoutIdleTimeoutPartialFramesWaitForever() {
        var reassembler = Reassembler(idleTimeout: nil)
        _ = reassembler.push(Data([0x00, 0x02, 0x01]), at: .zero)
        let muchLater = FakeInstant.zero.advanced(by: .seconds(3_600))
        #expect(reassembler.push(Data([0x02]), at: muchLater) == [Data([1, 2])])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func worksWithContinuousClockInstants() {
        var reassembler = LengthPrefixedReassembler<ContinuousClock.Instant>(idleTimeout: .seconds(1))
        let start = ContinuousClock.now
        _ = reassembler.push(Data([0x00, 0x02, 0x01]), at: start)
        // The stale partial frame is dropped; the late bytes are read as a new frame.
        let late = start.advanced(by: .seconds(5))
        #expect(reassembler.push(Data([0x00, 0x01, 0x09]), at: late) == [Data([9])])
        #expect(reassembler.discardedFrameCount == 1)
        #expect(reassembler.pendingByteCount == 0)
    }

    @Test func resetDropsThePartialFrame() {
        var reassembler = Reassembler(marker: meshMarker)
        _ = reassembler.push(Data([0x3E, 0x00, 0x03, 0x01]), at: .zero)
        #expect(reassembler.pendingByteCount == 4)
        reassembler.reset()
        #expect(reassembler.pendingByteCount == 0)
        #expect(reassembler.push(Data(frame([7, 8], marker: meshMarker)), at: .zero) == [Data([7, 8])])
        #expect(reassembler.discardedFrameCount == 0)
    }

    @Test func endlessGarbageStaysBounded() {
        var reassembler = Reassembler(marker: meshMarker, maxFrameLength: 512, logger: quietLogger)
        var rng = SystemRandomNumberGenerator()
        var maxPending = 0
        for _ in 0..<2_000 {
            let chunk = Data((0..<244).map { _ in UInt8.random(in: 0...255, using: &rng) })
            for payload in reassembler.push(chunk, at: .zero) {
                #expect((1...512).contains(payload.count))
            }
            maxPending = max(maxPending, reassembler.pendingByteCount)
        }
        #expect(maxPending <= 3 + 512)
        #expect(reassembler.skippedByteCount > 0)
    }

    @Test func hugeChunkIsProcessedWithoutBufferingItWhole() {
        var reassembler = Reassembler(maxFrameLength: 8)
        let stream = (0..<10_000).flatMap { i in frame([UInt8(truncatingIfNeeded: i)]) }
        let payloads = reassembler.push(Data(stream), at: .zero)
        #expect(payloads.count == 10_000)
        #expect(payloads.last == Data([UInt8(truncatingIfNeeded: 9_999)]))
        #expect(reassembler.pendingByteCount == 0)
    }
}
