import Foundation
import TetherCore

/// The firmware of a virtual peripheral: what it does when a central connects, writes, reads
/// or subscribes. Device emulators implement this.
///
/// Every method runs on the ``SimulationActor`` at the virtual time the ATT packet arrives.
/// All methods have default implementations, so a behaviour implements only what it needs.
@SimulationActor
public protocol PeripheralBehavior: AnyObject, Sendable {
    /// A central connected.
    func didConnect(_ context: PeripheralContext)
    /// The central disconnected or the link was lost.
    func didDisconnect(_ context: PeripheralContext)
    /// A write arrived; return an ATT error to reject a write with response.
    func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError?
    /// A read arrived; return nil to serve the characteristic's stored value.
    func didRead(_ characteristic: CharacteristicPath, context: PeripheralContext) -> Result<Data, ATTError>?
    /// The central enabled or disabled notifications.
    func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext)
}

extension PeripheralBehavior {
    public func didConnect(_ context: PeripheralContext) {}
    public func didDisconnect(_ context: PeripheralContext) {}
    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? { nil }
    public func didRead(_ characteristic: CharacteristicPath, context: PeripheralContext) -> Result<Data, ATTError>? { nil }
    public func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {}
}

/// What a behaviour can do to the world: notify, disconnect, keep time.
@SimulationActor
public final class PeripheralContext {
    /// Weak: a firmware timer may outlive the world it ran in, and must then find nobody home
    /// rather than crash.
    weak var radio: VirtualRadio?
    /// The peripheral this context belongs to.
    public let peripheral: PeripheralID
    /// The simulation's timeline, for behaviours that run timers.
    public let timeline: Timeline

    init(radio: VirtualRadio, peripheral: PeripheralID) {
        self.radio = radio
        self.peripheral = peripheral
        self.timeline = radio.timeline
    }

    /// Virtual time since the radio started.
    public var now: Duration { timeline.now }

    /// True while a central is connected.
    public var isConnected: Bool { radio?.link(for: peripheral) != nil }

    /// True if the central subscribed to `characteristic`.
    public func isSubscribed(_ characteristic: CharacteristicPath) -> Bool {
        radio?.link(for: peripheral)?.subscriptions.contains(characteristic) ?? false
    }

    /// The link's negotiated ATT MTU (23 when not connected).
    public var mtu: Int { radio?.link(for: peripheral)?.mtu ?? 23 }

    /// Queues a notification. Returns false when it cannot be sent: not connected, not
    /// subscribed, or the notification queue is full. Values over MTU − 3 are truncated, as
    /// real stacks do.
    @discardableResult
    public func notify(_ value: Data, on characteristic: CharacteristicPath) -> Bool {
        radio?.notify(value, on: characteristic, from: peripheral) ?? false
    }

    /// Sets the value future reads return.
    public func setValue(_ value: Data, for characteristic: CharacteristicPath) {
        radio?.virtualPeripheral(peripheral)?.setValue(value, for: characteristic)
    }

    /// Closes the link from the peripheral's side.
    public func disconnect() {
        radio?.peripheralDisconnect(peripheral)
    }

    /// Runs `tick` every `interval` of virtual time until the returned task is cancelled or
    /// the peripheral disconnects.
    @discardableResult
    public func every(_ interval: Duration, _ tick: @escaping @SimulationActor () -> Void) -> Task<Void, Never> {
        let timeline = self.timeline
        return Task { @SimulationActor [weak self] in
            var next = timeline.now + interval
            while !Task.isCancelled {
                do { try await timeline.sleep(until: next) } catch { return }
                guard let self, self.isConnected else { return }
                tick()
                next += interval
            }
        }
    }

    /// Runs `action` once after `delay` of virtual time.
    @discardableResult
    public func after(_ delay: Duration, _ action: @escaping @SimulationActor () -> Void) -> Task<Void, Never> {
        let timeline = self.timeline
        return Task { @SimulationActor in
            do { try await timeline.sleep(for: delay) } catch { return }
            action()
        }
    }
}
