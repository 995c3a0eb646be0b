/// What a connection reports to its observers (a UI binds to this stream).
public enum ConnectionEvent: Sendable, Hashable {
    /// The phase changed.
    case phaseChanged(BLEPhase)
    /// The connection is ready (first time, after `connect()`).
    case connected(PeripheralID)
    /// The connection is ready again after an automatic reconnection.
    case reconnected(PeripheralID)
    /// The link dropped unexpectedly.
    case disconnected(PeripheralID, BLEError?)
    /// Another attempt will start after `delay`: a reconnection, or a retry of the first
    /// connection (``ConnectionConfiguration/firstConnectionRetry``).
    case reconnectScheduled(attempt: Int, delay: Duration)
    /// A connection attempt or the connection failed for good; the phase is `idle`.
    case failed(BLEError)
    /// The radio's state changed.
    case bluetoothStateChanged(CentralState)
    /// The connected peripheral's services changed (a Service Changed indication, such as
    /// after a firmware update): the connection rediscovers them and subscribes again, on the
    /// same link. The phase runs through discovery back to `connected`; reads and writes asked
    /// for meanwhile wait for it, and notification streams go on.
    case servicesChanged(PeripheralID)
}
