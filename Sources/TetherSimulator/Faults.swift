import TetherCore

/// A fault the radio injects into ATT operations.
public struct FaultRule: Sendable, Hashable {
    /// What happens to a matching operation.
    public enum Action: Sendable, Hashable {
        /// The peripheral answers with this ATT error.
        case error(ATTError)
        /// The request is swallowed: no response ever comes.
        case noResponse
    }

    /// The operation it applies to.
    public var operation: GATTOperation
    /// The characteristic it applies to (nil: all).
    public var characteristic: CharacteristicPath?
    /// The peripheral it applies to (nil: all).
    public var peripheral: PeripheralID?
    /// What happens.
    public var action: Action
    /// How many operations it affects before it expires (nil: forever).
    public var remaining: Int?

    /// Creates a fault rule.
    public init(
        _ operation: GATTOperation,
        on characteristic: CharacteristicPath? = nil,
        peripheral: PeripheralID? = nil,
        action: Action,
        count: Int? = nil
    ) {
        self.operation = operation
        self.characteristic = characteristic
        self.peripheral = peripheral
        self.action = action
        self.remaining = count
    }

    func matches(_ operation: GATTOperation, _ path: CharacteristicPath, _ peripheral: PeripheralID) -> Bool {
        operation == self.operation
            && (characteristic == nil || characteristic == path)
            && (self.peripheral == nil || self.peripheral == peripheral)
            && (remaining ?? 1) > 0
    }
}
