import Foundation

/// Where a ``FlockFinderClient`` hands each detection it receives: `DetectionStore` (the
/// FlockFinderStorage product, SQLite with a confidence threshold and exports) or an app's own
/// persistence.
public protocol DetectionRecorder: Sendable {
    /// Keeps `detection`, received at `receivedAt`; returns what was kept, or nil when it was
    /// deliberately not kept (below a confidence threshold, say). Throws when it could not be
    /// kept: the client reports that as the detection's storage failure.
    func record(_ detection: Detection, receivedAt: Date) async throws -> StoredDetection?
}
