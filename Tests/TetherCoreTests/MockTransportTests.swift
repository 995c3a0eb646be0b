import Foundation
import Testing

@testable import TetherCore

private let uartService: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
private let rxPath = CharacteristicPath(service: uartService, characteristic: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
private let txPath = CharacteristicPath(service: uartService, characteristic: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
private let batteryLevel = CharacteristicPath(service: BluetoothUUID(UInt16(0x180F)), characteristic: BluetoothUUID(UInt16(0x2A19)))
private let heartRateMeasurement = CharacteristicPath(
    service: BluetoothUUID(UInt16(0x180D)), characteristic: BluetoothUUID(UInt16(0x2A37)))

/// Reads every value until the stream finishes.
private func collect<T: Sendable>(_ stream: AsyncStream<T>) async -> [T] {
    var out: [T] = []
    for await value in stream { out.append(value) }
    return out
}

/// Reads exactly `count` values (or fewer if the stream finishes first).
private func take<T: Sendable>(_ count: Int, from stream: AsyncStream<T>) async -> [T] {
    var out: [T] = []
    var iterator = stream.makeAsyncIterator()
    while out.count < count, let value = await iterator.next() { out.append(value) }
    return out
}

/// Plays a device: answers every observed write with `ack:` + payload, until `last`.
private func answer(_ commands: AsyncStream<MockTransport.Write>, on mock: MockTransport, until last: Data) async {
    for await write in commands {
        await mock.simulateReceive(Data("ack:".utf8) + write.data)
        if write.data == last { break }
    }
}

@Suite("MockTransport", .timeLimit(.minutes(1)))
struct MockTransportTests {
    @Test("send before connect throws notConnected and records nothing")
    func sendBeforeConnect() async {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        #expect(await !mock.isConnected)
        await #expect(throws: BLEError.notConnected) {
            try await mock.send(Data([0x01]))
        }
        await #expect(throws: BLEError.notConnected) {
            try await mock.write(Data([0x02]), to: rxPath, type: .withoutResponse)
        }
        #expect(await mock.sentData.isEmpty)
        #expect(await mock.writes.isEmpty)
    }

    @Test("connect and disconnect toggle isConnected and count connections")
    func connectCounting() async throws {
        let mock = MockTransport()
        try await mock.connect()
        #expect(await mock.isConnected)
        #expect(await mock.connectCount == 1)
        await mock.disconnect()
        #expect(await !mock.isConnected)
        await #expect(throws: BLEError.notConnected) { try await mock.send(Data([0x00])) }
        try await mock.connect()
        #expect(await mock.connectCount == 2)
    }

    @Test("sentData records payloads in order")
    func sentDataInOrder() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        try await mock.connect()
        let payloads = (0..<20).map { Data([UInt8($0), 0xAB, UInt8(255 - $0)]) }
        for payload in payloads { try await mock.send(payload) }
        #expect(await mock.sentData == payloads)
    }

    @Test("writes record characteristic and write type; send uses the default write characteristic")
    func writeRecords() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        try await mock.connect()
        try await mock.send(Data("a".utf8))
        try await mock.write(Data("b".utf8), to: batteryLevel, type: .withoutResponse)
        try await mock.write(Data("c".utf8), to: rxPath, type: .withResponse)
        let writes = await mock.writes
        #expect(writes == [
            MockTransport.Write(data: Data("a".utf8), characteristic: rxPath, type: .withResponse),
            MockTransport.Write(data: Data("b".utf8), characteristic: batteryLevel, type: .withoutResponse),
            MockTransport.Write(data: Data("c".utf8), characteristic: rxPath, type: .withResponse),
        ])
        #expect(await mock.sentData == [Data("a".utf8), Data("b".utf8), Data("c".utf8)])
        #expect(mock.defaultWriteCharacteristic == rxPath)
        #expect(mock.defaultNotifyCharacteristic == txPath)
    }

    @Test("clearSentData forgets earlier writes but keeps recording")
    func clearSentData() async throws {
        let mock = MockTransport()
        try await mock.connect()
        try await mock.send(Data([1]))
        try await mock.send(Data([2]))
        await mock.clearSentData()
        #expect(await mock.sentData.isEmpty)
        #expect(await mock.writes.isEmpty)
        try await mock.send(Data([3]))
        #expect(await mock.sentData == [Data([3])])
        #expect(await mock.isConnected)
    }

    @Test("simulateReceive reaches a stream armed before it")
    func simulateReceiveArmedBefore() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        try await mock.connect()
        let stream = await mock.receivedData
        await mock.simulateReceive(Data([0x01]))
        await mock.simulateReceive(Data([0x02, 0x03]), on: txPath)
        #expect(await take(2, from: stream) == [Data([0x01]), Data([0x02, 0x03])])
    }

    @Test("A stream armed right after a reconnect receives values (a late removal of an old stream cannot hit it)")
    func streamArmedAfterReconnect() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        try await mock.connect()
        let old = await mock.receivedData
        await mock.disconnect()
        try await mock.connect()
        let fresh = await mock.receivedData
        // Let the old stream's termination handler run before the value is sent.
        #expect(await collect(old).isEmpty)
        for _ in 0..<100 { await Task.yield() }
        await mock.simulateReceive(Data([0x2A]))
        #expect(await take(1, from: fresh) == [Data([0x2A])])
    }

    @Test("Values simulated before a stream is armed are not replayed to it")
    func simulateReceiveBeforeArming() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        await mock.simulateReceive(Data([0xEE]))
        let stream = await mock.notifications(for: txPath)
        await mock.simulateReceive(Data([0x01]))
        #expect(await take(1, from: stream) == [Data([0x01])])
    }

    @Test("Notifications on distinct characteristics are kept apart")
    func distinctCharacteristics() async {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        let battery = await mock.notifications(for: batteryLevel)
        let heart = await mock.notifications(for: heartRateMeasurement)
        let uart = await mock.receivedData
        await mock.simulateReceive(Data([100]), on: batteryLevel)
        await mock.simulateReceive(Data([0x00, 72]), on: heartRateMeasurement)
        await mock.simulateReceive(Data([99]), on: batteryLevel)
        await mock.simulateReceive(Data("hello".utf8))
        await mock.disconnect()
        #expect(await collect(battery) == [Data([100]), Data([99])])
        #expect(await collect(heart) == [Data([0x00, 72])])
        #expect(await collect(uart) == [Data("hello".utf8)])
    }

    @Test("Several streams on one characteristic each get every value")
    func severalSubscribersOneCharacteristic() async {
        let mock = MockTransport(notifyCharacteristic: txPath)
        let first = await mock.notifications(for: txPath)
        let second = await mock.receivedData
        for byte in UInt8(1)...5 { await mock.simulateReceive(Data([byte])) }
        await mock.disconnect()
        let expected = (UInt8(1)...5).map { Data([$0]) }
        #expect(await collect(first) == expected)
        #expect(await collect(second) == expected)
    }

    @Test("disconnect finishes notification streams")
    func disconnectFinishesStreams() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        try await mock.connect()
        let stream = await mock.receivedData
        let other = await mock.notifications(for: batteryLevel)
        await mock.simulateReceive(Data([1]))
        await mock.simulateReceive(Data([2]))
        await mock.disconnect()
        // The loops end: buffered values first, then the end of the stream.
        #expect(await collect(stream) == [Data([1]), Data([2])])
        #expect(await collect(other) == [])
        #expect(await !mock.isConnected)
    }

    @Test("A for-await loop running before disconnect ends when it disconnects")
    func disconnectEndsRunningLoop() async throws {
        let mock = MockTransport(notifyCharacteristic: txPath)
        try await mock.connect()
        let stream = await mock.receivedData
        // A child task, so the suite's time limit can cancel it if the stream never ends.
        async let collected = collect(stream)
        await mock.simulateReceive(Data([7]))
        await mock.disconnect()
        #expect(await collected == [Data([7])])
    }

    @Test("connectError makes connect throw until cleared")
    func connectError() async throws {
        let mock = MockTransport()
        await mock.setConnectError(BLEError.connectionTimeout)
        #expect(await mock.connectError as? BLEError == .connectionTimeout)
        await #expect(throws: BLEError.connectionTimeout) { try await mock.connect() }
        #expect(await !mock.isConnected)
        #expect(await mock.connectCount == 0)
        await mock.setConnectError(BLEError.bluetoothUnavailable(.poweredOff))
        await #expect(throws: BLEError.bluetoothUnavailable(.poweredOff)) { try await mock.connect() }
        await mock.setConnectError(nil)
        try await mock.connect()
        #expect(await mock.isConnected)
        #expect(await mock.connectCount == 1)
    }

    @Test("writeError makes writes throw and record nothing until cleared")
    func writeError() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath)
        try await mock.connect()
        await mock.setWriteError(BLEError.writeFailed(.att(ATTError(3))))
        await #expect(throws: BLEError.writeFailed(.att(ATTError(3)))) { try await mock.send(Data([1])) }
        await #expect(throws: BLEError.writeFailed(.att(ATTError(3)))) {
            try await mock.write(Data([2]), to: batteryLevel, type: .withoutResponse)
        }
        #expect(await mock.sentData.isEmpty)
        await mock.setWriteError(nil)
        try await mock.send(Data([3]))
        #expect(await mock.sentData == [Data([3])])
    }

    @Test("notConnected wins over writeError")
    func notConnectedBeforeWriteError() async {
        let mock = MockTransport()
        await mock.setWriteError(BLEError.operationTimeout)
        await #expect(throws: BLEError.notConnected) { try await mock.send(Data([1])) }
    }

    @Test("read returns the configured value per characteristic")
    func readValues() async throws {
        let mock = MockTransport()
        await mock.setReadValue(Data([87]), for: batteryLevel)
        await mock.setReadValue(Data("fw-1.2".utf8), for: rxPath)
        await #expect(throws: BLEError.notConnected) { try await mock.read(batteryLevel) }
        try await mock.connect()
        #expect(try await mock.read(batteryLevel) == Data([87]))
        #expect(try await mock.read(rxPath) == Data("fw-1.2".utf8))
        await #expect(throws: BLEError.readFailed(.other("no value set in the mock"))) {
            try await mock.read(heartRateMeasurement)
        }
        await mock.setReadValue(Data([42]), for: batteryLevel)
        #expect(try await mock.read(batteryLevel) == Data([42]))
        await mock.setReadValue(nil, for: batteryLevel)
        await #expect(throws: BLEError.self) { try await mock.read(batteryLevel) }
        #expect(await mock.readValues[rxPath] == Data("fw-1.2".utf8))
    }

    @Test("writeStream observes every successful write in order")
    func writeStreamObserves() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath)
        let observed = await mock.writeStream()
        let second = await mock.writeStream()
        try await mock.connect()
        await mock.setWriteError(BLEError.operationTimeout)
        _ = try? await mock.send(Data([0xFF]))  // rejected: not observed
        await mock.setWriteError(nil)
        try await mock.send(Data([1]))
        try await mock.write(Data([2]), to: batteryLevel, type: .withoutResponse)
        let expected = [
            MockTransport.Write(data: Data([1]), characteristic: rxPath, type: .withResponse),
            MockTransport.Write(data: Data([2]), characteristic: batteryLevel, type: .withoutResponse),
        ]
        #expect(await take(2, from: observed) == expected)
        #expect(await take(2, from: second) == expected)
    }

    @Test("A test can answer each command through writeStream and receivedData")
    func requestResponse() async throws {
        let mock = MockTransport(writeCharacteristic: rxPath, notifyCharacteristic: txPath)
        let commands = await mock.writeStream()
        let replies = await mock.receivedData
        try await mock.connect()
        // A child task, so the suite's time limit can cancel it if a write is never observed.
        async let answered: Void = answer(commands, on: mock, until: Data("bye".utf8))
        try await mock.send(Data("hi".utf8))
        try await mock.send(Data("bye".utf8))
        await answered
        #expect(await take(2, from: replies) == [Data("ack:hi".utf8), Data("ack:bye".utf8)])
    }

    @Test("a mock that may reconnect keeps its streams open across a disconnect; link changes are reported")
    func streamsAcrossDisconnectAndLinkChanges() async throws {
        let mock = MockTransport(streamsEndOnDisconnect: false)
        let changes = await mock.linkChanges()
        let received = await mock.receivedData
        try await mock.connect()
        await mock.disconnect()
        await mock.simulateReceive(Data([1]))
        try await mock.connect()
        await mock.simulateLinkLoss(reconnecting: true)
        #expect(await !mock.isConnected)
        await mock.simulateReconnection()
        #expect(await mock.isConnected)
        await mock.simulateLinkLoss(reason: "gone")
        #expect(await take(1, from: received) == [Data([1])])
        #expect(await take(6, from: changes) == [
            .connected, .disconnected(reason: nil), .connected, .reconnecting, .reconnected, .disconnected(reason: "gone"),
        ])
    }

    @Test("sentFrames yields each payload as it is written")
    func sentFramesFollowWrites() async throws {
        let mock = MockTransport()
        let frames = await mock.sentFrames()
        try await mock.connect()
        try await mock.send(Data([1, 2]))
        try await mock.write(Data([3]), to: batteryLevel, type: .withoutResponse)
        #expect(await take(2, from: frames) == [Data([1, 2]), Data([3])])
    }
}
