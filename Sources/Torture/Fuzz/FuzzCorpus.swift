import Engine
import FiefObjects
import Foundation
import SeededRandomness

/// The kinds of file `fief db fuzz` damages: a plain engine file of tables, an object store
/// (the `objects` scenario's graph: primary keys, an index, lists, backlinks), and the same
/// object store encrypted.
public enum FuzzKind: String, CaseIterable, Codable, Sendable {
    case engine, objects, encrypted

    public var isObjects: Bool { self != .engine }
}

/// The undamaged files a fuzz run starts from: the file after its last commit, and the same
/// file one commit earlier (a damaged header may rightly select that older version, as a
/// torn slot after a crash does: an answer equal to it is not wrong).
public struct FuzzCorpus: Codable, Sendable {
    public let kind: FuzzKind
    public let final: String
    public let previous: String
    /// The encryption key's file (raw 64 bytes), for `--key-file`; nil for plain files.
    public let keyFile: String?

    public static let engineTables = ["accounts", "notes"]
    public static let objectClasses = ["GraphPerson", "GraphDog", "GraphTag", "GraphToy", "GraphProgress"]

    /// Writes the base files of `kind` into `dir` from `seed`.
    public static func build(_ kind: FuzzKind, dir: String, seed: UInt64) throws -> FuzzCorpus {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let final = "\(dir)/\(kind.rawValue).fief", previous = "\(dir)/\(kind.rawValue)-previous.fief"
        for p in [final, previous, final + ".lock", previous + ".lock"] { unlink(p) }
        var key: [UInt8]?
        var keyFile: String?
        if kind == .encrypted {
            var rng = SeededRandom.derive(seed, 0x4B_E7)
            key = (0..<EncryptionError.keyLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
            keyFile = "\(dir)/\(kind.rawValue).key"
            try Data(key!).write(to: URL(fileURLWithPath: keyFile!))
        }
        let commits: UInt64 = 40
        if kind == .engine {
            try writeTables(final, seed: seed, commits: 1..<commits)
            try copy(final, previous)
            try writeTables(final, seed: seed, commits: commits..<(commits + 1))
        } else {
            try writeGraph(final, key: key, seed: seed, commits: 1..<commits)
            try copy(final, previous)
            try writeGraph(final, key: key, seed: seed, commits: commits..<(commits + 1))
        }
        return FuzzCorpus(kind: kind, final: final, previous: previous, keyFile: keyFile)
    }

    /// The base files of `kind` a run left in `dir`, if they are all there.
    public static func existing(_ kind: FuzzKind, dir: String) -> FuzzCorpus? {
        let final = "\(dir)/\(kind.rawValue).fief", previous = "\(dir)/\(kind.rawValue)-previous.fief"
        let keyFile = kind == .encrypted ? "\(dir)/\(kind.rawValue).key" : nil
        let all = [final, previous] + (keyFile.map { [$0] } ?? [])
        guard all.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else { return nil }
        return FuzzCorpus(kind: kind, final: final, previous: previous, keyFile: keyFile)
    }

    private static func copy(_ from: String, _ to: String) throws {
        try Data(contentsOf: URL(fileURLWithPath: from)).write(to: URL(fileURLWithPath: to))
    }

    /// Integer keys with text values, text keys with values of up to 6 KiB (some in overflow
    /// extents); puts, overwrites and deletes, one commit each.
    private static func writeTables(_ path: String, seed: UInt64, commits: Range<UInt64>) throws {
        let db = try Database(path: path, options: DatabaseOptions(create: true))
        for i in commits {
            var rng = SeededRandom.derive(seed ^ 0xE9_61E, i)
            try db.write { tx in
                let accounts = try tx.openTable("accounts", key: Int64.self, value: String.self)
                let notes = try tx.openTable("notes", key: String.self, value: String.self)
                for _ in 0..<Int.random(in: 5...40, using: &rng) {
                    let k = Int64.random(in: 0..<400, using: &rng)
                    if k == 7 { continue }
                    if Int.random(in: 0..<5, using: &rng) == 0 {
                        _ = try accounts.delete(k)
                    } else {
                        try accounts.put(k, "balance \(Int.random(in: 0..<1_000_000, using: &rng)) at commit \(i)")
                    }
                }
                // Key 7 changes in every commit: `get` tells the last version from the one before.
                try accounts.put(7, "seven at commit \(i)")
                for _ in 0..<Int.random(in: 0...4, using: &rng) {
                    let k = "note-\(Int.random(in: 0..<30, using: &rng))"
                    let size = [10, 300, 2000, 6000].randomElement(using: &rng)!
                    try notes.put(k, String(repeating: "\(i % 10)", count: size))
                }
            }
        }
    }

    /// The `objects` scenario's graph, commit by commit, with its models.
    private static func writeGraph(_ path: String, key: [UInt8]?, seed: UInt64, commits: Range<UInt64>) throws {
        var configuration = Configuration(path: path, types: ObjectGraphWorkload.types, schemaVersion: 1)
        configuration.encryptionKey = key
        let ctx = try ObjectStore(configuration).context()
        let workload = ObjectGraphWorkload(seed: seed)
        var graph = workload.expected(afterCommit: commits.lowerBound - 1)
        for i in commits {
            try ctx.write { try workload.write(commit: i, graph: graph, in: ctx) }
            for op in workload.ops(forCommit: i, on: graph) { workload.apply(op, to: &graph) }
        }
    }
}
