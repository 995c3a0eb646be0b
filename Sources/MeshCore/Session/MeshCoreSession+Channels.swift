import Foundation

extension MeshCoreSession {
    /// Sets channel `index` to `name` with `secret` (16 bytes).
    ///
    /// - Throws: ``MeshCoreError/invalidCommand(_:)`` for a secret of another length;
    ///   ``MeshCoreError/commandFailed(command:code:)`` with `notFound` for an index beyond the
    ///   radio's channels.
    public func setChannel(_ index: UInt8, name: String, secret: Data) async throws {
        _ = try await execute(.setChannel(ChannelInfo(index: index, name: name, secret: secret)), expectingOK)
    }

    /// Sets channel `index` to the `#hashtag` channel `name`, whose secret everyone derives
    /// from the name (``MeshChannelSecret/hashtag(_:)``); returns the channel as set.
    @discardableResult
    public func setHashtagChannel(_ index: UInt8, name: String) async throws -> ChannelInfo {
        let tagged = name.hasPrefix("#") ? name : "#" + name
        // The radio keeps 31 bytes of a name: a longer one could not be told from its secret.
        guard tagged.utf8.count < ChannelInfo.nameSize else {
            throw MeshCoreError.invalidCommand(.invalidArgument("the channel name \(tagged) is longer than \(ChannelInfo.nameSize - 1) bytes"))
        }
        let channel = ChannelInfo(index: index, name: tagged, secret: MeshChannelSecret.hashtag(tagged))
        _ = try await execute(.setChannel(channel), expectingOK)
        return channel
    }

    /// Clears channel `index` (an empty name and a zero secret, as the apps do).
    public func removeChannel(_ index: UInt8) async throws {
        try await setChannel(index, name: "", secret: Data(count: MeshChannelSecret.size))
    }

    /// Sets a channel from its record (index, name, 16-byte secret).
    public func setChannel(_ channel: ChannelInfo) async throws {
        _ = try await execute(.setChannel(channel), expectingOK)
    }

    /// The lowest channel slot that is empty (no name, zero secret).
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `tableFull` when every
    ///   slot is in use.
    public func firstFreeChannelSlot() async throws -> UInt8 {
        let info: DeviceInfo
        if let known = deviceInfo { info = known } else { info = try await deviceQuery() }
        let count = info.maxChannels
        for index in 0..<count {
            let channel = try await channel(index)
            if channel.name.isEmpty && channel.secret.allSatisfy({ $0 == 0 }) { return index }
        }
        throw MeshCoreError.commandFailed(command: "\(MeshCoreCommandCode.setChannel)", code: .tableFull)
    }

    /// Sends a binary datagram on a channel (flooded, or along `datagram.path`); it arrives as
    /// ``MeshCoreEvent/channelData(_:)`` on the radios that have the channel.
    ///
    /// - Throws: ``MeshCoreError/invalidCommand(_:)`` for data type 0 or more than
    ///   ``MeshChannelData/maximumPayload`` bytes; ``MeshCoreError/commandFailed(command:code:)``
    ///   with `notFound` for an unknown channel.
    public func sendChannelData(_ datagram: MeshChannelData) async throws {
        _ = try await execute(.sendChannelData(datagram), expectingOK)
    }
}
