import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

@Suite("Writes, reads, notifications and flow control", .timeLimit(.minutes(3)))
struct OperationTests {
    @Test func notificationArmedBeforeTheWriteReceivesTheEcho() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let stream = await connection.notifications(for: EchoPeripheral.output)
        try await h.run { try await connection.write(Data("ping".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(echo == Data("ping".utf8))
    }

    @Test func writesWithResponseAreDeliveredInFIFOOrder() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<6 {
            tasks.append(Task { try await connection.write(Data([UInt8(index)]), to: EchoPeripheral.input, type: .withResponse) })
            // Let each write reach the queue before the next one starts.
            await h.time.settle()
        }
        let all = tasks
        try await h.run { for task in all { try await task.value } }
        #expect(await h.echo.received == Data([0, 1, 2, 3, 4, 5]))
    }

    @Test func eachWriteWithResponseTakesTwoConnectionIntervals() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let start = h.now
        try await h.run {
            for _ in 0..<10 { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) }
        }
        // 10 writes × 2 × 30 ms, within one interval of alignment and one 10 ms step.
        let elapsed = h.now - start
        #expect(elapsed >= .milliseconds(570) && elapsed <= .milliseconds(640))
    }

    @Test func writeTimeoutFailsTheWriteButKeepsTheLink() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        await h.radio.inject(FaultRule(.write, on: EchoPeripheral.input, action: .noResponse, count: 1))
        let start = h.now
        #expect(try await h.error { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) } == .operationTimeout)
        #expect(h.now - start >= .seconds(5) && h.now - start < .milliseconds(5_100))
        #expect(await connection.isConnected)
        try await h.run { try await connection.write(Data([2]), to: EchoPeripheral.input, type: .withResponse) }
        #expect(await h.echo.received.last == 2)
    }

    @Test func queuedWritesRunAfterATimedOutOne() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        await h.radio.inject(FaultRule(.write, on: EchoPeripheral.input, action: .noResponse, count: 1))
        let first = Task { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) }
        try await h.until { await h.radio.faults.first?.remaining == 0 }
        let second = Task { try await connection.write(Data([2]), to: EchoPeripheral.input, type: .withResponse) }
        let firstResult = try await h.run { await first.result }
        #expect(throws: BLEError.operationTimeout) { try firstResult.get() }
        try await h.run { try await second.value }
        #expect(await h.echo.received == Data([2]))
    }

    @Test(arguments: [(UInt8(5), BLEError.pairingFailed(.insufficientAuthentication)),
                      (15, .pairingFailed(.insufficientEncryption)),
                      (3, .writeFailed(.att(ATTError(3))))])
    func writeErrorsMapToBLEErrors(code: UInt8, expected: BLEError) async throws {
        let h = await Harness()
        let connection = try await h.connected()
        await h.radio.inject(FaultRule(.write, action: .error(ATTError(code)), count: 1))
        #expect(try await h.error { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) } == expected)
        #expect(await connection.isConnected)
    }

    @Test(arguments: [23, 185, 247])
    func longWritesWithoutResponseAreSplitAndFlowControlled(mtu: Int) async throws {
        let h = await Harness(link: LinkParameters(preferredMTU: mtu))
        let connection = try await h.connected()
        #expect(try await connection.maximumWriteValueLength(for: .withoutResponse) == mtu - 3)
        let payload = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await h.run { try await connection.write(payload, to: EchoPeripheral.input, type: .withoutResponse) }
        try await h.until { await h.echo.received.count >= payload.count }
        #expect(await h.echo.received == payload)
        let stats = await h.radio.statistics[h.echoID]
        #expect(stats?.writesDropped == 0)
        #expect(stats?.writesDelivered == (payload.count + mtu - 4) / (mtu - 3))
    }

    @Test func longWritesWithResponseAreSplitAt512Bytes() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let payload = Data((0..<1_100).map { UInt8(truncatingIfNeeded: $0) })
        try await h.run { try await connection.write(payload, to: EchoPeripheral.input, type: .withResponse) }
        #expect(await h.echo.received == payload)
        #expect(await h.radio.statistics[h.echoID]?.writesDelivered == 3)
    }

    @Test func writesWithoutResponseWaitForReadinessInsteadOfOverflowing() async throws {
        let h = await Harness(link: LinkParameters(preferredMTU: 23, packetsPerConnectionEvent: 1, writeWithoutResponseBuffer: 2))
        let connection = try await h.connected()
        let log = await EventLog(connection)
        let payload = Data(repeating: 7, count: 400)
        let start = h.now
        try await h.run { try await connection.write(payload, to: EchoPeripheral.input, type: .withoutResponse) }
        try await h.until { await h.echo.received.count >= payload.count }
        #expect(await h.radio.statistics[h.echoID]?.writesDropped == 0)
        // 20 packets at one per 30 ms event cannot take less than 19 intervals.
        #expect(h.now - start >= .milliseconds(570))
        #expect(await log.events.isEmpty)
    }

    @Test func readReturnsTheValueAndTimesOutWithoutAResponse() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let value = try await h.run { try await connection.read(EchoPeripheral.info) }
        #expect(String(decoding: value, as: UTF8.self) == "Tether Echo 1.0")
        await h.radio.inject(FaultRule(.read, action: .noResponse, count: 1))
        #expect(try await h.error { _ = try await connection.read(EchoPeripheral.info) } == .operationTimeout)
        await h.radio.inject(FaultRule(.read, action: .error(.insufficientAuthentication), count: 1))
        #expect(try await h.error { _ = try await connection.read(EchoPeripheral.info) } == .pairingFailed(.insufficientAuthentication))
        #expect(await connection.isConnected)
    }

    @Test func operationsOnUnknownOrUnsuitableCharacteristicsAreRejected() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let unknown = CharacteristicPath(service: EchoPeripheral.service, characteristic: BluetoothUUID(UInt16(0x2A00)))
        #expect(try await h.error { _ = try await connection.read(unknown) } == .characteristicNotFound(unknown.characteristic))
        let readError = try await h.error { _ = try await connection.read(EchoPeripheral.input) }
        guard case .invalidRequest = readError else {
            Issue.record("expected invalidRequest, got \(String(describing: readError))")
            return
        }
    }

    @Test func aStreamArmedAfterDisconnectAndReconnectKeepsReceiving() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let old = await connection.notifications(for: EchoPeripheral.output)
        try await h.run { await connection.disconnect() }
        try await h.run { try await connection.connect() }
        let fresh = await connection.notifications(for: EchoPeripheral.output)
        // The old stream has ended; let its termination handler run.
        try await h.run { for await _ in old {} }
        await h.time.settle()
        try await h.run { try await connection.write(Data("again".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in fresh { return value }
            return nil
        }
        #expect(echo == Data("again".utf8))
    }

    @Test func readRSSIReportsThePathLossAtTheDistance() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let rssi = try await h.run { try await connection.readRSSI() }
        // 1.5 m: about −63 dBm with a few dB of noise.
        #expect((-70)...(-56) ~= rssi)
    }

    @Test func notificationsFromSeveralWritesArriveInOrder() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let collector = Task { () -> [UInt8] in
            var seen: [UInt8] = []
            for await value in stream {
                seen += value
                if seen.count == 50 { break }
            }
            return seen
        }
        try await h.run {
            for index in 0..<50 { try await connection.write(Data([UInt8(index)]), to: EchoPeripheral.input, type: .withoutResponse) }
        }
        #expect(try await h.run { await collector.value } == Array(0..<50))
    }
}
