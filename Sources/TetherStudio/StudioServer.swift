#if os(macOS) || os(Linux)
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// Tether Studio's web server: the page (HTML, CSS, JS from the package's resources) and one
/// WebSocket, `/ws`, speaking the studio protocol (`docs/studio-protocol.md`).
public enum StudioServer {
    /// The largest WebSocket message a page may send.
    public static let maximumMessage = StudioRequest.maximumSize

    /// The folder the page is served from.
    public static var webRoot: String {
        Bundle.module.url(forResource: "Web", withExtension: nil)?.path ?? Bundle.module.bundlePath + "/Web"
    }

    /// An application serving `hub` on `host`:`port` (0: any free port); `onListening` is told
    /// the port once the server listens. `hosts` are the names requests may use (by default
    /// loopback's and `host` itself).
    public static func makeApplication(
        host: String,
        port: Int,
        hub: StudioHub,
        hosts: StudioHosts? = nil,
        logger: Logger = Logger(label: "tether.studio"),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let hosts = hosts ?? .serving(host)
        let router = Router()
        router.add(middleware: StudioGuard(hosts: hosts))
        router.add(middleware: FileMiddleware(
            webRoot,
            cacheControl: CacheControl([(MediaType(type: .any), [.noCache])]),
            searchForIndexHtml: true,
            logger: logger))
        router.get("/export/:device/:name") { request, context -> Response in
            let device = context.parameters.get("device") ?? ""
            let name = context.parameters.get("name") ?? ""
            // Names the screens make: letters, digits, '-', '_' and '.' only.
            let allowed = { (text: String) in
                !text.isEmpty && text.count <= 80 && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
            }
            guard allowed(device), allowed(name) else {
                return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: "not an export name\n")))
            }
            do throws(StudioProtocolError) {
                let export = try await hub.export(device: device, name: name)
                var headers = HTTPFields()
                headers[.contentType] = export.contentType
                headers[.contentDisposition] = "attachment; filename=\"\(export.fileName)\""
                headers[.cacheControl] = "no-store"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: export.body)))
            } catch {
                return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: error.message + "\n")))
            }
        }
        let sockets = Router(context: BasicWebSocketRequestContext.self)
        sockets.ws("/ws") { request, _ in
            // Any web page the browser shows may open ws://127.0.0.1: only the studio's own
            // page (same host and port) may (a browser always sends Origin), and only under a
            // name of this machine (a page whose name was rebound to 127.0.0.1 may not).
            let origins = request.headers[values: .origin]
            guard hosts.allows(authority: request.head.authority),
                  origins.allSatisfy({ StudioOrigin.isAllowed($0, authority: request.head.authority) }) else {
                return .dontUpgrade
            }
            return .upgrade()
        } onUpgrade: { inbound, outbound, context in
            try await serve(hub: hub, inbound: inbound, outbound: outbound, logger: context.logger)
        }
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: sockets, configuration: .init(ws: .init(maxFrameSize: maximumMessage))),
            configuration: .init(address: .hostname(host, port: port), serverName: "Tether Studio"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// One page's WebSocket: a reader carrying out its requests and the only writer draining
    /// its bounded outbox. Returns when either ends.
    static func serve(hub: StudioHub, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger) async throws {
        guard let id = await hub.join() else {
            try await outbound.close(.policyViolation, reason: "too many studio pages open")
            return
        }
        let failure: (any Error)? = await withThrowingTaskGroup(of: Void.self) { group -> (any Error)? in
            group.addTask {
                // A write waits while the socket cannot take more: the page's outbox (bounded,
                // a screen's state coalesced to its newest) is what fills up, and the hub
                // drops the page when it is full.
                while let text = await hub.next(for: id) {
                    try await outbound.write(.text(text))
                }
                if await hub.wasTooSlow(id) {
                    try await outbound.close(.policyViolation, reason: "the page read too slowly")
                }
            }
            group.addTask {
                // Keeps reading (pings are answered while it does).
                for try await message in inbound.messages(maxSize: maximumMessage) {
                    guard case .text(let text) = message else {
                        await hub.refuse("binary messages are not part of the studio protocol", to: id)
                        continue
                    }
                    await hub.handle(text, from: id)
                }
            }
            defer { group.cancelAll() }
            do {
                _ = try await group.next()
                return nil
            } catch is CancellationError {
                return nil
            } catch {
                logger.debug("studio page \(id): \(error)")
                return error
            }
        }
        await hub.leave(id)
        // Rethrown so the WebSocket layer closes with the matching code (too large, protocol).
        if let failure { throw failure }
    }
}

/// The host names the studio answers to. Bound to loopback, only this machine's names: a web
/// page whose own name an attacker's DNS rebound to 127.0.0.1 would otherwise pass as the
/// studio's own page (same origin) and drive the devices.
public struct StudioHosts: Sendable {
    private let names: Set<String>?

    /// Loopback's names (`localhost`, 127.0.0.0/8, `::1`) and `bindHost`; any name when
    /// `bindHost` is not loopback (the user allowed remote access, and was warned).
    public static func serving(_ bindHost: String) -> StudioHosts {
        let host = Self.strip(bindHost.lowercased())
        guard Self.isLoopback(host) else { return StudioHosts(names: nil) }
        return StudioHosts(names: ["localhost", "::1", host])
    }

    /// Whether a request to `authority` (`Host`, with or without a port) may be answered.
    public func allows(authority: String?) -> Bool {
        guard let names else { return true }
        guard let authority, let host = Self.host(of: authority) else { return false }
        return names.contains(host) || Self.isIPv4Loopback(host)
    }

    /// Whether `host` names this machine only: `localhost`, an address in 127.0.0.0/8, `::1`.
    public static func isLoopback(_ host: String) -> Bool {
        let host = strip(host.lowercased())
        return host == "localhost" || host == "::1" || isIPv4Loopback(host)
    }

    private static func isIPv4Loopback(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in part.count <= 3 && !part.isEmpty && part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }

    private static func strip(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The host of `host[:port]` or `[v6]:port`, lowercased.
    private static func host(of authority: String) -> String? {
        let lower = authority.lowercased()
        if lower.hasPrefix("[") {
            guard let end = lower.firstIndex(of: "]") else { return nil }
            return String(lower[lower.index(after: lower.startIndex)..<end])
        }
        return lower.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
    }
}

/// Refuses requests under a foreign host name (403), and sets the headers that keep the page
/// out of other sites' frames and its files from being read as something else.
struct StudioGuard<Context: RequestContext>: RouterMiddleware {
    let hosts: StudioHosts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard hosts.allows(authority: request.head.authority) else {
            return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "Tether Studio answers only to this machine's names.\n")))
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        // (HTTPTypes' names, reached through the headers' own type.)
        response.headers[.init("X-Frame-Options")!] = "DENY"
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Content-Security-Policy")!] = "default-src 'self'; connect-src 'self'; frame-ancestors 'none'"
        return response
    }
}

/// Whether a WebSocket's `Origin` is the studio's own page.
enum StudioOrigin {
    /// True when `origin` names the host and port the request was made to. A browser's page
    /// sends its own `http(s)` origin (or `null`, from a file or a sandbox: refused); a client
    /// that is not a browser may name the socket itself (`ws://host`), which no page can.
    static func isAllowed(_ origin: String, authority: String?) -> Bool {
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased() else { return false }
        if scheme == "ws" || scheme == "wss" { return true }
        guard let authority, let host = url.host, scheme == "http" || scheme == "https" else { return false }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let candidates = ["\(bracketed):\(port)"] + ((scheme == "http" && port == 80) || (scheme == "https" && port == 443) ? [bracketed] : [])
        return candidates.contains { $0.caseInsensitiveCompare(authority) == .orderedSame }
    }
}
#endif
