/// One top slot as found in the header.
public struct SlotInfo: Sendable {
    public let index: Int
    public let selected: Bool
    public let ref: UInt64
    public let version: UInt64
    /// The slot's own checksum holds and the node it names carries the checksum it records.
    public let valid: Bool
}

/// Space and versions of a database, as of its newest version.
public struct DatabaseStats: Sendable {
    public let version: UInt64
    public let select: Int
    public let slots: [SlotInfo]
    public let fileSize: UInt64
    public let pageSize: Int
    public let pageCount: UInt64
    /// Pages reachable from the newest version (header included), in bytes.
    public let bytesInUse: UInt64
    /// Free pages that the next write may reuse, in bytes.
    public let bytesFree: UInt64
    /// Freed pages still held because a pinned older version can see them, in bytes.
    public let bytesPinned: UInt64
    /// The newest version plus each older version some reader pins.
    public let liveVersions: Int
    public let oldestPinnedVersion: UInt64?
    public let readerPins: Int
    public let tables: [TableInfo]
    /// Pages and leaf fill per table; filled by `stats(space: true)` only (it walks every tree).
    public var space: [TableSpace] = []
}

extension Database {
    public func stats(space: Bool = false) throws -> DatabaseStats {
        let pinned = try pin()
        defer { pinned.release() }
        guard let snap = pinned.snapshot else { throw EngineError.transactionClosed }
        return try guarded {
            // Our own pin for this call is in the table too; it pins the newest version only.
            let pins = try readers.livePins()
            let otherVersions = Set(pins.map(\.version)).filter { $0 != snap.version }
            let oldest = otherVersions.min()
            let minLive = min(snap.version, oldest ?? snap.version)
            var list = try FreeListStorage.decode(snap.meta, pages: snap.pages)
            list.release(upTo: minLive)
            let ps = UInt64(Layout.pageSize)
            let free = list.reusablePages * ps
            let held = list.pendingPages * ps
            let total = snap.meta.pageCount * ps
            let header = UnsafeRawBufferPointer(start: snap.pages.mapping.base, count: Layout.pageSize)
            var slots: [SlotInfo] = []
            for i in 0..<2 {
                let s = TopSlot(header: header, index: i)
                var valid = false
                if s.isSelfConsistent,
                    let top = try? PageSource(
                        mapping: snap.pages.mapping, limit: try file.size(),
                        encrypted: snap.pages.encrypted.map { EncryptedPages(cipher: $0.cipher) }
                    ).page(s.ref)
                {
                    valid = s.names(topPage: top.raw)
                }
                slots.append(
                    SlotInfo(index: i, selected: i == snap.select.index, ref: s.ref, version: s.version, valid: valid))
            }
            let tx = ReadTransaction(db: self, snapshot: snap)
            try readers.pin(snap.version)
            defer { tx.end() }
            var tables: [TableInfo] = []
            for name in try tx.tableNames() {
                if let info = try tx.tableInfo(name) { tables.append(info) }
            }
            var stats = DatabaseStats(
                version: snap.version, select: snap.select.index, slots: slots, fileSize: try file.size(),
                pageSize: Layout.pageSize, pageCount: snap.meta.pageCount,
                bytesInUse: total - free - held, bytesFree: free, bytesPinned: held,
                liveVersions: 1 + otherVersions.filter { $0 < snap.version }.count,
                oldestPinnedVersion: oldest, readerPins: pins.count, tables: tables)
            if space { stats.space = try tx.tableSpace() }
            return stats
        }
    }
}

extension Database {
    /// How many versions are live now, in every process: the newest plus each older one some
    /// reader pins (as `stats().liveVersions`, without the rest of the stats).
    package func liveVersionCount() throws -> Int {
        try guarded {
            let newest = try latestVersion()
            return 1 + Set(try readers.livePins().map(\.version)).filter { $0 < newest }.count
        }
    }
}

extension KeyKind: Encodable {
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension SlotInfo: Encodable {}
extension DatabaseStats: Encodable {}
