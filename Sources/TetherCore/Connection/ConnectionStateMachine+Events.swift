import Foundation

/// Driver events, routed here by the ``Central`` in the order the driver produced them.
extension ConnectionStateMachine {
    func handle(_ event: BLEDriverEvent) {
        switch event {
        case .connected:
            didConnect()
        case .failedToConnect(_, let error):
            if case .connecting = state {
                failAttempt(error.map { BLEError.from($0, otherwise: { .connectionFailed($0.description) }) } ?? .connectionFailed("unknown"),
                            linkDown: true)
            }
        case .disconnected(_, let error, let isReconnecting):
            didDisconnect(error: error, isReconnecting: isReconnecting)
        case .servicesDiscovered(_, let found, let error):
            servicesRequested = max(0, servicesRequested - 1)
            if staleServiceAnswers > 0 {
                staleServiceAnswers -= 1
                logger.debug("Dropping a service discovery answer from before the services changed")
                return
            }
            didDiscoverServices(found, error: error)
        case .characteristicsDiscovered(_, let service, let found, let error):
            if let count = characteristicsRequested[service] { characteristicsRequested[service] = count > 1 ? count - 1 : nil }
            if let stale = staleCharacteristicAnswers[service] {
                staleCharacteristicAnswers[service] = stale > 1 ? stale - 1 : nil
                logger.debug("Dropping a characteristic discovery answer from before the services changed", metadata: ["service": "\(service)"])
                return
            }
            didDiscoverCharacteristics(found, for: service, error: error)
        case .notificationStateUpdated(_, let path, _, let error):
            didUpdateNotificationState(path, error: error)
        case .valueUpdated(_, let path, let value, let error):
            didUpdateValue(value, for: path, error: error)
        case .writeCompleted(_, let path, let error):
            didWrite(path, error: error)
        case .readyToWriteWithoutResponse:
            flowControlEpoch &+= 1
            let waiters = flowControlWaiters
            flowControlWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        case .rssiRead(_, let rssi, let error):
            guard !pendingRSSI.isEmpty else { return }
            let waiter = pendingRSSI.removeFirst()
            if let error { waiter.resume(throwing: BLEError.from(error, otherwise: BLEError.readFailed)) } else { waiter.resume(returning: rssi) }
        case .stateChanged(let newState):
            centralStateChanged(newState)
        case .servicesInvalidated(_, let invalidated):
            servicesInvalidated(invalidated)
        case .discovered, .willRestoreState:
            break
        }
    }

    func centralStateChanged(_ newState: CentralState) {
        let old = centralState
        centralState = newState
        guard old != newState else { return }
        emit(.bluetoothStateChanged(newState))
        bluetoothStateChangeHandler?(newState)
        switch newState {
        case .poweredOn:
            bluetoothPoweredOnHandler?()
            switch state {
            case .waitingForBluetooth:
                beginConnecting()
            case .restoringState:
                beginReconnect(attempt: 1, delay: nil)
            case .idle where wantsConnection:
                logger.info("Bluetooth is back; reconnecting")
                beginReconnect(attempt: 1, delay: nil)
            default:
                break
            }
        case .unknown, .resetting:
            // The stack is restarting (CoreBluetooth's reset, bluetoothd restarting): every
            // link is gone, again without callbacks. Nothing to lose where no link or connect
            // is out (a connect still waiting for Bluetooth, a retry waiting for its time, which
            // then waits for Bluetooth); power-on brings the device back.
            switch state {
            case .idle, .restoringState, .waitingForBluetooth:
                break
            case .autoReconnecting(_, false, _) where isFirstAttempt:
                // A first connection's retry waiting for its time: it meets the state when it
                // runs and waits for Bluetooth, the caller still waiting.
                break
            case .connecting where isFirstAttempt:
                // The stack dropped the request: ask again at power-on, the caller still waiting
                // (a connect timeout for Bluetooth to come back, then one for the connection),
                // as for a connect made before Bluetooth was up.
                logger.info("Bluetooth is \(newState) while connecting; waiting for it")
                generation += 1
                transition(to: .waitingForBluetooth(timer: makeTimer(after: configuration.connectionTimeout, .connect)))
            default:
                loseLinkToBluetooth(newState)
            }
        case .poweredOff, .unauthorized, .unsupported:
            switch state {
            case .idle, .restoringState:
                break
            default:
                loseLinkToBluetooth(newState)
            }
        }
    }

    private var isFirstAttempt: Bool {
        if case .initial = attemptKind { true } else { false }
    }

    /// Bluetooth went below powered-on: the OS dropped every link without a disconnection
    /// callback. Clean up here, and keep `wantsConnection` (unless Bluetooth cannot come back
    /// by itself) so power-on brings the device back.
    private func loseLinkToBluetooth(_ newState: CentralState) {
        logger.warning("Bluetooth became \(newState); going idle")
        let error = BLEError.bluetoothUnavailable(newState)
        let wasConnected = isConnected || isRefreshing
        generation += 1
        resetLink(error)
        lastError = error
        transition(to: .idle)
        failWaiters(error)
        if wasConnected {
            emit(.disconnected(peripheral, error))
            disconnectionHandler?(peripheral, error)
        }
        attemptKind = .initial
        if newState == .unauthorized || newState == .unsupported { wantsConnection = false }
    }

    func didConnect() {
        switch state {
        case .connecting, .autoReconnecting, .restoringState:
            if case .autoReconnecting(let attempt, true, _) = state {
                attemptKind = .reconnect(attempt: attempt)
            }
            let timer = makeTimer(after: configuration.discoveryTimeout, .discovery)
            transition(to: .discoveringServices(timer: timer))
            requestServiceDiscovery()
        case .idle, .disconnecting, .waitingForBluetooth:
            // A link we no longer want (late connect after a timeout, a cancel, or a request
            // Bluetooth's reset overtook; power-on asks again): close it.
            logger.debug("Closing an unwanted link")
            let driver = self.driver, peripheral = self.peripheral
            command { await driver.cancelConnection(peripheral) }
        default:
            logger.debug("Ignoring a duplicate connection event in \(phase.name)")
        }
    }

    func didDisconnect(error: DriverError?, isReconnecting: Bool) {
        if let token = teardownPending {
            // The link a failed attempt cancelled is gone; no new link was asked for meanwhile,
            // so the event is that link's.
            teardownEnded(token)
            if case .disconnecting = state { finishDisconnecting() }
            return
        }
        let bleError = error.map { BLEError.from($0, otherwise: { .disconnected($0.description) }) }
        switch state {
        case .idle, .waitingForBluetooth, .restoringState:
            return
        case .disconnecting:
            finishDisconnecting()
            return
        case .connecting:
            // Some stacks report a failed connect as a disconnection.
            failAttempt(bleError ?? .connectionFailed("disconnected while connecting"), linkDown: !isReconnecting)
            return
        case .autoReconnecting(let attempt, true, _) where !isReconnecting:
            logger.warning("The OS stopped reconnecting; falling back to the reconnect policy")
            scheduleReconnect(after: attempt - 1, lastError: bleError)
            return
        case .autoReconnecting:
            return
        case .discoveringServices, .discoveringCharacteristics, .subscribingToNotifications, .discoveryComplete:
            if isRefreshing {
                // The link was ready (its services were being discovered again): a drop.
                readyLinkDropped(bleError, isReconnecting: isReconnecting)
                return
            }
            if case .initial = attemptKind {
                failAttempt(bleError ?? .disconnected(nil), linkDown: !isReconnecting)
                return
            }
            generation += 1
            resetLink(bleError ?? .disconnected(nil))
            continueReconnecting(error: bleError, isReconnecting: isReconnecting)
        case .connected:
            readyLinkDropped(bleError, isReconnecting: isReconnecting)
        }
    }

    /// A link that was ready is gone (dropped, or given up after its services changed): the
    /// client is told once, and the reconnect policy (or the OS) takes over.
    func readyLinkDropped(_ bleError: BLEError?, isReconnecting: Bool) {
        logger.warning("Link lost", metadata: ["error": "\(bleError.map { "\($0)" } ?? "none")", "osReconnecting": "\(isReconnecting)"])
        generation += 1
        attemptKind = .initial
        resetLink(bleError ?? .disconnected(nil))
        lastError = bleError
        emit(.disconnected(peripheral, bleError))
        disconnectionHandler?(peripheral, bleError)
        continueReconnecting(error: bleError, isReconnecting: isReconnecting, firstDrop: true)
    }

    /// The peripheral's GATT database changed (``BLEDriverEvent/servicesInvalidated(_:_:)``).
    ///
    /// A ready link goes back through discovery on the same link (``AttemptKind/refresh``): the
    /// services this connection uses are discovered again and the notifying characteristics
    /// of the invalidated ones subscribed again. A discovery under way starts over. Either way
    /// a required service or characteristic missing afterwards is waited for (it may be on its
    /// way back) until the discovery timeout, which then counts as the link's failure.
    func servicesInvalidated(_ invalidated: [BluetoothUUID]) {
        let discoveryTimer: Task<Void, Never>?
        switch state {
        case .connected:
            discoveryTimer = nil
        case .discoveringServices, .discoveringCharacteristics, .subscribingToNotifications, .discoveryComplete:
            discoveryTimer = state.timer
        default:
            return
        }
        let discovering = discoveryTimer != nil || !isConnected
        // A connection that uses every service cares about any change; others about the
        // services they use, or about additions while waiting for a service to come back.
        let used = Set(configuration.services)
            .union(services.map(\.uuid))
            .union((configuration.requiredCharacteristics + configuration.notifyCharacteristics).map(\.service))
        let relevant = configuration.services.isEmpty || servicesChanging
            || !used.isDisjoint(with: invalidated)
        guard relevant else {
            logger.debug("Services changed that this connection does not use", metadata: ["services": "\(invalidated)"])
            return
        }
        logger.notice("The peripheral's services changed; discovering them again", metadata: ["services": "\(invalidated)"])
        servicesChanging = true
        if !discovering {
            attemptKind = .refresh
            invalidatedServices = []
            emit(.servicesChanged(peripheral))
        }
        invalidatedServices.formUnion(invalidated)
        for path in characteristics.keys where invalidated.contains(path.service) { characteristics[path] = nil }
        services.removeAll { invalidated.contains($0.uuid) }
        // Answers still to come describe the database before the change.
        staleServiceAnswers = servicesRequested
        staleCharacteristicAnswers = characteristicsRequested
        // A discovery under way keeps its timeout: a peripheral that keeps changing cannot
        // hold the connection in discovery for ever.
        let timer = discoveryTimer ?? makeTimer(after: configuration.discoveryTimeout, .discovery)
        transition(to: .discoveringServices(timer: timer))
        requestServiceDiscovery()
    }

    private func requestServiceDiscovery() {
        servicesRequested += 1
        let driver = self.driver, peripheral = self.peripheral
        let wanted = configuration.services.isEmpty ? nil : configuration.services
        command { await driver.discoverServices(wanted, on: peripheral) }
    }

    func continueReconnecting(error: BLEError?, isReconnecting: Bool, firstDrop: Bool = false) {
        guard wantsConnection else {
            transition(to: .idle)
            return
        }
        let previous: Int
        if case .reconnect(let attempt) = attemptKind, !firstDrop { previous = attempt } else { previous = 0 }
        if isReconnecting, configuration.reconnectPolicy.useOSAutoReconnect {
            attemptKind = .reconnect(attempt: previous + 1)
            transition(to: .autoReconnecting(attempt: previous + 1, osManaged: true, timer: nil))
            autoReconnectingHandler?(peripheral)
            return
        }
        if previous == 0 { autoReconnectingHandler?(peripheral) }
        if configuration.reconnectPolicy.delay(beforeAttempt: previous + 1) == nil {
            // No policy: the drop is final.
            attemptKind = .initial
            finishDropped(error)
            return
        }
        scheduleReconnect(after: previous, lastError: error)
    }

    private func finishDropped(_ error: BLEError?) {
        lastError = error
        transition(to: .idle)
        // A connect() that joined the link (during a rediscovery) learns it is gone.
        failWaiters(error ?? .disconnected(nil))
        wantsConnection = false
        finishNotificationStreams()
    }

    func didDiscoverServices(_ found: [GATTService], error: DriverError?) {
        guard case .discoveringServices(let timer) = state else { return }
        if let error {
            failAttempt(BLEError.from(error, otherwise: { .connectionFailed($0.description) }))
            return
        }
        services = found
        let foundUUIDs = Set(found.map(\.uuid))
        if let missing = configuration.services.first(where: { !foundUUIDs.contains($0) }) {
            if servicesChanging {
                logger.notice("A required service is missing after the services changed; waiting for it", metadata: ["service": "\(missing)"])
                missingAfterChange = .serviceNotFound(missing)
                return
            }
            logger.error("Required service missing", metadata: ["service": "\(missing)"])
            failAttempt(.serviceNotFound(missing))
            return
        }
        let toQuery = configuration.services.isEmpty ? found.map(\.uuid) : configuration.services
        if toQuery.isEmpty {
            afterCharacteristicDiscovery(timer: timer)
            return
        }
        transition(to: .discoveringCharacteristics(timer: timer, pending: Set(toQuery)))
        for service in toQuery { characteristicsRequested[service, default: 0] += 1 }
        let driver = self.driver, peripheral = self.peripheral
        command {
            for service in toQuery {
                await driver.discoverCharacteristics(nil, for: service, on: peripheral)
            }
        }
    }

    func didDiscoverCharacteristics(_ found: [GATTCharacteristic], for service: BluetoothUUID, error: DriverError?) {
        guard case .discoveringCharacteristics(let timer, var pending) = state else { return }
        if let error {
            failAttempt(BLEError.from(error, otherwise: { .connectionFailed($0.description) }))
            return
        }
        for characteristic in found { characteristics[characteristic.path] = characteristic }
        pending.remove(service)
        if pending.isEmpty {
            afterCharacteristicDiscovery(timer: timer)
        } else {
            state = .discoveringCharacteristics(timer: timer, pending: pending)
        }
    }

    private func afterCharacteristicDiscovery(timer: Task<Void, Never>) {
        let required = configuration.requiredCharacteristics + configuration.notifyCharacteristics
        if let missing = required.first(where: { characteristics[$0] == nil }) {
            if servicesChanging {
                logger.notice("A required characteristic is missing after the services changed; waiting for it", metadata: ["characteristic": "\(missing)"])
                missingAfterChange = .characteristicNotFound(missing.characteristic)
                transition(to: .discoveringServices(timer: timer))
                return
            }
            logger.error("Required characteristic missing", metadata: ["characteristic": "\(missing)"])
            failAttempt(.characteristicNotFound(missing.characteristic))
            return
        }
        // A refresh subscribes again only where the change took the subscriptions.
        let toSubscribe = attemptKind == .refresh
            ? configuration.notifyCharacteristics.filter { invalidatedServices.contains($0.service) }
            : configuration.notifyCharacteristics
        if toSubscribe.isEmpty {
            linkBecameReady()
            return
        }
        transition(to: .subscribingToNotifications(timer: timer, pending: Set(toSubscribe)))
        let driver = self.driver, peripheral = self.peripheral
        command {
            for path in toSubscribe { await driver.setNotifyValue(true, for: path, on: peripheral) }
        }
    }

    func didUpdateNotificationState(_ path: CharacteristicPath, error: DriverError?) {
        guard case .subscribingToNotifications(let timer, var pending) = state else { return }
        if let error {
            failAttempt(BLEError.from(error, otherwise: BLEError.subscriptionFailed))
            return
        }
        pending.remove(path)
        if pending.isEmpty {
            linkBecameReady()
        } else {
            state = .subscribingToNotifications(timer: timer, pending: pending)
        }
    }

    func didUpdateValue(_ value: Data, for path: CharacteristicPath, error: DriverError?) {
        if let request = pendingRequest, request.kind == .read, request.path == path {
            completeRequest(request.token, with: error.map { .failure(BLEError.from($0, otherwise: BLEError.readFailed)) } ?? .success(value))
            return
        }
        guard error == nil else {
            logger.warning("Notification error", metadata: ["characteristic": "\(path)", "error": "\(error!)"])
            return
        }
        notificationBroadcasters[path]?.yield(value, logger: logger)
    }

    func didWrite(_ path: CharacteristicPath, error: DriverError?) {
        guard let request = pendingRequest, request.kind == .write, request.path == path else {
            // A late acknowledgement for a write that already timed out.
            logger.debug("Ignoring an unmatched write acknowledgement", metadata: ["characteristic": "\(path)"])
            return
        }
        completeRequest(request.token, with: error.map { .failure(BLEError.from($0, otherwise: BLEError.writeFailed)) } ?? .success(Data()))
    }
}
