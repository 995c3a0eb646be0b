import Foundation

/// A device client's link to one peripheral: the connection, with the client's listeners armed
/// **before** it connects, and the tasks that follow them, which stop together.
///
/// Every client needs the same order — a device may notify the moment its notifications are
/// enabled (GripFit's first reading, Tybe's greeting status, FlockFinder's first detection), so
/// whoever subscribes after ``connect()`` returns can miss it — and the same clean-up on
/// failure. ``arm(on:to:configuration:notifications:events:streamEnded:)`` subscribes and starts following;
/// ``connect()`` connects and, if that fails, stops following and throws a ``BLEError``.
///
/// ```swift
/// let link = await DeviceLink.arm(
///     on: central, to: peripheral, configuration: DeviceProfile.gripFit.connectionConfiguration(),
///     notifications: [(GripFitBLEConstants.notifyCharacteristic, { @Sendable [weak self] data in await self?.received(data) })],
///     events: { [weak self] event in await self?.handle(event) })
/// self.link = link          // kept: a released link stops its listeners
/// try await link.connect()
/// ```
///
/// The listeners run while the link is held: releasing the last reference stops them, as
/// ``stopListening()`` does.
public final class DeviceLink: Sendable {
    /// What a listener is called with, in arrival order, on its own task.
    public typealias NotificationHandler = @Sendable (Data) async -> Void

    /// The connection (from ``Central/connection(to:configuration:)``).
    public let connection: ConnectionStateMachine
    private let listeners: TaskBag

    private init(connection: ConnectionStateMachine, listeners: TaskBag) {
        self.connection = connection
        self.listeners = listeners
    }

    /// Gets `central`'s connection to `peripheral`, subscribes to each characteristic of
    /// `notifications` and (if given) to the connection's events, and starts one task per
    /// stream that hands each element to its handler. Nothing is connected yet.
    ///
    /// - Parameters:
    ///   - central: the central that owns the connection.
    ///   - peripheral: the device.
    ///   - configuration: the link's configuration (its profile's, usually).
    ///   - notifications: the characteristics to follow, each with its handler.
    ///   - events: called with every ``ConnectionEvent`` (phases, drops, reconnections).
    ///   - streamEnded: called when the connection ends a characteristic's stream (a link gone
    ///     for good), not when the client stops listening.
    public static func arm(
        on central: Central, to peripheral: PeripheralID, configuration: ConnectionConfiguration,
        notifications: [(CharacteristicPath, NotificationHandler)],
        events: (@Sendable (ConnectionEvent) async -> Void)? = nil,
        streamEnded: (@Sendable (CharacteristicPath) async -> Void)? = nil
    ) async -> DeviceLink {
        let connection = await central.connection(to: peripheral, configuration: configuration)
        let listeners = TaskBag()
        // Every stream is subscribed before any task starts, so none misses what the others see.
        var streams: [(CharacteristicPath, AsyncStream<Data>, NotificationHandler)] = []
        for (characteristic, handler) in notifications {
            streams.append((characteristic, await connection.notifications(for: characteristic), handler))
        }
        let eventStream = events == nil ? nil : await connection.events()
        for (characteristic, stream, handler) in streams {
            listeners.add(Task {
                for await data in stream { await handler(data) }
                if !Task.isCancelled { await streamEnded?(characteristic) }
            })
        }
        if let events, let eventStream {
            listeners.add(Task {
                for await event in eventStream { await events(event) }
            })
        }
        return DeviceLink(connection: connection, listeners: listeners)
    }

    /// Connects (joining an attempt under way) and returns once the link is ready. On failure
    /// the listeners stop, and the failure is thrown as a ``BLEError`` (any other error, which
    /// the core does not throw, as ``BLEError/connectionFailed(_:)``).
    public func connect() async throws(BLEError) {
        do {
            try await connection.connect()
        } catch {
            stopListening()
            throw (error as? BLEError) ?? .connectionFailed("\(error)")
        }
    }

    /// Stops following the streams; the connection stays as it is.
    public func stopListening() { listeners.cancelAll() }

    /// Stops following the streams and disconnects (no reconnection follows).
    public func close() async {
        stopListening()
        await connection.disconnect()
    }
}
