import Engine

/// What the object layer learned of one committed version's tables: its schema, which tables
/// it has and lacks, and each class's cluster size. Every transaction asked the catalog and
/// `fief/meta` all of it again: a small write and the refresh after it spent a fifth of their
/// instructions there. A write leaves what it knows on the version it commits
/// (`WriteTransaction.committedSidecar`), and the next transaction on that version (the read
/// after the write, the next write) starts from it. A version never changes, so the facts
/// hold for as long as it lives; they are never changed once attached.
final class VersionFacts {
    let schema: StoredSchema
    let tables: Set<String>
    let absentTables: Set<String>
    let clusterShifts: [UInt32: Int]

    init(
        schema: StoredSchema, tables: Set<String>, absentTables: Set<String>, clusterShifts: [UInt32: Int]
    ) {
        self.schema = schema
        self.tables = tables
        self.absentTables = absentTables
        self.clusterShifts = clusterShifts
    }

    /// The facts attached to the version `tx` reads (a write: its base).
    static func of(_ tx: Transaction) -> VersionFacts? { tx.versionSidecar as? VersionFacts }
}
