import Foundation
import TetherCore

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

extension MeshCoreSession {
    /// This node's own contact card, to share as ``MeshContactCard/uri``.
    public func ownCard() async throws -> MeshContactCard {
        try await card(.exportContact(publicKey: nil))
    }

    /// The card of the contact with `publicKey`: its last advert as the radio received it, with
    /// the flood path it came over.
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `notFound` for an unknown
    ///   contact, or one the radio never heard advertise (added by hand or from a
    ///   `NEW_ADVERT`); ``MeshCoreError/timeout(command:)`` when the card and its path are too
    ///   long for one frame (the firmware then sends nothing).
    public func exportContact(publicKey: Data) async throws -> MeshContactCard {
        try await card(.exportContact(publicKey: publicKey))
    }

    private func card(_ command: MeshCoreCommand) async throws -> MeshContactCard {
        let packet = try await request(command) { if case .exportedContact(let value) = $0 { value } else { nil } }
        do {
            return try MeshContactCard(packet: packet)
        } catch {
            throw MeshCoreError.malformedReply(command: Self.name(of: command), reason: "\(error)")
        }
    }

    /// Imports a contact card: the radio checks its signature and takes the node as if it had
    /// heard the advert (in manual-add mode it then pushes ``MeshCoreEvent/newAdvert(_:)``
    /// instead of adding it). A card whose signature does not verify is refused here, before
    /// it reaches the radio.
    ///
    /// - Throws: ``MeshCoreError/invalidCommand(_:)`` for a card with a bad signature.
    public func importContact(_ card: MeshContactCard) async throws {
        guard card.advert.isSignatureValid else {
            throw MeshCoreError.invalidCommand(.invalidArgument(
                "the card's signature does not verify for key \(card.advert.publicKey.prefix(6).hexString)"))
        }
        _ = try await execute(.importContact(packet: card.packet), expectingOK)
    }

    /// Adds what a `meshcore://` link shares: a card (imported, so the radio checks it), a
    /// contact by key (added with a flood path; a contact the radio already has is left as it
    /// is), or a channel (set in `channelSlot`, or the first free slot).
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `tableFull` when no
    ///   channel slot is free.
    public func add(_ link: MeshShareLink, channelSlot: UInt8? = nil) async throws {
        switch link {
        case .card(let card):
            try await importContact(card)
        case .contact(let name, let publicKey, let type):
            // Its path, flags and last advert stay as the radio has them.
            guard try await contact(publicKey: publicKey) == nil else { return }
            try await addOrUpdateContact(MeshContact(publicKey: publicKey, type: type, name: name))
        case .channel(let name, let secret):
            if let channelSlot {
                try await setChannel(ChannelInfo(index: channelSlot, name: name, secret: secret))
                return
            }
            // Finding the free slot and taking it must not interleave with another such pair.
            try await exclusively {
                let slot = try await self.firstFreeChannelSlot()
                try await self.setChannel(ChannelInfo(index: slot, name: name, secret: secret))
            }
        }
    }

    /// The route of the contact's latest advert, nil when the radio has not kept it (it keeps
    /// the last 16 adverts, in memory only).
    public func advertPath(publicKey: Data) async throws -> MeshAdvertPath? {
        do {
            return try await request(.getAdvertPath(publicKey: publicKey)) { if case .advertPath(let value) = $0 { value } else { nil } }
        } catch MeshCoreError.commandFailed(_, .notFound) {
            return nil
        }
    }

    /// Ends the session with a repeater or room server (the radio stops its keep-alives).
    public func logout(publicKey: Data) async throws {
        _ = try await execute(.logout(publicKey: publicKey), expectingOK)
    }
}
