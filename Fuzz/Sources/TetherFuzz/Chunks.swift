import Foundation

/// Splits an input into the chunks a link would deliver: the first byte picks the chunk size
/// (1…256), the rest is the stream. Lets one input explore where reads cut frames.
func chunks(of data: Data) -> [Data] {
    guard let first = data.first else { return [] }
    let size = Int(first) + 1
    let stream = data.dropFirst()
    return stride(from: stream.startIndex, to: stream.endIndex, by: size).map {
        Data(stream[$0..<min($0 + size, stream.endIndex)])
    }
}

/// `seed` with a chunk-size byte in front, for the targets that read `chunks(of:)`.
func chunked(_ seed: Data, size: UInt8 = 19) -> Data {
    Data([size]) + seed
}
