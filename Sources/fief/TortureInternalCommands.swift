import ArgumentParser
import Engine
import FiefObjects
import Foundation
import Torture

/// Runs the work of a process the suite starts: any error becomes one line on stderr, named
/// after the subcommand, and exit status 1 (an exit code the work chose passes through).
func asInternalProcess(_ name: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as ExitCode {
        throw e
    } catch {
        FileHandle.standardError.write(Data("fief torture \(name): \(error)\n".utf8))
        throw ExitCode(1)
    }
}

/// The process the `objects` scenario kills. Not for direct use.
struct TortureObjectsWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-writer", abstract: "(internal) Commit the seeded object graph, logging to an oracle.",
        shouldDisplay: false)
    @Option var db: String
    @Option var oracle: String
    @Option var seed: UInt64
    @Option var maxCommit: UInt64
    @Option var schema: Int = 1

    func run() throws {
        try asInternalProcess("objects-writer") {
            try ObjectsWriter(dbPath: db, oraclePath: oracle, seed: seed, maxCommit: maxCommit, schema: schema).run()
        }
    }
}

/// The verifier the `objects` and `notify` scenarios run after each death. Not for direct use.
struct TortureObjectsCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-check", abstract: "(internal) Verify a recovered object graph against its oracle.",
        shouldDisplay: false)
    @Option var db: String
    @Option var oracle: String
    @Option var seed: UInt64
    @Option var report: String
    @Flag var cacheReopen = false

    func run() throws {
        try asInternalProcess("objects-check") {
            let v = ObjectRecoveryCheck.verifyHere(
                dbPath: db, oraclePath: oracle, workload: ObjectGraphWorkload(seed: seed), cacheReopen: cacheReopen)
            try ObjectRecoveryCheck.writeReport(v, to: report)
        }
    }
}

/// The cache reopen (`deleteIfMigrationNeeded`) the `objects` scenario kills. Not for direct use.
struct TortureObjectsCache: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-cache", abstract: "(internal) Reopen the object graph's file as a cache and write notes.",
        shouldDisplay: false)
    @Option var db: String
    @Option var maxNotes: Int

    func run() throws {
        try asInternalProcess("objects-cache") { try GraphCache.reopenAndWrite(dbPath: db, maxNotes: maxNotes) }
    }
}

/// The migration the `objects` scenario kills. Not for direct use.
struct TortureObjectsMigrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-migrate", abstract: "(internal) Migrate the object graph to schema 2.",
        shouldDisplay: false)
    @Option var db: String

    func run() throws {
        try asInternalProcess("objects-migrate") { try ObjectsWriter.migrate(dbPath: db) }
    }
}

/// The conversion of a format-1 object file that the `objects` scenario kills (opening the
/// store converts it). Not for direct use.
struct TortureObjectsConvert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-convert", abstract: "(internal) Open a format-1 object graph, converting it.",
        shouldDisplay: false)
    @Option var db: String

    func run() throws {
        try asInternalProcess("objects-convert") { try ObjectsWriter.convert(dbPath: db) }
    }
}

/// The file operation the `file-ops` scenario kills. Not for direct use.
struct TortureFileOperation: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "file-op", abstract: "(internal) Create, compact or copy a database.", shouldDisplay: false)
    @Option var op: String
    @Option var db: String
    @Option var dest: String?

    func run() throws {
        do {
            switch op {
            case "create": _ = try Database(path: db, options: TortureEncryption.options())
            case "compact": try Database(path: db, options: TortureEncryption.options(create: false)).compact()
            case "copy":
                guard let dest else { throw ValidationError("--dest is required for copy") }
                try Database(path: db, options: TortureEncryption.options(create: false)).writeCopy(to: dest)
            default: throw ValidationError("--op must be create, compact or copy")
            }
        } catch let e as EngineError {
            FileHandle.standardError.write(Data("fief torture file-op: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// The reader the `faults` scenario runs under bit flips. Not for direct use.
struct TortureCheckedRead: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checked-read", abstract: "(internal) Read everything and compare it with the oracle.",
        shouldDisplay: false)
    @Option var db: String
    @Option var oracle: String
    @Option var seed: UInt64
    @Flag var verifyChecksums = false

    func run() throws {
        let (outcome, detail) = CheckedReader.run(
            dbPath: db, oraclePath: oracle, seed: seed, verifyChecksums: verifyChecksums)
        print(detail)
        if outcome != .correct { throw ExitCode(outcome.rawValue) }
    }
}

/// A reader process of the `readers` scenario. Not for direct use.
struct TortureChurnReader: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "churn-reader", abstract: "(internal) Many short checked reads.", shouldDisplay: false)
    @Option var db: String
    @Option var seed: UInt64
    @Option var seconds: Double = 1
    @Option var threads: Int = 2

    func run() throws {
        do {
            switch try ChurnReader(dbPath: db, seed: seed, seconds: seconds, threads: threads).run() {
            case .success(let n): print("\(n) reads, each exactly its commit's state")
            case .failure(let e):
                print("wrong read: \(e)")
                throw ExitCode(3)
            }
        } catch let e as ExitCode {
            throw e
        } catch {
            print("fief torture churn-reader: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Runs every broken variant under the scenario meant to catch it and writes the table.
struct TortureDetect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Run every broken variant under its scenario; write detection.json and detection.md (debug builds).")
    @Option(help: "Seed for every random choice.") var seed: UInt64 = 1
    @Option(help: "At most this many cycles per variant.") var cycles: Int = 12
    @Option(help: "Folder for detection.json, detection.md and each run.") var out: String = "fief-out/detection"
    @Option(help: "Only these variants, comma-separated (default: every one).") var variants: String?

    func validate() throws {
        guard let variants else { return }
        let known = Set(Detection.plan.map(\.variant))
        for v in variants.split(separator: ",").map(String.init) where !known.contains(v) {
            throw ValidationError("unknown variant '\(v)'; known: \(known.sorted().joined(separator: ", "))")
        }
    }

    func run() throws {
        try reportingErrors {
            var detection = Detection(seed: seed, cycles: cycles, out: out)
            detection.only = variants.map { Set($0.split(separator: ",").map(String.init)) }
            let rows = try detection.run { print($0) }
            print(
                "fief torture detect: \(rows.filter(\.caught).count) of \(rows.count) caught; "
                    + "wrote \(out)/detection.md and detection.json"
            )
            if rows.contains(where: { !$0.caught }) { throw ExitCode(1) }
        }
    }
}
