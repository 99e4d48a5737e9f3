import Crypto
import CryptoExtras
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `PageCipher` with swift-crypto: AES-256-CTR for the node, HMAC-SHA256 (cut to 16 bytes)
/// for the tag, encrypt-then-MAC. The 64-byte key is the AES key, then the HMAC key.
///
/// The counter block of an extent is `salt (8) ‖ page number (4, big-endian) ‖ block (4)`:
/// the salt is new on every write, so two writes of one page never share a keystream, and
/// the page number keeps two pages that drew the same salt apart.
final class AESPageCipher: PageCipher, @unchecked Sendable {
    let fileSalt: [UInt8]
    private let aesKey: SymmetricKey
    private let macKey: SymmetricKey

    static let keyLength = 64
    static let fileSaltLength = 16

    init(key: [UInt8], fileSalt: [UInt8]) {
        precondition(key.count == AESPageCipher.keyLength && fileSalt.count == AESPageCipher.fileSaltLength)
        aesKey = SymmetricKey(data: key[0..<32])
        macKey = SymmetricKey(data: key[32..<64])
        self.fileSalt = fileSalt
    }

    func seal(_ logical: UnsafeRawBufferPointer, offset: UInt64, into physical: UnsafeMutableRawBufferPointer) {
        precondition(physical.count == logical.count + PageEnvelope.size && physical.count % Layout.pageSize == 0)
        let span = physical.count / Layout.pageSize
        let salt: UInt64 = BrokenVariant.on(.fixedSalt) ? 0 : UInt64.random(in: 0...UInt64.max)
        let ciphertext = crypt(logical, salt: salt, offset: offset)
        let body = UnsafeMutableRawBufferPointer(rebasing: physical[PageEnvelope.size...])
        ciphertext.withUnsafeBytes { body.copy($0, at: 0) }
        physical.setU64(salt, at: PageEnvelope.saltOffset)
        physical.setU32(UInt32(span), at: PageEnvelope.spanOffset)
        physical.setU32(0, at: PageEnvelope.spanOffset + 4)
        let t = tag(offset: offset, span: span, salt: salt, ciphertext: UnsafeRawBufferPointer(body))
        t.withUnsafeBytes { physical.copy($0, at: 0) }
    }

    func open(_ physical: UnsafeRawBufferPointer, offset: UInt64, into logical: UnsafeMutableRawBufferPointer) -> Bool {
        guard physical.count >= Layout.pageSize, physical.count % Layout.pageSize == 0,
            logical.count == physical.count - PageEnvelope.size
        else { return false }
        let span = physical.count / Layout.pageSize
        guard physical.u32(PageEnvelope.spanOffset) == UInt32(span) else { return false }
        let salt = physical.u64(PageEnvelope.saltOffset)
        let body = UnsafeRawBufferPointer(rebasing: physical[PageEnvelope.size...])
        if !BrokenVariant.on(.skipMAC) {
            let expected = tag(offset: offset, span: span, salt: salt, ciphertext: body)
            let matches = expected.withUnsafeBytes { e in
                var diff: UInt8 = 0
                for i in 0..<PageEnvelope.tagSize { diff |= e[i] ^ physical[i] }
                return diff == 0
            }
            guard matches else { return false }
        }
        crypt(body, salt: salt, offset: offset).withUnsafeBytes { logical.copy($0, at: 0) }
        return true
    }

    func keyCheck() -> [UInt8] {
        var h = HMAC<SHA256>(key: macKey)
        h.update(data: Array("fief key check".utf8))
        h.update(data: fileSalt)
        return Array(Array(h.finalize()).prefix(16))
    }

    /// AES-256-CTR: the same operation encrypts and decrypts.
    private func crypt(_ input: UnsafeRawBufferPointer, salt: UInt64, offset: UInt64) -> Data {
        var counter = [UInt8](repeating: 0, count: 16)
        counter.withUnsafeMutableBytes { c in
            c.setU64(salt, at: 0)
            c.storeBytes(
                of: UInt32(truncatingIfNeeded: offset / UInt64(Layout.pageSize)).bigEndian, toByteOffset: 8,
                as: UInt32.self)
        }
        // Only a key of the wrong size or a nonce of the wrong length can fail, and both are fixed here.
        let nonce = try! AES._CTR.Nonce(nonceBytes: counter)
        return try! AES._CTR.encrypt(input, using: aesKey, nonce: nonce)
    }

    private func tag(offset: UInt64, span: Int, salt: UInt64, ciphertext: UnsafeRawBufferPointer) -> [UInt8] {
        var fields = [UInt8](repeating: 0, count: 20)
        fields.withUnsafeMutableBytes { f in
            f.setU64(offset, at: 0); f.setU32(UInt32(span), at: 8); f.setU64(salt, at: 12)
        }
        var h = HMAC<SHA256>(key: macKey)
        h.update(data: fileSalt)
        h.update(data: fields)
        h.update(data: ciphertext)
        return Array(Array(h.finalize()).prefix(PageEnvelope.tagSize))
    }
}
