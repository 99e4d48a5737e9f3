import Synchronization

/// One extent of an encrypted file, authenticated and decrypted: the node bytes, as a plain
/// file would map them. Immutable once made; freed when nothing holds it.
final class DecryptedExtent: @unchecked Sendable {
    let tag: (UInt64, UInt64)
    let bytes: UnsafeMutableRawBufferPointer

    init(tag: (UInt64, UInt64), count: Int) {
        self.tag = tag
        bytes = .allocate(byteCount: count, alignment: 16)
    }

    deinit { bytes.deallocate() }

    var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(bytes) }
}

/// Decrypted extents of every encrypted file this process reads, up to `capacity` bytes,
/// so a page read by many transactions is authenticated and decrypted once. An entry is
/// found by (file salt, offset) and used only if its tag equals the tag on disk now: a
/// writer that reuses the page writes a new salt and so a new tag, in whatever process, and
/// the stale entry is never returned. Evicting drops only the cache's reference; a
/// transaction that holds an extent keeps it (`EncryptedPages`).
package final class DecryptedPageCache: @unchecked Sendable {
    struct Key: Hashable {
        let salt0: UInt64
        let salt1: UInt64
        let offset: UInt64

        // One word to hash: files differ in salt, pages of a file in offset.
        func hash(into h: inout Hasher) { h.combine(offset ^ salt0) }
    }

    package static let shared = DecryptedPageCache(capacity: 64 << 20)

    let capacity: Int
    private let lock = Lock()
    private var entries: [Key: DecryptedExtent] = [:]
    /// Insertion order, for eviction; keys replaced or evicted since are skipped.
    private var order: [Key] = []
    private var head = 0
    private var bytes = 0

    init(capacity: Int) { self.capacity = capacity }

    func lookup(_ key: Key, tag: (UInt64, UInt64)) -> DecryptedExtent? {
        lock.withLock {
            guard let e = entries[key], e.tag == tag else { return nil }
            return e
        }
    }

    func insert(_ key: Key, _ extent: DecryptedExtent) {
        lock.withLock {
            if let old = entries.updateValue(extent, forKey: key) {
                bytes -= old.bytes.count
            } else {
                order.append(key)
            }
            bytes += extent.bytes.count
            while bytes > capacity, head < order.count {
                let k = order[head]
                head += 1
                if let e = entries.removeValue(forKey: k) { bytes -= e.bytes.count }
            }
            if head > 4096, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
        }
    }

    /// Forgets every page. For tools that open copies of one file (same salt) one after
    /// another in one process and must read each from its own bytes: `fief db fuzz`.
    package func removeAll() {
        lock.withLock {
            entries = [:]
            order = []
            head = 0
            bytes = 0
        }
    }

    /// Bytes held by the cache (not counting extents only transactions still hold).
    var heldBytes: Int { lock.withLock { bytes } }
}

/// The encrypted pages one snapshot has read: each extent is authenticated and decrypted on
/// first use (or taken from `DecryptedPageCache`) and held until the snapshot is dropped, so
/// every pointer a read hands out stays valid for the transaction, as a mapped page would.
final class EncryptedPages: @unchecked Sendable {
    let cipher: PageCipher
    private let salt0: UInt64
    private let salt1: UInt64
    /// What the snapshot holds, under `lock`: one lookup per page a read touches, so a table
    /// indexed by page number, where a `Dictionary` hashed each one with SipHash. Hashed
    /// slots scattered a scan's neighbouring pages over the whole table: once a snapshot had
    /// touched most of a 200K-object file (a run of gets), every page of a count missed the
    /// cache twice (an encrypted count fell from 0.88x to 0.71x of a plain one).
    private let lock = Mutex(Held())
    /// nil: authenticate every page from the file (as `check()` must).
    private let cache: DecryptedPageCache?

    private struct Held: ~Copyable {
        /// Chunks of `chunkPages` page numbers, made when a page in them is first read: the
        /// bytes of the extent that starts at each page (no start: not read yet).
        var chunks: [[UnsafeRawBufferPointer]] = []
        /// What keeps the bytes valid while the snapshot lives.
        var owners: [DecryptedExtent] = []

        static let chunkShift = 9
        static let chunkPages = 1 << chunkShift
        static let none = UnsafeRawBufferPointer(start: nil, count: 0)

        func find(_ page: Int) -> UnsafeRawBufferPointer? {
            let c = page >> Held.chunkShift
            guard c < chunks.count, !chunks[c].isEmpty else { return nil }
            let b = chunks[c][page & (Held.chunkPages - 1)]
            return b.baseAddress == nil ? nil : b
        }

        mutating func add(_ page: Int, _ e: DecryptedExtent) {
            let c = page >> Held.chunkShift
            if c >= chunks.count { chunks.append(contentsOf: repeatElement([], count: c + 1 - chunks.count)) }
            if chunks[c].isEmpty { chunks[c] = Array(repeating: Held.none, count: Held.chunkPages) }
            let i = page & (Held.chunkPages - 1)
            guard chunks[c][i].baseAddress == nil else { return }
            chunks[c][i] = e.raw
            owners.append(e)
        }
    }

    init(cipher: PageCipher, cache: DecryptedPageCache? = .shared) {
        self.cipher = cipher
        self.cache = cache
        (salt0, salt1) = cipher.fileSalt.withUnsafeBytes { ($0.u64(0), $0.u64(8)) }
    }

    /// The bytes of the extent at `ref` when this snapshot has decrypted it already (a scan's
    /// prefetch: it never decrypts).
    func decrypted(at ref: UInt64) -> UnsafeRawBufferPointer? {
        lock.withLock { $0.find(Int(ref / UInt64(Layout.pageSize))) }
    }

    /// The decrypted bytes of the extent at `ref`, valid while this snapshot lives; `ref`'s
    /// first page is known to lie in the mapping and below `limit`.
    func extent(at ref: UInt64, mapping: Mapping, limit: UInt64) throws -> UnsafeRawBufferPointer {
        let page = Int(ref / UInt64(Layout.pageSize))
        if let e = lock.withLock({ $0.find(page) }) { return e }
        let head = UnsafeRawBufferPointer(start: mapping.base + Int(ref), count: Layout.pageSize)
        let span = Int(head.u32(PageEnvelope.spanOffset))
        let bytes = UInt64(span) * UInt64(Layout.pageSize)
        guard span >= 1, ref + bytes <= limit, ref + bytes <= UInt64(mapping.length) else {
            throw CorruptNode(
                ref: 0,
                detail:
                    "page at offset \(ref) failed authentication "
                    + "(its envelope names \(span) pages, past the end of the file)"
            )
        }
        let tag = (head.u64(0), head.u64(8))
        let key = DecryptedPageCache.Key(salt0: salt0, salt1: salt1, offset: ref)
        let found: DecryptedExtent
        if let e = cache?.lookup(key, tag: tag) {
            found = e
        } else {
            let e = DecryptedExtent(tag: tag, count: Int(bytes) - PageEnvelope.size)
            let physical = UnsafeRawBufferPointer(start: mapping.base + Int(ref), count: Int(bytes))
            guard cipher.open(physical, offset: ref, into: e.bytes) else {
                throw CorruptNode(ref: 0, detail: "page at offset \(ref) failed authentication")
            }
            cache?.insert(key, e)
            found = e
        }
        lock.withLock { $0.add(page, found) }
        return found.raw
    }
}
