import Foundation

@testable import Kiro

/// Bytes from hex text such as `"05 00 06 1A"`; spaces and newlines are ignored. Test vectors are
/// written out by hand in this form so they do not depend on the encoder.
func protocolHex(_ text: String) -> Data {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd number of hex digits in a test vector")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return Data(bytes)
}

/// The ASCII bytes of `text` with a one-byte length in front, for readable vectors.
func protocolLengthPrefixed(_ text: String) -> [UInt8] {
    let bytes = Array(text.utf8)
    return [UInt8(bytes.count)] + bytes
}

extension KiroEventDecoder {
    /// ``decode(_:)`` as a value to compare.
    func decodeResult(_ packet: Data) -> Result<KiroEvent, KiroEventDecodeError> {
        Result { () throws(KiroEventDecodeError) in try decode(packet) }
    }

    /// The event in `packet`, nil when there is none.
    func event(_ packet: Data) -> KiroEvent? { try? decode(packet) }

    /// The events of ``decodeAll(_:)``, rejected packets left out.
    func events(_ data: Data) -> [KiroEvent] { decodeAll(data).compactMap { try? $0.get() } }

    /// The rejections of ``decodeAll(_:)``.
    func rejections(_ data: Data) -> [KiroEventDecodeError] {
        decodeAll(data).compactMap { if case .failure(let error) = $0 { error } else { nil } }
    }
}

extension Result {
    /// The error of a failure.
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
