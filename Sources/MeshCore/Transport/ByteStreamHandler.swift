import Foundation
import NIOCore

/// What a byte-stream channel reports: bytes as they arrive, then its end.
enum ByteStreamEvent: Sendable {
    case bytes(Data)
    case closed((any Error)?)
}

/// Forwards a NIO channel's inbound bytes and its closing to an `AsyncStream`, in order, on
/// the channel's event loop (no task per read), so an actor can consume them.
///
/// Shared by the TCP/serial client transport and the emulator's TCP/serial host.
final class ByteStreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let continuation: AsyncStream<ByteStreamEvent>.Continuation
    private var error: (any Error)?

    init(_ continuation: AsyncStream<ByteStreamEvent>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if let bytes = buffer.readBytes(length: buffer.readableBytes), !bytes.isEmpty {
            continuation.yield(.bytes(Data(bytes)))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.error = error
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.yield(.closed(error))
        continuation.finish()
        context.fireChannelInactive()
    }

    /// Makes a stream and the continuation a handler feeds (unbounded: the consumer drains it
    /// at once into a bounded reassembler). Create the handler on the channel's event loop.
    static func makeStream() -> (AsyncStream<ByteStreamEvent>, AsyncStream<ByteStreamEvent>.Continuation) {
        AsyncStream.makeStream(of: ByteStreamEvent.self)
    }
}
