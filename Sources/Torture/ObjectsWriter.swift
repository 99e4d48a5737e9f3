import Engine
import FiefObjects
import Foundation

/// The writer side of the `objects` scenario: commits `ObjectGraphWorkload` writes through
/// the object layer, logging each intent and acknowledgement to the oracle, until `maxCommit`.
/// With `schema` 2 it opens the file with schema 2's models (migrating it first if it is
/// still at schema 1) and goes on writing the same graph through them.
public struct ObjectsWriter {
    public let dbPath: String
    public let oraclePath: String
    public let workload: ObjectGraphWorkload
    public let maxCommit: UInt64
    public let schema: Int

    public init(dbPath: String, oraclePath: String, seed: UInt64, maxCommit: UInt64, schema: Int = 1) {
        self.dbPath = dbPath
        self.oraclePath = oraclePath
        workload = ObjectGraphWorkload(seed: seed)
        self.maxCommit = maxCommit
        self.schema = schema
    }

    public func run() throws {
        var configuration =
            schema == 2
            ? Configuration(
                path: dbPath, types: ObjectGraphWorkload.typesV2, schemaVersion: 2, migrationBlock: GraphV2.migrate)
            : Configuration(path: dbPath, types: ObjectGraphWorkload.types, schemaVersion: 1)
        // Half the seeds compact the file on every open (as Realm's shouldCompactOnOpen): a
        // writer killed later finds, and leaves, a compacted file.
        if workload.seed % 2 == 1 { configuration.shouldCompactOnOpen = { _, _ in true } }
        let store = try ObjectStore(TortureEncryption.configure(configuration))
        let ctx = store.context()
        let oracle = try OracleLog(path: oraclePath)
        var graph = workload.expected(
            afterCommit: try ObjectGraphWorkload.committed(in: ctx),
            migratedAt: schema == 2 ? try ObjectGraphWorkload.migratedAt(in: ctx) : nil)
        while true {
            var attempted: UInt64 = 0
            do {
                try ctx.write {
                    let i = try ObjectGraphWorkload.committed(in: ctx) + 1
                    // Roll back rather than commit an empty version.
                    guard i <= maxCommit else { throw Finished() }
                    attempted = i
                    try oracle.intent(i)
                    if schema == 2 {
                        try workload.write(commit: i, graph: graph, in: ctx, schema: GraphSchema2.self)
                    } else {
                        try workload.write(commit: i, graph: graph, in: ctx)
                    }
                }
            } catch is Finished {
                return
            }
            try oracle.ack(attempted, version: ctx.version)
            for op in workload.ops(forCommit: attempted, on: graph) { workload.apply(op, to: &graph) }
        }
    }

    /// Opens the file with schema version 2, whose migration labels every person; the
    /// migration is one write transaction, so a crash leaves all of it or none.
    /// Opens the schema-1 graph, which converts a file of an older object format in one write.
    public static func convert(dbPath: String) throws {
        _ = try ObjectStore(
            TortureEncryption.configure(Configuration(path: dbPath, types: ObjectGraphWorkload.types, schemaVersion: 1))
        )
    }

    public static func migrate(dbPath: String) throws {
        _ = try ObjectStore(
            TortureEncryption.configure(
                Configuration(
                    path: dbPath, types: ObjectGraphWorkload.typesV2, schemaVersion: 2,
                    migrationBlock: GraphV2.migrate)))
    }
}

private struct Finished: Error {}
