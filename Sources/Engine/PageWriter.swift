/// Gathers a commit's page writes and issues them in page order, one pwrite per run of
/// neighbouring pages, so a commit makes few write calls however its pages were allocated.
/// Nothing reaches the file before `flush` (or before `flushBytes` are buffered).
///
/// Callers hand it nodes (`geometry.pageBytes` per page); in an encrypted file each is
/// sealed here, into its envelope and ciphertext, so nothing above knows about keys.
struct PageWriter {
    let file: DatabaseFile
    let cipher: PageCipher?
    private var pages: [(page: UInt64, bytes: [UInt8])] = []
    private var buffered = 0
    private var run: [UInt8] = []
    static let flushBytes = 4 << 20

    init(file: DatabaseFile, cipher: PageCipher?) {
        self.file = file
        self.cipher = cipher
    }

    var geometry: PageGeometry { cipher == nil ? .plain : .encrypted }

    /// `node` is an extent's node bytes: `geometry.extentBytes(span:)` for some span.
    mutating func add(page: UInt64, _ node: [UInt8]) throws {
        var bytes = node
        if let cipher {
            bytes = [UInt8](repeating: 0, count: node.count + PageEnvelope.size)
            node.withUnsafeBytes { n in
                bytes.withUnsafeMutableBytes { cipher.seal(n, offset: page * UInt64(Layout.pageSize), into: $0) }
            }
        }
        precondition(bytes.count % Layout.pageSize == 0, "a node of \(node.count) bytes is not whole pages")
        pages.append((page, bytes))
        buffered += bytes.count
        if buffered >= PageWriter.flushBytes { try flush() }
    }

    mutating func flush() throws {
        guard !pages.isEmpty else { return }
        pages.sort { $0.page < $1.page }
        let ps = UInt64(Layout.pageSize)
        var i = 0
        while i < pages.count {
            // A run: each extent starts where the previous one ends.
            var j = i + 1
            var end = pages[i].page + UInt64(pages[i].bytes.count) / ps
            while j < pages.count && pages[j].page == end {
                end += UInt64(pages[j].bytes.count) / ps
                j += 1
            }
            if j == i + 1 {
                try file.write(pages[i].bytes, at: pages[i].page * ps)
            } else {
                run.removeAll(keepingCapacity: true)
                run.reserveCapacity(Int(end - pages[i].page) * Layout.pageSize)  // one allocation per run, no regrowth copies
                for k in i..<j { run += pages[k].bytes }
                try file.write(run, at: pages[i].page * ps)
            }
            i = j
        }
        pages.removeAll(keepingCapacity: true)
        buffered = 0
    }
}
