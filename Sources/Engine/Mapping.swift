#if canImport(Glibc)
    import Glibc
#endif
import CFiefSys

/// A read-only shared mapping of the database file. It reserves far more address space than
/// the file needs, so the file can grow under it without a remap; when it outgrows even that,
/// a new, larger `Mapping` replaces it for new snapshots while old snapshots keep the old one
/// alive (it is reference counted), so no reader ever sees a remap tear.
final class Mapping: @unchecked Sendable {
    let base: UnsafeRawPointer
    let length: Int

    static let minimumReservation = 1 << 34  // 16 GiB of address space, not memory

    init(fd: Int32, path: String, covering size: UInt64) throws {
        var len = Mapping.minimumReservation
        while UInt64(len) < size * 2 { len *= 2 }
        let p = mmap(nil, len, PROT_READ, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else {
            throw EngineError.io(path: path, operation: "mmap", errno: errno)
        }
        base = UnsafeRawPointer(p)
        length = len
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }
}

/// Pages of one version of the file: a mapping plus the number of bytes that version may
/// reference. Refs outside that range are corruption, reported, never dereferenced. In an
/// encrypted file every page comes authenticated and decrypted from `encrypted`; a plain
/// file's pages are the mapping itself.
///
/// Immutable, and a class: a transaction hands it to every get, and copying a struct with
/// an optional class field in it went through that field's value witness (a metadata
/// lookup and two indirect calls per get); a class reference is one retain.
final class PageSource: @unchecked Sendable {
    let mapping: Mapping
    let limit: UInt64
    /// Check every node's checksum as it is read (`DatabaseOptions.verifyChecksums`), so a
    /// page the storage returned damaged is an error, never data. (Encrypted pages are
    /// always authenticated, which is stronger.)
    let verifyChecksums: Bool
    let encrypted: EncryptedPages?
    /// `encrypted`, unretained (this source holds it): bound with `if let`, it was an atomic
    /// retain and release per page read of an encrypted file.
    private let encryptedRef: Unmanaged<EncryptedPages>?
    /// The one ref that may point inside a page: the version's catalog leaf, embedded in its
    /// top node (`Meta`); 0 when there is none. Any other misaligned ref is corruption.
    let embeddedCatalog: UInt64

    init(
        mapping: Mapping, limit: UInt64, verifyChecksums: Bool = false, encrypted: EncryptedPages? = nil,
        embeddedCatalog: UInt64 = 0
    ) {
        self.mapping = mapping
        self.limit = limit
        self.verifyChecksums = verifyChecksums
        self.encrypted = encrypted
        encryptedRef = encrypted.map { Unmanaged.passUnretained($0) }
        self.embeddedCatalog = embeddedCatalog
    }

    /// The same pages, with `ref` as the version's embedded catalog leaf.
    func embedding(catalog ref: UInt64) -> PageSource {
        ref == embeddedCatalog
            ? self
            : PageSource(
                mapping: mapping, limit: limit, verifyChecksums: verifyChecksums, encrypted: encrypted,
                embeddedCatalog: ref)
    }

    var geometry: PageGeometry { encrypted == nil ? .plain : .encrypted }

    func page(_ ref: UInt64) throws -> PageView {
        let ps = UInt64(Layout.pageSize)
        if ref % ps != 0 && ref == embeddedCatalog {
            let top = try page(ref - ref % ps)
            let o = Int(ref % ps)
            guard o + Layout.pageHeaderSize <= top.raw.count else {
                throw CorruptNode(ref: ref, detail: "embedded catalog at \(o) runs past its top node")
            }
            return PageView(raw: UnsafeRawBufferPointer(rebasing: top.raw[o...]), ref: ref)
        }
        guard ref >= ps, ref % ps == 0, ref + ps <= limit, ref + ps <= UInt64(mapping.length) else {
            throw CorruptNode(ref: ref, detail: "reference \(ref) is outside the file's \(limit) bytes or misaligned")
        }
        if let encryptedRef {
            let e = try encryptedRef._withUnsafeGuaranteedRef { try $0.extent(at: ref, mapping: mapping, limit: limit) }
            return PageView(
                raw: UnsafeRawBufferPointer(start: e.baseAddress, count: PageGeometry.encrypted.pageBytes), ref: ref
            )
        }
        let v = PageView(raw: UnsafeRawBufferPointer(start: mapping.base + Int(ref), count: Layout.pageSize), ref: ref)
        // Extents of several pages are checked whole, in `extent`; only an overflow value has
        // one, so a node page whose (damaged) span says otherwise is not let through unchecked.
        if verifyChecksums, v.span == 1 || v.kindByte != PageKind.overflow.rawValue,
            !PageHeader.checksumMatches(v.raw, ref: ref)
        {
            throw CorruptNode(ref: ref, detail: "page fails its checksum (damaged on the way from storage?)")
        }
        return v
    }

    /// Starts bringing the page at `ref` into the cache (every 64-byte line of it), for a scan
    /// about to read it: a plain page from the mapping, an encrypted one from its decrypted
    /// bytes when this snapshot has them (else nothing: they are a decryption away); nothing
    /// for a ref outside the version.
    func prefetch(_ ref: UInt64) {
        let ps = UInt64(Layout.pageSize)
        guard ref >= ps, ref % ps == 0, ref + ps <= limit, ref + ps <= UInt64(mapping.length) else { return }
        let bytes =
            encrypted == nil
            ? UnsafeRawBufferPointer(start: mapping.base + Int(ref), count: Layout.pageSize)
            : encrypted!.decrypted(at: ref)
        guard let p = bytes?.baseAddress, let n = bytes?.count else { return }
        for line in stride(from: 0, to: min(n, Layout.pageSize), by: 64) { fief_prefetch(p + line) }
    }

    /// The whole extent starting at `ref` (its span from the first page's header), node
    /// bytes only.
    func extent(_ ref: UInt64) throws -> UnsafeRawBufferPointer {
        let first = try page(ref)
        let span = first.span
        let bytes = UInt64(span) * UInt64(Layout.pageSize)
        guard span >= 1, ref + bytes <= limit else {
            throw CorruptNode(ref: ref, detail: "extent of \(span) pages runs past the end of the file")
        }
        if let encrypted {
            let e = try encrypted.extent(at: ref, mapping: mapping, limit: limit)
            guard e.count == geometry.extentBytes(span: span) else {
                throw CorruptNode(
                    ref: ref,
                    detail:
                        "node header says \(span) pages, "
                        + "its envelope \((e.count + PageEnvelope.size) / Layout.pageSize)"
                )
            }
            return e
        }
        let ext = UnsafeRawBufferPointer(start: mapping.base + Int(ref), count: Int(bytes))
        if verifyChecksums, span > 1, !PageHeader.checksumMatches(ext, ref: ref) {
            throw CorruptNode(
                ref: ref, detail: "extent of \(span) pages fails its checksum (damaged on the way from storage?)")
        }
        return ext
    }

    /// The bytes of a value stored out of line.
    func overflowValue(ref: UInt64, length: Int) throws -> UnsafeRawBufferPointer {
        let ext = try extent(ref)
        let head = PageView(raw: UnsafeRawBufferPointer(rebasing: ext[0..<geometry.pageBytes]), ref: ref)
        try head.expect(.overflow)
        guard head.extra == UInt64(length), OverflowExtent.valueOffset + length <= ext.count else {
            throw CorruptNode(
                ref: ref, detail: "overflow value length \(head.extra) does not match its cell's \(length)")
        }
        let o = OverflowExtent.valueOffset
        return UnsafeRawBufferPointer(rebasing: ext[o..<(o + length)])
    }
}
