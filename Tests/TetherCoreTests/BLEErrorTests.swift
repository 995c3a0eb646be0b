import Foundation
import Testing

@testable import TetherCore

private let sampleUUID = BluetoothUUID(UInt16(0x180D))

/// One value of every `BLEError` case (and every `CentralState` for `bluetoothUnavailable`).
private let everyBLEError: [BLEError] =
    CentralState.allCases.map { BLEError.bluetoothUnavailable($0) } + [
        .deviceNotFound,
        .scanTimeout,
        .connectionTimeout,
        .connectionFailed("boom"),
        .connectionFailed(""),
        .operationTimeout,
        .serviceNotFound(sampleUUID),
        .characteristicNotFound(sampleUUID),
        .notConnected,
        .disconnected(nil),
        .disconnected("peer closed"),
        .pairingFailed(.insufficientAuthentication),
        .pairingFailed(.insufficientAuthorization),
        .pairingFailed(.pairingInformationRemoved),
        .pairingFailed(.insufficientEncryption),
        .writeFailed(.other("w")),
        .readFailed(.other("r")),
        .subscriptionFailed(.other("s")),
        .reconnectFailed(attempts: 3),
        .cancelled,
        .invalidRequest("unknown characteristic"),
    ]

@Suite("BLEError")
struct BLEErrorTests {
    // MARK: PairingFailureReason

    @Test(
        "PairingFailureReason maps the pairing ATT codes",
        arguments: [
            (UInt8(5), PairingFailureReason.insufficientAuthentication),
            (8, .insufficientAuthorization),
            (14, .pairingInformationRemoved),
            (15, .insufficientEncryption),
        ])
    func pairingReasonMapping(code: UInt8, reason: PairingFailureReason) {
        #expect(PairingFailureReason(ATTError(code)) == reason)
    }

    @Test("Only codes 5, 8, 14 and 15 in 0...255 are pairing failures")
    func pairingReasonOnlyFourCodes() {
        let mapped = (0...255).map(UInt8.init).filter { PairingFailureReason(ATTError($0)) != nil }
        #expect(mapped == [5, 8, 14, 15])
    }

    @Test("ATTError.isPairingFailure agrees with PairingFailureReason for every code")
    func isPairingFailureAgrees() {
        let flagged = (0...255).map(UInt8.init).filter { ATTError($0).isPairingFailure }
        #expect(flagged == [5, 8, 14, 15])
        for code in 0...255 {
            let error = ATTError(UInt8(code))
            #expect(error.isPairingFailure == (PairingFailureReason(error) != nil), "code \(code)")
        }
    }

    @Test(
        "Named ATT errors carry the expected codes",
        arguments: [
            (ATTError.insufficientAuthentication, UInt8(0x05), true),
            (.insufficientAuthorization, 0x08, true),
            (.unlikelyError, 0x0E, true),
            (.insufficientEncryption, 0x0F, true),
            (.invalidHandle, 0x01, false),
            (.readNotPermitted, 0x02, false),
            (.writeNotPermitted, 0x03, false),
            (.insufficientEncryptionKeySize, 0x0C, false),
            (.insufficientResources, 0x11, false),
        ])
    func namedATTErrors(error: ATTError, code: UInt8, isPairing: Bool) {
        #expect(error.code == code)
        #expect(error.isPairingFailure == isPairing)
        #expect(error == ATTError(code))
    }

    @Test("ATTError description names the code")
    func attDescription() {
        #expect(ATTError(5).description == "ATT error 5 (insufficientAuthentication)")
        #expect(ATTError(0x80).name == "error0x80")
    }

    // MARK: BLEError.from

    @Test(
        "Pairing ATT errors become pairingFailed",
        arguments: [
            (UInt8(5), PairingFailureReason.insufficientAuthentication),
            (8, .insufficientAuthorization),
            (14, .pairingInformationRemoved),
            (15, .insufficientEncryption),
        ])
    func fromPairingATT(code: UInt8, reason: PairingFailureReason) {
        let mapped = BLEError.from(.att(ATTError(code))) { _ in
            Issue.record("fallback must not be used for a pairing code")
            return .cancelled
        }
        #expect(mapped == .pairingFailed(reason))
    }

    @Test("from(.att(5)) gives pairingFailed(.insufficientAuthentication)")
    func fromATT5() {
        #expect(BLEError.from(.att(ATTError(5)), otherwise: BLEError.writeFailed)
            == .pairingFailed(.insufficientAuthentication))
    }

    @Test("A non-pairing ATT error goes to the fallback with its description", arguments: [UInt8(1), 2, 3, 6, 0x0C, 0x80, 0xFF])
    func fromNonPairingATT(code: UInt8) {
        let att = ATTError(code)
        #expect(BLEError.from(.att(att), otherwise: BLEError.writeFailed) == .writeFailed(.att(att)))
        #expect(BLEError.from(.att(att), otherwise: BLEError.writeFailed).attError == att)
        #expect(BLEError.from(.att(att), otherwise: BLEError.readFailed) == .readFailed(.att(att)))
    }

    @Test("encryptionFailed becomes pairingFailed(.insufficientEncryption)")
    func fromEncryptionFailed() {
        #expect(BLEError.from(.encryptionFailed, otherwise: BLEError.writeFailed)
            == .pairingFailed(.insufficientEncryption))
    }

    @Test("bluetoothUnavailable keeps its state", arguments: CentralState.allCases)
    func fromBluetoothUnavailable(state: CentralState) {
        #expect(BLEError.from(.bluetoothUnavailable(state), otherwise: BLEError.writeFailed)
            == .bluetoothUnavailable(state))
    }

    @Test(
        "Other driver errors go to the fallback with their description",
        arguments: [
            DriverError.connectionTimeout, .peripheralDisconnected, .connectionFailed("refused"),
            .invalidHandle, .other("weird"),
        ])
    func fromOther(error: DriverError) {
        #expect(BLEError.from(error, otherwise: { .connectionFailed($0.description) }) == .connectionFailed(error.description))
    }

    // MARK: Descriptions

    @Test("Every case has a non-empty errorDescription", arguments: everyBLEError)
    func errorDescriptionNonEmpty(error: BLEError) throws {
        let text = try #require(error.errorDescription)
        #expect(!text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        #expect(!error.localizedDescription.isEmpty)
    }

    @Test("Descriptions carry their details")
    func descriptionDetails() {
        #expect(BLEError.serviceNotFound(sampleUUID).errorDescription?.contains("180D") == true)
        #expect(BLEError.characteristicNotFound(sampleUUID).errorDescription?.contains("180D") == true)
        #expect(BLEError.reconnectFailed(attempts: 7).errorDescription?.contains("7") == true)
        #expect(BLEError.pairingFailed(.pairingInformationRemoved).errorDescription?
            .contains("pairingInformationRemoved") == true)
        #expect(BLEError.disconnected(nil).errorDescription == "The device disconnected.")
        #expect(BLEError.disconnected("gone").errorDescription == "The device disconnected: gone.")
        #expect(BLEError.bluetoothUnavailable(.poweredOff).errorDescription == "Bluetooth is turned off.")
        #expect(BLEError.bluetoothUnavailable(.resetting).errorDescription?.contains("resetting") == true)
    }

    @Test("Distinct cases have distinct descriptions")
    func distinctDescriptions() {
        let texts = everyBLEError.compactMap(\.errorDescription)
        #expect(texts.count == everyBLEError.count)
        #expect(Set(texts).count == texts.count)
    }
}
