import NIOCore
import NIOPosix

/// How TCP and serial byte streams are read, on both sides of a MeshCore link (the client
/// transport and the emulator's host): with back-pressure, so a peer that sends faster than
/// its frames are handled is slowed down by the kernel instead of filling our memory.
///
/// Each read takes at most ``readSize`` bytes and at most ``bufferedReads`` reads wait
/// between the socket and the code that handles them; then reading stops until the handler
/// catches up (NIO's `NIOAsyncChannel` with a high/low watermark). Whatever a peer sends, at
/// most `(bufferedReads + 1) × readSize` bytes (144 KiB) of one connection are held before
/// reassembly.
package enum ByteStreamChannel {
    /// The largest single read from a socket or a serial device.
    package static let readSize = 16 * 1024
    /// Reads held for a consumer that has not taken them yet; reading stops at this many.
    package static let bufferedReads = 8

    package typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Wraps a freshly created channel; call it on the channel's event loop, from a
    /// bootstrap's channel initializer.
    package static func wrap(_ channel: any Channel) -> EventLoopFuture<Connection> {
        channel.eventLoop.makeCompletedFuture {
            let options = channel.syncOptions
            try options?.setOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: readSize))
            try options?.setOption(.maxMessagesPerRead, value: 1)
            return try Connection(
                wrappingChannelSynchronously: channel,
                configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: bufferedReads)))
        }
    }

    /// Closes a connection nobody will use. A `Connection` must end through `executeThenClose`
    /// (which finishes its writer): one merely dropped after `channel.close()` traps in NIO's
    /// debug checks ("Deinited NIOAsyncWriter without calling finish()").
    package static func discard(_ connection: Connection) async {
        try? await connection.executeThenClose { _, _ in }
    }
}
