import Foundation
import MeshCore
import TetherCore

// The records `tether mesh` commands print: a text line, and a JSON shape with a `type`.

/// A `stats` record.
struct MeshStatsReport: Encodable {
    let type = "stats"
    let kind: String
    let values: [String: Double]

    init(_ stats: MeshStats) {
        switch stats {
        case .core(let core):
            kind = "core"
            values = ["batteryMillivolts": Double(core.batteryMillivolts), "uptimeSeconds": Double(core.uptimeSeconds),
                      "errorFlags": Double(core.errorFlags), "outboundQueueLength": Double(core.outboundQueueLength)]
        case .radio(let radio):
            kind = "radio"
            values = ["noiseFloor": Double(radio.noiseFloor), "lastRSSI": Double(radio.lastRSSI), "lastSNR": radio.lastSNR,
                      "transmitAirtimeSeconds": Double(radio.transmitAirtimeSeconds), "receiveAirtimeSeconds": Double(radio.receiveAirtimeSeconds)]
        case .packets(let packets):
            kind = "packets"
            var values = ["received": Double(packets.received), "sent": Double(packets.sent), "sentFlood": Double(packets.sentFlood),
                          "sentDirect": Double(packets.sentDirect), "receivedFlood": Double(packets.receivedFlood),
                          "receivedDirect": Double(packets.receivedDirect)]
            if let errors = packets.receiveErrors { values["receiveErrors"] = Double(errors) }
            self.values = values
        case .other(let raw, let payload):
            kind = "kind \(raw)"
            values = ["bytes": Double(payload.count)]
        }
    }

    var text: String {
        "\(kind): " + values.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%g", $0.value))" }.joined(separator: ", ")
    }
}

/// A `path` record: the route to a contact and its last advert's.
struct MeshPathReport: Encodable {
    let type = "path"
    let contact: String
    let outPath: String?
    let hops: Int?
    let advertPath: String?
    let advertHops: Int?
    let advertReceivedAt: String?

    init(contact: MeshContact, advert: MeshAdvertPath?) {
        self.contact = contact.name
        outPath = contact.outPath?.hexString
        hops = contact.outPathHopCount
        advertPath = advert?.path.hexString
        advertHops = advert?.hopCount
        advertReceivedAt = advert.map { Timestamp.string(unixSeconds: $0.receivedAt) }
    }

    var text: String {
        let route = hops.map { $0 == 0 ? "direct" : "\($0) hop(s) via \(outPath ?? "")" } ?? "flood (no route known)"
        let heard = advertHops.map { "last advert over \($0) hop(s)" + (advertPath.map { $0.isEmpty ? "" : " via \($0)" } ?? "") } ?? "no recent advert"
        return "\(terminalSafe(contact)): \(route); \(heard)"
    }
}

/// A `discoveredPath` record.
struct MeshDiscoveredPathReport: Encodable {
    let type = "discoveredPath"
    let contact: String
    let outPath: String
    let inPath: String

    init(contact: String, _ path: MeshDiscoveredPath) {
        self.contact = contact
        outPath = path.outPath.hexString
        inPath = path.inPath.hexString
    }

    var text: String {
        "\(terminalSafe(contact)): out \(outPath.isEmpty ? "direct" : outPath), back \(inPath.isEmpty ? "direct" : inPath)"
    }
}

/// A `trace` record.
struct MeshTraceReport: Encodable {
    let type = "trace"
    let hops: [Hop]
    let finalSNR: Double

    struct Hop: Encodable {
        let hash: String
        let snr: Double
    }

    init(_ result: MeshTraceResult) {
        hops = result.hops.map { Hop(hash: $0.hash.hexString, snr: $0.snr) }
        finalSNR = result.finalSNR
    }

    var text: String {
        (hops.map { "\($0.hash) \(String(format: "%.2f", $0.snr)) dB" } + ["back \(String(format: "%.2f", finalSNR)) dB"]).joined(separator: " → ")
    }
}

/// A `login` record.
struct MeshLoginReport: Encodable {
    let type = "login"
    let server: String
    let admin: Bool
    let permission: String?
    let firmwareLevel: Int?

    init(server: String, _ result: MeshLoginResult) {
        self.server = server
        admin = result.isAdmin
        permission = result.permissions.map { "\($0)" }
        firmwareLevel = result.firmwareLevel.map(Int.init)
    }

    var text: String { "Logged in to \(terminalSafe(server)) as \(admin ? "administrator" : (permission ?? "guest"))" }
}

/// A `status` record.
struct MeshNodeStatusReport: Encodable {
    let type = "status"
    let node: String
    let status: MeshNodeStatus

    init(node: String, _ status: MeshNodeStatus) {
        self.node = node
        self.status = status
    }

    var text: String {
        var line = "\(terminalSafe(node)): battery \(String(format: "%.2f", Double(status.batteryMillivolts) / 1000)) V, up \(status.uptimeSeconds / 3600) h \(status.uptimeSeconds / 60 % 60) min, "
            + "sent \(status.packetsSent), received \(status.packetsReceived), noise \(status.noiseFloor) dBm, last SNR \(status.lastSNR) dB"
        if let posts = status.postsStored { line += ", \(posts) post(s)" }
        return line
    }
}

/// A `telemetry` record.
struct MeshTelemetryReport: Encodable {
    let type = "telemetry"
    let node: String
    let readings: [Reading]

    struct Reading: Encodable {
        let channel: Int
        let kind: String
        let value: [Double]
    }

    init(node: String, _ telemetry: MeshTelemetry) {
        self.node = node
        readings = telemetry.readings.map { reading in
            Reading(channel: Int(reading.channel), kind: "\(reading.type)", value: Self.numbers(reading.value))
        }
    }

    /// A value's numbers: one, three axes, latitude-longitude-altitude, or red-green-blue.
    static func numbers(_ value: MeshTelemetry.Value) -> [Double] {
        switch value {
        case .number(let number): [number]
        case .vector(let x, let y, let z): [x, y, z]
        case .location(let latitude, let longitude, let altitude): [latitude, longitude, altitude]
        case .colour(let red, let green, let blue): [Double(red), Double(green), Double(blue)]
        }
    }

    var text: String {
        "\(terminalSafe(node)): " + (readings.isEmpty ? "no readings" : readings.map { reading in
            "[\(reading.channel)] \(reading.kind) " + reading.value.map { String(format: "%g", $0) }.joined(separator: ",")
        }.joined(separator: ", "))
    }
}

/// A `neighbours` record.
struct MeshNeighboursReport: Encodable {
    let type = "neighbours"
    let node: String
    let total: Int
    let neighbours: [Neighbour]

    struct Neighbour: Encodable {
        let publicKeyPrefix: String
        let name: String?
        let heardSecondsAgo: Int
        let snr: Double
    }

    init(node: String, _ list: MeshNeighbours, contacts: [MeshContact]) {
        self.node = node
        total = list.total
        neighbours = list.entries.map { entry in
            Neighbour(
                publicKeyPrefix: entry.publicKeyPrefix.hexString,
                name: contacts.first { $0.publicKey.starts(with: entry.publicKeyPrefix) }?.name,
                heardSecondsAgo: Int(entry.heardSecondsAgo), snr: entry.snr)
        }
    }

    var text: String {
        "\(terminalSafe(node)) hears \(total) repeater(s)" + neighbours.map { neighbour in
            "\n  \(neighbour.publicKeyPrefix)  \(terminalSafe(neighbour.name ?? "?"))  \(neighbour.heardSecondsAgo) s ago, SNR \(neighbour.snr) dB"
        }.joined()
    }
}

/// An `anonymous` record.
struct MeshAnonymousReport: Encodable {
    let type = "anonymous"
    let node: String
    let clock: UInt32
    let regions: [String]?
    let name: String?
    let owner: String?
    let features: Int?

    init(node: String, _ response: MeshAnonymousResponse) {
        self.node = node
        switch response {
        case .regions(let clock, let names):
            (self.clock, regions, name, owner, features) = (clock, names, nil, nil, nil)
        case .owner(let clock, let info):
            (self.clock, regions, name, owner, features) = (clock, nil, info.name, info.owner, nil)
        case .clock(let clock, let bits):
            (self.clock, regions, name, owner, features) = (clock, nil, nil, nil, Int(bits))
        }
    }

    var text: String {
        let time = Timestamp.string(unixSeconds: clock)
        if let regions { return "\(terminalSafe(node)) floods for \(terminalSafe(regions.joined(separator: ", "))) (clock \(time))" }
        if let name { return "\(terminalSafe(name)): \(terminalSafe(owner ?? "")) (clock \(time))" }
        return "\(terminalSafe(node)): clock \(time), features 0x\(String(features ?? 0, radix: 16))"
    }
}

/// A `card` record.
struct MeshCardReport: Encodable {
    let type = "card"
    let contact: String?
    let name: String?
    let publicKey: String
    let signatureValid: Bool
    let uri: String

    init(contact: String?, _ card: MeshContactCard) {
        self.contact = contact
        name = card.advert.data.name
        publicKey = card.advert.publicKey.hexString
        signatureValid = card.advert.isSignatureValid
        uri = card.uri
    }
}

/// A `setting` record.
struct MeshSettingReport: Encodable {
    let type = "setting"
    let name: String
    let value: String

    var text: String { "\(terminalSafe(name).padding(toLength: 22, withPad: " ", startingAt: 0))\(terminalSafe(value))" }
}
