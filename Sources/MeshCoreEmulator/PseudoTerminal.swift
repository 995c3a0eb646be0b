import Foundation
import MeshCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A new pseudo-terminal pair in raw mode, for serving an emulated radio as a serial port.
///
/// Give ``master`` to ``MeshCoreStreamHost/serve(fileDescriptor:)``; apps open ``path`` as
/// they would a USB serial device. The pair's own handle on the subordinate side stays open
/// (until ``closeSubordinate()``) so the master never reads end-of-file between apps.
public struct PseudoTerminal: Sendable {
    /// The master side's descriptor.
    public let master: Int32
    /// The subordinate side's path, such as `/dev/pts/3`.
    public let path: String
    /// The descriptor that keeps the subordinate side open.
    public let subordinate: Int32

    /// Why a pseudo-terminal could not be made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The call that failed.
        public let call: String
        /// `errno` after it.
        public let code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Opens a pair (`posix_openpt`, `grantpt`, `unlockpt`, `ptsname`) and makes it raw, so
    /// binary frames pass unchanged and nothing is echoed.
    public static func open() throws -> PseudoTerminal {
        let calls = try PTYCalls.load()
        let master = calls.openpt(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw Failure(call: "posix_openpt", code: errno) }
        func fail(_ call: String) -> Failure {
            let failure = Failure(call: call, code: errno)
            _ = close(master)
            return failure
        }
        guard calls.grantpt(master) == 0 else { throw fail("grantpt") }
        guard calls.unlockpt(master) == 0 else { throw fail("unlockpt") }
        var name = [CChar](repeating: 0, count: 128)
        guard calls.ptsname(master, &name, name.count) == 0 else { throw fail("ptsname_r") }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let subordinate = openDevice(path)
        guard subordinate >= 0 else { throw fail("open \(path)") }
        var settings = termios()
        guard tcgetattr(subordinate, &settings) == 0 else {
            _ = close(subordinate)
            throw fail("tcgetattr")
        }
        cfmakeraw(&settings)
        guard tcsetattr(subordinate, TCSANOW, &settings) == 0 else {
            _ = close(subordinate)
            throw fail("tcsetattr")
        }
        return PseudoTerminal(master: master, path: path, subordinate: subordinate)
    }

    /// Closes the pair's own handle on the subordinate side.
    public func closeSubordinate() {
        _ = close(subordinate)
    }
}

/// `open(2)` read-write without becoming the controlling terminal (named apart from
/// ``PseudoTerminal/open()``).
private func openDevice(_ path: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, O_RDWR | O_NOCTTY)
    #else
    Darwin.open(path, O_RDWR | O_NOCTTY)
    #endif
}

/// The pseudo-terminal calls, looked up at run time: the C library declares them only for
/// X/Open builds, so Swift's Glibc module does not import them.
private struct PTYCalls {
    typealias IntCall = @convention(c) (Int32) -> Int32
    typealias NameCall = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

    let openpt: IntCall
    let grantpt: IntCall
    let unlockpt: IntCall
    let ptsname: NameCall

    static func load() throws -> PTYCalls {
        let library = dlopen(nil, RTLD_NOW)
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let pointer = dlsym(library, name) else {
                throw PseudoTerminal.Failure(call: "dlsym \(name)", code: ENOSYS)
            }
            return unsafeBitCast(pointer, to: type)
        }
        return PTYCalls(
            openpt: try symbol("posix_openpt", as: IntCall.self),
            grantpt: try symbol("grantpt", as: IntCall.self),
            unlockpt: try symbol("unlockpt", as: IntCall.self),
            ptsname: try symbol("ptsname_r", as: NameCall.self))
    }
}
