import Engine
import FiefObjects
import Foundation
import TortureSchema

/// The `objects` scenario's store reopened as a cache: a newer schema version with other
/// models and `deleteIfMigrationNeeded`, so the open deletes the file and starts an empty store
/// (Realm's deleteRealmIfMigrationNeeded), then writes notes 1, 2, 3, ... one per commit. A
/// process killed anywhere in that leaves the old graph whole, no file (killed between the
/// unlink and the new file's creation), or the new store with notes 1...m and nothing else.
public enum GraphCache {
    public final class CacheNote: Object {
        @Persisted(primaryKey: true) var id: Int64
        @Persisted var text = ""
    }

    public static let schemaVersion: UInt64 = 3

    static func configuration(_ path: String) -> Configuration {
        TortureEncryption.configure(
            Configuration(
                path: path, types: [CacheNote.self], schemaVersion: schemaVersion, deleteIfMigrationNeeded: true))
    }

    /// The process the scenario kills: reopen as a cache, then write notes up to `maxNotes`.
    public static func reopenAndWrite(dbPath: String, maxNotes: Int) throws {
        let ctx = try ObjectStore(configuration(dbPath)).context()
        let have = ctx.objects(CacheNote.self).count
        for n in (have + 1)...max(have + 1, maxNotes) {
            try ctx.write { try ctx.create(CacheNote.self, value: ["id": Int64(n), "text": "note \(n)"]) }
        }
    }

    /// A file left by `reopenAndWrite` after it made the new store: sound, and notes 1...m.
    static func verify(dbPath: String) -> [Violation] {
        do {
            var c = configuration(dbPath)
            c.readOnly = true
            let store = try ObjectStore(c)
            var out = try store.check().problems.map { Violation.harness("cache store: \($0)") }
            let ctx = store.context()
            let notes = try ctx.throwingReads { ctx.objects(CacheNote.self).map { ($0.id, $0.text) } }
            let ids = notes.map(\.0).sorted()
            if ids != Array(1...Int64(max(ids.count, 1))).prefix(ids.count).map({ $0 })
                || notes.contains(where: { $0.1 != "note \($0.0)" })
            {
                out.append(.harness("cache store: notes \(ids.prefix(10)) are not 1...\(ids.count) with their texts"))
            }
            let classes = try ctx.storedClasses().map(\.name)
            if classes != ["CacheNote"] {
                out.append(
                    .harness(
                        "cache store: holds classes \(classes), not just CacheNote: the old file was not deleted whole")
                )
            }
            return out
        } catch {
            return [
                Violation(kind: .integrity, text: "cache store: does not open after the reopen was killed: \(error)")
            ]
        }
    }
}
