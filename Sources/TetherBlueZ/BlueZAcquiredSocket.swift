#if os(Linux)
import Dispatch
import Foundation
import Glibc

/// One end of the `SOCK_SEQPACKET` pair bluetoothd hands out for `AcquireNotify` or
/// `AcquireWrite`: one packet is one ATT value. Lives on the D-Bus connection's queue.
///
/// Notifications then skip D-Bus entirely (no signal per value through the bus daemon), and a
/// write without response is a `send` that fails with `EAGAIN` when bluetoothd has not read the
/// socket's buffer (about 160 values of 510 bytes): bluetoothd reads it as fast as it runs into
/// its own ATT queue, so this is back-pressure from bluetoothd, not from the air. bluetoothd's
/// end is non-blocking: a notification that finds this socket's buffer full is dropped, so the
/// reader drains it on every wake-up, a bounded number of packets at a time, and ``drain()``
/// takes what is there before a read's answer or the link's end is reported.
final class BlueZAcquiredSocket: @unchecked Sendable {
    /// What a non-blocking send did.
    enum SendOutcome: Equatable {
        case sent
        /// The socket's buffer is full: wait for ``whenWritable(_:)``.
        case wouldBlock
        /// bluetoothd closed its end (the link went down) or the send failed.
        case closed(String)
    }

    /// The ATT MTU bluetoothd reported with the socket.
    let mtu: Int
    private let fd: Int32
    private let queue: DispatchQueue
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeWaiter: (() -> Void)?
    private var closed = false

    /// Packets read per wake-up at most, so one busy characteristic cannot starve the queue.
    static let packetsPerWakeUp = 256

    /// Takes ownership of `fd` (a descriptor from the D-Bus reply).
    init(fd: Int32, mtu: Int, queue: DispatchQueue) {
        self.fd = fd
        self.descriptor = Descriptor(fd)
        self.mtu = mtu
        self.queue = queue
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit { close() }

    /// Starts delivering packets (each one value) to `onPacket`, and `onClose` once when
    /// bluetoothd closes its end. Both run on the queue.
    func startReading(_ onPacket: @escaping (Data) -> Void, onClose: @escaping (String) -> Void) {
        guard !closed, readSource == nil else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self else { return }
            for _ in 0..<Self.packetsPerWakeUp {
                guard !self.closed else { return }
                switch self.receive() {
                case .packet(let value): onPacket(value)
                case .empty: return
                case .closed(let reason):
                    self.close()
                    onClose(reason)
                    return
                }
            }
        }
        attach(source)
        readSource = source
        source.resume()
    }

    /// Linux's `POLLRDHUP` (Glibc exports it only under `_GNU_SOURCE`).
    private static let pollReadHangUp: Int16 = 0x2000

    private enum Received {
        case packet(Data)
        /// Nothing to read now.
        case empty
        case closed(String)
    }

    /// One packet, without blocking. A zero-length packet is a legal (empty) notification:
    /// it is end of file only when the peer has hung up.
    private func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return .packet(Data(buffer[0..<count])) }
        if count == 0 {
            var probe = pollfd(fd: fd, events: Self.pollReadHangUp, revents: 0)
            let hungUp = poll(&probe, 1, 0) > 0 && probe.revents & (Self.pollReadHangUp | Int16(POLLHUP)) != 0
            return hungUp ? .closed("bluetoothd closed the socket") : .packet(Data())
        }
        let error = errno
        if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return .empty }
        return .closed(String(cString: strerror(error)))
    }

    /// The packets waiting now, without blocking: at most ``packetsPerWakeUp`` (the reader
    /// takes the rest), or all of them when `completely` (before the socket is closed; its
    /// buffer holds far fewer than the 65,536 taken at most). Read before a reply's event or the link's loss is reported, so nothing that
    /// came first is lost or reported after it.
    func drain(completely: Bool = false) -> [Data] {
        var values: [Data] = []
        let limit = completely ? 65_536 : Self.packetsPerWakeUp
        while !closed, values.count < limit, case .packet(let value) = receive() { values.append(value) }
        return values
    }

    /// Sends one value as one packet, without blocking.
    func send(_ data: Data) -> SendOutcome {
        guard !closed else { return .closed("the socket is closed") }
        let result = data.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        if result == data.count { return .sent }
        if result >= 0 { return .closed("bluetoothd took \(result) of \(data.count) bytes") }
        let error = errno
        if error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS { return .wouldBlock }
        return .closed(String(cString: strerror(error)))
    }

    /// Runs `body` once on the queue when the socket can take a packet again (never once closed).
    func whenWritable(_ body: @escaping () -> Void) {
        guard !closed else { return }
        writeWaiter = body
        guard writeSource == nil else { return }
        // One source per wait: waits are rare next to packets, and a cancelled source is gone.
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self, let source = self.writeSource else { return }
            self.writeSource = nil
            self.cancel(source)
            let waiter = self.writeWaiter
            self.writeWaiter = nil
            waiter?()
        }
        attach(source)
        writeSource = source
        source.resume()
    }

    /// Closes our end: for a notification socket, bluetoothd ends the subscription. A waiting
    /// writer is forgotten, not woken (its owner requeues what waited): waking it here would
    /// run the owner's code inside its own teardown.
    func close() {
        guard !closed else { return }
        closed = true
        if let readSource { cancel(readSource) }
        if let writeSource { cancel(writeSource) }
        readSource = nil
        writeSource = nil
        descriptor.closeWhenUnwatched()
        writeWaiter = nil
    }

    /// The descriptor is closed only once no source watches it (after their cancel handlers),
    /// so a reused number is never watched by mistake. Shared with the handlers, which may run
    /// after this socket is gone.
    private final class Descriptor: @unchecked Sendable {
        let fd: Int32
        private var watchers = 0
        private var closeRequested = false
        init(_ fd: Int32) { self.fd = fd }
        func watch() { watchers += 1 }
        func unwatch() { watchers -= 1; closeIfDone() }
        func closeWhenUnwatched() { closeRequested = true; closeIfDone() }
        private func closeIfDone() {
            guard closeRequested, watchers == 0 else { return }
            closeRequested = false
            _ = Glibc.close(fd)
        }
    }

    private let descriptor: Descriptor

    private func attach(_ source: any DispatchSourceProtocol) {
        let descriptor = self.descriptor
        descriptor.watch()
        source.setCancelHandler { descriptor.unwatch() }
    }

    private func cancel(_ source: any DispatchSourceProtocol) {
        source.cancel()
    }

    var isClosed: Bool { closed }
}
#endif
