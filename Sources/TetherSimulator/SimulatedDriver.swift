import Foundation
import TetherCore

/// The central's view of a ``VirtualRadio``: the embedded default `BLEDriver`.
public final class SimulatedDriver: BLEDriver {
    /// The virtual world behind this driver.
    public let radio: VirtualRadio
    public let events: AsyncStream<BLEDriverEvent>
    public let name = "simulator"
    public let supportsAutoReconnect: Bool

    /// Creates a driver for `radio`. Create one driver per radio (per simulated app launch).
    @SimulationActor
    public convenience init(radio: VirtualRadio, supportsAutoReconnect: Bool = true) {
        self.init(radio: radio, events: radio.events, supportsAutoReconnect: supportsAutoReconnect)
    }

    init(radio: VirtualRadio, events: AsyncStream<BLEDriverEvent>, supportsAutoReconnect: Bool = true) {
        self.radio = radio
        self.events = events
        self.supportsAutoReconnect = supportsAutoReconnect
    }

    public func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) async {
        await radio.startScan(services: services, allowDuplicates: allowDuplicates)
    }

    public func stopScan() async { await radio.stopScan() }

    public func connect(_ peripheral: PeripheralID, options: ConnectOptions) async {
        var options = options
        if !supportsAutoReconnect { options.enableAutoReconnect = false }
        await radio.connect(peripheral, options: options)
    }

    public func cancelConnection(_ peripheral: PeripheralID) async { await radio.cancelConnection(peripheral) }

    public func discoverServices(_ services: [BluetoothUUID]?, on peripheral: PeripheralID) async {
        await radio.discoverServices(services, on: peripheral)
    }

    public func discoverCharacteristics(_ characteristics: [BluetoothUUID]?, for service: BluetoothUUID, on peripheral: PeripheralID) async {
        await radio.discoverCharacteristics(characteristics, for: service, on: peripheral)
    }

    public func setNotifyValue(_ enabled: Bool, for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        await radio.setNotify(enabled, for: characteristic, on: peripheral)
    }

    public func readValue(for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        await radio.read(characteristic, on: peripheral)
    }

    public func writeValue(_ data: Data, for characteristic: CharacteristicPath, type: WriteType, on peripheral: PeripheralID) async {
        await radio.write(data, to: characteristic, type: type, on: peripheral)
    }

    public func readRSSI(on peripheral: PeripheralID) async { await radio.readRSSI(on: peripheral) }

    public func maximumWriteValueLength(for type: WriteType, on peripheral: PeripheralID) async -> Int {
        await radio.maximumWriteValueLength(for: type, on: peripheral)
    }

    public func canSendWriteWithoutResponse(on peripheral: PeripheralID) async -> Bool {
        await radio.canSendWriteWithoutResponse(on: peripheral)
    }

    /// Puts an event straight onto the event stream, bypassing the link model (for measuring
    /// the software path from driver event to consumer).
    @SimulationActor
    public func inject(_ event: BLEDriverEvent, count: Int = 1) {
        for _ in 0..<count { radio.emit(event) }
    }
}
