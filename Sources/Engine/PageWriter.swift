#if canImport(Glibc)
    import Glibc
#endif

/// Gathers a commit's page writes and issues them in page order, one `pwritev` per run of
/// neighbouring pages (up to `maxWriteBytes`), so a commit makes few write calls however its
/// pages were allocated.
/// Nothing reaches the file before `flush` (or before `flushBytes` are buffered).
///
/// Callers hand it nodes (`geometry.pageBytes` per page), or fill one in place (`add(page:
/// nodeBytes:zeroed:_:)`, no intermediate array); in an encrypted file each is sealed here,
/// into its envelope and ciphertext, so nothing above knows about keys. Each page is one
/// heap block until `flush`; a run is written from those blocks as they are (no
/// concatenated copy). A flushed page's block is kept for the next page of the commit: freed,
/// a flush's worth of blocks merged into the top of the heap, which malloc gave back to the
/// kernel, and the next flush's pages faulted it in again (a 200K-record bulk insert took 3.4K
/// more page faults and ran 13 % slower).
struct PageWriter {
    let file: DatabaseFile
    let cipher: PageCipher?
    /// The file's format leaves a node's free gap out of its checksum (`PageHeader.seal`).
    let checksumSkipsGap: Bool
    let checksumIsPlaced: Bool
    private let buffers = Buffers()
    private var buffered = 0
    /// Pages handed to this writer so far (a commit's size, for `Database.commitCounts`).
    private(set) var pagesAdded = 0
    static let flushBytes = 4 << 20
    /// At most this many bytes per write call. The kernel caches a file in folios as large as
    /// the write that made them (ext4 on Linux 6.x): a later commit that changes one page of a
    /// 2 MiB folio then pays, at its sync, for walking every block of that folio. Runs written
    /// 64 KiB at a time keep the folios that small. After the large commits of obj.insert and
    /// obj.update at 200K objects, one-object durable writes ran 5–8 % faster (obj.small-txns,
    /// three alternating runs: 0.77–0.83x the raw engine with whole runs, 0.85–0.88x so),
    /// and the bulk insert itself was no slower.
    static let maxWriteBytes = 64 << 10

    /// The page images not yet written, the one-page blocks already written (for the next
    /// pages), and a scratch node for sealing; freed with the writer (also when a commit fails
    /// before `flush`).
    private final class Buffers {
        @exclusivity(unchecked) var pages: [(page: UInt64, bytes: UnsafeMutableRawBufferPointer)] = []
        @exclusivity(unchecked) var spare: [UnsafeMutableRawBufferPointer] = []
        @exclusivity(unchecked) var scratch: UnsafeMutableRawBufferPointer?

        /// A block of `bytes`: a spare one when it is one page.
        func block(_ bytes: Int) -> UnsafeMutableRawBufferPointer {
            if bytes == Layout.pageSize, let b = spare.popLast() { return b }
            return UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 16)
        }

        /// After a flush: one-page blocks become spares, larger extents are freed.
        func releasePages() {
            for p in pages {
                if p.bytes.count == Layout.pageSize { spare.append(p.bytes) } else { p.bytes.deallocate() }
            }
            pages.removeAll(keepingCapacity: true)
        }

        deinit {
            for p in pages { p.bytes.deallocate() }
            for b in spare { b.deallocate() }
            scratch?.deallocate()
        }
    }

    init(file: DatabaseFile, cipher: PageCipher?, format: FileFormat) {
        self.file = file
        self.cipher = cipher
        checksumSkipsGap = format.checksumSkipsGap
        checksumIsPlaced = format.checksumIsPlaced
    }

    /// Where a page written at `page` says it belongs (`PageHeader.seal(placedAt:)`), in a
    /// format that places its checksums.
    func placement(_ page: UInt64) -> UInt64? { checksumIsPlaced ? page * UInt64(Layout.pageSize) : nil }

    var geometry: PageGeometry { cipher == nil ? .plain : .encrypted }

    /// `node` is an extent's node bytes: `geometry.extentBytes(span:)` for some span.
    mutating func add(page: UInt64, _ node: [UInt8]) throws {
        try node.withUnsafeBytes { n in
            try add(page: page, nodeBytes: n.count, zeroed: false) { $0.copyMemory(from: n) }
        }
    }

    /// Adds the extent at `page` whose node (`nodeBytes`: `geometry.extentBytes(span:)` for
    /// some span) `fill` writes in place. The buffer is zeroed first only when `zeroed`;
    /// otherwise `fill` must write every byte.
    mutating func add(page: UInt64, nodeBytes: Int, zeroed: Bool, _ fill: (UnsafeMutableRawBufferPointer) -> Void)
        throws
    {
        let physicalBytes = nodeBytes + geometry.envelope
        precondition(physicalBytes % Layout.pageSize == 0, "a node of \(nodeBytes) bytes is not whole pages")
        let out = buffers.block(physicalBytes)
        if let cipher {
            if (buffers.scratch?.count ?? 0) < nodeBytes {
                buffers.scratch?.deallocate()
                buffers.scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: nodeBytes, alignment: 16)
            }
            let n = UnsafeMutableRawBufferPointer(rebasing: buffers.scratch![0..<nodeBytes])
            if zeroed { n.initializeMemory(as: UInt8.self, repeating: 0) }
            fill(n)
            cipher.seal(UnsafeRawBufferPointer(n), offset: page * UInt64(Layout.pageSize), into: out)
        } else {
            if zeroed { out.initializeMemory(as: UInt8.self, repeating: 0) }
            fill(out)
        }
        buffers.pages.append((page, out))
        pagesAdded += physicalBytes / Layout.pageSize
        buffered += physicalBytes
        if buffered >= PageWriter.flushBytes { try flush() }
    }

    mutating func flush() throws {
        guard !buffers.pages.isEmpty else { return }
        defer {
            buffers.releasePages()
            buffered = 0
        }
        buffers.pages.sort { $0.page < $1.page }
        let pages = buffers.pages
        let ps = UInt64(Layout.pageSize)
        var i = 0
        var iov: [iovec] = []
        while i < pages.count {
            // A run: each extent starts where the previous one ends (at most IOV_MAX blocks,
            // and `maxWriteBytes`).
            var j = i + 1
            var end = pages[i].page + UInt64(pages[i].bytes.count) / ps
            var runBytes = pages[i].bytes.count
            while j < pages.count && pages[j].page == end && j - i < DatabaseFile.maxIOVecs
                && runBytes + pages[j].bytes.count <= PageWriter.maxWriteBytes
            {
                end += UInt64(pages[j].bytes.count) / ps
                runBytes += pages[j].bytes.count
                j += 1
            }
            if j == i + 1 {
                // A single extent (an overflow value may span many pages) in pieces likewise.
                let b = UnsafeRawBufferPointer(pages[i].bytes)
                var at = 0
                while at < b.count {
                    let n = min(PageWriter.maxWriteBytes, b.count - at)
                    try file.write(
                        UnsafeRawBufferPointer(rebasing: b[at..<(at + n)]), at: pages[i].page * ps + UInt64(at))
                    at += n
                }
            } else {
                iov.removeAll(keepingCapacity: true)
                for k in i..<j {
                    iov.append(iovec(iov_base: pages[k].bytes.baseAddress, iov_len: pages[k].bytes.count))
                }
                try file.write(&iov, at: pages[i].page * ps)
            }
            i = j
        }
    }
}
