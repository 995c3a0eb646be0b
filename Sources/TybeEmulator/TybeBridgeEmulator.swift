import Foundation
import Tybe
import Logging
import TetherCore
import TetherSimulator

/// The Tybe BLE bridge firmware (`Tybe Zephyr Dev`) as a virtual peripheral, driving an ESB
/// link to a ``TybeDongle`` that types on a ``TybeHost``.
///
/// It serves the GATT table of the wire protocol and follows its rules:
///
/// - **Text Input.** Each write is one frame. A frame that does not parse is answered with
///   MALFORMED_FRAME; a frame repeating the previous frame's seq on this BLE connection with
///   DUPLICATE_SEQ (the filter resets on every connection); a frame arriving while the queue
///   holds `queueCapacity` frames with BUSY. Other frames are queued: keys before an unknown
///   opcode are kept (UNKNOWN_OPCODE), keycodes outside 0x04…0xE7 are skipped (INVALID_KEY).
///   The bridge sends the queue head to the dongle over the radio; when the dongle
///   acknowledges, the frame's status goes out with the ACK flag and the next frame follows
///   once the dongle has typed this one (its buffer holds one packet). Without an ACK the
///   status carries DONGLE_NO_ACK and the keys are lost.
/// - **Status.** A 4-byte notification after every frame, every 2 s while connected
///   (heartbeat: the last frame's seq, no error), after a Control write of `0x01`, and when
///   the client enables Status notifications (once per connection in practice). Bit 2 (dongle
///   linked) holds while the dongle acknowledged something in the last 4 s. The heartbeat
///   pings the dongle before reporting, and the other unsolicited statuses probe it when it
///   is not linked, so a re-plugged dongle shows as linked within one heartbeat without any
///   typing, and an unplugged one stops being linked 2–4 s after it was pulled.
/// - **Config.** Reads return the 10-byte `TybeConfig`; a one-byte write 0…100 sets the ESB
///   channel, anything else is refused with ATT error 0x13 (``valueNotAllowed``).
/// - **Control.** `0x01` requests a status; other values are ignored.
@SimulationActor
public final class TybeBridgeEmulator: PeripheralBehavior {
    /// ATT error 0x13 "Value Not Allowed" (Core Specification v5.x, Vol 3, Part F, 3.4.1.1).
    public nonisolated static let valueNotAllowed = ATTError(0x13)
    /// Interval of the heartbeat status.
    public nonisolated static let heartbeatInterval: Duration = .seconds(2)
    /// Time without any dongle ACK after which the dongle-linked flag clears.
    public nonisolated static let linkTimeout: Duration = .seconds(4)

    /// The advertised local name.
    public nonisolated let name: String
    /// Frames the bridge may hold (queued or being typed) before it answers BUSY.
    public nonisolated let queueCapacity: Int
    /// The dongle at the other end of the ESB link.
    public nonisolated let dongle: TybeDongle

    /// Text Input writes received (every write, including rejected ones).
    public private(set) var framesReceived = 0
    /// Every status notification sent, in order.
    public private(set) var statusesSent: [TybeStatus] = []
    /// False: the firmware is wedged and sends no heartbeat (a link that is up but silent).
    public var sendsHeartbeats = true
    /// The seq of the last frame accepted (any connection); heartbeats report it.
    public private(set) var lastSeq: UInt8?
    /// The ESB channel (Config writes change it).
    public var esbChannel: UInt8 { config.esbChannel }
    /// Frames waiting in the queue, including the one being sent or typed.
    public var queuedFrames: Int { queue.count }
    /// Virtual time of the last radio packet the dongle acknowledged (frame or ping).
    public var lastDongleAckAt: Duration? { lastAckAt }
    /// True while the dongle has acknowledged a radio packet within ``linkTimeout``.
    public var isDongleLinked: Bool {
        guard let lastAckAt, let timeline else { return false }
        return timeline.now - lastAckAt < Self.linkTimeout
    }

    private var config: TybeConfig
    /// The power-up configuration, for building the GATT table outside the actor.
    private nonisolated let initialConfig: TybeConfig
    private var context: PeripheralContext?
    private var timeline: Timeline?
    /// Counts BLE connections so statuses of frames from an earlier connection stay unsent.
    private var connectionSerial = 0
    /// The duplicate filter: the seq of the previous frame on this connection.
    private var previousSeq: UInt8?
    private var queue: [QueuedFrame] = []
    private var worker: Task<Void, Never>?
    private var heartbeat: Task<Void, Never>?
    private var lastAckAt: Duration?
    private var nextFrameID = 0
    /// Whether the frame with ``lastSeq`` was acknowledged (reported by heartbeats).
    private var lastFrameAcked = false
    private let logger = Logger(label: "tether.tybe.bridge")

    private struct QueuedFrame {
        let id: Int
        let seq: UInt8
        let actions: [TybeOpcode]
        let error: TybeStatusCode
        let connection: Int
    }

    /// Creates the bridge firmware. `firmware` is (major, minor, patch); `esbAddress` must be
    /// 5 bytes.
    public nonisolated init(
        name: String = TybeGATT.defaultBridgeName,
        queueCapacity: Int = 16,
        dongle: TybeDongle = TybeDongle(),
        firmware: (UInt8, UInt8, UInt8) = (1, 2, 0),
        esbAddress: [UInt8] = [0xE7, 0xE7, 0xE7, 0xE7, 0xE7],
        esbChannel: UInt8 = 40
    ) {
        self.name = name
        self.queueCapacity = max(1, queueCapacity)
        self.dongle = dongle
        let config = TybeConfig(
            firmwareMajor: firmware.0, firmwareMinor: firmware.1, firmwarePatch: firmware.2,
            esbAddress: esbAddress, esbChannel: esbChannel)
        self.config = config
        self.initialConfig = config
    }

    /// A virtual bridge running this firmware, with the contract's GATT table.
    public nonisolated func makePeripheral(id: PeripheralID = PeripheralID(UUID()), distance: Double = 2.0) -> VirtualPeripheral {
        VirtualPeripheral(profile: .tybe, id: id, name: name, behavior: self, distance: distance,
                          values: [TybeGATT.status: TybeStatus().bytes, TybeGATT.config: initialConfig.bytes])
    }

    /// The status the bridge would report now for `seq`.
    public func currentStatus(seq: UInt8? = nil, error: TybeStatusCode = .ok, ack: Bool? = nil) -> TybeStatus {
        TybeStatus(
            bridgeReady: true, ackReceived: ack ?? lastFrameAcked, dongleLinked: isDongleLinked,
            seq: seq ?? lastSeq ?? 0, error: error)
    }

    // MARK: PeripheralBehavior

    public func didConnect(_ context: PeripheralContext) {
        self.context = context
        timeline = context.timeline
        connectionSerial += 1
        previousSeq = nil
        heartbeat?.cancel()
        // Cancelled on disconnect: `every` alone would survive a quick reconnection.
        heartbeat = context.every(Self.heartbeatInterval) { [weak self] in self?.heartbeatTick() }
    }

    public func didDisconnect(_ context: PeripheralContext) {
        heartbeat?.cancel()
        heartbeat = nil
        previousSeq = nil
    }

    public func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        self.context = context
        guard characteristic == TybeGATT.status, enabled else { return }
        reportStatus(probing: !isDongleLinked)
    }

    public func didRead(_ characteristic: CharacteristicPath, context: PeripheralContext) -> Result<Data, ATTError>? {
        switch characteristic {
        case TybeGATT.config: .success(config.bytes)
        case TybeGATT.status: .success(currentStatus().bytes)
        default: nil
        }
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        self.context = context
        switch characteristic {
        case TybeGATT.textInput:
            receiveFrame(value)
            return nil
        case TybeGATT.control:
            if TybeControl.isRequestStatus(value) { reportStatus(probing: !isDongleLinked) }
            return nil
        case TybeGATT.config:
            guard let channel = TybeConfig.parseChannelWrite(value) else { return Self.valueNotAllowed }
            config.esbChannel = channel
            context.setValue(config.bytes, for: TybeGATT.config)
            logger.info("ESB channel set", metadata: ["channel": "\(channel)"])
            return nil
        default:
            return .writeNotPermitted
        }
    }

    // MARK: Frames

    private func receiveFrame(_ value: Data) {
        framesReceived += 1
        let frame: TybeFrame
        switch Result(catching: { () throws(TybeStatusCode) in try TybeFrame(decoding: value) }) {
        case .failure(let code):
            // The seq byte is still the best description of which write failed.
            notify(seq: value.first ?? lastSeq ?? 0, error: code, ack: false)
            return
        case .success(let parsed):
            frame = parsed
        }
        if frame.seq == previousSeq {
            notify(seq: frame.seq, error: .duplicateSeq, ack: false)
            return
        }
        guard queue.count < queueCapacity else {
            // Not recorded in the duplicate filter: the client resends the same seq.
            notify(seq: frame.seq, error: .busy, ack: false)
            return
        }
        previousSeq = frame.seq
        lastSeq = frame.seq
        lastFrameAcked = false

        let (opcodes, decodeError) = TybeOpcode.decode(frame.opcodes)
        var actions: [TybeOpcode] = []
        var skippedInvalidKey = false
        for opcode in opcodes {
            if case .key(let stroke) = opcode, !stroke.key.isValid {
                skippedInvalidKey = true
                continue
            }
            actions.append(opcode)
        }
        // One error byte: a truncated frame (unknown opcode, cut-short KEY) outranks a skipped key.
        let error = decodeError.map { TybeStatusCode(rawValue: $0) ?? .internalError }
            ?? (skippedInvalidKey ? .invalidKey : .ok)
        nextFrameID += 1
        queue.append(QueuedFrame(id: nextFrameID, seq: frame.seq, actions: actions, error: error, connection: connectionSerial))
        if worker == nil {
            worker = Task { @SimulationActor [weak self] in await self?.drainQueue() }
        }
    }

    /// Sends queued frames to the dongle one at a time.
    private func drainQueue() async {
        while let frame = queue.first, let timeline {
            if await dongle.transmit(on: timeline) {
                lastAckAt = timeline.now
                if frame.id == nextFrameID { lastFrameAcked = true }
                if frame.connection == connectionSerial { notify(seq: frame.seq, error: frame.error, ack: true) }
                await dongle.type(frame.actions, on: timeline)
            } else {
                logger.warning("Dongle did not acknowledge", metadata: ["seq": "\(frame.seq)"])
                if frame.connection == connectionSerial { notify(seq: frame.seq, error: .dongleNoAck, ack: false) }
            }
            queue.removeFirst()
        }
        worker = nil
    }

    // MARK: Status

    private func heartbeatTick() {
        guard sendsHeartbeats else { return }
        // The heartbeat doubles as the ESB keep-alive: without it an idle dongle would look unlinked.
        reportStatus(probing: true)
    }

    /// Sends a status describing the last frame, after pinging the dongle when `probing`.
    private func reportStatus(probing: Bool) {
        guard probing, let timeline else {
            notify(seq: lastSeq ?? 0, error: .ok, ack: lastFrameAcked)
            return
        }
        let connection = connectionSerial
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            if await self.dongle.transmit(on: timeline) { self.lastAckAt = timeline.now }
            guard connection == self.connectionSerial else { return }
            self.notify(seq: self.lastSeq ?? 0, error: .ok, ack: self.lastFrameAcked)
        }
    }

    private func notify(seq: UInt8, error: TybeStatusCode, ack: Bool) {
        guard let context, context.isConnected, context.isSubscribed(TybeGATT.status) else { return }
        let status = currentStatus(seq: seq, error: error, ack: ack)
        context.setValue(status.bytes, for: TybeGATT.status)
        if context.notify(status.bytes, on: TybeGATT.status) {
            statusesSent.append(status)
        } else {
            logger.warning("Status notification dropped (queue full)", metadata: ["seq": "\(seq)"])
        }
    }
}
