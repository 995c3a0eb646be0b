import Foundation
import MeshCore
import TetherCore

/// What a repeater, room server or sensor node answers: logins with a password, status,
/// telemetry, binary and anonymous requests, path discovery.
extension MeshNode {
    /// The firmware feature level a node reports at login (repeaters 2, others 1).
    var firmwareLevel: UInt8 { type == .repeater ? 2 : 1 }

    /// Whether this kind of node takes logins.
    var isServer: Bool { type == .repeater || type == .room || type == .sensor }

    /// A login from `client` with `password`: the answer pushed to the app, or nil when the
    /// node stays silent (a wrong password, or a chat node).
    func login(password: String, from client: Data, clock: UInt32) -> MeshLoginResult? {
        guard isServer else { return nil }
        let permission: MeshAccessPermission
        if password == adminPassword {
            permission = .admin
        } else if let guestPassword, password == guestPassword {
            permission = type == .room ? .readWrite : .guest
        } else {
            return nil
        }
        logins[client] = permission
        let role: UInt8 = permission == .admin ? 1 : (type == .room ? 2 : 0)
        return MeshLoginResult(
            serverPrefix: Data(publicKey.prefix(6)), role: role, serverTime: clock, permissions: permission,
            firmwareLevel: firmwareLevel)
    }

    /// Ends `client`'s session.
    func logout(_ client: Data) { logins[client] = nil }

    /// Whether `client` is logged in.
    func isLoggedIn(_ client: Data) -> Bool { logins[client] != nil }

    /// The node's status, for a logged-in client (nil otherwise: the node stays silent).
    func status(for client: Data, uptime: UInt32) -> MeshNodeStatus? {
        guard isServer, type != .sensor, isLoggedIn(client) else { return nil }
        requestsAnswered += 1
        var status = MeshNodeStatus(
            batteryMillivolts: batteryMillivolts, noiseFloor: -115, lastRSSI: -80, packetsReceived: 40 + requestsAnswered,
            packetsSent: 25 + requestsAnswered, transmitAirtimeSeconds: 12, uptimeSeconds: uptime, sentFlood: 20, sentDirect: 5 + requestsAnswered,
            receivedFlood: 30, receivedDirect: 10 + requestsAnswered, lastSNR: 6.25, directDuplicates: 1, floodDuplicates: 7)
        if type == .room {
            status.postsStored = UInt16(clamping: posts.count)
            status.postPushes = 0
        } else {
            status.receiveAirtimeSeconds = 30
            status.receiveErrors = 2
        }
        return status
    }

    /// The node's telemetry: battery voltage for anyone; sensors add their environment
    /// readings for a logged-in client.
    func telemetry(for client: Data) -> MeshTelemetry {
        var readings = [MeshTelemetry.Reading(channel: 1, type: .voltage, value: .number(Double(batteryMillivolts) / 1000))]
        if type == .sensor, isLoggedIn(client) {
            readings.append(MeshTelemetry.Reading(channel: 2, type: .temperature, value: .number(21.5)))
            readings.append(MeshTelemetry.Reading(channel: 2, type: .humidity, value: .number(45)))
        }
        return MeshTelemetry(readings: readings)
    }

    /// A binary request's answer body, or nil when the node stays silent (not logged in, not
    /// allowed, or a request its kind does not answer).
    func binaryRequest(_ body: Data, from client: Data, uptime: UInt32, neighbours: [MeshNode]) -> Data? {
        guard let permission = logins[client], let request = MeshBinaryRequest(decoding: body) else { return nil }
        switch request {
        case .status:
            return status(for: client, uptime: uptime)?.encoded
        case .telemetry:
            return telemetry(for: client).lpp
        case .accessList:
            guard permission == .admin else { return nil }
            return MeshAccessEntry.encoded(logins.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
                MeshAccessEntry(publicKeyPrefix: Data($0.key.prefix(6)), permission: $0.value)
            })
        case .neighbours(let count, let offset, let order, let prefixLength, _):
            guard type == .repeater else { return nil }
            var entries = neighbours.enumerated().map { index, node in
                MeshNeighbours.Entry(
                    publicKeyPrefix: Data(node.publicKey.prefix(Int(min(prefixLength, 32)))), heardSecondsAgo: UInt32(60 * (index + 1)),
                    snr: 10 - 1.5 * Double(index))
            }
            switch order {
            case .newestFirst, .strongestFirst: break
            case .oldestFirst, .weakestFirst: entries.reverse()
            }
            let total = entries.count
            // The firmware fits the entries in a 130-byte buffer.
            let fitting = max(1, 130 / (Int(min(prefixLength, 32)) + 5))
            let page = Array(entries.dropFirst(Int(offset)).prefix(min(Int(count), fitting)))
            return MeshNeighbours(total: total, entries: page).encoded(prefixLength: Int(min(prefixLength, 32)))
        case .ownerInfo:
            guard type == .repeater else { return nil }
            return Data(MeshOwnerInfo(firmwareVersion: firmwareVersion, name: name, owner: owner).text.utf8)
        case .minMaxAverage:
            return nil
        }
    }

    /// An anonymous request's answer body (repeaters only).
    func anonymousRequest(_ request: MeshAnonymousRequest, clock: UInt32) -> Data? {
        guard type == .repeater else { return nil }
        switch request.kind {
        case .regions: return MeshAnonymousResponse.regions(clock: clock, regions).encoded
        case .owner: return MeshAnonymousResponse.owner(clock: clock, MeshOwnerInfo(name: name, owner: owner)).encoded
        case .clock: return MeshAnonymousResponse.clock(clock: clock, features: 0).encoded
        }
    }
}
