import Foundation
import Logging
import TetherCore

/// Brings a MeshCore radio from "link up" to "ready" and keeps it there: PocketMesh's
/// `ConnectionManager`, with its reported bugs fixed by design.
///
/// Startup, after the session's APP_START: DEVICE_QUERY, the radio's time (set only when it
/// drifted more than 60 s), contacts, channels, then every queued message; only then
/// ``State/ready`` and automatic fetching on MSG_WAITING. The reads are pipelined
/// (``MeshCoreSession``'s `perform` batches, as many commands in flight as the
/// transport allows): over TCP the startup takes four round trips, not one per command.
///
/// - The session's events are subscribed before the first command, so no message is lost
///   while the startup runs (or after a reconnection).
/// - Every step has a timeout; a failed step ends in ``State/disconnected`` with
///   ``lastError`` set, never in a lingering ``State/connecting``.
/// - The state follows the transport's link events: it never shows connected for a link that
///   is down, and a restored or reconnected link is reported connected only after the radio
///   answered APP_START again.
/// - Messages are stored (deduplicated) before they are published, so after any reconnection
///   every message the radio queued is delivered once.
public actor ConnectionManager {
    /// The UI states.
    public enum State: String, Sendable, Hashable, CustomStringConvertible {
        /// No connection (red).
        case disconnected
        /// Connecting or reconnecting (yellow, spinner).
        case connecting
        /// The radio answered; contacts, channels and messages are loading (yellow).
        case connected
        /// Fully operational (green).
        case ready

        public var description: String { rawValue }
    }

    /// A step of the startup sequence.
    public enum StartupStep: String, Sendable, Hashable, CaseIterable {
        /// Bringing the link up (bounded by the transport's own timeouts).
        case link
        /// APP_START → SELF_INFO.
        case appStart
        /// DEVICE_QUERY asking for the V3 message format.
        case deviceQuery
        /// Reading the radio's clock, and setting it when it drifted.
        case timeSync
        /// The contact listing.
        case contacts
        /// The channels.
        case channels
        /// Draining the radio's message queue.
        case messages
    }

    /// What the manager publishes.
    public enum Event: Sendable, Hashable {
        /// The state changed.
        case state(State)
        /// A new message was stored (incoming, or outgoing when sent); an outgoing direct message
        /// comes again with its outcome (same id, delivered or failed).
        case message(MeshMessage)
        /// An outgoing direct message was acknowledged (ack code, round trip ms).
        case acknowledged(ack: UInt32, roundTrip: UInt32)
        /// The contact list changed.
        case contactsUpdated([MeshContact])
        /// A startup step failed (the state goes back to disconnected).
        case startupFailed(step: StartupStep, error: MeshCoreError)
        /// The message just published could not be stored (the reason); it was delivered anyway.
        case messageNotStored(reason: String)
        /// Any other push from the radio.
        case radio(MeshCoreEvent)
    }

    /// Manager settings.
    public struct Configuration: Sendable {
        /// How long each startup step may take (the session's per-command timeouts apply
        /// inside it as well).
        public var stepTimeout: Duration
        /// Set the radio's clock only when it is further than this from ours.
        public var maximumClockDrift: Duration
        /// Reconnect after the link drops, for transports that do not reconnect by themselves
        /// (TCP, serial): 1 s doubling to 30 s by default; `.never` to stay disconnected.
        public var reconnectPolicy: ReconnectPolicy
        /// The most channels to read at startup.
        public var maximumChannels: Int
        /// How long the startup's first exchange (firmware, clock and the contact listing) may
        /// take: over BLE the firmware sends a contact every 60 ms, so 350 contacts take 21 s.
        public var contactsTimeout: Duration

        /// Creates settings.
        public init(
            stepTimeout: Duration = .seconds(15),
            maximumClockDrift: Duration = .seconds(60),
            reconnectPolicy: ReconnectPolicy = .persistent,
            maximumChannels: Int = 8,
            contactsTimeout: Duration = .seconds(90)
        ) {
            self.stepTimeout = stepTimeout
            self.maximumClockDrift = maximumClockDrift
            self.reconnectPolicy = reconnectPolicy
            self.maximumChannels = maximumChannels
            self.contactsTimeout = contactsTimeout
        }
    }

    /// The session the manager drives.
    public nonisolated let session: MeshCoreSession
    /// Where contacts and messages are kept.
    public nonisolated let store: any MeshMessageStore
    /// Settings.
    public nonisolated let configuration: Configuration

    /// The current state.
    public private(set) var state: State = .disconnected
    /// Why the last connection or startup failed.
    public private(set) var lastError: MeshCoreError?
    /// The radio's identity.
    public private(set) var selfInfo: SelfInfo?
    /// The radio's firmware details.
    public private(set) var deviceInfo: DeviceInfo?
    /// The radio's contacts.
    public private(set) var contacts: [MeshContact] = []
    /// Contacts the radio listed beyond the session's limit at the last startup, and that are
    /// not in ``contacts`` (see ``MeshCoreSession/Configuration/maximumReplyFrames``).
    public private(set) var omittedContactCount = 0
    /// The radio's channels.
    public private(set) var channels: [ChannelInfo] = []
    /// How many times the startup sequence completed.
    public private(set) var readyCount = 0

    private let clock: any Clock<Duration>
    private let wallClock: @Sendable () -> Date
    private let logger: Logger
    private var broadcaster = Broadcaster<Event>(bufferSize: 4096)
    private var sessionEvents: Task<Void, Never>?
    private var linkEvents: Task<Void, Never>?
    private var generation = 0
    private var wantsConnection = false
    private var reconnectTask: Task<Void, Never>?
    private var startupTask: Task<Void, Never>?
    // The generation of the startup in progress, if any (a reconnection it caused needs no second one).
    private var runningStartup: Int?
    // True after the link went away by itself (or restore()): its return starts a startup.
    private var linkReturnExpected = false
    private var contactRefreshRunning = false
    private var contactRefreshPending = false
    private var lookedUp: Set<Data> = []
    private var lookupOrder: [Data] = []

    /// Creates a manager for `session`; subscribe to ``events()`` and call ``connect()``.
    public init(
        session: MeshCoreSession,
        store: any MeshMessageStore,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "tether.meshcore.manager")
    ) {
        self.session = session
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
    }

    /// State changes, stored messages, acknowledgements and pushes, from now on. The first
    /// element is the current state.
    public func events() -> AsyncStream<Event> {
        broadcaster.subscribe(initial: .state(state)) { [weak self] token in Task { await self?.removeSubscriber(token) } }
    }

    // MARK: Connecting

    /// Connects and runs the startup sequence; returns when ``State/ready``. Throws (and goes
    /// back to ``State/disconnected``) when a step fails.
    public func connect() async throws {
        await subscribe()
        wantsConnection = true
        reconnectTask?.cancel()
        reconnectTask = nil
        try await runStartup(connecting: true)
    }

    /// Picks up a link the OS kept while the app was relaunched (BLE state restoration): the
    /// state shows ``State/connecting`` until the radio has answered APP_START again, then the
    /// startup sequence runs as after any reconnection. Transports without restoration connect.
    public func restore() async {
        await subscribe()
        wantsConnection = true
        reconnectTask?.cancel()
        reconnectTask = nil
        guard let ble = session.transport as? BLETransport else {
            startupTask = Task { [weak self] in try? await self?.runStartup(connecting: false) }
            return
        }
        setState(.connecting)
        linkReturnExpected = true
        await ble.restore()
    }

    /// Disconnects and stops reconnecting.
    public func disconnect() async {
        wantsConnection = false
        linkReturnExpected = false
        generation += 1
        reconnectTask?.cancel()
        reconnectTask = nil
        startupTask?.cancel()
        await session.setAutoFetch(false)
        await session.stop()
        setState(.disconnected)
    }

    // MARK: Messaging

    /// Sends a direct message to `contact`, stores it, and waits for its acknowledgement
    /// (retried as the apps do: ``MessageRetryPolicy``, with `attempts` sends in all); the
    /// stored message ends up delivered or failed.
    @discardableResult
    public func sendMessage(_ text: String, to contact: MeshContact, attempts: Int = 3) async throws -> MeshMessage {
        let timestamp = UInt32(clamping: Int64(wallClock().timeIntervalSince1970))
        var message = MeshMessage(direction: .outgoing, kind: .direct, peer: contact.publicKeyPrefix.hexString,
                                  senderName: selfInfo?.name, text: text, timestamp: timestamp, status: .sent, storedAt: wallClock())
        message = try await store.insertMessage(message) ?? message
        publish(.message(message))
        do {
            let delivery = try await session.sendMessageAwaitingAcknowledgement(
                to: contact.publicKey, text: text, policy: MessageRetryPolicy(maxAttempts: attempts), timestamp: timestamp)
            message.status = .delivered
            message.ack = delivery.confirmation.ack
            message.roundTrip = delivery.confirmation.roundTrip
            if let id = message.id {
                try await store.updateDelivery(id: id, status: .delivered, ack: delivery.confirmation.ack, roundTrip: delivery.confirmation.roundTrip)
            }
            // Published again with its outcome (same id), so a screen shows the tick.
            publish(.message(message))
            return message
        } catch {
            if let id = message.id { try? await store.updateDelivery(id: id, status: .failed, ack: nil, roundTrip: nil) }
            message.status = .failed
            publish(.message(message))
            throw error
        }
    }

    /// Sends a channel message and stores it.
    @discardableResult
    public func sendChannelMessage(_ text: String, channel: UInt8 = 0) async throws -> MeshMessage {
        let timestamp = UInt32(clamping: Int64(wallClock().timeIntervalSince1970))
        try await session.sendChannelMessage(text, channel: channel, timestamp: timestamp)
        let message = MeshMessage(direction: .outgoing, kind: .channel, channelIndex: Int(channel), senderName: selfInfo?.name,
                                  text: text, timestamp: timestamp, status: .sent, storedAt: wallClock())
        let stored = try await store.insertMessage(message) ?? message
        publish(.message(stored))
        return stored
    }

    /// Lists the radio's contacts again (after contacts were added, imported or removed), and
    /// stores and publishes the new list.
    public func refreshContacts() async throws {
        let listing = try await session.contacts()
        try await store.replaceContacts(listing.contacts)
        contacts = listing.contacts
        omittedContactCount = listing.omittedCount
        publish(.contactsUpdated(contacts))
    }

    /// Reads the contacts changed since the newest known, in the background: one listing at a
    /// time, at most one per ``contactRefreshInterval``, the adverts that came meanwhile
    /// answered together.
    private func refreshContactsSoon() {
        guard !contactRefreshRunning else { return }
        contactRefreshRunning = true
        Task { [weak self] in
            guard let self else { return }
            await self.runContactRefreshes()
        }
    }

    /// The shortest time between two listings caused by adverts.
    public static let contactRefreshInterval: Duration = .seconds(2)
    /// Keys remembered as looked up.
    static let lookupMemory = 256

    private func runContactRefreshes() async {
        while contactRefreshPending, state == .ready {
            contactRefreshPending = false
            do { try await mergeChangedContacts() } catch {
                logger.notice("The contacts could not be read after an advert: \(error)")
            }
            do { try await clock.sleep(for: Self.contactRefreshInterval) } catch { break }
        }
        contactRefreshRunning = false
    }

    /// Lists the contacts modified since the newest one known and merges them in (a contact the
    /// app holds that the radio does not, one added from a NEW_ADVERT, stays).
    private func mergeChangedContacts() async throws {
        let newest = contacts.map(\.lastModified).max()
        // The firmware lists those modified after `since`: one second back keeps a contact
        // modified in the same second as the newest.
        let listing = try await session.contacts(since: newest.map { $0 > 0 ? $0 - 1 : 0 })
        guard !listing.contacts.isEmpty else { return }
        var merged = contacts
        for contact in listing.contacts {
            if let index = merged.firstIndex(where: { $0.publicKey == contact.publicKey }) {
                merged[index] = contact
            } else {
                merged.append(contact)
            }
        }
        try await store.saveContacts(listing.contacts)
        contacts = merged
        publish(.contactsUpdated(contacts))
    }

    /// Notes that `key` is being looked up; false when it was already (bounded memory).
    private func rememberLookup(of key: Data) -> Bool {
        guard lookedUp.insert(key).inserted else { return false }
        lookupOrder.append(key)
        if lookupOrder.count > Self.lookupMemory { lookedUp.remove(lookupOrder.removeFirst()) }
        return true
    }

    /// The contact whose name is `name` (case-insensitive) or whose key starts with the hex `name`.
    public func contact(named name: String) -> MeshContact? {
        contacts.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            ?? contacts.first { $0.publicKey.hexString.hasPrefix(name.lowercased()) && name.count >= 4 }
    }

    // MARK: Startup

    private func runStartup(connecting: Bool) async throws {
        generation += 1
        let mine = generation
        runningStartup = mine
        defer { if runningStartup == mine { runningStartup = nil } }
        setState(.connecting)
        // Queued messages are drained by the last step; until then MSG_WAITING is only noted.
        await session.setAutoFetch(false)
        var step = StartupStep.link
        do {
            // The transport's own timeouts bound this (on BLE 10 s to connect and 40 s for
            // discovery, which leaves room for the pairing dialog); a step timeout would not.
            if !(await session.transport.isConnected) { try await session.transport.connect() }
            try checkCurrent(mine)
            step = .appStart
            selfInfo = try await within(step) { [session] in try await session.start() }
            try checkCurrent(mine)
            setState(.connected)

            step = .deviceQuery
            // The firmware details, the clock and the contacts in one exchange: one round trip
            // where the transport allows several commands in flight. The listing goes last, as
            // the firmware streams it over many turns of its loop, and the exchange is bounded
            // by the listing's allowance (over BLE the firmware spaces notifications 60 ms
            // apart: 21 s for 350 contacts).
            let askedAt = wallClock()
            let (device, radioTime, listed): (Result<DeviceInfo, MeshCoreError>, Result<UInt32, MeshCoreError>, Result<ContactList, MeshCoreError>)
            do {
                (device, radioTime, listed) = try await within(.contacts, timeout: configuration.contactsTimeout) { [session] in
                    try await session.perform(
                        .deviceQuery(protocolVersion: session.configuration.protocolVersion), .deviceTime, .contacts())
                }
            } catch MeshCoreError.timeout(let command) where command == StartupStep.contacts.rawValue {
                // The exchange as a whole outlasted the listing's allowance.
                step = .contacts
                throw MeshCoreError.timeout(command: command)
            }
            try checkCurrent(mine)
            deviceInfo = try device.get()

            step = .timeSync
            let radioClock = try radioTime.get()
            // Our clock when the radio read its own (within a round trip), not after the listing.
            try await within(step) { [self] in try await self.syncTime(radio: radioClock, ours: askedAt) }
            try checkCurrent(mine)

            step = .contacts
            let listing = try listed.get()
            try await store.replaceContacts(listing.contacts)
            contacts = listing.contacts
            omittedContactCount = listing.omittedCount
            publish(.contactsUpdated(contacts))

            step = .channels
            let found = try await within(step) { [self] in try await self.loadChannels() }
            try checkCurrent(mine)
            channels = found
            try await store.replaceChannels(found)

            step = .messages
            // Stored (and published) before ready; the same messages arriving through the event
            // subscription are then recognised as duplicates.
            let fetched = try await within(step) { [session] in try await session.syncMessages() }
            for event in fetched { await handle(event) }
            try checkCurrent(mine)

            readyCount += 1
            lastError = nil
            setState(.ready)
            // From now on MSG_WAITING is served at once (and one that came during the drain now).
            await session.setAutoFetch(true)
        } catch is Superseded {
            throw MeshCoreError.linkLost
        } catch {
            let meshError = (error as? MeshCoreError) ?? MeshCoreError.transport(error.localizedDescription)
            guard mine == generation else { throw meshError }
            logger.error("Startup failed", metadata: ["step": "\(step.rawValue)", "error": "\(meshError)"])
            let failure = MeshCoreError.startupFailed(step: step.rawValue, reason: meshError.localizedDescription)
            lastError = failure
            publish(.startupFailed(step: step, error: meshError))
            // Never linger in connecting: drop the link, report disconnected — unless a newer
            // startup began meanwhile, which now owns the link and the state.
            await session.setAutoFetch(false)
            guard mine == generation else { throw failure }
            await session.stop()
            guard mine == generation else { throw failure }
            setState(.disconnected)
            if !connecting { scheduleReconnect(attempt: 1) }
            throw failure
        }
    }

    private struct Superseded: Error {}

    private func checkCurrent(_ mine: Int) throws {
        guard mine == generation else { throw Superseded() }
    }

    private func syncTime(radio: UInt32, ours asked: Date) async throws {
        let ours = asked.timeIntervalSince1970
        let drift = abs(ours - Double(radio))
        let limit = Double(configuration.maximumClockDrift.components.seconds)
        guard drift > limit else { return }
        logger.info("Setting the radio's clock", metadata: ["drift": "\(Int(drift)) s"])
        do {
            // Now, not when the radio was asked: a long listing came in between.
            try await session.setDeviceTime(UInt32(clamping: Int64(wallClock().timeIntervalSince1970)))
        } catch let error as MeshCoreError where error.radioErrorCode == .illegalArgument {
            // The radio's clock is ahead and it will not go back (monotonic rule): keep going.
            logger.warning("The radio refused an earlier time; its clock stays ahead", metadata: ["drift": "\(Int(drift)) s"])
        }
    }

    /// Every channel up to the radio's count, read in one exchange; the firmware answers ERR
    /// (not found) past its last, where the reading stops.
    private func loadChannels() async throws -> [ChannelInfo] {
        let limit = min(configuration.maximumChannels, Int(deviceInfo?.maxChannels ?? UInt8(clamping: configuration.maximumChannels)))
        let results = try await session.perform((0..<max(1, limit)).map { MeshCoreRequest.channel(UInt8($0)) })
        var found: [ChannelInfo] = []
        for result in results {
            switch result {
            case .success(let info):
                if !info.name.isEmpty { found.append(info) }
            case .failure(let error) where error.radioErrorCode == .notFound:
                return found
            case .failure(let error):
                throw error
            }
        }
        return found
    }

    /// Runs one startup step with the step timeout (or `timeout`).
    private func within<T: Sendable>(
        _ step: StartupStep, timeout: Duration? = nil, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let clock = self.clock, timeout = timeout ?? configuration.stepTimeout
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw MeshCoreError.timeout(command: step.rawValue)
            }
            return value
        }
    }

    // MARK: Link and radio events

    private func subscribe() async {
        guard sessionEvents == nil else { return }
        let events = await session.events()
        sessionEvents = Task { [weak self] in
            for await event in events { await self?.handle(event) }
        }
        if let reporting = session.transport as? any MeshLinkReporting {
            let link = await reporting.linkEvents()
            linkEvents = Task { [weak self] in
                for await event in link { await self?.handle(event) }
            }
        }
    }

    private func handle(_ event: MeshCoreEvent) async {
        switch event {
        case .contactMessage(let message) where message.textType == .cliData:
            // A server's answer to a remote command (``MeshCoreSession/runCommand(_:on:)``), not chat.
            publish(.radio(event))
        case .contactMessage(let message):
            await store(MeshMessage(message, storedAt: wallClock()))
        case .channelMessage(let message):
            await store(MeshMessage(message, storedAt: wallClock()))
        case .sendConfirmed(let confirmation):
            publish(.acknowledged(ack: confirmation.ack, roundTrip: confirmation.roundTrip))
        case .advert(let key):
            publish(.radio(event))
            // PUSH_ADVERT names only the key: one the app does not know is a contact the radio
            // added by itself (auto-add), so the contacts changed since the newest known are
            // read. Once per key (a key that stays unknown — a full table, a listing past its
            // limit — is not looked up at every advert); during a startup, once it is ready.
            guard !contacts.contains(where: { $0.publicKey == key }), rememberLookup(of: key) else { break }
            contactRefreshPending = true
            if state == .ready { refreshContactsSoon() }
        case .newAdvert(let contact):
            publish(.radio(event))
            if !contacts.contains(where: { $0.publicKey == contact.publicKey }) {
                contacts.append(contact)
                try? await store.saveContacts([contact])
                publish(.contactsUpdated(contacts))
            }
        default:
            publish(.radio(event))
        }
    }

    private func store(_ message: MeshMessage) async {
        do {
            if let stored = try await store.insertMessage(message) {
                publish(.message(stored))
            } else {
                logger.debug("Skipped a message already delivered")
            }
        } catch {
            // Publishing unsaved beats losing it.
            logger.error("Could not store a message", metadata: ["error": "\(error)"])
            publish(.message(message))
            publish(.messageNotStored(reason: (error as? any LocalizedError)?.errorDescription ?? "\(error)"))
        }
    }

    private func handle(_ event: MeshLinkEvent) async {
        switch event {
        case .connected:
            break
        case .reconnecting:
            guard wantsConnection else { return }
            linkReturnExpected = true
            generation += 1
            await session.linkWentDown()
            setState(.connecting)
        case .reconnected:
            // Only a link that went away by itself (or was restored) needs a new startup; a
            // late report of a connect our own startup made must not start a second one.
            guard wantsConnection, linkReturnExpected, runningStartup != generation else { return }
            linkReturnExpected = false
            logger.info("Link back; starting the radio session again")
            startupTask?.cancel()
            startupTask = Task { [weak self] in try? await self?.runStartup(connecting: false) }
        case .disconnected(let reason):
            generation += 1
            await session.linkWentDown()
            guard state != .disconnected else { return }
            setState(.disconnected)
            guard wantsConnection else { return }
            logger.warning("Link lost", metadata: ["reason": "\(reason ?? "unknown")"])
            scheduleReconnect(attempt: 1)
        }
    }

    private func scheduleReconnect(attempt: Int) {
        guard wantsConnection, let delay = configuration.reconnectPolicy.delay(beforeAttempt: attempt) else { return }
        reconnectTask?.cancel()
        let clock = self.clock
        logger.info("Reconnecting", metadata: ["attempt": "\(attempt)", "delay": "\(delay)"])
        reconnectTask = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.reconnect(attempt: attempt)
        }
    }

    private func reconnect(attempt: Int) async {
        guard wantsConnection, state == .disconnected else { return }
        do {
            try await runStartup(connecting: true)
        } catch {
            guard wantsConnection, state == .disconnected else { return }
            scheduleReconnect(attempt: attempt + 1)
        }
    }

    private func setState(_ new: State) {
        guard new != state else { return }
        logger.info("State \(state) → \(new)")
        state = new
        publish(.state(new))
        // Adverts of unknown keys that came while the startup ran.
        if new == .ready, contactRefreshPending { refreshContactsSoon() }
    }

    private func publish(_ event: Event) { broadcaster.yield(event, logger: logger) }
    private func removeSubscriber(_ token: Int) { broadcaster.remove(token) }
}
