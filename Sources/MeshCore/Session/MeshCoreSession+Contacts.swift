import Foundation

extension MeshCoreSession {
    /// Adds `contact` to the radio's table, or replaces the one with its public key. The radio
    /// stamps the modification time (so `contacts(since:)` lists the change).
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `tableFull` when the
    ///   table has no room.
    public func addOrUpdateContact(_ contact: MeshContact) async throws {
        _ = try await execute(.addUpdateContact(contact), expectingOK)
    }

    /// Removes the contact with `publicKey` (32 bytes) from the radio.
    public func removeContact(publicKey: Data) async throws {
        _ = try await execute(.removeContact(publicKey: publicKey), expectingOK)
    }

    /// Forgets the route to the contact with `publicKey`: messages to it flood again until the
    /// mesh finds a new path (what the apps do after failed direct attempts).
    public func resetPath(publicKey: Data) async throws {
        _ = try await execute(.resetPath(publicKey: publicKey), expectingOK)
    }

    /// Sends the contact's last advert again, zero-hop, so nodes nearby learn it.
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `notFound` for an unknown
    ///   contact, `tableFull` when the radio keeps no advert of it.
    public func shareContact(publicKey: Data) async throws {
        _ = try await execute(.shareContact(publicKey: publicKey), expectingOK)
    }

    /// The radio's record of the contact with `publicKey`, or nil when it has none.
    public func contact(publicKey: Data) async throws -> MeshContact? {
        do {
            let frames = try await execute(.getContactByKey(publicKey: publicKey)) {
                if case .contact = $0 { .complete } else { .notMine }
            }
            guard case .contact(let contact)? = frames.last else { throw MeshCoreError.transport("no CONTACT") }
            return contact
        } catch MeshCoreError.commandFailed(_, .notFound) {
            return nil
        }
    }
}
