/// What changed, table by table, between two committed versions: the change set the object
/// layer's notifications are computed from. Nothing is logged per commit; the two versions'
/// trees are compared (see `Tree.diff`), so the cost follows the pages that changed.
package struct VersionDiff: Equatable, Sendable {
    package let from: UInt64
    package let to: UInt64
    /// Tables in `to` but not in `from`; their keys are all in `tables[name].inserted`.
    package var created: Set<String> = []
    /// Tables in `from` but not in `to`; their keys are all in `tables[name].deleted`.
    package var dropped: Set<String> = []
    /// Every table with a changed key, created and dropped tables included. A table dropped
    /// and created again with other key or value kinds is in `created` and `dropped` both.
    package var tables: [String: KeyDiff] = [:]
    /// Pages read to compute it (catalog and tables, both versions): the cost, for tests.
    package var pagesRead = 0

    package var isEmpty: Bool { tables.isEmpty && created.isEmpty && dropped.isEmpty }
}

extension Database {
    /// The changes from the version `old` pins to the version `new` pins.
    package func diff(from old: PinnedVersion, to new: PinnedVersion) throws -> VersionDiff {
        try diff(from: try snapshot(of: old), to: try snapshot(of: new))
    }

    /// The changes from the version `old` reads to the version `new` pins: what moving `old`
    /// there (`ReadTransaction.move(to:)`) will show.
    package func diff(from old: ReadTransaction, to new: PinnedVersion) throws -> VersionDiff {
        guard old.db === self else {
            throw EngineError.invalidArgument("the read transaction belongs to another database handle")
        }
        try old.ensureActive()
        return try diff(from: old.snapshot, to: try snapshot(of: new))
    }

    private func snapshot(of pinned: PinnedVersion) throws -> Snapshot {
        guard pinned.db === self else {
            throw EngineError.invalidArgument("the pinned version belongs to another database handle")
        }
        guard let s = pinned.snapshot else { throw EngineError.transactionClosed }
        return s
    }

    /// Both snapshots are pinned by the caller for the whole call (a `PinnedVersion` or a
    /// live `ReadTransaction`), which is what makes comparing refs sound.
    func diff(from old: Snapshot, to new: Snapshot) throws -> VersionDiff {
        try guarded {
            var out = VersionDiff(from: old.version, to: new.version)
            let shares = old.fileID == new.fileID
            let catalog = try Tree.diff(
                old: TreeVersion(root: old.meta.catalogRoot, pages: old.pages),
                new: TreeVersion(root: new.meta.catalogRoot, pages: new.pages), sharesPages: shares)
            out.pagesRead += catalog.pagesRead
            func record(_ s: Snapshot, _ key: [UInt8]) throws -> TableRecord {
                let name = String(decoding: key, as: UTF8.self)
                guard
                    let raw = try Tree.get(
                        s.meta.catalogRoot == 0 ? nil : .page(s.meta.catalogRoot), key: key, pages: s.pages)
                else {
                    throw CorruptNode(ref: s.meta.catalogRoot, detail: "catalog lost table '\(name)' while diffing")
                }
                return try TableRecord.decode(raw, table: name)
            }
            func add(_ key: [UInt8], old o: TableRecord?, new n: TableRecord?) throws {
                let d = try Tree.diff(
                    old: TreeVersion(root: o?.root ?? 0, pages: old.pages),
                    new: TreeVersion(root: n?.root ?? 0, pages: new.pages), sharesPages: shares)
                out.pagesRead += d.pagesRead
                if !d.keys.isEmpty { out.tables[String(decoding: key, as: UTF8.self)] = d.keys }
            }
            for k in catalog.keys.deleted {
                out.dropped.insert(String(decoding: k, as: UTF8.self))
                try add(k, old: try record(old, k), new: nil)
            }
            for k in catalog.keys.inserted {
                out.created.insert(String(decoding: k, as: UTF8.self))
                try add(k, old: nil, new: try record(new, k))
            }
            // A changed record: a new root or count, or (dropped and created again) new kinds.
            for k in catalog.keys.modified {
                let o = try record(old, k), n = try record(new, k)
                if o.keyKind != n.keyKind || o.valueKind != n.valueKind {
                    out.dropped.insert(String(decoding: k, as: UTF8.self))
                    out.created.insert(String(decoding: k, as: UTF8.self))
                }
                try add(k, old: o, new: n)
            }
            return out
        }
    }
}

extension ReadTransaction {
    /// Moves this transaction to the version `pinned` holds (newer or older), as `refresh()`
    /// moves it to the newest: the notifier diffs a context's transaction against a pinned
    /// version, delivers, and then moves the transaction to exactly the version it described.
    public func move(to pinned: PinnedVersion) throws {
        try ensureActive()
        guard pinned.db === db else {
            throw EngineError.invalidArgument("the pinned version belongs to another database handle")
        }
        guard let next = pinned.snapshot else { throw EngineError.transactionClosed }
        try db.readers.pin(next.version)  // this transaction's own pin; the PinnedVersion may go first
        adopt(next)
    }

    /// Keeps this transaction's version readable after the transaction moves or ends: the
    /// base a notifier diffs the next version against, or the version a streaming iteration
    /// began on (`ResultsStream`).
    package func pinVersion() throws -> PinnedVersion {
        try ensureActive()
        try db.readers.pin(snapshot.version)
        return PinnedVersion(db: db, snapshot: snapshot)
    }
}
