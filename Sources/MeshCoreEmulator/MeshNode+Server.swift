import Foundation
import MeshCore
import TetherCore

/// What a repeater, room server or sensor node answers: logins with a password, status,
/// telemetry, binary and anonymous requests, path discovery.
extension MeshNode {
    /// The firmware feature level a node reports at login (repeaters 2, others 1).
    var firmwareLevel: UInt8 { type == .repeater ? 2 : 1 }

    /// Seconds since the mesh started (the nodes boot with it).
    var uptime: UInt32 {
        UInt32(clamping: Int64((network?.timeline.now.seconds ?? 0).rounded(.down)))
    }

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
            permission = .guest
        } else {
            return nil
        }
        logins[client] = permission
        // The firmware's role byte: 1 administrator; on a room server 2 for a guest (no
        // permissions), 0 for a member who may read or post.
        let role: UInt8 = permission == .admin ? 1 : (type == .room && permission == .guest ? 2 : 0)
        return MeshLoginResult(
            serverPrefix: Data(publicKey.prefix(6)), role: role, serverTime: clock, permissions: permission,
            firmwareLevel: firmwareLevel)
    }

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

    /// The node's telemetry for a client in its access list (nil otherwise: a server cannot
    /// even read a request from anyone else): battery voltage; sensors add their environment
    /// readings for members above guest, unless `excluding` masks them (bit 2: environment).
    func telemetry(for client: Data, excluding: UInt8 = 0) -> MeshTelemetry? {
        guard let permission = logins[client] else { return nil }
        var readings = [MeshTelemetry.Reading(channel: 1, type: .voltage, value: .number(Double(batteryMillivolts) / 1000))]
        if type == .sensor, permission != .guest, excluding & 0x04 == 0 {
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
        case .telemetry(let excluding):
            return telemetry(for: client, excluding: excluding)?.lpp
        case .accessList:
            guard permission == .admin else { return nil }
            // Repeaters list every member but guests; room servers their administrators only.
            let listed = logins.filter { type == .room ? $0.value == .admin : $0.value != .guest }
            return MeshAccessEntry.encoded(listed.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
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
            // Sensors, for members above guest: their readings over the window.
            guard type == .sensor, permission != .guest else { return nil }
            return MeshMinMaxAverage(clock: network?.epoch ?? 0, records: [
                .init(channel: 1, type: .voltage, minimum: .number(3.9), maximum: .number(4.0), average: .number(Double(batteryMillivolts) / 1000)),
                .init(channel: 2, type: .temperature, minimum: .number(18), maximum: .number(24.5), average: .number(21.5)),
                .init(channel: 2, type: .humidity, minimum: .number(40), maximum: .number(50), average: .number(45)),
            ]).encoded
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

    /// A server's answer as the radio pushes it: the reply (a 4-byte tag and the body) travels
    /// encrypted in 16-byte blocks, so the body arrives padded with zeros.
    static func padded(_ body: Data) -> Data {
        let blocks = (4 + body.count + 15) / 16
        return body + Data(count: blocks * 16 - 4 - body.count)
    }

    /// A few of the firmware's CLI commands, answered as it does.
    func commandReply(_ line: String) -> String {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        switch (words.first ?? "", words.count > 1 ? words[1] : "") {
        case ("ver", _):
            return "\(firmwareVersion) (Build: 14-Aug-2026)"
        case ("clock", _):
            let now = Date(timeIntervalSince1970: TimeInterval(network?.epoch ?? 0))
            let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(secondsFromGMT: 0) ?? .current, from: now)
            return String(format: "%02d:%02d - %d/%d/%d UTC", parts.hour ?? 0, parts.minute ?? 0, parts.day ?? 0, parts.month ?? 0, parts.year ?? 0)
        case ("get", "name"):
            return "> \(name)"
        case ("get", "owner.info"), ("get", "owner"):
            return "> \(owner)"
        case ("set", "owner.info"), ("set", "owner"):
            owner = words.count > 2 ? words[2] : ""
            return "OK"
        case ("neighbors", _), ("neighbours", _):
            let list = network?.neighbours(of: self) ?? []
            return list.isEmpty ? "-none-" : list.map { $0.publicKey.prefix(4).hexString + ":60:40" }.joined(separator: "\n")
        case ("advert", _):
            network?.advertise(from: self, flood: true)
            return "OK - Advert sent"
        default:
            return "Unknown command"
        }
    }
}
