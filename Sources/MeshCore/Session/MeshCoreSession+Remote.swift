import Foundation
import TetherCore

/// Requests to other nodes: logins to repeaters and room servers, their status, telemetry,
/// neighbours and access lists, anonymous requests, path discovery and traces.
///
/// Each is sent by the radio (which answers `SENT` with an estimate of the round trip), and
/// the node's answer arrives later as a push. A request waits 1.25 times the radio's estimate
/// (as the MeshCore apps do), at least ``MeshCoreSession/minimumRemoteWait``, and throws
/// ``MeshCoreError/noAnswer(request:timeout:)`` when nothing came.
extension MeshCoreSession {
    /// The shortest wait for a node's answer, whatever the radio estimates.
    public static let minimumRemoteWait: Duration = .seconds(2)
    /// The longest wait for a node's answer.
    public static let maximumRemoteWait: Duration = .seconds(300)

    /// Logs in to a repeater, room server or sensor. Returns what it granted.
    ///
    /// - Throws: ``MeshCoreError/loginFailed(server:)`` when it refused;
    ///   ``MeshCoreError/noAnswer(request:timeout:)`` when it stayed silent (a wrong password
    ///   often gets no answer at all).
    public func login(to publicKey: Data, password: String) async throws -> MeshLoginResult {
        let prefix = Data(publicKey.prefix(MeshCoreCommand.prefixSize))
        let frame = try await remoteRequest(.sendLogin(publicKey: publicKey, password: password)) { _, frame in
            switch frame {
            case .loginSuccess(let result): result.serverPrefix == prefix
            case .loginFailed(let server): server == prefix
            default: false
            }
        }
        guard case .loginSuccess(let result) = frame else { throw MeshCoreError.loginFailed(server: prefix.hexString) }
        return result
    }

    /// A repeater's or room server's status, read in `layout` (a room server's for rooms).
    public func status(of publicKey: Data, layout: MeshNodeStatus.Layout = .repeater) async throws -> MeshNodeStatus {
        let prefix = Data(publicKey.prefix(MeshCoreCommand.prefixSize))
        let frame = try await remoteRequest(.sendStatusRequest(publicKey: publicKey)) { _, frame in
            if case .statusResponse(let reply) = frame { reply.serverPrefix == prefix } else { false }
        }
        guard case .statusResponse(let reply) = frame else { throw MeshCoreError.malformedReply(command: "SEND_STATUS_REQ", reason: "no status") }
        do {
            return try MeshNodeStatus(decoding: reply.body, layout: layout)
        } catch {
            throw MeshCoreError.malformedReply(command: "SEND_STATUS_REQ", reason: "\(error)")
        }
    }

    /// A node's telemetry, or this radio's own when `publicKey` is nil.
    public func telemetry(of publicKey: Data? = nil) async throws -> MeshTelemetry {
        guard let publicKey else {
            // The radio answers its own telemetry at once, with a push and no SENT.
            let mark = responseMark
            try await sendUnanswered(.sendTelemetryRequest(publicKey: nil))
            let own = selfInfo.map { Data($0.publicKey.prefix(MeshCoreCommand.prefixSize)) }
            let frame = try await waitForPush(after: mark, timeout: configuration.commandTimeout) { frame in
                if case .telemetryResponse(let reply) = frame { own == nil || reply.serverPrefix == own } else { false }
            }
            guard case .telemetryResponse(let reply)? = frame else {
                throw MeshCoreError.timeout(command: "\(MeshCoreCommandCode.sendTelemetryRequest)")
            }
            return reply.body
        }
        let prefix = Data(publicKey.prefix(MeshCoreCommand.prefixSize))
        let frame = try await remoteRequest(.sendTelemetryRequest(publicKey: publicKey)) { _, frame in
            if case .telemetryResponse(let reply) = frame { reply.serverPrefix == prefix } else { false }
        }
        guard case .telemetryResponse(let reply) = frame else { throw MeshCoreError.malformedReply(command: "SEND_TELEMETRY_REQ", reason: "no telemetry") }
        return reply.body
    }

    /// Sends a binary request to a node one is logged in to; returns the answer's body.
    public func binaryRequest(to publicKey: Data, _ request: MeshBinaryRequest) async throws -> Data {
        try await taggedRequest(.binaryRequest(to: publicKey, request))
    }

    /// A repeater's neighbours (the repeaters it hears directly).
    public func neighbours(
        of publicKey: Data, count: UInt8 = 255, offset: UInt16 = 0, order: MeshNeighbourOrder = .newestFirst, prefixLength: UInt8 = 6
    ) async throws -> MeshNeighbours {
        let request = MeshBinaryRequest.neighbours(
            count: count, offset: offset, order: order, prefixLength: prefixLength, nonce: UInt32.random(in: 0...UInt32.max))
        let body = try await binaryRequest(to: publicKey, request)
        do {
            return try MeshNeighbours(decoding: body, prefixLength: Int(min(prefixLength, 32)))
        } catch {
            throw MeshCoreError.malformedReply(command: "GET_NEIGHBOURS", reason: "\(error)")
        }
    }

    /// A sensor's minimum, maximum and average of each reading over a window (log in first,
    /// as read-only or more).
    public func minMaxAverage(of publicKey: Data, fromSecondsAgo: UInt32, toSecondsAgo: UInt32 = 0) async throws -> MeshMinMaxAverage {
        let body = try await binaryRequest(to: publicKey, .minMaxAverage(fromSecondsAgo: fromSecondsAgo, toSecondsAgo: toSecondsAgo))
        do {
            return try MeshMinMaxAverage(decoding: body)
        } catch {
            throw MeshCoreError.malformedReply(command: "GET_AVG_MIN_MAX", reason: "\(error)")
        }
    }

    /// A server's access list (administrators only).
    public func accessList(of publicKey: Data) async throws -> [MeshAccessEntry] {
        MeshAccessEntry.list(decoding: try await binaryRequest(to: publicKey, .accessList))
    }

    /// A repeater's firmware version, name and owner text.
    public func ownerInfo(of publicKey: Data) async throws -> MeshOwnerInfo {
        let body = try await binaryRequest(to: publicKey, .ownerInfo)
        return MeshOwnerInfo(text: MeshCoreText.decode(nulPadded: body), withVersion: true)
    }

    /// Asks a repeater something without logging in. The repeater must be reachable along a
    /// path (it ignores flooded anonymous requests); `request.replyPath` is the way back.
    public func anonymousRequest(to publicKey: Data, _ request: MeshAnonymousRequest) async throws -> MeshAnonymousResponse {
        // The answer comes back along the reply path: the radio's estimate covers one way.
        let hops = request.replyPath.count / request.replyPathHashSize
        let body = try await taggedRequest(.anonymousRequest(to: publicKey, request), waitFactor: Double(hops + 1))
        do {
            return try MeshAnonymousResponse(decoding: body, kind: request.kind)
        } catch {
            throw MeshCoreError.malformedReply(command: "SEND_ANON_REQ", reason: "\(error)")
        }
    }

    /// Finds the routes to and from a node (a flooded request the node answers along both).
    public func discoverPath(to publicKey: Data) async throws -> MeshDiscoveredPath {
        let prefix = Data(publicKey.prefix(MeshCoreCommand.prefixSize))
        let frame = try await remoteRequest(.sendPathDiscoveryRequest(publicKey: publicKey)) { _, frame in
            if case .pathDiscoveryResponse(let path) = frame { path.nodePrefix == prefix } else { false }
        }
        guard case .pathDiscoveryResponse(let path) = frame else { throw MeshCoreError.malformedReply(command: "SEND_PATH_DISCOVERY_REQ", reason: "no path") }
        return path
    }

    /// Traces a route of repeaters (their hashes, `hashSize` bytes each): returns the SNR each
    /// heard the trace with and the SNR of its return.
    public func trace(path: Data, hashSize: Int = 1, authCode: UInt32 = 0) async throws -> MeshTraceResult {
        let request = MeshTraceRequest(tag: UInt32.random(in: 0...UInt32.max), authCode: authCode, hashSize: hashSize, path: path)
        let frame = try await remoteRequest(.sendTracePath(request)) { _, frame in
            if case .traceData(let result) = frame { result.tag == request.tag } else { false }
        }
        guard case .traceData(let result) = frame else { throw MeshCoreError.malformedReply(command: "SEND_TRACE_PATH", reason: "no trace") }
        return result
    }

    /// Asks nearby nodes of `types` to answer (zero-hop) and collects the answers that arrive
    /// within `window`.
    public func discoverNodes(types: [MeshContactType] = [.repeater], window: Duration = .seconds(5)) async throws -> [MeshNodeDiscovery.Answer] {
        let request = MeshNodeDiscovery(types: types, tag: UInt32.random(in: 0...UInt32.max))
        let payloads = try await collectingControlData {
            _ = try await self.execute(.sendControlData(request.payload), self.expectingOK)
            try await self.clock.sleep(for: window)
        }
        var seen = Set<Data>()
        return payloads.compactMap { payload in
            guard let answer = MeshNodeDiscovery.Answer(payload: payload), answer.tag == request.tag,
                seen.insert(answer.publicKey).inserted
            else { return nil }
            return answer
        }
    }

    /// Runs a command line on a repeater or room server one is logged in to as administrator
    /// (sent as a direct message of text type CLI data) and returns its reply, for example
    /// `ver`, `clock`, `get name`, `set owner …`, `neighbors`.
    ///
    /// - Throws: ``MeshCoreError/noAnswer(request:timeout:)`` when no reply came (not logged
    ///   in as administrator, or the node is out of reach).
    public func runCommand(_ command: String, on publicKey: Data) async throws -> String {
        let prefix = Data(publicKey.prefix(MeshCoreCommand.prefixSize))
        // Subscribed before sending: the reply may be fetched before the send returns.
        let events = self.events()
        let sent = try await sendMessage(to: publicKey, text: command, textType: .cliData)
        let timeout = min(max(Duration.milliseconds(Int64(sent.suggestedTimeout)) * 2.5, Self.minimumRemoteWait), Self.maximumRemoteWait)
        let fetchesItself = configuration.autoFetchMessages
        let reply: String? = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .contactMessage(let message) where message.senderPrefix == prefix && message.textType == .cliData:
                        return message.text
                    case .messageWaiting where !fetchesItself:
                        // Nobody else fetches: the reply waits in the radio's queue.
                        for fetched in (try? await self.syncMessages()) ?? [] {
                            if case .contactMessage(let message) = fetched, message.senderPrefix == prefix, message.textType == .cliData {
                                return message.text
                            }
                        }
                    default:
                        break
                    }
                }
                return nil
            }
            group.addTask {
                try await self.clock.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let reply else { throw MeshCoreError.noAnswer(request: "CLI command", timeout: timeout) }
        return reply
    }

    // MARK: Plumbing

    /// Sends a request the radio answers with SENT (ack field = tag) and the node with
    /// BINARY_RESPONSE carrying that tag; returns the response body.
    private func taggedRequest(_ command: MeshCoreCommand, waitFactor: Double = 1) async throws -> Data {
        let frame = try await remoteRequest(command, waitFactor: waitFactor) { sent, frame in
            if case .binaryResponse(let tag, _) = frame { tag == sent.expectedAck } else { false }
        }
        guard case .binaryResponse(_, let body) = frame else { throw MeshCoreError.malformedReply(command: Self.name(of: command), reason: "no response") }
        return body
    }

    /// Sends `command`, reads the radio's SENT, then waits for the push `matches` accepts.
    private func remoteRequest(
        _ command: MeshCoreCommand, waitFactor: Double = 1, _ matches: @escaping @Sendable (SentResult, MeshCoreFrame) -> Bool
    ) async throws -> MeshCoreFrame {
        // The radio awaits one request at a time (a newer one makes it drop the older one's
        // answer), traces aside: the next request waits for this one's answer or timeout.
        if case .sendTracePath = command {
            return try await remoteRequestNow(command, waitFactor: waitFactor, matches)
        }
        return try await exclusively(.remote) { try await self.remoteRequestNow(command, waitFactor: waitFactor, matches) }
    }

    private func remoteRequestNow(
        _ command: MeshCoreCommand, waitFactor: Double, _ matches: @escaping @Sendable (SentResult, MeshCoreFrame) -> Bool
    ) async throws -> MeshCoreFrame {
        let mark = responseMark
        let sent = try await request(command) { if case .sent(let value) = $0 { value } else { nil } }
        let estimate = Duration.milliseconds(Int64(sent.suggestedTimeout)) * (1.25 * max(waitFactor, 1))
        let timeout = min(max(estimate, Self.minimumRemoteWait), Self.maximumRemoteWait)
        guard let frame = try await waitForPush(after: mark, timeout: timeout, { matches(sent, $0) }) else {
            throw MeshCoreError.noAnswer(request: Self.name(of: command), timeout: timeout)
        }
        return frame
    }
}
