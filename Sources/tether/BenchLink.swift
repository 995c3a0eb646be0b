import Foundation
import TetherCore
import TetherSimulator
#if os(Linux)
import TetherBlueZ
import TetherBlueZPeripheral
#endif

/// `tether bench --link`: one link measured end to end in real time, through whatever carries
/// it — the simulator's link model, or BlueZ (bluezoo, or the real bluetoothd in the QEMU
/// guest) with Tether's echo peripheral hosted on a second adapter.
enum LinkBench {
    /// What one run measured.
    struct Figures: Sendable {
        /// From `scan` to the echo peripheral's discovery.
        var scanToDiscovered: Duration = .zero
        /// From `connect` to `connected` (BlueZ reports it once it has resolved the GATT database).
        var connect: Duration = .zero
        /// Service and characteristic discovery after the connection.
        var discovery: Duration = .zero
        /// Median and 90th percentile of a 20-byte write with response, request to completion.
        var writeRoundTripP50: Duration = .zero
        var writeRoundTripP90: Duration = .zero
        /// Echo notifications of the largest size per second, and their payload rate.
        var notificationsPerSecond = 0.0
        var notificationBytesPerSecond = 0.0
        /// Payload bytes per second of writes without response at the largest size, flow-controlled.
        var commandBytesPerSecond = 0.0
        /// The largest write without response.
        var commandLength = 0
    }

    /// Why a run stopped.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs every measurement against the echo peripheral `target` through `driver`; `echo` is
    /// the emulator's behaviour (to count what it received). `rounds` writes with response,
    /// `bytes` of commands, `notifications` echo notifications.
    static func run(driver: any BLEDriver, target: PeripheralID, echo: EchoPeripheral,
                    rounds: Int = 50, bytes: Int = 100_000, notifications: Int = 500,
                    progress: @Sendable (String) -> Void) async throws -> Figures {
        let events = EventQueue(driver.events)
        var figures = Figures()
        let clock = ContinuousClock()

        progress("waiting for the radio")
        _ = try await events.next("powered on", within: 15) { if case .stateChanged(.poweredOn) = $0 { true } else { false } }

        progress("scanning")
        var start = clock.now
        await driver.scan(services: [EchoPeripheral.service], allowDuplicates: false)
        _ = try await events.next("the echo peripheral's advertisement", within: 30) {
            if case .discovered(let found) = $0 { found.id == target } else { false }
        }
        figures.scanToDiscovered = clock.now - start
        await driver.stopScan()

        progress("connecting")
        start = clock.now
        await driver.connect(target, options: ConnectOptions())
        _ = try await events.next("the connection", within: 30) {
            switch $0 {
            case .connected(target): true
            case .failedToConnect(target, _): true
            default: false
            }
        }.orThrowIfFailed()
        figures.connect = clock.now - start

        start = clock.now
        await driver.discoverServices([EchoPeripheral.service], on: target)
        _ = try await events.next("service discovery", within: 30) { if case .servicesDiscovered(target, _, _) = $0 { true } else { false } }
        await driver.discoverCharacteristics(nil, for: EchoPeripheral.service, on: target)
        _ = try await events.next("characteristic discovery", within: 30) { if case .characteristicsDiscovered(target, _, _, _) = $0 { true } else { false } }
        figures.discovery = clock.now - start

        progress("\(rounds) writes with response")
        var roundTrips: [Duration] = []
        for _ in 0..<rounds {
            start = clock.now
            await driver.writeValue(Data(repeating: 0x55, count: 20), for: EchoPeripheral.input, type: .withResponse, on: target)
            let done = try await events.next("a write's completion", within: 10) { if case .writeCompleted(target, EchoPeripheral.input, _) = $0 { true } else { false } }
            if case .writeCompleted(_, _, let error?) = done { throw Failure(description: "a write with response failed: \(error)") }
            roundTrips.append(clock.now - start)
        }
        roundTrips.sort()
        figures.writeRoundTripP50 = roundTrips[roundTrips.count / 2]
        figures.writeRoundTripP90 = roundTrips[roundTrips.count * 9 / 10]

        let length = await driver.maximumWriteValueLength(for: .withoutResponse, on: target)
        figures.commandLength = length
        progress("\(bytes / 1000) kB of writes without response in \(length)-byte writes")
        let before = await receivedCount(echo)
        start = clock.now
        try await sendCommands(total: bytes, length: length, driver: driver, target: target, events: events)
        // Until the emulator has every byte: the figure is delivery, not queueing.
        let deadline = clock.now + .seconds(60)
        while await receivedCount(echo) < before + bytes {
            guard clock.now < deadline else { throw Failure(description: "the peripheral received \(await receivedCount(echo) - before) of \(bytes) bytes within 60 s") }
            try await Task.sleep(for: .milliseconds(2))
        }
        figures.commandBytesPerSecond = Double(bytes) / (clock.now - start).seconds

        progress("\(notifications) echo notifications")
        await driver.setNotifyValue(true, for: EchoPeripheral.output, on: target)
        _ = try await events.next("the subscription", within: 10) { if case .notificationStateUpdated(target, EchoPeripheral.output, true, _) = $0 { true } else { false } }
        events.discard { if case .valueUpdated = $0 { true } else { false } }
        start = clock.now
        var received = 0, payload = 0
        let sender = Task {
            try await sendCommands(total: notifications * length, length: length, driver: driver, target: target, events: nil)
        }
        while received < notifications {
            let event = try await events.next("echo notification \(received + 1) of \(notifications)", within: 20) {
                if case .valueUpdated(target, EchoPeripheral.output, _, _) = $0 { true } else { false }
            }
            if case .valueUpdated(_, _, let value, _) = event { payload += value.count }
            received += 1
        }
        let elapsed = (clock.now - start).seconds
        try await sender.value
        figures.notificationsPerSecond = Double(received) / elapsed
        figures.notificationBytesPerSecond = Double(payload) / elapsed

        await driver.cancelConnection(target)
        _ = try? await events.next("the disconnection", within: 10) { if case .disconnected(target, _, _) = $0 { true } else { false } }
        events.stop()
        return figures
    }

    /// Writes `total` bytes in writes without response of `length` bytes, waiting for the
    /// driver's flow control (`readyToWriteWithoutResponse`) when it says its buffer is full.
    /// With `events` nil (a consumer is reading them elsewhere) it polls the flow control.
    private static func sendCommands(total: Int, length: Int, driver: any BLEDriver, target: PeripheralID, events: EventQueue?) async throws {
        var sent = 0
        let chunk = Data((0..<length).map { UInt8(truncatingIfNeeded: $0) })
        while sent < total {
            while !(await driver.canSendWriteWithoutResponse(on: target)) {
                if let events {
                    _ = try await events.next("flow control", within: 10) { if case .readyToWriteWithoutResponse(target) = $0 { true } else { false } }
                } else {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            let size = min(length, total - sent)
            await driver.writeValue(size == length ? chunk : chunk.prefix(size), for: EchoPeripheral.input, type: .withoutResponse, on: target)
            sent += size
        }
    }

    @SimulationActor
    private static func receivedCount(_ echo: EchoPeripheral) -> Int { echo.received.count }

    // MARK: Set-ups

    /// The echo peripheral on the simulator's virtual radio, in real time (the link model's
    /// connection interval, packets per event and MTU set the pace).
    static func onSimulator(progress: @Sendable (String) -> Void) async throws -> Figures {
        let radio = VirtualRadio(clock: ContinuousClock())
        let id = PeripheralID(UUID())
        let echo = EchoPeripheral()
        await radio.add(EchoPeripheral.makePeripheral(id: id, behavior: echo))
        let driver = await SimulatedDriver(radio: radio)
        return try await run(driver: driver, target: id, echo: echo, progress: progress)
    }

    #if os(Linux)
    /// The echo peripheral hosted on `peripheralAdapter` by ``BlueZPeripheralHost``, reached
    /// through ``BlueZDriver`` on `centralAdapter`, both on the system bus
    /// (`DBUS_SYSTEM_BUS_ADDRESS`): bluezoo, or bluetoothd with two controllers.
    static func onBlueZ(centralAdapter: String, peripheralAdapter: String, maximumValueLength: Int,
                        progress: @Sendable (String) -> Void) async throws -> Figures {
        let radio = VirtualRadio(clock: ContinuousClock())
        let id = PeripheralID(UUID())
        let echo = EchoPeripheral()
        await radio.add(EchoPeripheral.makePeripheral(id: id, behavior: echo))
        let host = BlueZPeripheralHost(radio: radio, peripheral: id, configuration: BlueZPeripheralHostConfiguration(
            adapter: peripheralAdapter, readvertiseInterval: .seconds(1)), logger: BlueZSupport.logger("tether.bluez.peripheral"))
        try await host.start()
        let published = Task { () -> String? in
            for await event in host.activity { if case .published(_, let address, _) = event { return address } }
            return nil
        }
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: centralAdapter, maximumValueLength: maximumValueLength),
                                 logger: BlueZSupport.logger("tether.bluez"))
        do {
            guard let address = await resultWithin(10, { await published.value }) ?? nil else {
                throw Failure(description: "the echo peripheral was not published on \(peripheralAdapter) within 10 s")
            }
            guard let index = BlueZMapping.adapterIndex(centralAdapter),
                  let target = BlueZMapping.peripheralID(adapterIndex: index, address: address) else {
                throw Failure(description: "\(centralAdapter) is not an adapter name (hciN)")
            }
            let figures = try await run(driver: driver, target: target, echo: echo, progress: progress)
            await driver.shutdown()
            await host.stop()
            return figures
        } catch {
            await driver.shutdown()
            await host.stop()
            throw error
        }
    }
    #endif
}

private extension BLEDriverEvent {
    /// Throws for `failedToConnect`; returns the event otherwise.
    func orThrowIfFailed() throws -> BLEDriverEvent {
        if case .failedToConnect(_, let error) = self {
            throw LinkBench.Failure(description: "the connection failed: \(error.map { "\($0)" } ?? "no reason given")")
        }
        return self
    }
}

/// A driver's events, kept in order for sequential, bounded waits (one consumer).
final class EventQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [BLEDriverEvent] = []
    private var waiter: (id: Int, predicate: @Sendable (BLEDriverEvent) -> Bool, continuation: CheckedContinuation<BLEDriverEvent?, Never>)?
    private var nextWaiterID = 0
    private var task: Task<Void, Never>?
    /// Kept events are bounded: a stream of ones nobody asks for cannot grow without limit.
    private static let limit = 100_000

    init(_ stream: AsyncStream<BLEDriverEvent>) {
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    func stop() { task?.cancel() }

    private func append(_ event: BLEDriverEvent) {
        let resumed: CheckedContinuation<BLEDriverEvent?, Never>? = lock.withLock {
            if let waiter, waiter.predicate(event) {
                self.waiter = nil
                return waiter.continuation
            }
            if events.count < Self.limit { events.append(event) }
            return nil
        }
        resumed?.resume(returning: event)
    }

    /// Drops kept events matching `predicate`.
    func discard(where predicate: (BLEDriverEvent) -> Bool) {
        lock.withLock { events.removeAll(where: predicate) }
    }

    /// The first kept (or next) event matching `predicate`, removed; fails after `seconds`.
    func next(_ what: String, within seconds: Double, where predicate: @escaping @Sendable (BLEDriverEvent) -> Bool) async throws -> BLEDriverEvent {
        let event: BLEDriverEvent? = await withCheckedContinuation { continuation in
            let (found, id): (BLEDriverEvent?, Int) = lock.withLock {
                if let index = events.firstIndex(where: predicate) { return (events.remove(at: index), 0) }
                nextWaiterID += 1
                waiter = (nextWaiterID, predicate, continuation)
                return (nil, nextWaiterID)
            }
            if let found { return continuation.resume(returning: found) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                guard let self else { return }
                let expired: CheckedContinuation<BLEDriverEvent?, Never>? = lock.withLock {
                    guard let waiter, waiter.id == id else { return nil }
                    self.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
        }
        guard let event else { throw LinkBench.Failure(description: "no \(what) within \(Int(seconds)) s") }
        return event
    }
}
