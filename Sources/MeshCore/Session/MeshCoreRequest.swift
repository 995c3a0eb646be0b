import Foundation

/// A command together with how its reply is recognised and read: what ``MeshCoreSession``'s
/// `perform` sends, one at a time or several back to back.
///
/// ```swift
/// // One round trip on links that allow several commands in flight (TCP, serial).
/// let (device, clock, listing) = try await session.perform(.deviceQuery(), .deviceTime, .contacts())
/// let channels = try await session.perform((0..<8).map { MeshCoreRequest.channel($0) })
/// ```
///
/// The radio answers commands in the order it received them, which is what lets replies be
/// matched without sequence numbers.
public struct MeshCoreRequest<Value: Sendable>: Sendable {
    /// The command sent.
    public let command: MeshCoreCommand
    let accept: @Sendable (MeshCoreFrame) -> MeshCoreSession.ReplyMatch
    let read: @Sendable (MeshCoreSession.Reply) throws -> Value

    /// A request for any command: `accept` classifies each non-push frame that arrives while
    /// the reply is awaited, `read` turns the reply's frames (the closing one last) into the
    /// value, throwing ``MeshCoreError/malformedReply(command:reason:)`` when they do not hold it.
    public init(
        _ command: MeshCoreCommand,
        accept: @escaping @Sendable (MeshCoreFrame) -> MeshCoreSession.ReplyMatch,
        read: @escaping @Sendable ([MeshCoreFrame]) throws -> Value
    ) {
        self.init(command, accept: accept, reading: { try read($0.frames) })
    }

    init(
        _ command: MeshCoreCommand,
        accept: @escaping @Sendable (MeshCoreFrame) -> MeshCoreSession.ReplyMatch,
        reading: @escaping @Sendable (MeshCoreSession.Reply) throws -> Value
    ) {
        self.command = command
        self.accept = accept
        self.read = reading
    }

    /// A request answered by one frame, from which `extract` takes the value.
    init(_ command: MeshCoreCommand, single extract: @escaping @Sendable (MeshCoreFrame) -> Value?) {
        self.init(command, accept: { extract($0) == nil ? .notMine : .complete }) { reply in
            guard let frame = reply.frames.last, let value = extract(frame) else {
                throw MeshCoreError.malformedReply(command: MeshCoreSession.name(of: command), reason: "no reply frame")
            }
            return value
        }
    }
}

extension MeshCoreRequest where Value == SelfInfo {
    /// APP_START: the radio's identity and settings (SELF_INFO).
    public static func selfInfo(appName: String) -> Self {
        Self(.appStart(appName: appName)) { if case .selfInfo(let info) = $0 { info } else { nil } }
    }
}

extension MeshCoreRequest where Value == DeviceInfo {
    /// DEVICE_QUERY asking for `protocolVersion`'s message format (V3 codes with SNR by default).
    public static func deviceQuery(protocolVersion: UInt8 = 3) -> Self {
        Self(.deviceQuery(protocolVersion: protocolVersion)) { if case .deviceInfo(let info) = $0 { info } else { nil } }
    }
}

extension MeshCoreRequest where Value == UInt32 {
    /// GET_DEVICE_TIME: the radio's clock (epoch seconds).
    public static var deviceTime: Self {
        Self(.getDeviceTime) { if case .currentTime(let seconds) = $0 { seconds } else { nil } }
    }
}

extension MeshCoreRequest where Value == BatteryAndStorage {
    /// GET_BATT_AND_STORAGE: battery voltage and storage use.
    public static var batteryAndStorage: Self {
        Self(.getBatteryAndStorage) { if case .batteryAndStorage(let value) = $0 { value } else { nil } }
    }
}

extension MeshCoreRequest where Value == ChannelInfo {
    /// GET_CHANNEL: channel `index`'s name and secret (ERR 2, not found, past the radio's last).
    public static func channel(_ index: UInt8) -> Self {
        // Its own index only: a late answer to an earlier read is not this one's.
        Self(.getChannel(index)) { if case .channelInfo(let info) = $0, info.index == index { info } else { nil } }
    }
}

extension MeshCoreRequest where Value == ContactList {
    /// GET_CONTACTS: the radio's contacts, all or those modified after `since`.
    ///
    /// CONTACTS_START's count is the radio's total, not the number that follows, so the listing
    /// is read to END_OF_CONTACTS. The firmware streams the listing over many turns of its loop
    /// and answers commands sent behind it in between; their replies (an ERR too) still reach
    /// them. Sending it last in a batch lets the other replies come first.
    public static func contacts(since: UInt32? = nil) -> Self {
        Self(.getContacts(since: since), accept: { frame in
            switch frame {
            case .contactsStart, .contact: .more
            case .endOfContacts: .complete
            default: .notMine
            }
        }, reading: { reply in
            var contacts: [MeshContact] = []
            var lastModified: UInt32 = since ?? 0
            for frame in reply.frames {
                switch frame {
                case .contact(let contact): contacts.append(contact)
                // The firmware reports 0 when nothing newer was sent: keep the caller's cursor.
                case .endOfContacts(let last): lastModified = max(lastModified, last)
                default: break
                }
            }
            return ContactList(contacts: contacts, lastModified: lastModified, omittedCount: reply.omitted)
        })
    }
}
