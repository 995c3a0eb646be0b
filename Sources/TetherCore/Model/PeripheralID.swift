import Foundation

/// A stable identifier for a remote peripheral (CoreBluetooth's `identifier`, BlueZ's device path).
public struct PeripheralID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The identifier's value.
    public let uuid: UUID

    /// Wraps a UUID.
    public init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses the textual form of a UUID.
    public init?(string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    public var description: String { uuid.uuidString }
}
