import Testing

@testable import TetherDBus

/// The error `text` fails to parse with; a success fails the test.
private func parseError(_ text: String) throws -> DBusError {
    do {
        let address = try DBusAddress(parsing: text)
        throw TestFailure("'\(text)' parsed as \(address.transports)")
    } catch let error as DBusError {
        return error
    }
}

@Suite("Addresses")
struct AddressTests {
    @Test func unixPath() throws {
        let address = try DBusAddress(parsing: "unix:path=/run/dbus/system_bus_socket")
        #expect(address.transports == [.unixPath("/run/dbus/system_bus_socket")])
        #expect(address.text == "unix:path=/run/dbus/system_bus_socket")
        #expect(address.description == address.text)
    }

    @Test func unixPathWithGUIDAndOtherKeys() throws {
        let address = try DBusAddress(parsing: "unix:path=/tmp/bus,guid=0123456789abcdef0123456789abcdef")
        #expect(address.transports == [.unixPath("/tmp/bus")])
    }

    @Test func unixAbstract() throws {
        #expect(try DBusAddress(parsing: "unix:abstract=/tmp/dbus-XYZ,guid=1").transports == [.unixAbstract("/tmp/dbus-XYZ")])
    }

    @Test func tcpHostAndPort() throws {
        #expect(try DBusAddress(parsing: "tcp:host=127.0.0.1,port=55556,family=ipv4").transports
                == [.tcp(host: "127.0.0.1", port: 55556)])
        #expect(try DBusAddress(parsing: "tcp:port=1,host=localhost").transports == [.tcp(host: "localhost", port: 1)])
    }

    @Test func tcpNeedsHostAndANumericPort() throws {
        for text in ["tcp:host=h", "tcp:port=1", "tcp:host=h,port=x", "tcp:host=h,port=70000", "tcp:host=h,port=-1"] {
            #expect(try parseError(text).name == DBusError.badAddress, "\(text)")
        }
    }

    @Test func alternativesAreKeptInOrder() throws {
        let address = try DBusAddress(parsing: "unix:path=/a;tcp:host=h,port=1;unix:abstract=b")
        #expect(address.transports == [.unixPath("/a"), .tcp(host: "h", port: 1), .unixAbstract("b")])
        // Empty alternatives are ignored.
        #expect(try DBusAddress(parsing: ";unix:path=/a;;").transports == [.unixPath("/a")])
    }

    @Test func percentEscapes() throws {
        #expect(try DBusAddress(parsing: "unix:path=/tmp/a%20b%2cc%3b%3D").transports == [.unixPath("/tmp/a b,c;=")])
        #expect(try DBusAddress(parsing: "unix:path=%2Fx%c3%a9").transports == [.unixPath("/xé")])
        for text in ["unix:path=/a%2", "unix:path=/a%zz", "unix:path=%"] {
            #expect(try parseError(text).name == DBusError.badAddress, "\(text)")
        }
    }

    @Test func unsupportedTransportsAreSkipped() throws {
        #expect(try DBusAddress(parsing: "launchd:env=X;unix:path=/a").transports == [.unixPath("/a")])
        #expect(try DBusAddress(parsing: "nonce-tcp:host=h,port=1,noncefile=/n;tcp:host=h,port=2").transports
                == [.tcp(host: "h", port: 2)])
        let error = try parseError("launchd:env=DBUS_LAUNCHD_SESSION_BUS_SOCKET")
        #expect(error.name == DBusError.badAddress)
        #expect(error.message.contains("no supported transport"))
        // unix: without path= or abstract= (a listening-only form) is not usable by a client.
        #expect(try parseError("unix:tmpdir=/tmp").name == DBusError.badAddress)
    }

    @Test func malformedAddresses() throws {
        let empty = try parseError("")
        #expect(empty.name == DBusError.badAddress)
        #expect(empty.message.contains("empty"))
        #expect(try parseError(";;").name == DBusError.badAddress)
        #expect(try parseError("unix").name == DBusError.badAddress, "no transport name")
        #expect(try parseError("unix:path").name == DBusError.badAddress, "not key=value")
    }

    @Test func systemBusDefault() throws {
        let address = try DBusAddress.systemBus(environment: [:])
        #expect(address.transports == [.unixPath("/run/dbus/system_bus_socket")])
        #expect(address.text == DBusAddress.defaultSystemBus)
        // An empty variable counts as unset.
        #expect(try DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": ""]).text == DBusAddress.defaultSystemBus)
        // The session bus's variable is not the system bus.
        #expect(try DBusAddress.systemBus(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/s"]).text
                == DBusAddress.defaultSystemBus)
    }

    @Test func systemBusFromTheEnvironment() throws {
        let address = try DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "tcp:host=10.0.2.2,port=7000"])
        #expect(address.transports == [.tcp(host: "10.0.2.2", port: 7000)])
        #expect(throws: DBusError.self) { try DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "bogus"]) }
    }
}
