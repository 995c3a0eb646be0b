import Foundation

/// Reads, writes, notifications and RSSI on an established connection.
extension ConnectionStateMachine {
    /// A stream of the values a characteristic notifies.
    ///
    /// Registration is synchronous with this call, so arm the stream *before* the write that
    /// provokes a reply. The stream survives automatic reconnections and ends on `disconnect()`
    /// or when reconnection gives up.
    public func notifications(for characteristic: CharacteristicPath) -> AsyncStream<Data> {
        var broadcaster = notificationBroadcasters[characteristic]
            ?? Broadcaster<Data>(bufferSize: configuration.notificationBufferSize)
        let stream = broadcaster.subscribe { [weak self] token in
            Task { await self?.removeNotificationSubscriber(characteristic, token) }
        }
        notificationBroadcasters[characteristic] = broadcaster
        return stream
    }

    /// Ends every notification stream. The broadcasters stay, so their token counters keep
    /// counting and a late removal for an old stream cannot hit a new subscriber.
    func finishNotificationStreams() {
        for key in notificationBroadcasters.keys { notificationBroadcasters[key]?.finish() }
    }

    private func removeNotificationSubscriber(_ path: CharacteristicPath, _ token: Int) {
        notificationBroadcasters[path]?.remove(token)
    }

    /// Writes `data`, split into as many writes as the link's maximum write length requires.
    ///
    /// Writes (and reads) are queued FIFO. With response, each piece waits for its
    /// acknowledgement up to the write timeout (`operationTimeout`, the link stays up); without
    /// response, each piece waits for the driver's flow control.
    public func write(_ data: Data, to characteristic: CharacteristicPath, type: WriteType = .withResponse) async throws {
        try await waitWhileRefreshing()
        try checkUsable(characteristic, needs: type == .withResponse ? .write : .writeWithoutResponse)
        await acquireOperationSlot()
        defer { releaseOperationSlot() }
        try await waitWhileRefreshing()
        try checkUsable(characteristic, needs: nil)
        let generation = self.generation
        let maxLength = max(1, await driver.maximumWriteValueLength(for: type, on: peripheral))
        var offset = data.startIndex
        repeat {
            try await waitWhileRefreshing()
            guard generation == self.generation, isConnected else { throw BLEError.notConnected }
            let end = data.index(offset, offsetBy: maxLength, limitedBy: data.endIndex) ?? data.endIndex
            let piece = data[offset..<end]
            switch type {
            case .withResponse:
                _ = try await request(.write, piece, characteristic)
            case .withoutResponse:
                try await waitForFlowControl(generation: generation)
                let driver = self.driver, peripheral = self.peripheral
                await driver.writeValue(Data(piece), for: characteristic, type: .withoutResponse, on: peripheral)
            }
            offset = end
        } while offset < data.endIndex
    }

    /// Reads a characteristic's current value (queued with writes; times out like a write).
    public func read(_ characteristic: CharacteristicPath) async throws -> Data {
        try await waitWhileRefreshing()
        try checkUsable(characteristic, needs: .read)
        await acquireOperationSlot()
        defer { releaseOperationSlot() }
        try await waitWhileRefreshing()
        try checkUsable(characteristic, needs: nil)
        return try await request(.read, Data(), characteristic)
    }

    /// Reads the link's signal strength in dBm.
    public func readRSSI() async throws -> Int {
        try await waitWhileRefreshing()
        guard isConnected else { throw BLEError.notConnected }
        let driver = self.driver, peripheral = self.peripheral
        let timeout = configuration.writeTimeout, clock = self.clock
        return try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask {
                try await self.awaitRSSI(driver: driver, peripheral: peripheral)
            }
            group.addTask {
                try? await clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let rssi = first else {
                self.dropRSSIWaiter()
                throw BLEError.operationTimeout
            }
            return rssi
        }
    }

    private func awaitRSSI(driver: any BLEDriver, peripheral: PeripheralID) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            pendingRSSI.append(continuation)
            command { await driver.readRSSI(on: peripheral) }
        }
    }

    private func dropRSSIWaiter() {
        guard !pendingRSSI.isEmpty else { return }
        pendingRSSI.removeFirst().resume(throwing: BLEError.operationTimeout)
    }

    /// The largest value one driver write of `type` carries on the current link.
    public func maximumWriteValueLength(for type: WriteType) async throws -> Int {
        try await waitWhileRefreshing()
        guard isConnected else { throw BLEError.notConnected }
        return await driver.maximumWriteValueLength(for: type, on: peripheral)
    }

    // MARK: Internals

    /// While a ready link rediscovers its changed services, waits for it to be ready again
    /// (throws if it is lost instead): the change is not the caller's failure.
    private func waitWhileRefreshing() async throws {
        while isRefreshing {
            try await withCheckedThrowingContinuation { refreshWaiters.append($0) }
        }
    }

    private func checkUsable(_ path: CharacteristicPath, needs property: CharacteristicProperties?) throws {
        guard isConnected else { throw BLEError.notConnected }
        guard let characteristic = characteristics[path] else {
            throw BLEError.characteristicNotFound(path.characteristic)
        }
        if let property, !characteristic.properties.contains(property) {
            throw BLEError.invalidRequest("\(path.characteristic) does not support \(property == .read ? "read" : property == .write ? "write with response" : "write without response")")
        }
    }

    private func acquireOperationSlot() async {
        if !operationInProgress {
            operationInProgress = true
            return
        }
        await withCheckedContinuation { operationWaiters.append($0) }
    }

    private func releaseOperationSlot() {
        if operationWaiters.isEmpty {
            operationInProgress = false
        } else {
            operationWaiters.removeFirst().resume()
        }
    }

    private func request(_ kind: PendingRequest.Kind, _ value: Data.SubSequence, _ path: CharacteristicPath) async throws -> Data {
        nextToken += 1
        let token = nextToken
        let timeout = configuration.writeTimeout
        let clock = self.clock
        let timer = Task { [weak self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self?.requestTimedOut(token)
        }
        let driver = self.driver, peripheral = self.peripheral
        return try await withCheckedThrowingContinuation { continuation in
            pendingRequest = PendingRequest(kind: kind, path: path, token: token, continuation: continuation, timer: timer)
            let bytes = Data(value)
            command {
                switch kind {
                case .write: await driver.writeValue(bytes, for: path, type: .withResponse, on: peripheral)
                case .read: await driver.readValue(for: path, on: peripheral)
                }
            }
        }
    }

    private func requestTimedOut(_ token: Int) {
        guard pendingRequest?.token == token else { return }
        logger.warning("Operation timed out; the link stays up", metadata: ["characteristic": "\(pendingRequest!.path)"])
        completeRequest(token, with: .failure(.operationTimeout))
    }

    func completeRequest(_ token: Int, with result: Result<Data, BLEError>) {
        guard let request = pendingRequest, request.token == token else { return }
        pendingRequest = nil
        request.timer.cancel()
        request.continuation.resume(with: result)
    }

    private func waitForFlowControl(generation: Int) async throws {
        while true {
            let epoch = flowControlEpoch
            if await driver.canSendWriteWithoutResponse(on: peripheral) { return }
            guard generation == self.generation else { throw BLEError.notConnected }
            if epoch != flowControlEpoch { continue }
            let timeout = configuration.writeTimeout, clock = self.clock
            let timer = Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.flowControlTimedOut()
            }
            defer { timer.cancel() }
            try await withCheckedThrowingContinuation { flowControlWaiters.append($0) }
        }
    }

    private func flowControlTimedOut() {
        let waiters = flowControlWaiters
        flowControlWaiters.removeAll()
        for waiter in waiters { waiter.resume(throwing: BLEError.operationTimeout) }
    }

    /// Fails the outstanding request and every refresh, flow-control and RSSI waiter.
    func failOperations(_ error: BLEError) {
        if let request = pendingRequest { completeRequest(request.token, with: .failure(error)) }
        let refresh = refreshWaiters
        refreshWaiters.removeAll()
        for waiter in refresh { waiter.resume(throwing: error) }
        let flow = flowControlWaiters
        flowControlWaiters.removeAll()
        for waiter in flow { waiter.resume(throwing: error) }
        let rssi = pendingRSSI
        pendingRSSI.removeAll()
        for waiter in rssi { waiter.resume(throwing: error) }
    }
}
