import Foundation
import Testing
import TetherSimulator

@testable import MeshCore
@testable import MeshCoreEmulator

/// Requests to other nodes through a session and the emulated mesh: logins to a repeater and a
/// room server, status, telemetry, neighbours, access lists, anonymous requests, path
/// discovery, traces and node discovery; and the Cayenne LPP decoder.
@Suite struct RemoteNodeTests {
    typealias S = ProtocolTestSupport

    /// A mesh with a repeater two hops out, a room server and a sensor, all known to the radio.
    static func world() async throws -> EmulatorSession {
        let world = await EmulatorSession(introduce: false)
        let network = world.mesh.network
        let radio = world.mesh.radio
        await world.mesh.sim {
            network.addNode(name: "Hilltop", hops: 2, type: .repeater).owner = "Ann, hill 4"
            network.addNode(name: "Valley", hops: 3, type: .repeater)
            network.addNode(name: "Club", hops: 2, type: .room).posts = ["a", "b"]
            network.addNode(name: "Weather", hops: 1, type: .sensor)
            network.introduceAll(to: radio)
        }
        try await world.start()
        return world
    }

    // MARK: Bytes

    @Test func lppReadingsDecodeWithTheirScaleAndSign() {
        let telemetry = MeshTelemetry(lpp: S.hex("01 74 01 A4 02 67 FF 9C 02 68 5A 03 88 06 76 5C F2 F2 96 00 27 10"))
        #expect(telemetry.readings == [
            .init(channel: 1, type: .voltage, value: .number(4.2)),
            .init(channel: 2, type: .temperature, value: .number(-10)),
            .init(channel: 2, type: .humidity, value: .number(45)),
            .init(channel: 3, type: .gps, value: .location(latitude: 42.3516, longitude: -85.5402, altitude: 100)),
        ])
        #expect(telemetry.unparsedByteCount == 0)
        #expect(telemetry.lpp == S.hex("01 74 01 A4 02 67 FF 9C 02 68 5A 03 88 06 76 5C F2 F2 96 00 27 10"))
        // An unknown type ends the readings; its bytes are kept.
        let odd = MeshTelemetry(lpp: S.hex("01 74 01 A4 05 FE 01 02"))
        #expect(odd.readings.count == 1 && odd.unparsedByteCount == 4)
        // Zero padding is not data left unread; a value cut short is.
        #expect(MeshTelemetry(lpp: S.hex("01 74 01 A4 00 00")).unparsedByteCount == 0)
        #expect(MeshTelemetry(lpp: S.hex("01 74 01")).readings.isEmpty)
        #expect(MeshTelemetry(lpp: S.hex("01 74 01")).unparsedByteCount == 3)
        #expect(MeshTelemetry(lpp: S.hex("01 71 00 01 FF FF 03 E8")).first(.accelerometer) == .vector(x: 0.001, y: -0.001, z: 1))
    }

    @Test func statusBodiesDecodeInTheLayoutAsked() throws {
        let common = MeshNodeStatus(
            batteryMillivolts: 3950, transmitQueueLength: 2, noiseFloor: -115, lastRSSI: -80, packetsReceived: 41,
            packetsSent: 26, transmitAirtimeSeconds: 12, uptimeSeconds: 3600, sentFlood: 20, sentDirect: 6,
            receivedFlood: 30, receivedDirect: 11, errorFlags: 0, lastSNR: 6.25, directDuplicates: 1, floodDuplicates: 7)
        var repeater = common
        repeater.receiveAirtimeSeconds = 30
        repeater.receiveErrors = 2
        var room = common
        room.postsStored = 5
        room.postPushes = 3
        #expect(try MeshNodeStatus(decoding: S.hex(ProtocolFrameSamples.repeaterStatusHex)) == repeater)
        #expect(repeater.encoded == S.hex(ProtocolFrameSamples.repeaterStatusHex))
        // A room's answer arrives padded to the cipher's 16-byte blocks: 4 + 52 → 64, minus the 4-byte tag.
        let padded = S.hex(ProtocolFrameSamples.roomStatusHex) + Data(count: 8)
        #expect(try MeshNodeStatus(decoding: padded, layout: .roomServer) == room)
        #expect(room.encoded == S.hex(ProtocolFrameSamples.roomStatusHex))
        #expect(throws: MeshCoreDecodeError.self) { try MeshNodeStatus(decoding: S.hex(ProtocolFrameSamples.roomStatusHex), layout: .repeater) }
        #expect(MeshNodeStatus.Layout(.room) == .roomServer && MeshNodeStatus.Layout(.repeater) == .repeater)
    }

    @Test func minMaxAverageUsesTheSensorFirmwaresWidths() throws {
        // Clock, then humidity (2 bytes ×10: 40.0, 50.0, 45.5), temperature (−5.5, 24.5, 21.0),
        // and an accelerometer (6 bytes, one signed 32-bit number in the last 4: −1, 2, 3), then padding.
        let body = S.hex("80 00 92 65 02 68 01 90 01 F4 01 C7 02 67 FF C9 00 F5 00 D2 03 71 00 00 FF FF FF FF 00 00 00 00 00 02 00 00 00 00 00 03 00 00")
        let figures = try MeshMinMaxAverage(decoding: body)
        #expect(figures.clock == 1_704_067_200)
        #expect(figures.records == [
            .init(channel: 2, type: .humidity, minimum: .number(40), maximum: .number(50), average: .number(45.5)),
            .init(channel: 2, type: .temperature, minimum: .number(-5.5), maximum: .number(24.5), average: .number(21)),
            .init(channel: 3, type: .accelerometer, minimum: .number(-1), maximum: .number(2), average: .number(3)),
        ])
        #expect(figures.unparsed == Data(count: 2))
        #expect(figures.encoded == body)
        #expect(throws: MeshCoreDecodeError.self) { try MeshMinMaxAverage(decoding: S.hex("80 00")) }
        // A record cut short is left unread, not misread; so is a wide value whose leading bytes are set.
        #expect(try MeshMinMaxAverage(decoding: S.hex("80 00 92 65 02 68 01 90")).records.isEmpty)
        let odd = try MeshMinMaxAverage(decoding: S.hex("80 00 92 65 03 71 01 00 00 00 00 01 00 00 00 00 00 02 00 00 00 00 00 03"))
        #expect(odd.records.isEmpty && odd.unparsed.count == 20)
    }

    @Test func bodiesOfBinaryAnswersDecode() throws {
        let neighbours = try MeshNeighbours(decoding: S.hex("03 00 02 00 A1 A2 3C 00 00 00 28 B1 B2 78 00 00 00 F8"), prefixLength: 2)
        #expect(neighbours.total == 3)
        #expect(neighbours.entries == [
            .init(publicKeyPrefix: S.hex("A1 A2"), heardSecondsAgo: 60, snr: 10),
            .init(publicKeyPrefix: S.hex("B1 B2"), heardSecondsAgo: 120, snr: -2),
        ])
        #expect(neighbours.encoded(prefixLength: 2) == S.hex("03 00 02 00 A1 A2 3C 00 00 00 28 B1 B2 78 00 00 00 F8"))
        #expect(throws: MeshCoreDecodeError.self) { try MeshNeighbours(decoding: S.hex("03 00 02 00 A1 A2 3C 00"), prefixLength: 2) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshNeighbours(decoding: S.hex("03 00 FF FF"), prefixLength: 2) }
        // Zero padding after the entries is not an entry.
        #expect(MeshAccessEntry.list(decoding: S.hex("A1 A2 A3 A4 A5 A6 03 B1 B2 B3 B4 B5 B6 01 00 00 00 00 00 00 00 00 C1")) == [
            MeshAccessEntry(publicKeyPrefix: S.hex("A1 A2 A3 A4 A5 A6"), permission: .admin),
            MeshAccessEntry(publicKeyPrefix: S.hex("B1 B2 B3 B4 B5 B6"), permission: .readOnly),
        ])
        #expect(MeshOwnerInfo(text: "v1.17.1\nHill\nAnn\nline 2", withVersion: true)
            == MeshOwnerInfo(firmwareVersion: "v1.17.1", name: "Hill", owner: "Ann\nline 2"))
        #expect(try MeshAnonymousResponse(decoding: S.hex("80 00 92 65 2A 2C 65 75 00"), kind: .regions)
            == .regions(clock: 1_704_067_200, ["*", "eu"]))
        #expect(try MeshAnonymousResponse(decoding: S.hex("80 00 92 65 81"), kind: .clock) == .clock(clock: 1_704_067_200, features: 0x81))
        #expect(throws: MeshCoreDecodeError.self) { try MeshAnonymousResponse(decoding: S.hex("80 00"), kind: .owner) }
        let answer = MeshNodeDiscovery.Answer(payload: S.hex("92 28 78 56 34 12 A1 A2 A3 A4 A5 A6 A7 A8"))
        #expect(answer == MeshNodeDiscovery.Answer(type: .repeater, snrHeard: 10, tag: 0x1234_5678, publicKey: S.hex("A1 A2 A3 A4 A5 A6 A7 A8")))
        #expect(MeshNodeDiscovery.Answer(payload: S.hex("92 28 78 56 34 12 A1")) == nil)
    }

    // MARK: Through the emulated mesh

    @Test func loginsGrantWhatThePasswordAllowsAndAWrongOneGetsNoAnswer() async throws {
        let world = try await Self.world()
        let session = world.session
        let hilltop = world.mesh.key("Hilltop"), club = world.mesh.key("Club")
        let (admin, guest) = try await world.run {
            (try await session.login(to: hilltop, password: "password"), try await session.login(to: club, password: "hello"))
        }
        #expect(admin.isAdmin && admin.permissions == .admin && admin.firmwareLevel == 2)
        #expect(admin.serverPrefix == hilltop.prefix(6))
        // A room server's guest: role byte 2, no permissions.
        #expect(!guest.isAdmin && guest.role == 2 && guest.permissions == .guest && guest.firmwareLevel == 1)
        await #expect { try await world.run { try await session.login(to: world.mesh.key("Valley"), password: "nope") } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        await #expect { try await world.run { try await session.login(to: Data(repeating: 7, count: 32), password: "x") } } throws: {
            EmulatorSession.refusal($0) == .notFound
        }
        // Current servers ask for no keep-alive: the radio holds no connection after a login
        // (HAS_CONNECTION answers ERR 2), and LOGOUT is answered OK.
        await #expect { try await world.run { _ = try await session.execute(.hasConnection(publicKey: hilltop), session.expectingOK) } } throws: {
            EmulatorSession.refusal($0) == .notFound
        }
        try await world.run { try await session.logout(publicKey: hilltop) }
    }

    @Test func statusAndTelemetryComeFromTheNodeAsked() async throws {
        let world = try await Self.world()
        let session = world.session
        let hilltop = world.mesh.key("Hilltop"), club = world.mesh.key("Club"), weather = world.mesh.key("Weather")
        // Not logged in: the repeater stays silent.
        await #expect { try await world.run { try await session.status(of: hilltop) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        // A node the radio is not logged in to cannot read its requests: no telemetry either.
        await #expect { try await world.run { try await session.telemetry(of: weather) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        let (repeater, room, own, sensor) = try await world.run {
            _ = try await session.login(to: hilltop, password: "password")
            _ = try await session.login(to: club, password: "password")
            _ = try await session.login(to: weather, password: "password")
            return (try await session.status(of: hilltop), try await session.status(of: club, layout: .roomServer),
                    try await session.telemetry(), try await session.telemetry(of: weather))
        }
        #expect(repeater.batteryMillivolts == 3_950 && repeater.receiveErrors == 2 && repeater.postsStored == nil)
        #expect(room.postsStored == 2 && room.receiveErrors == nil)
        // 4 012 mV at LPP's 10 mV resolution.
        #expect(own.first(.voltage, channel: 1) == .number(4.01))
        #expect(sensor.first(.voltage) == .number(3.95))
        #expect(sensor.first(.temperature) == .number(21.5) && sensor.first(.humidity) == .number(45))
        // The answers came padded to the cipher's blocks: the padding is not a reading.
        #expect(sensor.readings.count == 3 && sensor.unparsedByteCount == 0)
        // Logged in as a guest, a sensor tells its battery only.
        let guestReadings = try await world.run {
            _ = try await session.login(to: weather, password: "hello")
            return try await session.telemetry(of: weather)
        }
        #expect(guestReadings.readings.map(\.type) == [.voltage])
        // A guest gets no min/max/average either; a member does.
        await #expect { try await world.run { try await session.minMaxAverage(of: weather, fromSecondsAgo: 3600) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        let figures = try await world.run {
            _ = try await session.login(to: weather, password: "password")
            return try await session.minMaxAverage(of: weather, fromSecondsAgo: 3600)
        }
        #expect(figures.records.map(\.type) == [.voltage, .temperature, .humidity])
        #expect(figures.records.last?.average == .number(45))
    }

    @Test func binaryRequestsAnswerNeighboursAccessListAndOwner() async throws {
        let world = try await Self.world()
        let session = world.session
        let hilltop = world.mesh.key("Hilltop")
        // Another radio logged in as a guest: repeaters leave guests out of the list.
        let network = world.mesh.network
        await world.mesh.sim {
            _ = network.node(named: "Hilltop")?.login(password: "hello", from: Data(repeating: 0x77, count: 32), clock: 0)
        }
        let (neighbours, access, owner) = try await world.run {
            _ = try await session.login(to: hilltop, password: "password")
            return (try await session.neighbours(of: hilltop, prefixLength: 4), try await session.accessList(of: hilltop),
                    try await session.ownerInfo(of: hilltop))
        }
        // Valley (3 hops) is Hilltop's (2 hops) neighbour.
        #expect(neighbours.total == 1 && neighbours.entries.map(\.publicKeyPrefix) == [world.mesh.key("Valley").prefix(4)])
        #expect(access == [MeshAccessEntry(publicKeyPrefix: world.mesh.key("Base").prefix(6), permission: .admin)])
        #expect(owner == MeshOwnerInfo(firmwareVersion: "v1.17.1", name: "Hilltop", owner: "Ann, hill 4"))
        // A guest is not shown the access list: no answer.
        let valley = world.mesh.key("Valley")
        await #expect {
            try await world.run {
                _ = try await session.login(to: valley, password: "hello")
                return try await session.accessList(of: valley)
            }
        } throws: { if case MeshCoreError.noAnswer = $0 { true } else { false } }
    }

    @Test func anonymousRequestsNeedAPathAndAnswerRegionsOwnerAndClock() async throws {
        let world = try await Self.world()
        let session = world.session
        let hilltop = world.mesh.key("Hilltop")
        // Flooded (no path yet): the repeater ignores it.
        await #expect { try await world.run { try await session.anonymousRequest(to: hilltop, MeshAnonymousRequest(.regions)) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        let path = try await world.run { try await session.discoverPath(to: hilltop) }
        #expect(path.nodePrefix == hilltop.prefix(6) && path.outPath == Data([1]) && path.inPath == Data([1]))
        let radio = world.mesh.radio
        await world.mesh.sim {
            guard var contact = radio.contacts.first(where: { $0.publicKey == hilltop }) else { return }
            contact.outPath = path.outPath
            radio.addContact(contact)
        }
        let (regions, owner, clock) = try await world.run {
            (try await session.anonymousRequest(to: hilltop, MeshAnonymousRequest(.regions, replyPath: path.inPath)),
             try await session.anonymousRequest(to: hilltop, MeshAnonymousRequest(.owner, replyPath: path.inPath)),
             try await session.anonymousRequest(to: hilltop, MeshAnonymousRequest(.clock, replyPath: path.inPath)))
        }
        guard case .regions(_, let names) = regions, case .owner(_, let info) = owner, case .clock(let time, let features) = clock else {
            Issue.record("answers of the wrong kind: \(regions), \(owner), \(clock)"); return
        }
        #expect(names == ["*", "europe"])
        #expect(info == MeshOwnerInfo(name: "Hilltop", owner: "Ann, hill 4"))
        #expect(time >= EmulatorMesh.epoch && features == 0)
    }

    @Test func tracesReturnEachRepeatersSNRAndUnknownRepeatersLoseThem() async throws {
        let world = try await Self.world()
        let session = world.session
        let hashes = Data([world.mesh.key("Hilltop")[0], world.mesh.key("Valley")[0]])
        let result = try await world.run { try await session.trace(path: hashes) }
        #expect(result.hops.map(\.hash) == [hashes.prefix(1), hashes.suffix(1)].map { Data($0) })
        #expect(result.hops.map(\.snr) == [12, 11.75] && result.finalSNR == 12)
        let two = Data(world.mesh.key("Hilltop").prefix(2))
        #expect(try await world.run { try await session.trace(path: two, hashSize: 2) }.hops.count == 1)
        let repeaterHashes = Set([world.mesh.key("Hilltop")[0], world.mesh.key("Valley")[0]])
        let unknown = Data([(0...255).map(UInt8.init).first { !repeaterHashes.contains($0) }!])
        await #expect { try await world.run { try await session.trace(path: unknown) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
    }

    @Test func nodeDiscoveryHearsTheRepeatersNextDoor() async throws {
        let world = await EmulatorSession(introduce: false)
        let network = world.mesh.network
        await world.mesh.sim {
            network.addNode(name: "Near", hops: 1, type: .repeater)
            network.addNode(name: "Far repeater", hops: 4, type: .repeater)
            network.addNode(name: "Sensor", hops: 1, type: .sensor)
        }
        try await world.start()
        let session = world.session
        let (repeaters, both) = try await world.run {
            (try await session.discoverNodes(types: [.repeater], window: .seconds(3)),
             try await session.discoverNodes(types: [.repeater, .sensor], window: .seconds(3)))
        }
        #expect(repeaters.map(\.publicKey) == [world.mesh.key("Near").prefix(8)].map { Data($0) })
        #expect(repeaters.first?.type == .repeater)
        #expect(Set(both.map(\.publicKey)) == Set([world.mesh.key("Near").prefix(8), world.mesh.key("Sensor").prefix(8)].map { Data($0) }))
    }

    @Test func remoteCommandsRunForAdministratorsOnly() async throws {
        let world = try await Self.world()
        let session = world.session
        let hilltop = world.mesh.key("Hilltop")
        await #expect { try await world.run { try await session.runCommand("ver", on: hilltop) } } throws: {
            if case MeshCoreError.noAnswer = $0 { true } else { false }
        }
        let (version, name, set, owner, unknown) = try await world.run {
            _ = try await session.login(to: hilltop, password: "password")
            return (try await session.runCommand("ver", on: hilltop), try await session.runCommand("get name", on: hilltop),
                    try await session.runCommand("set owner Bea, valley 2", on: hilltop), try await session.ownerInfo(of: hilltop),
                    try await session.runCommand("selfdestruct", on: hilltop))
        }
        #expect(version.hasPrefix("v1.17.1"))
        #expect(name == "> Hilltop" && set == "OK" && owner.owner == "Bea, valley 2")
        #expect(unknown == "Unknown command")
        // A guest's commands go unanswered.
        let valley = world.mesh.key("Valley")
        await #expect {
            try await world.run {
                _ = try await session.login(to: valley, password: "hello")
                return try await session.runCommand("ver", on: valley)
            }
        } throws: { if case MeshCoreError.noAnswer = $0 { true } else { false } }
    }
}
