/// Backlinks that new objects' first rows already hold for an origin added with them: a
/// person's new dogs are added before the person's row exists, and each dog's row gets the
/// person's entry as it is written. The person's insert then takes those entries instead of
/// adding them one by one (a decode and re-encode of every new dog's row, a fifteenth of a
/// bulk load). An origin that fails before its row is written gives them back
/// (`ObjectTables.revokePreLinks`), so no row keeps an entry for an origin that never was.
struct PreLinks {
    /// An entry held: its origin (class and key) and property, and the target (class and key)
    /// whose row holds it.
    struct Held {
        let cid: UInt32
        let origin: Int64
        let pid: UInt32
        let targetCid: UInt32
        let target: Int64
    }

    /// A flat list, not a dictionary by origin: an origin's insert follows its new targets'
    /// at once, so it holds a few entries at a time, and hashing an origin per target cost
    /// more than the scan.
    private var held: [Held] = []

    /// The new row of `target` (of class `targetCid`) holds `entry` (of count 1).
    mutating func add(_ entry: CompactRow.Backlink, targetCid: UInt32, target: Int64) {
        held.append(Held(cid: entry.cid, origin: entry.origin, pid: entry.pid, targetCid: targetCid, target: target))
    }

    /// The entries held for origin `key` of class `cid`, no longer kept here.
    mutating func take(cid: UInt32, key: Int64) -> [Held] {
        guard !held.isEmpty else { return [] }
        let mine = { (h: Held) in h.cid == cid && h.origin == key }
        // Usually every entry held is this origin's (its new targets, added just before it):
        // handed over whole, not filtered into a copy and removed.
        if held.allSatisfy(mine) {
            defer { held = [] }
            return held
        }
        let out = held.filter(mine)
        if !out.isEmpty { held.removeAll(where: mine) }
        return out
    }

    /// Every entry held, no longer kept here.
    mutating func takeAll() -> [Held] {
        defer { held = [] }
        return held
    }
}
