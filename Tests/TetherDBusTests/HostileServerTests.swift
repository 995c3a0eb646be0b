import Foundation
import Testing

@testable import TetherDBus

@Suite("Connection against a scripted, misbehaving server")
struct HostileServerTests {
    @Test func aMalformedMessageIsSkippedAndTheStreamStaysFramed() async throws {
        let server = try FakeBusServer()
        defer { server.close() }
        server.serve { peer in
            try peer.acceptClient()
            let go = try peer.readMessage()
            // A framed message with a boolean of 2, a reply nobody asked for, then good ones.
            try peer.write(Wire.signal(signature: "b", body: [2, 0, 0, 0]))
            var stray = DBusMessage(kind: .methodReturn, replySerial: 9999)
            stray.body = [.string("stray")]
            try peer.send(stray)
            try peer.send(.signal(path: "/t", interface: "t.I", member: "M", body: [.string("after")]))
            try peer.send(.methodReturn(to: go, body: [.string("done")]))
            try peer.waitForClose()
        }
        let client = try await withTimeout("connecting") { try await DBusConnection.connect(to: server.address) }
        defer { client.close() }
        #expect(client.uniqueName == ":1.1")
        let signals = Collector<DBusMessage>()
        client.onSignal(DBusMatchRule(interface: "t.I")) { signals.append($0) }
        let reply = try await client.reply(to: .methodCall(destination: "x.y", path: "/", interface: "t.I", member: "Go"))
        #expect(reply.body == [.string("done")])
        // The malformed signal was dropped; the good one arrived before the reply.
        #expect(signals.items.map(\.body) == [[.string("after")]])
        #expect(!client.isClosed)
        client.close()
        #expect(try await withTimeout("the server script") { await server.finished.value } == nil)
    }

    @Test func garbageFramingClosesTheConnectionWithAProtocolError() async throws {
        let server = try FakeBusServer()
        defer { server.close() }
        server.serve { peer in
            try peer.acceptClient()
            _ = try peer.readMessage()
            try peer.write(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
            try peer.waitForClose()
        }
        let client = try await withTimeout("connecting") { try await DBusConnection.connect(to: server.address) }
        defer { client.close() }
        let error = try await client.error(from: .methodCall(destination: "x.y", path: "/", interface: "t.I", member: "Go"))
        #expect(error.name == DBusError.protocolError)
        #expect(client.isClosed)
        #expect(try await client.closeReasonBounded().name == DBusError.protocolError)
        #expect(try await withTimeout("the server script") { await server.finished.value } == nil)
    }

    @Test func aMessageAboveTheLimitClosesTheConnectionBeforeItArrives() async throws {
        let server = try FakeBusServer()
        defer { server.close() }
        server.serve { peer in
            try peer.acceptClient()
            _ = try peer.readMessage()
            // Only the 16-byte header of a message announcing a 1 GiB body: the client must
            // give up on the announcement, not wait for (or buffer) the body.
            var header: [UInt8] = [UInt8(ascii: "l"), 4, 0, 1]
            header += [0, 0, 0, 0x40, 1, 0, 0, 0, 0, 0, 0, 0]
            try peer.write(header)
            try peer.waitForClose()
        }
        let client = try await withTimeout("connecting") {
            try await DBusConnection.connect(to: server.address, maximumMessageSize: 1 << 20)
        }
        defer { client.close() }
        let error = try await client.error(from: .methodCall(destination: "x.y", path: "/", interface: "t.I", member: "Go"))
        #expect(error.name == DBusError.protocolError)
        #expect(error.message.contains("exceeds the limit"))
    }

    @Test func aStalledHandshakeTimesOut() async throws {
        // Listening, but never accepting: the kernel completes the connect and nobody answers.
        let server = try FakeBusServer()
        defer { server.close() }
        let started = ContinuousClock.now
        let outcome = try await withTimeout("the handshake to time out") { () -> DBusError? in
            do throws(DBusError) {
                let connection = try await DBusConnection.connect(to: server.address, timeout: .milliseconds(500))
                connection.close()
                return nil
            } catch {
                return error
            }
        }
        let error = try #require(outcome, "connected to a server that never answered")
        #expect(error.name == DBusError.noReply)
        #expect(ContinuousClock.now - started >= .milliseconds(500))
    }

    @Test func rejectingEveryMechanismFailsWithAuthFailed() async throws {
        let server = try FakeBusServer()
        defer { server.close() }
        server.serve { peer in
            let line = try peer.readLine()
            guard line.hasPrefix("AUTH EXTERNAL ") else { throw TestFailure("expected AUTH EXTERNAL, got \(line)") }
            try peer.writeLine("REJECTED DBUS_COOKIE_SHA1")
            try peer.waitForClose()
        }
        let outcome = try await withTimeout("authentication to fail") { () -> DBusError? in
            do throws(DBusError) {
                let connection = try await DBusConnection.connect(to: server.address, timeout: .seconds(10))
                connection.close()
                return nil
            } catch {
                return error
            }
        }
        let error = try #require(outcome, "authenticated against a server that rejected everything")
        #expect(error.name == DBusError.authFailed)
        #expect(try await withTimeout("the server script") { await server.finished.value } == nil)
    }

    @Test func anonymousIsTriedWhenExternalIsRejected() async throws {
        let server = try FakeBusServer()
        defer { server.close() }
        let mechanisms = Collector<String>()
        server.serve { peer in
            let first = try peer.readLine()
            mechanisms.append(first)
            try peer.writeLine("REJECTED ANONYMOUS")
            let second = try peer.readLine()
            mechanisms.append(second)
            try peer.writeLine("OK 0123456789abcdef0123456789abcdef")
            let negotiate = try peer.readLine()
            try peer.writeLine(negotiate == "NEGOTIATE_UNIX_FD" ? "ERROR" : "?")
            guard try peer.readLine() == "BEGIN" else { throw TestFailure("expected BEGIN") }
            let hello = try peer.readMessage()
            try peer.send(.methodReturn(to: hello, body: [.string(":1.9")]))
            try peer.waitForClose()
        }
        let client = try await withTimeout("connecting") { try await DBusConnection.connect(to: server.address) }
        defer { client.close() }
        #expect(client.authenticationMechanism == "ANONYMOUS")
        #expect(!client.supportsUnixFDs, "the server did not agree to descriptor passing")
        #expect(client.uniqueName == ":1.9")
        let lines = mechanisms.items
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("AUTH EXTERNAL ") == true)
        #expect(lines.last == "AUTH ANONYMOUS " + "tether".utf8.map { String(format: "%02x", $0) }.joined())
        client.close()
        #expect(try await withTimeout("the server script") { await server.finished.value } == nil)
    }
}
