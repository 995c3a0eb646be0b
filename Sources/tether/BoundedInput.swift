import Foundation

/// Reads what `handle` holds, up to `limit` bytes: nil when there is more (the caller refuses
/// it). A read that fails (a directory, a device error) throws, instead of the trap
/// `readData(ofLength:)` hits on Linux.
func readBounded(_ handle: FileHandle, limit: Int) throws -> Data? {
    var data = Data()
    while data.count <= limit {
        guard let chunk = try handle.read(upToCount: min(64 * 1024, limit + 1 - data.count)), !chunk.isEmpty else { return data }
        data.append(chunk)
    }
    return nil
}
