/// The plaintext start of every page, or multi-page extent, of an encrypted file (format 3):
///
///     tag [16] | salt u64 | span u32 | zero u32
///
/// `tag` is HMAC-SHA256, cut to 16 bytes, over (file salt, byte offset, span, salt,
/// ciphertext); `salt` is random and new on every write, so a page written twice never
/// reuses a keystream. The node that follows — the usual page header and cells — is
/// encrypted, and is 32 bytes shorter than a plain page (`PageGeometry.encrypted`).
package enum PageEnvelope {
    package static let size = 32
    package static let tagSize = 16
    package static let saltOffset = 16
    package static let spanOffset = 24
}

/// Seals and opens the pages of one encrypted file. The engine never sees a key: it hands
/// logical bytes (a node) and gets physical bytes (envelope + ciphertext), and back.
/// swift-crypto implements it today (`AESPageCipher`); a cipher over the system's libcrypto
/// could replace it without a format change.
protocol PageCipher: AnyObject, Sendable {
    /// The file's random salt, bound into every tag: a page copied from another file fails.
    var fileSalt: [UInt8] { get }
    /// Encrypts `logical` (`span` pages less the envelope) into `physical` (`span` pages),
    /// for the extent at byte `offset`.
    func seal(_ logical: UnsafeRawBufferPointer, offset: UInt64, into physical: UnsafeMutableRawBufferPointer)
    /// Authenticates `physical` as the extent at `offset` and decrypts it into `logical`.
    /// False, with `logical` untouched, when the tag does not match.
    func open(_ physical: UnsafeRawBufferPointer, offset: UInt64, into logical: UnsafeMutableRawBufferPointer) -> Bool
    /// A value stored in the header that proves a key is this file's, without reading a page.
    func keyCheck() -> [UInt8]
}

/// How a file's pages are laid out. A plain page (format 2) is all node. An encrypted
/// page (format 3) starts with a `PageEnvelope`; its node is the rest, so everything sized
/// by the page — node capacity, cells packed from the page's end — uses `pageBytes`.
struct PageGeometry: Equatable, Sendable {
    let envelope: Int

    static let plain = PageGeometry(envelope: 0)
    static let encrypted = PageGeometry(envelope: PageEnvelope.size)

    /// The bytes of a node in one page.
    var pageBytes: Int { Layout.pageSize - envelope }
    var nodeCapacity: Int { pageBytes - Layout.pageHeaderSize }
    /// The node bytes of an extent of `span` pages.
    func extentBytes(span: Int) -> Int { span * Layout.pageSize - envelope }
    /// Pages an extent needs for a node of `bytes` bytes (header included).
    func span(forNodeBytes bytes: Int) -> Int { Layout.pages(forBytes: envelope + bytes) }
}
