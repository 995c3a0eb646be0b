/// What a connection needs from its peripheral and how patient it is.
public struct ConnectionConfiguration: Sendable, Hashable {
    /// Services to discover; each must exist or the connection fails with `serviceNotFound`.
    /// Empty: discover every service.
    public var services: [BluetoothUUID]
    /// Characteristics that must exist, or the connection fails with `characteristicNotFound`.
    public var requiredCharacteristics: [CharacteristicPath]
    /// Characteristics subscribed on every (re)connection, before the connection is reported.
    public var notifyCharacteristics: [CharacteristicPath]
    /// How long a connection request may take (default 10 s).
    public var connectionTimeout: Duration
    /// How long service, characteristic and subscription discovery may take together
    /// (default 40 s, to leave room for a pairing dialog).
    public var discoveryTimeout: Duration
    /// How long one write with response, read or flow-control wait may take (default 5 s).
    public var writeTimeout: Duration
    /// What happens after an unexpected disconnection.
    public var reconnectPolicy: ReconnectPolicy
    /// How a first connection that fails on the link (it timed out, failed or dropped before
    /// it was ready) is tried again before `connect()` throws; by default it is not (Kiro
    /// §8.3 retries after 1, 2 and 4 s). A missing service or characteristic, a failed pairing
    /// or Bluetooth being off is never retried.
    public var firstConnectionRetry: ReconnectPolicy
    /// How many notifications each subscriber may have waiting before the oldest are dropped.
    public var notificationBufferSize: Int

    /// Creates a configuration.
    public init(
        services: [BluetoothUUID] = [],
        requiredCharacteristics: [CharacteristicPath] = [],
        notifyCharacteristics: [CharacteristicPath] = [],
        connectionTimeout: Duration = .seconds(10),
        discoveryTimeout: Duration = .seconds(40),
        writeTimeout: Duration = .seconds(5),
        reconnectPolicy: ReconnectPolicy = .threeAttempts,
        firstConnectionRetry: ReconnectPolicy = .never,
        notificationBufferSize: Int = 1024
    ) {
        self.services = services
        self.requiredCharacteristics = requiredCharacteristics
        self.notifyCharacteristics = notifyCharacteristics
        self.connectionTimeout = connectionTimeout
        self.discoveryTimeout = discoveryTimeout
        self.writeTimeout = writeTimeout
        self.reconnectPolicy = reconnectPolicy
        self.firstConnectionRetry = firstConnectionRetry
        self.notificationBufferSize = notificationBufferSize
    }
}
