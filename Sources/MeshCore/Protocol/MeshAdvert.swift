import Crypto
import Foundation

/// A node's signed advertisement: the payload of an ADVERT packet, what contact cards carry.
///
/// Layout: public key 32, timestamp `UInt32`, Ed25519 signature 64, app data (at most 32
/// bytes, ``MeshAdvertData``). The signature covers key ‖ timestamp ‖ app data, so a card
/// cannot be altered (a name changed, a position moved) without ``isSignatureValid`` failing.
public struct MeshAdvert: Sendable, Hashable {
    /// The length of the signature.
    public static let signatureSize = 64
    /// The longest app data.
    public static let maximumAppDataSize = 32
    /// The fixed part: key, timestamp, signature.
    static let fixedSize = MeshContact.publicKeySize + 4 + signatureSize

    /// The advertiser's 32-byte public key.
    public var publicKey: Data
    /// When the advert was made (seconds since 1970, the advertiser's clock); a radio takes a
    /// node's advert only if it is newer than the last one it has.
    public var timestamp: UInt32
    /// The Ed25519 signature.
    public var signature: Data
    /// The app data exactly as signed.
    public var appDataBytes: Data

    /// Creates an advert from its parts (``isSignatureValid`` says whether they agree).
    public init(publicKey: Data, timestamp: UInt32, signature: Data, appDataBytes: Data) {
        self.publicKey = publicKey
        self.timestamp = timestamp
        self.signature = signature
        self.appDataBytes = appDataBytes
    }

    /// Makes and signs an advert with `signingKey` (its public key becomes the advertiser's).
    ///
    /// - Throws: ``MeshCoreEncodeError/invalidArgument(_:)`` if signing fails.
    public init(signingKey: Curve25519.Signing.PrivateKey, timestamp: UInt32, data: MeshAdvertData) throws(MeshCoreEncodeError) {
        let publicKey = signingKey.publicKey.rawRepresentation
        let appData = data.encoded()
        do {
            let signature = try signingKey.signature(for: Self.signedMessage(publicKey: publicKey, timestamp: timestamp, appData: appData))
            self.init(publicKey: publicKey, timestamp: timestamp, signature: Data(signature), appDataBytes: appData)
        } catch {
            throw .invalidArgument("signing the advert failed: \(error)")
        }
    }

    /// The app data, decoded leniently (see ``MeshAdvertData/init(decoding:)``).
    public var data: MeshAdvertData { MeshAdvertData(decoding: appDataBytes) }

    /// Whether the signature is the advertiser's over this key, timestamp and app data.
    public var isSignatureValid: Bool {
        guard publicKey.count == MeshContact.publicKeySize, signature.count == Self.signatureSize,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        else { return false }
        return key.isValidSignature(
            signature, for: Self.signedMessage(publicKey: publicKey, timestamp: timestamp, appData: appDataBytes))
    }

    /// The contact a radio would store from this advert (flood path, no modification time).
    public var contact: MeshContact {
        let data = data
        return MeshContact(
            publicKey: publicKey, type: data.type, name: data.name ?? "", lastAdvert: timestamp,
            latitude: data.latitude ?? 0, longitude: data.longitude ?? 0)
    }

    /// The payload bytes: key, timestamp, signature, app data.
    public var payload: Data {
        var writer = ByteWriter(capacity: Self.fixedSize + appDataBytes.count)
        writer.bytes(publicKey, fixed: MeshContact.publicKeySize)
        writer.u32(timestamp)
        writer.bytes(signature, fixed: Self.signatureSize)
        writer.bytes(Data(appDataBytes.prefix(Self.maximumAppDataSize)))
        return writer.data
    }

    /// Parses an advert payload.
    ///
    /// - Throws: ``MeshCoreDecodeError`` for a payload shorter than key, timestamp and
    ///   signature, or app data over 32 bytes.
    public init(payload: Data) throws(MeshCoreDecodeError) {
        var reader = ByteReader(payload, code: MeshPacketHeader.PayloadType.advert.rawValue, offset: 0)
        let publicKey = try reader.bytes(MeshContact.publicKeySize)
        let timestamp = try reader.u32()
        let signature = try reader.bytes(Self.signatureSize)
        let appData = reader.rest()
        guard appData.count <= Self.maximumAppDataSize else {
            throw .malformed(code: reader.code, reason: "advert app data of \(appData.count) bytes (at most \(Self.maximumAppDataSize))")
        }
        self.init(publicKey: publicKey, timestamp: timestamp, signature: signature, appDataBytes: appData)
    }

    static func signedMessage(publicKey: Data, timestamp: UInt32, appData: Data) -> Data {
        var writer = ByteWriter(capacity: MeshContact.publicKeySize + 4 + appData.count)
        writer.bytes(publicKey)
        writer.u32(timestamp)
        writer.bytes(appData)
        return writer.data
    }
}

/// What an advert says about its node: kind, position, feature words and name.
///
/// Layout: flags (low nibble the node type; 0x10 position, 0x20 feature 1, 0x40 feature 2,
/// 0x80 name), then latitude and longitude (`Int32` × 10⁶), the feature words (`UInt16`) and
/// the name (the rest, no NUL), each only when its flag is set.
public struct MeshAdvertData: Sendable, Hashable {
    /// The kind of node.
    public var type: MeshContactType
    /// The latitude in degrees, when the node shares its position.
    public var latitude: Double?
    /// The longitude in degrees, when the node shares its position.
    public var longitude: Double?
    /// Feature word 1, if present.
    public var feature1: UInt16?
    /// Feature word 2, if present.
    public var feature2: UInt16?
    /// The node's name, if present; cut to the bytes left in the 32 (31 without a position,
    /// 23 with one).
    public var name: String?

    /// Creates app data.
    public init(
        type: MeshContactType, latitude: Double? = nil, longitude: Double? = nil, feature1: UInt16? = nil,
        feature2: UInt16? = nil, name: String? = nil
    ) {
        self.type = type
        self.latitude = latitude
        self.longitude = longitude
        self.feature1 = feature1
        self.feature2 = feature2
        self.name = name
    }

    /// Decodes app data leniently: a field cut short is left out, an invalid UTF-8 name is
    /// repaired with replacement characters.
    public init(decoding bytes: Data) {
        var reader = ByteReader(bytes, code: MeshPacketHeader.PayloadType.advert.rawValue, offset: 0)
        let flags = (try? reader.u8()) ?? 0
        type = MeshContactType(rawValue: flags & 0x0F)
        if flags & 0x10 != 0, reader.remaining >= 8, let lat = try? reader.i32(), let lon = try? reader.i32() {
            latitude = Double(lat) / 1e6
            longitude = Double(lon) / 1e6
        }
        if flags & 0x20 != 0 { feature1 = try? reader.u16() }
        if flags & 0x40 != 0 { feature2 = try? reader.u16() }
        if flags & 0x80 != 0 { name = reader.restString() }
    }

    /// The encoded bytes (at most 32: the name is cut on a character boundary to fit).
    public func encoded() -> Data {
        var flags = type.rawValue & 0x0F
        var writer = ByteWriter(capacity: MeshAdvert.maximumAppDataSize)
        let hasPosition = latitude != nil && longitude != nil
        if hasPosition { flags |= 0x10 }
        if feature1 != nil { flags |= 0x20 }
        if feature2 != nil { flags |= 0x40 }
        if name != nil { flags |= 0x80 }
        writer.u8(flags)
        if hasPosition, let latitude, let longitude {
            writer.i32(MeshCoreFixedPoint.int32(latitude, scale: 1e6))
            writer.i32(MeshCoreFixedPoint.int32(longitude, scale: 1e6))
        }
        if let feature1 { writer.u16(feature1) }
        if let feature2 { writer.u16(feature2) }
        if let name {
            writer.bytes(MeshCoreText.utf8(name, maxBytes: MeshAdvert.maximumAppDataSize - writer.data.count))
        }
        return writer.data
    }
}

/// The first byte of a mesh packet: route type (bits 0–1), payload type (bits 2–5) and
/// payload version (bits 6–7).
package enum MeshPacketHeader {
    /// How a packet travels.
    package enum RouteType: UInt8 {
        case transportFlood = 0, flood = 1, direct = 2, transportDirect = 3
    }

    /// What a packet carries (the types contact sharing needs).
    package enum PayloadType: UInt8 {
        case advert = 4
    }

    package static func make(route: RouteType, payload: PayloadType) -> UInt8 {
        payload.rawValue << 2 | route.rawValue
    }
}
