import Foundation
import MeshCore
import TetherCore
import TetherSimulator

/// A ``CompanionRadio`` as a virtual BLE peripheral: a `MeshCore-…` radio with the Nordic
/// UART Service, as the PocketMesh transport reaches it.
///
/// Each write to `MeshCoreBLE/writeCharacteristic` is one command frame. Replies and pushes
/// are notified on `MeshCoreBLE/notifyCharacteristic` one frame per notification, at least
/// ``notificationSpacing`` apart (the firmware's 60 ms), and only while the central is
/// subscribed; until then they wait in the radio's outbox. The radio sees an app attached for
/// as long as a central is connected.
///
/// A SYNC_NEXT_MESSAGE reply counts as delivered once the app sends its next command, or once
/// the link has stayed up for ``deliveryConfirmationWindow`` after it was notified (longer
/// than a supervision timeout, so an out-of-range link would have dropped by then). If the link
/// drops first, the message goes back to the front of the radio's queue: nothing is lost, at
/// the cost of a possible duplicate that apps recognise by sender, timestamp and text.
@SimulationActor
public final class MeshCoreEmulator: PeripheralBehavior {
    /// The radio behind the peripheral.
    public let radio: CompanionRadio
    /// The advertised name, `MeshCore-<radio name>` unless given.
    public nonisolated let advertisedName: String
    /// The minimum time between two notifications.
    public let notificationSpacing: Duration
    /// How long a notified message reply must survive on a live link to count as delivered.
    public let deliveryConfirmationWindow: Duration
    /// Command frames written by the central.
    public private(set) var framesReceived = 0
    /// Frames notified to the central.
    public private(set) var framesNotified = 0
    /// When the last (up to 256) notifications were sent, in the radio's virtual time.
    public private(set) var notificationTimes: [Duration] = []

    private var context: PeripheralContext?
    private var lastNotificationAt: Duration?
    private var drainScheduled = false
    private var linkGeneration = 0

    /// Wraps `radio`.
    ///
    /// - Parameters:
    ///   - radio: The companion radio to expose.
    ///   - name: The advertised name; `MeshCore-<radio name>` by default.
    ///   - notificationSpacing: The minimum gap between notifications (60 ms on the firmware).
    ///   - deliveryConfirmationWindow: See the type's discussion.
    public init(
        radio: CompanionRadio,
        name: String? = nil,
        notificationSpacing: Duration = .milliseconds(60),
        deliveryConfirmationWindow: Duration = .milliseconds(2_100)
    ) {
        self.radio = radio
        self.advertisedName = name ?? "\(MeshCoreBLE.namePrefix)-\(radio.name)"
        self.notificationSpacing = notificationSpacing
        self.deliveryConfirmationWindow = deliveryConfirmationWindow
    }

    /// A virtual peripheral running `behavior`.
    ///
    /// The default link is the profile's (`DeviceProfile.meshCore`).
    public nonisolated static func makePeripheral(
        id: PeripheralID = PeripheralID(UUID()),
        name: String? = nil,
        distance: Double = 1.5,
        linkParameters: LinkParameters? = nil,
        behavior: MeshCoreEmulator
    ) -> VirtualPeripheral {
        let name = name ?? behavior.advertisedName
        return VirtualPeripheral(
            profile: .meshCore, id: id, name: name, behavior: behavior, distance: distance,
            advertisement: AdvertisementData(localName: name, serviceUUIDs: DeviceProfile.meshCore.advertisedServices, txPowerLevel: 0),
            linkParameters: linkParameters)
    }

    /// A virtual peripheral running this emulator.
    public func makePeripheral(
        id: PeripheralID = PeripheralID(UUID()),
        distance: Double = 1.5,
        linkParameters: LinkParameters? = nil
    ) -> VirtualPeripheral {
        Self.makePeripheral(id: id, name: advertisedName, distance: distance, linkParameters: linkParameters, behavior: self)
    }

    // MARK: PeripheralBehavior

    public func didConnect(_ context: PeripheralContext) {
        self.context = context
        linkGeneration += 1
        // A drain scheduled on the previous link will not run (its generation is stale): the
        // flag belongs to that link, or this one would never notify.
        drainScheduled = false
        lastNotificationAt = nil
        radio.outputHandler = { [weak self] in self?.scheduleDrain() }
        radio.appConnected()
    }

    public func didDisconnect(_ context: PeripheralContext) {
        linkGeneration += 1
        drainScheduled = false
        self.context = nil
        radio.outputHandler = nil
        radio.appDisconnected()
    }

    public func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        guard characteristic == MeshCoreBLE.notifyCharacteristic, enabled else { return }
        scheduleDrain()
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        guard characteristic == MeshCoreBLE.writeCharacteristic else { return .writeNotPermitted }
        framesReceived += 1
        radio.receive(value)
        return nil
    }

    // MARK: Notification pacing

    /// Sends the next frame when the spacing allows. Always asynchronous, so the radio is never
    /// re-entered from inside its own command handler.
    private func scheduleDrain() {
        guard !drainScheduled, let context, context.isSubscribed(MeshCoreBLE.notifyCharacteristic),
              radio.hasPendingOutput else { return }
        drainScheduled = true
        let earliest = lastNotificationAt.map { $0 + notificationSpacing } ?? context.now
        let delay = earliest - context.now
        let generation = linkGeneration
        let body: @SimulationActor () -> Void = { [weak self] in
            guard let self, generation == self.linkGeneration else { return }
            self.drainScheduled = false
            self.sendOne()
        }
        if delay > .zero {
            context.after(delay, body)
        } else {
            Task { @SimulationActor in body() }
        }
    }

    private func sendOne() {
        guard let context, context.isConnected, context.isSubscribed(MeshCoreBLE.notifyCharacteristic),
              let output = radio.nextOutput() else { return }
        if context.notify(output.frame, on: MeshCoreBLE.notifyCharacteristic) {
            framesNotified += 1
            notificationTimes.append(context.now)
            if notificationTimes.count > 256 { notificationTimes.removeFirst(notificationTimes.count - 256) }
            if output.message != nil {
                let generation = linkGeneration
                context.after(deliveryConfirmationWindow) { [weak self] in
                    guard let self, generation == self.linkGeneration else { return }
                    self.radio.delivered(output)
                }
            }
        } else {
            radio.undelivered(output)
        }
        lastNotificationAt = context.now
        scheduleDrain()
    }
}
