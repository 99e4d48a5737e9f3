/// One `.update`'s indices as a value, with `modificationsNew`: where the modified objects sit
/// in the new collection. Realm reports both because a table view that reloads modified rows
/// after applying deletions and insertions needs the new positions, and working them out by
/// hand from the other three arrays is easy to get wrong.
public struct CollectionChangeSet: Equatable, Sendable {
    /// Indices in the old collection, ascending.
    public let deletions: [Int]
    /// Indices in the new collection, ascending.
    public let insertions: [Int]
    /// Indices in the old collection of objects kept in place that changed.
    public let modifications: [Int]
    /// The same objects' indices in the new collection, in the order of `modifications`.
    public let modificationsNew: [Int]

    /// `modificationsNew` follows from the other three: kept objects keep their relative order
    /// (a move is a deletion plus an insertion), so the kept object of old rank r (its index
    /// less the deletions before it) lands on the r-th new index that is not an insertion.
    /// Deriving it here keeps the `.update` cases' payloads as they were.
    public init(deletions: [Int], insertions: [Int], modifications: [Int]) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        let deleted = deletions.sorted(), inserted = insertions.sorted()
        modificationsNew = modifications.map { old in
            var rank = old
            for d in deleted { if d < old { rank -= 1 } else { break } }
            var new = rank
            for i in inserted { if i <= new { new += 1 } else { break } }
            return new
        }
    }

    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }
}

extension ResultsChange {
    /// The indices of an `.update` (nil for `.initial` and `.error`).
    public var changeSet: CollectionChangeSet? {
        guard case .update(_, let d, let i, let m) = self else { return nil }
        return CollectionChangeSet(deletions: d, insertions: i, modifications: m)
    }
}

extension ListChange {
    /// The indices of an `.update` (nil for `.initial` and `.error`).
    public var changeSet: CollectionChangeSet? {
        guard case .update(_, let d, let i, let m) = self else { return nil }
        return CollectionChangeSet(deletions: d, insertions: i, modifications: m)
    }
}
