import Foundation
import MeshCore
import MeshCoreStorage
import TetherCore

extension MeshShell {
    // swiftlint:disable:next cyclomatic_complexity function_body_length
    func execute(_ entry: MeshShellCatalog.Entry, _ arguments: [String]) async throws {
        let rest = arguments.dropFirst().joined(separator: " ")
        switch entry.name {
        case "help":
            help(arguments.first)
        case "quit":
            quit()
        case "wait":
            try require(arguments, 1, entry.usage)
            guard let seconds = Double(arguments[0]), seconds.isFinite, (0...600).contains(seconds) else {
                throw CLIError("wait takes 0 to 600 seconds")
            }
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
        case "info":
            let info = try await session.refreshSelfInfo()
            let report = MeshInfoReport(info, await manager.deviceInfo, contacts: await manager.contacts.count, channels: await manager.channels.map(\.name))
            emit(report, text: report.text)
        case "contacts":
            try await manager.refreshContacts()
            let filter = arguments.joined(separator: " ").lowercased()
            let contacts = await manager.contacts.filter { filter.isEmpty || $0.name.lowercased().contains(filter) }
            for contact in contacts {
                let row = MeshContactRow(contact)
                emit(row, text: row.text)
            }
            if !json { console.print("\(contacts.count) contact(s)") }
        case "send":
            try require(arguments, 2, entry.usage)
            let contact = try await contact(arguments[0])
            let message = try await manager.sendMessage(rest, to: contact)
            emit(MeshMessageLine(message, contact: contact.name),
                 text: "Delivered to \(terminalSafe(contact.name))" + (message.roundTrip.map { " (round trip \($0) ms)" } ?? ""))
        case "to":
            try await setChat(arguments)
        case "channels":
            struct Row: Encodable { let type = "channel"; let index: Int; let name: String; let secret: String }
            // Asked afresh: a channel set since the connection started is listed too.
            let slots = try await session.deviceQuery().maxChannels
            for index in 0..<slots {
                let channel = try await session.channel(index)
                guard !channel.name.isEmpty || channel.secret.contains(where: { $0 != 0 }) else { continue }
                emit(Row(index: Int(channel.index), name: channel.name, secret: channel.secret.hexString),
                     text: "#\(channel.index)  \(terminalSafe(channel.name))")
            }
        case "channel":
            try require(arguments, 2, entry.usage)
            let index = try channelIndex(arguments[0])
            let message = try await manager.sendChannelMessage(rest, channel: index)
            let name = await manager.channels.first { $0.index == index }?.name ?? "channel \(index)"
            emit(MeshMessageLine(message, contact: nil), text: "Sent on \(terminalSafe(name))")
        case "channel-set":
            try require(arguments, 2, entry.usage)
            let index = try channelIndex(arguments[0])
            let name = arguments[1]
            let channel: ChannelInfo
            if arguments.count > 2 {
                guard let secret = Data(hexString: arguments[2]), secret.count == MeshChannelSecret.size else {
                    throw CLIError("a channel secret is 32 hex digits")
                }
                channel = ChannelInfo(index: index, name: name, secret: secret)
                try await session.setChannel(channel)
            } else {
                guard name.hasPrefix("#") else { throw CLIError("give the secret (32 hex digits), or a #name to derive it") }
                channel = try await session.setHashtagChannel(index, name: name)
            }
            struct Set: Encodable { let type = "channelSet"; let index: Int; let name: String; let secret: String }
            emit(Set(index: Int(index), name: channel.name, secret: channel.secret.hexString), text: "Channel #\(index) is \(terminalSafe(channel.name))")
        case "channel-remove":
            try require(arguments, 1, entry.usage)
            let index = try channelIndex(arguments[0])
            try await session.removeChannel(index)
            struct Removed: Encodable { let type = "channelRemoved"; let index: Int }
            emit(Removed(index: Int(index)), text: "Channel #\(index) cleared")
        case "messages":
            let count = try arguments.first.map { text -> Int in
                guard let value = Int(text), (1...10_000).contains(value) else { throw CLIError("a count is 1…10000") }
                return value
            } ?? 20
            let names = Dictionary(await manager.contacts.map { ($0.publicKeyPrefix.hexString, $0.name) }, uniquingKeysWith: { a, _ in a })
            for message in try await store.messages(limit: count) {
                let line = MeshMessageLine(message, contact: message.peer.flatMap { names[$0] })
                emit(line, text: line.line)
            }
        case "advert":
            let flood = arguments.first?.lowercased() == "flood"
            try await session.sendSelfAdvert(flood: flood)
            struct Report: Encodable { let type = "advert"; let advert: String }
            emit(Report(advert: flood ? "flood" : "zero-hop"), text: flood ? "Advert flooded" : "Advert sent to neighbours")
        case "battery":
            let value = try await session.batteryAndStorage()
            struct Report: Encodable { let type = "battery"; let millivolts: Int; let usedKilobytes: Int?; let totalKilobytes: Int? }
            let storage = value.usedKilobytes.map { " · storage \($0)/\(value.totalKilobytes ?? 0) KB" } ?? ""
            emit(Report(millivolts: Int(value.millivolts), usedKilobytes: value.usedKilobytes.map(Int.init), totalKilobytes: value.totalKilobytes.map(Int.init)),
                 text: String(format: "Battery %.2f V", Double(value.millivolts) / 1000) + storage)
        case "time":
            if arguments.first?.lowercased() == "set" {
                do {
                    try await session.setDeviceTime(UInt32(clamping: Int64(Date().timeIntervalSince1970)))
                } catch let error as MeshCoreError where error.radioErrorCode == .illegalArgument {
                    throw CLIError("the radio refused: its clock is ahead of this computer's and it never goes back")
                }
            }
            let report = MeshTimeReport(radio: try await session.deviceTime(), local: Date())
            emit(report, text: report.text)
        case "stats":
            let kinds: [MeshStatsKind]
            switch arguments.first?.lowercased() {
            case nil: kinds = MeshStatsKind.allCases
            case "core": kinds = [.core]
            case "radio": kinds = [.radio]
            case "packets": kinds = [.packets]
            case let other?: throw CLIError("stats are core, radio or packets, not \(terminalSafe(other))")
            }
            for kind in kinds {
                let report = MeshStatsReport(try await session.stats(kind))
                emit(report, text: report.text)
            }
        case "get":
            try await getSettings(arguments.first)
        case "set":
            try require(arguments, 2, entry.usage)
            try await setSetting(arguments[0], arguments.dropFirst().joined(separator: " "))
        case "path":
            let contact = try await contactArgument(arguments, entry.usage)
            let advert = try await session.advertPath(publicKey: contact.publicKey)
            let report = MeshPathReport(contact: contact, advert: advert)
            emit(report, text: report.text)
        case "reset-path":
            let contact = try await contactArgument(arguments, entry.usage)
            try await session.resetPath(publicKey: contact.publicKey)
            struct Reset: Encodable { let type = "pathReset"; let contact: String }
            emit(Reset(contact: contact.name), text: "Messages to \(terminalSafe(contact.name)) flood until a new route is found")
        case "discover-path":
            let contact = try await contactArgument(arguments, entry.usage)
            let path = try await session.discoverPath(to: contact.publicKey)
            let report = MeshDiscoveredPathReport(contact: contact.name, path)
            emit(report, text: report.text)
        case "trace":
            try require(arguments, 1, entry.usage)
            let (hashes, size) = try await traceHashes(arguments)
            let result = try await session.trace(path: hashes, hashSize: size)
            let report = MeshTraceReport(result)
            emit(report, text: report.text)
        case "login":
            try require(arguments, 2, entry.usage)
            let contact = try await contact(arguments[0])
            let result = try await session.login(to: contact.publicKey, password: rest)
            let report = MeshLoginReport(server: contact.name, result)
            emit(report, text: report.text)
        case "logout":
            let contact = try await contactArgument(arguments, entry.usage)
            try await session.logout(publicKey: contact.publicKey)
            struct Out: Encodable { let type = "logout"; let server: String }
            emit(Out(server: contact.name), text: "Logged out of \(terminalSafe(contact.name))")
        case "status":
            let contact = try await contactArgument(arguments, entry.usage)
            let report = MeshNodeStatusReport(
                node: contact.name, try await session.status(of: contact.publicKey, layout: MeshNodeStatus.Layout(contact.type)))
            emit(report, text: report.text)
        case "telemetry":
            let contact = arguments.isEmpty ? nil : try await contact(arguments.joined(separator: " "))
            let telemetry = try await session.telemetry(of: contact?.publicKey)
            let report = MeshTelemetryReport(node: contact?.name ?? "self", telemetry)
            emit(report, text: report.text)
        case "neighbours":
            let contact = try await contactArgument(arguments, entry.usage)
            let neighbours = try await session.neighbours(of: contact.publicKey)
            let names = await manager.contacts
            let report = MeshNeighboursReport(node: contact.name, neighbours, contacts: names)
            emit(report, text: report.text)
        case "mma":
            try require(arguments, 1, entry.usage)
            var hours = 1.0
            let contact: MeshContact
            // The whole line names the sensor if it can ("Sensor 2"); else its last word is the hours.
            if let whole = await manager.contact(named: arguments.joined(separator: " ")) {
                contact = whole
            } else {
                guard arguments.count > 1, let value = Double(arguments[arguments.count - 1]) else {
                    throw CLIError("no contact named \(terminalSafe(arguments.joined(separator: " ")))")
                }
                guard value.isFinite, value > 0, value <= 24 * 366 else { throw CLIError("hours are more than 0 and at most a year") }
                hours = value
                contact = try await self.contact(arguments.dropLast().joined(separator: " "))
            }
            let figures = try await session.minMaxAverage(of: contact.publicKey, fromSecondsAgo: UInt32(hours * 3600))
            struct Record: Encodable { let channel: Int; let kind: String; let minimum: [Double]; let maximum: [Double]; let average: [Double] }
            struct Figures: Encodable { let type = "minMaxAverage"; let node: String; let records: [Record] }
            let records = figures.records.map { record in
                Record(channel: Int(record.channel), kind: "\(record.type)", minimum: MeshTelemetryReport.numbers(record.minimum),
                       maximum: MeshTelemetryReport.numbers(record.maximum), average: MeshTelemetryReport.numbers(record.average))
            }
            let text = "\(terminalSafe(contact.name)): " + records.map { record in
                "[\(record.channel)] \(record.kind) " + [record.minimum, record.average, record.maximum]
                    .map { $0.map { String(format: "%g", $0) }.joined(separator: ",") }.joined(separator: " / ")
            }.joined(separator: "; ") + " (min / avg / max)"
            emit(Figures(node: contact.name, records: records), text: text)
        case "acl":
            let contact = try await contactArgument(arguments, entry.usage)
            let entries = try await session.accessList(of: contact.publicKey)
            struct Entry: Encodable { let type = "aclEntry"; let server: String; let publicKeyPrefix: String; let permission: String }
            for item in entries {
                emit(Entry(server: contact.name, publicKeyPrefix: item.publicKeyPrefix.hexString, permission: "\(item.permission)"),
                     text: "\(item.publicKeyPrefix.hexString)  \(item.permission)")
            }
            if !json { console.print("\(entries.count) entr\(entries.count == 1 ? "y" : "ies")") }
        case "owner":
            let contact = try await contactArgument(arguments, entry.usage)
            let info = try await session.ownerInfo(of: contact.publicKey)
            struct Owner: Encodable { let type = "owner"; let node: String; let firmware: String?; let name: String; let owner: String }
            emit(Owner(node: contact.name, firmware: info.firmwareVersion, name: info.name, owner: info.owner),
                 text: "\(terminalSafe(info.name)) (\(terminalSafe(info.firmwareVersion ?? "?"))): \(terminalSafe(info.owner))")
        case "anon":
            try require(arguments, 2, entry.usage)
            let contact = try await contact(arguments[0])
            guard let kind = ["regions": MeshAnonymousRequest.Kind.regions, "owner": .owner, "clock": .clock][arguments[1].lowercased()] else {
                throw CLIError("anon asks for regions, owner or clock")
            }
            // Repeaters ignore flooded anonymous requests: a route is needed. The answer comes
            // back along it, hop by hop in reverse (each hop's hash kept whole).
            guard let route = contact.outPath else {
                throw CLIError("no route to \(terminalSafe(contact.name)) is known, and it ignores flooded requests: discover-path first")
            }
            let size = contact.outPathHashSize
            let back = stride(from: route.count - size, through: 0, by: -size).reduce(into: Data()) { $0.append(route[route.startIndex + $1..<route.startIndex + $1 + size]) }
            let response = try await session.anonymousRequest(
                to: contact.publicKey, MeshAnonymousRequest(kind, replyPath: back, replyPathHashSize: contact.outPathHashSize))
            let report = MeshAnonymousReport(node: contact.name, response)
            emit(report, text: report.text)
        case "cmd":
            try require(arguments, 2, entry.usage)
            let contact = try await contact(arguments[0])
            let reply = try await session.runCommand(rest, on: contact.publicKey)
            struct Reply: Encodable { let type = "commandReply"; let node: String; let command: String; let reply: String }
            emit(Reply(node: contact.name, command: rest, reply: reply), text: terminalSafe(reply))
        case "discover":
            let types: [MeshContactType]
            switch arguments.first?.lowercased() {
            case nil, "repeaters": types = [.repeater]
            case "sensors": types = [.sensor]
            case "all": types = [.repeater, .sensor, .room]
            case let other?: throw CLIError("discover repeaters, sensors or all, not \(terminalSafe(other))")
            }
            let answers = try await session.discoverNodes(types: types)
            let contacts = await manager.contacts
            struct Found: Encodable { let type = "discovered"; let nodeType: String; let publicKey: String; let name: String?; let snr: Double }
            for answer in answers {
                let name = contacts.first { $0.publicKey.starts(with: answer.publicKey) }?.name
                emit(Found(nodeType: "\(answer.type)", publicKey: answer.publicKey.hexString, name: name, snr: answer.snrHeard),
                     text: "\(answer.type)  \(answer.publicKey.hexString)  \(terminalSafe(name ?? "(unknown)"))  SNR \(answer.snrHeard) dB")
            }
            if !json { console.print("\(answers.count) node(s) answered") }
        case "card":
            let card = try await session.ownCard()
            emit(MeshCardReport(contact: nil, card), text: card.uri)
        case "export":
            let contact = try await contactArgument(arguments, entry.usage)
            let card = try await session.exportContact(publicKey: contact.publicKey)
            emit(MeshCardReport(contact: contact.name, card), text: card.uri)
        case "import":
            try require(arguments, 1, entry.usage)
            let link: MeshShareLink
            do { link = try MeshShareLink(arguments.joined()) } catch { throw CLIError("not a link the MeshCore apps share: \(error)") }
            try await session.add(link)
            // An imported card reaches the contacts on the radio's next turn.
            try? await Task.sleep(for: .milliseconds(200))
            try await manager.refreshContacts()
            struct Imported: Encodable { let type = "imported"; let kind: String; let name: String }
            let (kind, name): (String, String) = switch link {
            case .card(let card): ("card", card.advert.data.name ?? "")
            case .contact(let name, _, _): ("contact", name)
            case .channel(let name, _): ("channel", name)
            }
            emit(Imported(kind: kind, name: name), text: "Imported \(kind) \(terminalSafe(name))")
        case "favourite":
            try require(arguments, 2, entry.usage)
            var contact = try await contact(arguments.dropLast().joined(separator: " "))
            let on = try Self.onOff(arguments[arguments.count - 1])
            contact.flags = on ? contact.flags | 0x01 : contact.flags & ~0x01
            try await session.addOrUpdateContact(contact)
            try await manager.refreshContacts()
            struct Favourite: Encodable { let type = "favourite"; let contact: String; let favourite: Bool }
            emit(Favourite(contact: contact.name, favourite: on), text: "\(terminalSafe(contact.name)) is \(on ? "a favourite" : "no longer a favourite")")
        case "set-path":
            try require(arguments, 2, entry.usage)
            var contact = try await contact(arguments.dropLast().joined(separator: " "))
            let route = arguments[arguments.count - 1]
            if route.lowercased() == "flood" {
                contact.outPath = nil
            } else {
                let hashes = try route.split(separator: ",").map { text -> Data in
                    guard let bytes = Data(hexString: String(text)), (1...3).contains(bytes.count) else {
                        throw CLIError("a route is repeater hashes in hex, 1 to 3 bytes each, separated by commas")
                    }
                    return bytes
                }
                guard let size = hashes.first?.count, hashes.allSatisfy({ $0.count == size }), hashes.count * size <= 64, hashes.count <= 63 else {
                    throw CLIError("every hash of a route has the same length; at most 63 hops and 64 bytes")
                }
                contact.outPath = hashes.reduce(Data(), +)
                contact.outPathHashSize = size
            }
            try await session.addOrUpdateContact(contact)
            try await manager.refreshContacts()
            let report = MeshPathReport(contact: contact, advert: nil)
            emit(report, text: report.text)
        case "remove":
            let contact = try await contactArgument(arguments, entry.usage)
            try await session.removeContact(publicKey: contact.publicKey)
            try await manager.refreshContacts()
            struct Removed: Encodable { let type = "contactRemoved"; let name: String }
            emit(Removed(name: contact.name), text: "Removed \(terminalSafe(contact.name))")
        case "sign":
            try require(arguments, 1, entry.usage)
            let data = Data(arguments.joined(separator: " ").utf8)
            let signature = try await session.sign(data)
            struct Signed: Encodable { let type = "signature"; let signature: String; let publicKey: String? }
            let key = await session.selfInfo?.publicKey.hexString
            emit(Signed(signature: signature.hexString, publicKey: key), text: signature.hexString)
        case "private-key":
            let key = try await session.exportPrivateKey()
            struct Key: Encodable { let type = "privateKey"; let privateKey: String }
            if !json { console.print("(whoever holds this key is this node: keep it secret)") }
            emit(Key(privateKey: key.hexString), text: key.hexString)
        case "reboot":
            try await session.reboot()
            struct Reboot: Encodable { let type = "reboot" }
            emit(Reboot(), text: "Rebooting the radio")
        case "factory-reset":
            guard arguments.first?.lowercased() == "yes" else {
                throw CLIError("this erases the radio's identity, contacts, channels and settings: type factory-reset yes")
            }
            try await session.factoryReset()
            struct Reset: Encodable { let type = "factoryReset" }
            emit(Reset(), text: "The radio is erasing everything and rebooting")
        default:
            throw CLIError("\(entry.name) is not implemented")
        }
    }

    private func help(_ name: String?) {
        struct Help: Encodable { let type = "help"; let command: String; let usage: String; let summary: String }
        if let name {
            guard let entry = MeshShellCatalog.entry(name) else { return console.print("unknown command \(terminalSafe(name))") }
            emit(Help(command: entry.name, usage: entry.usage, summary: entry.summary), text: "\(entry.usage)\n  \(entry.summary)")
            if entry.name == "get" || entry.name == "set", !json {
                for setting in MeshShellCatalog.settings { console.print("  \(setting.name.padding(toLength: 22, withPad: " ", startingAt: 0))\(setting.summary)") }
            }
            return
        }
        for entry in MeshShellCatalog.entries {
            emit(Help(command: entry.name, usage: entry.usage, summary: entry.summary),
                 text: entry.usage.padding(toLength: 34, withPad: " ", startingAt: 0) + entry.summary)
        }
    }

    /// Trace hops: repeater names (their first key byte) or hex hashes of one size.
    private func traceHashes(_ arguments: [String]) async throws -> (Data, Int) {
        var path = Data()
        var size: Int?
        for word in arguments.flatMap({ $0.split(separator: ",").map(String.init) }) {
            if let contact = await manager.contact(named: word), !(word.count >= 2 && word.allSatisfy(\.isHexDigit)) {
                let hash = Data(contact.publicKey.prefix(size ?? 1))
                path.append(hash)
                size = size ?? 1
            } else if let bytes = Data(hexString: word), [1, 2, 4, 8].contains(bytes.count) {
                guard size == nil || size == bytes.count else { throw CLIError("every hash of a trace has the same length") }
                size = bytes.count
                path.append(bytes)
            } else {
                throw CLIError("\(terminalSafe(word)) is neither a contact nor a 1-, 2-, 4- or 8-byte hash in hex")
            }
        }
        return (path, size ?? 1)
    }
}
