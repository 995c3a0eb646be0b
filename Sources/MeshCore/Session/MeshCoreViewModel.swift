import Foundation
import Observation
import TetherCore

/// A MeshCore app's screen state for SwiftUI, following a ``ConnectionManager``: the
/// connection as PocketMesh's dots (red, yellow, green), the radio's identity, battery,
/// contacts and channels, the messages of this run with their delivery state, adverts heard,
/// and errors as values.
///
/// Bounded: at most ``messageLimit`` messages are kept (older ones stay in the manager's store).
@Observable
@MainActor
public final class MeshCoreViewModel {
    /// PocketMesh's connection dot.
    public enum Dot: String, Sendable, Hashable {
        /// Disconnected.
        case red
        /// Connecting, or connected and loading.
        case yellow
        /// Ready.
        case green
    }

    /// The manager's state.
    public private(set) var state: ConnectionManager.State = .disconnected
    /// The radio's identity, once it answered.
    public private(set) var selfInfo: SelfInfo?
    /// The radio's contacts.
    public private(set) var contacts: [MeshContact] = []
    /// The radio's channels.
    public private(set) var channels: [ChannelInfo] = []
    /// Messages stored during this run, oldest first (at most ``messageLimit``).
    public private(set) var messages: [MeshMessage] = []
    /// Public keys of nodes whose adverts were heard, newest first (at most 100).
    public private(set) var adverts: [Data] = []
    /// The radio's battery and storage, after ``refreshBattery()``.
    public private(set) var battery: BatteryAndStorage?
    /// Why the last connection or startup failed.
    public private(set) var lastError: MeshCoreError?
    /// Why the last send or battery read failed.
    public private(set) var actionError: String?
    /// How many messages are kept.
    public let messageLimit: Int

    /// The connection dot.
    public var dot: Dot {
        switch state {
        case .disconnected: .red
        case .connecting, .connected: .yellow
        case .ready: .green
        }
    }

    private let manager: ConnectionManager
    @ObservationIgnored private nonisolated let tasks = TaskBag()

    /// Creates a view model; call ``start()`` to follow the manager.
    public init(manager: ConnectionManager, messageLimit: Int = 1_000) {
        self.manager = manager
        self.messageLimit = max(1, messageLimit)
    }

    /// Follows the manager until ``stop()``; its events are subscribed, and its current state
    /// read, before it returns. Idempotent.
    public func start() async {
        guard tasks.isEmpty else { return }
        // Subscribed before the current state is read: a later change is an event.
        let events = await manager.events()
        // Another start() may have finished while this one waited.
        guard tasks.isEmpty else { return }
        tasks.add(Task { [weak self] in
            for await event in events { await self?.apply(event) }
        })
        await refresh()
    }

    /// Stops following.
    public func stop() {
        tasks.cancelAll()
    }

    // A screen that goes away without stop() leaves no task listening behind it.
    deinit {
        tasks.cancelAll()
    }

    // MARK: Intents

    /// Connects (the manager runs the startup and keeps the link).
    public func connect() async {
        do {
            try await manager.connect()
        } catch {
            lastError = await manager.lastError
        }
    }

    /// Disconnects.
    public func disconnect() async { await manager.disconnect() }

    /// Sends a direct message; a failure is in ``actionError``.
    public func send(_ text: String, to contact: MeshContact) async {
        do {
            _ = try await manager.sendMessage(text, to: contact)
            actionError = nil
        } catch {
            actionError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// Sends a channel message; a failure is in ``actionError``.
    public func send(_ text: String, channel: UInt8) async {
        do {
            _ = try await manager.sendChannelMessage(text, channel: channel)
            actionError = nil
        } catch {
            actionError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// Reads the radio's battery and storage.
    public func refreshBattery() async {
        do {
            battery = try await manager.session.batteryAndStorage()
            actionError = nil
        } catch {
            actionError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// The messages with one contact (by key prefix) or on one channel, oldest first.
    public func conversation(with contact: MeshContact) -> [MeshMessage] {
        conversation(withPeer: contact.publicKeyPrefix.hexString)
    }

    /// The messages with the contact whose key prefix is `prefix` (hex, as ``MeshMessage/peer``),
    /// oldest first; also for a contact the radio no longer lists.
    public func conversation(withPeer prefix: String) -> [MeshMessage] {
        messages.filter { $0.kind == .direct && $0.peer == prefix }
    }

    /// The messages on channel `index`, oldest first.
    public func conversation(channel index: Int) -> [MeshMessage] {
        messages.filter { $0.kind == .channel && $0.channelIndex == index }
    }

    // MARK: Following the manager

    private func refresh() async {
        state = await manager.state
        selfInfo = await manager.selfInfo
        contacts = await manager.contacts
        channels = await manager.channels
        lastError = await manager.lastError
    }

    private func apply(_ event: ConnectionManager.Event) async {
        switch event {
        case .state:
            await refresh()
        case .message(let message):
            if let index = messages.lastIndex(where: { $0.id != nil && $0.id == message.id }) {
                messages[index] = message
            } else {
                messages.append(message)
                if messages.count > messageLimit { messages.removeFirst(messages.count - messageLimit) }
            }
        case .acknowledged:
            // The outcome arrives as the message again (same id, delivered or failed).
            break
        case .contactsUpdated(let list):
            contacts = list
        case .startupFailed:
            lastError = await manager.lastError
        case .messageNotStored(let reason):
            actionError = "a message could not be stored: \(reason)"
        case .radio(.advert(let key)):
            adverts.removeAll { $0 == key }
            adverts.insert(key, at: 0)
            if adverts.count > 100 { adverts.removeLast() }
        case .radio:
            break
        }
    }
}
