/// How a virtual link behaves: the numbers that make latency and throughput exist in virtual time.
public struct LinkParameters: Sendable, Hashable {
    /// The ATT MTU the peripheral asks for (the central offers up to 517); clamped to 23...517.
    public var preferredMTU: Int
    /// Time between connection events.
    public var connectionInterval: Duration
    /// Link-layer packets per direction per connection event.
    public var packetsPerConnectionEvent: Int
    /// Writes without response the controller buffers before `canSendWriteWithoutResponse` is false.
    public var writeWithoutResponseBuffer: Int
    /// Notifications the peripheral can queue before `notify` fails (like NimBLE's ENOMEM).
    public var notificationQueueCapacity: Int
    /// How long a link survives without hearing the other side (out of range).
    public var supervisionTimeout: Duration
    /// Time from the connect request to the connection (on top of waiting for an advertisement).
    public var connectionSetupTime: Duration

    /// Creates link parameters.
    public init(
        preferredMTU: Int = 247,
        connectionInterval: Duration = .milliseconds(30),
        packetsPerConnectionEvent: Int = 4,
        writeWithoutResponseBuffer: Int = 8,
        notificationQueueCapacity: Int = 64,
        supervisionTimeout: Duration = .seconds(2),
        connectionSetupTime: Duration = .milliseconds(60)
    ) {
        self.preferredMTU = preferredMTU
        self.connectionInterval = connectionInterval
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.writeWithoutResponseBuffer = writeWithoutResponseBuffer
        self.notificationQueueCapacity = notificationQueueCapacity
        self.supervisionTimeout = supervisionTimeout
        self.connectionSetupTime = connectionSetupTime
    }

    /// The negotiated ATT MTU given the central's maximum.
    public func negotiatedMTU(centralMaximum: Int = 517) -> Int {
        min(max(23, preferredMTU), max(23, min(517, centralMaximum)))
    }

    /// Bytes per second writes without response can carry: packets per event × (MTU − 3) per interval.
    public func writeWithoutResponseCapacity(mtu: Int) -> Double {
        Double(packetsPerConnectionEvent * (mtu - 3)) / connectionInterval.seconds
    }

    /// Bytes per second writes with response can carry: one (MTU − 3)-byte write per two intervals.
    public func writeWithResponseBound(mtu: Int) -> Double {
        Double(mtu - 3) / (2 * connectionInterval.seconds)
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
