import Crypto
import Foundation

extension MeshCoreSession {
    /// Statistics of one kind (protocol 8 and later).
    public func stats(_ kind: MeshStatsKind) async throws -> MeshStats {
        try await request(.getStats(kind)) { if case .stats(let value) = $0, value.kind == kind.rawValue { value } else { nil } }
    }

    /// Reboots the radio. It does not answer: the link drops, and the session must be started
    /// again once the radio is back (a ``ConnectionManager`` does that by itself).
    public func reboot() async throws {
        try await sendUnanswered(.reboot)
    }

    /// Erases everything on the radio (identity, contacts, channels, settings) and reboots it.
    /// There is no undo; export the private key first to keep the node's identity.
    public func factoryReset() async throws {
        try await sendUnanswered(.factoryReset)
    }

    /// The node's 64-byte private key (whoever holds it is this node: handle it as a secret).
    /// MeshCore firmware exports its expanded Ed25519 key (the SHA-512 of the seed, clamped);
    /// Tether's emulated radio exports seed and public key instead (see the emulator's
    /// documentation). Either imports back into the radio that made it.
    ///
    /// - Throws: ``MeshCoreError/disabled(command:)`` on firmware built without key export.
    public func exportPrivateKey() async throws -> Data {
        try await request(.exportPrivateKey) { if case .privateKey(let value) = $0 { value } else { nil } }
    }

    /// Replaces the node's identity with a 64-byte private key exported from a radio (the
    /// public key follows from it). Contacts stay; their shared secrets are recomputed.
    public func importPrivateKey(_ key: Data) async throws {
        _ = try await execute(.importPrivateKey(key), expectingOK)
    }

    /// Signs `data` with the node's key: `SIGN_START`, `SIGN_DATA` in chunks, `SIGN_FINISH`.
    /// Returns the 64-byte Ed25519 signature, which ``verify(signature:of:publicKey:)`` checks.
    ///
    /// - Parameters:
    ///   - data: What to sign.
    ///   - chunkSize: Bytes per `SIGN_DATA` frame (1 to 175).
    /// - Throws: ``MeshCoreError/invalidCommand(_:)`` when `data` is longer than the radio
    ///   signs (it says how much in its `SIGN_START` reply; 8 KiB on current firmware).
    public func sign(_ data: Data, chunkSize: Int = 128) async throws -> Data {
        // The radio has one signing buffer: a second signing must wait for this one.
        try await exclusively { try await self.signExclusively(data, chunkSize: chunkSize) }
    }

    private func signExclusively(_ data: Data, chunkSize: Int) async throws -> Data {
        let maximum = try await request(.signStart) { if case .signStart(let value) = $0 { value } else { nil } }
        guard data.count <= Int(maximum) else {
            throw MeshCoreError.invalidCommand(.invalidArgument("the radio signs at most \(maximum) bytes, got \(data.count)"))
        }
        let size = min(max(chunkSize, 1), MeshCoreFrameLimits.maximumFrameSize - 1)
        var offset = data.startIndex
        while offset < data.endIndex {
            let end = min(offset + size, data.endIndex)
            _ = try await execute(.signData(Data(data[offset..<end])), expectingOK)
            offset = end
        }
        return try await request(.signFinish) { if case .signature(let value) = $0 { value } else { nil } }
    }

    /// Runs a command line on the radio itself (protocol 14 and later; older firmware refuses
    /// it with `unsupportedCommand`) and returns its reply.
    public func runLocalCommand(_ line: String) async throws -> String {
        try await request(.runCLICommand(line)) { if case .cliReply(let text) = $0 { text } else { nil } }
    }

    /// Sends a raw custom packet along `path` (hop hashes; raw data is never flooded); the node
    /// at the route's end gets it as ``MeshCoreFrame/rawData(snr:rssi:payload:)``.
    public func sendRawData(_ payload: Data, path: Data) async throws {
        _ = try await execute(.sendRawData(path: path, payload: payload), expectingOK)
    }

    /// Hands the radio a whole mesh packet to transmit (header, path length, path, payload),
    /// for tools that build packets themselves.
    public func sendRawPacket(_ packet: Data, priority: UInt8 = 0) async throws {
        _ = try await execute(.sendRawPacket(priority: priority, packet: packet), expectingOK)
    }

    /// Whether `signature` is a node's Ed25519 signature of `data`.
    public nonisolated static func verify(signature: Data, of data: Data, publicKey: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: data)
    }
}
