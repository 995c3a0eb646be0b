import Foundation
import MeshCore
import TetherCore
import TetherDBus

/// A public key for seeds (a function, not a global: LeakSanitizer cannot follow a global
/// `Data`'s tagged pointer and would report its bytes as leaked).
private func sampleKey() -> Data { Data((0..<32).map { UInt8($0) }) }

let meshCoreFrames = FuzzTarget(name: "meshcore_frames", seeds: {
    let key = sampleKey()
    return [
        MeshCoreFrame.selfInfo(SelfInfo(publicKey: key, name: "Base")),
        MeshCoreFrame.contact(MeshContact(publicKey: key, type: .chat, name: "Alice", lastAdvert: 1, lastModified: 2)),
        MeshCoreFrame.channelMessage(ChannelMessage(channelIndex: 0, pathLength: 2, timestamp: 1, text: "Bob: hi", snr: 6.25)),
        MeshCoreFrame.sent(SentResult(isFlood: true, expectedAck: 0xA1B2_C3D4, suggestedTimeout: 4000)),
        MeshCoreFrame.currentTime(1_767_225_600), MeshCoreFrame.ok(value: nil), MeshCoreFrame.messageWaiting,
        MeshCoreFrame.advert(publicKey: key), MeshCoreFrame.contactsStart(count: 3), MeshCoreFrame.endOfContacts(lastModified: 9),
    ].map { $0.encoded() }
}, run: { data in
    _ = try? MeshCoreFrame(decoding: data)
})

let meshCoreCommands = FuzzTarget(name: "meshcore_commands", seeds: {
    let commands: [MeshCoreCommand] = [
        .appStart(appName: "Tether"), .deviceQuery(protocolVersion: 3), .getContacts(since: nil), .getContacts(since: 5),
        .getDeviceTime, .setDeviceTime(1_767_225_600), .syncNextMessage, .getChannel(0), .sendSelfAdvert(flood: true),
        .sendChannelTextMessage(channel: 0, timestamp: 1, text: "hello"),
    ]
    return commands.compactMap { try? $0.encoded() }
}, run: { data in
    _ = try? MeshCoreCommand(decoding: data)
})

let meshCoreStream = FuzzTarget(name: "meshcore_stream", seeds: {
    let key = sampleKey()
    let frames = [MeshCoreFrame.currentTime(7), .ok(value: nil), .advert(publicKey: key)]
    return [chunked(frames.reduce(into: Data()) { $0 += MeshCoreStreamFraming.frame($1.encoded(), direction: .fromRadio) }, size: 4)]
}, run: { data in
    var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> = MeshCoreStreamFraming.reassembler(receiving: .fromRadio, idleTimeout: nil)
    let now = ContinuousClock.now
    for chunk in chunks(of: data) {
        for frame in reassembler.push(chunk, at: now) {
            invariant(frame.count <= MeshCoreStreamFraming.maximumFrameLength, "a \(frame.count)-byte frame passed the bound")
            _ = try? MeshCoreFrame(decoding: frame)
        }
    }
})

let dbusMessages = FuzzTarget(name: "dbus_messages", seeds: {
    let messages: [DBusMessage] = [
        .methodCall(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "Get",
                    body: [.string("org.bluez.Adapter1"), .string("Powered")]),
        .signal(path: "/org/bluez/hci0/dev_00_11_22_33_44_55/service0010/char0011", interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                body: [.string("org.bluez.GattCharacteristic1"),
                       .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("Value"), .variant(.bytes(Data([1, 2, 3]))))]),
                       .array(.string, [])]),
    ]
    return messages.compactMap { try? Data($0.encoded(serial: 7)) }
}, run: { data in
    let bytes = [UInt8](data)
    _ = try? DBusMessage.frameLength(prefix: bytes.prefix(16), maximumLength: 1 << 20)
    guard let message = try? DBusMessage.decode(bytes) else { return }
    // What we decoded, we can write; and what we write reads back the same.
    guard let again = try? message.encoded(serial: max(1, message.serial)) else { return }
    invariant((try? DBusMessage.decode(again)) != nil, "a decoded message re-encoded does not decode")
})
