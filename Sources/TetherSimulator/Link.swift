import Foundation
import TetherCore

/// Traffic counters of a virtual peripheral's links, for benchmarks and tests.
public struct LinkStatistics: Sendable, Equatable {
    /// Empty counters.
    public init() {}
    /// Payload bytes delivered to the peripheral by writes without response.
    public var bytesWithoutResponse = 0
    /// Payload bytes delivered to the peripheral by writes with response.
    public var bytesWithResponse = 0
    /// Writes (either type) delivered to the peripheral.
    public var writesDelivered = 0
    /// Writes without response the controller dropped because its buffer was full.
    public var writesDropped = 0
    /// Notifications delivered to the central.
    public var notificationsDelivered = 0
    /// Connection events that carried traffic.
    public var busyConnectionEvents = 0
    /// Virtual time of the first and last delivery to the peripheral.
    public var firstDelivery: Duration?
    /// Virtual time of the last delivery to the peripheral.
    public var lastDelivery: Duration?
}

/// One connection between the central and a virtual peripheral, modelled as connection events
/// that each carry a bounded number of packets in each direction.
@SimulationActor
final class Link {
    enum Request {
        case write(CharacteristicPath, Data)
        case read(CharacteristicPath)
        case subscribe(CharacteristicPath, Bool)
    }

    enum Outbound {
        case command(CharacteristicPath, Data)
        case request(Request, deliverAtEvent: Int?)
    }

    enum Inbound {
        case notification(CharacteristicPath, Data)
        case writeResponse(CharacteristicPath, ATTError?)
        case readResponse(CharacteristicPath, Result<Data, ATTError>)
        case subscribeResponse(CharacteristicPath, Bool, ATTError?)
    }

    let serial: Int
    let peripheral: VirtualPeripheral
    let options: ConnectOptions
    let anchor: Duration
    var mtu: Int
    var parameters: LinkParameters { peripheral.linkParameters }
    var subscriptions: Set<CharacteristicPath> = []
    /// When the last discovery request's answer is due (answers go out in request order).
    var discoveryAnswered: Duration = .zero
    var outbound: [Outbound] = []
    var inbound: [(notBefore: Int, item: Inbound)] = []
    var queuedCommands = 0
    var queuedNotifications = 0
    var lastEvent = -1
    var pumping = false
    /// The central was told it cannot send; it gets `readyToWriteWithoutResponse` when space frees.
    var flowBlocked = false
    var supervisionTimer: Task<Void, Never>?

    init(serial: Int, peripheral: VirtualPeripheral, options: ConnectOptions, anchor: Duration, mtu: Int) {
        self.serial = serial
        self.peripheral = peripheral
        self.options = options
        self.anchor = anchor
        self.mtu = mtu
    }

    var hasWork: Bool { !outbound.isEmpty || !inbound.isEmpty }

    var canAcceptCommand: Bool { queuedCommands < parameters.writeWithoutResponseBuffer }

    /// The index and time of the first connection event after the last one processed and not
    /// before `now`.
    func nextEvent(after now: Duration) -> (index: Int, time: Duration) {
        let interval = parameters.connectionInterval.nanoseconds
        let elapsed = (now - anchor).nanoseconds
        let due = elapsed <= 0 ? 0 : (elapsed + interval - 1) / interval
        let index = max(lastEvent + 1, Int(due))
        return (index, anchor + .nanoseconds(Int64(index) * interval))
    }

    /// ATT rounds a write with response needs: one, or prepare writes plus an execute.
    func rounds(forWriteOf length: Int) -> Int {
        guard length > mtu - 3 else { return 1 }
        let perPrepare = mtu - 5
        return (length + perPrepare - 1) / perPrepare + 1
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }
}
