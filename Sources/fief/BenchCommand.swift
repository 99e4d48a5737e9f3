import ArgumentParser
import Engine
import Foundation
import ProcFS
import Reports
import Torture
import TortureSchema

extension SystemName: ExpressibleByArgument {}
extension Durability: ExpressibleByArgument {}

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark Fief against SQLite and LMDB on the same workloads, in the same run.",
        subcommands: [
            BenchRunCommand.self, BenchChildCommand.self, BenchObjectChildCommand.self, BenchNotifyChildCommand.self
        ],
        defaultSubcommand: BenchRunCommand.self
    )
}

struct BenchRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the benchmarks and write results.json, report.md and report.html.",
        discussion: """
            Workloads: \(BenchRunner.workloadNames.joined(separator: ", ")). Each runs on Fief, \
            SQLite (WAL) and LMDB through their C libraries, on the same keys, repetitions \
            interleaved (A B C, B C A, ...). Durability pairs: full = SQLite synchronous=FULL = \
            LMDB default; none = synchronous=OFF = MDB_NOSYNC. Small transactions run at both. \
            --quick takes under two minutes on a 2-core machine, the default under ten. \
            Compare two results with `fief report compare`.
            """
    )

    @Flag(help: "The quick profile (under two minutes).") var quick = false
    @Option(help: "engine (the key-value workloads), objects (the object layer against SQLite) or all.") var suite:
        String = "engine"
    @Flag(help: "A tiny run that only proves everything works (seconds; numbers meaningless).") var smoke = false
    @Option(help: "Folder for results.json, report.md and report.html.") var out: String = "fief-out/bench"
    @Option(help: "Seed for every random choice (default: a random one, printed).") var seed: UInt64?
    @Option(help: "Repetitions per workload and system (overrides the profile).") var repetitions: Int?
    @Option(help: "Records in the data set (overrides the profile).") var records: Int?
    @Option(help: "Value size in bytes (overrides the profile).") var valueSize: Int?
    @Option(
        help: """
            Persons in the objects suite's data set, dogs half as many \
            (overrides the profile: 20000 quick, 200000 default).
            """
    ) var objects: Int?
    @Option(help: "full or none: the durability of every workload but small-txns, which runs at both.") var durability:
        Durability = .full
    @Option(help: "Systems to run, comma-separated: fief, sqlite, lmdb.") var systems: String = "fief,sqlite,lmdb"
    @Option(
        help: "Workloads to run, comma-separated (default all): \(BenchRunner.workloadNames.joined(separator: ", ")).")
    var workloads: String?
    @Option(help: "A name for this build in the results (compare-versions.sh passes the revision).") var label: String?
    @Option(help: "Folder for the databases (default: the system's temporary folder).") var workDir: String?
    @Option(help: "A torture results.json to include in the HTML report (matrix and growth curve).") var torture:
        String?
    @Option(
        help: """
            A folder on a FaultFS mount (no faults armed): \
            small durable transactions also run there, as small-txns.faultfs.
            """
    ) var faultfsDir: String?
    @Flag(
        inversion: .prefixedNo,
        help: """
            Mount a FaultFS (no faults armed) for the small-txns.faultfs benchmark \
            when FUSE is available and --faultfs-dir is not given.
            """
    ) var faultfs = true

    func validate() throws {
        if quick && smoke { throw ValidationError("choose one of --quick and --smoke") }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let records, records < 10 { throw ValidationError("--records must be at least 10") }
        if let valueSize, valueSize < 1 || valueSize > 1_000_000 {
            throw ValidationError("--value-size must be 1 to 1000000")
        }
        if let objects, objects < 100 || objects > 50_000_000 {
            throw ValidationError("--objects must be 100 to 50000000")
        }
        for s in systems.split(separator: ",") where SystemName(rawValue: String(s)) == nil {
            throw ValidationError("unknown system '\(s)'; known: fief, sqlite, lmdb")
        }
        let known = BenchRunner.workloadNames + BenchRunner.objectWorkloadNames
        for w in (workloads ?? "").split(separator: ",") where !known.contains(String(w)) {
            throw ValidationError("unknown workload '\(w)'; known: \(known.joined(separator: ", "))")
        }
        guard ["engine", "objects", "all"].contains(suite) else {
            throw ValidationError("--suite must be engine, objects or all")
        }
    }

    func run() throws {
        try reportingErrors {
            let s = seed ?? UInt64.random(in: 0...UInt64(Int64.max))
            printFlushed("fief bench: seed \(s) (rerun with --seed \(s))")
            var p =
                smoke
                ? BenchParameters.smoke(seed: s)
                : quick ? BenchParameters.quick(seed: s) : BenchParameters.standard(seed: s)
            if let repetitions { p.repetitions = repetitions }
            if let records { p.records = records; p.churnRecords = min(p.churnRecords, records) }
            if let valueSize { p.valueSize = valueSize }
            if let objects { p.objectPersons = objects; p.objectDogs = objects / 2 }
            p.durability = durability
            p.suite = suite
            p.systems = systems.split(separator: ",").compactMap { SystemName(rawValue: String($0)) }
            let torture = try self.torture.map { try ResultIO.load(TortureResults.self, from: $0) }
            let runner = BenchRunner(
                parameters: p, workDirectory: workDir ?? NSTemporaryDirectory(), childExecutable: ownExecutablePath(),
                only: workloads.map { Set($0.split(separator: ",").map(String.init)) }, label: label,
                progress: { printFlushed("  " + $0) })
            var r = runner
            r.faultFSDirectory = faultfsDir
            let mount =
                try faultfsDir == nil && faultfs && !smoke && suite != "objects"
                && (workloads == nil || workloads!.contains("small-txns"))
                ? BenchMount.start(seed: s, parent: workDir ?? NSTemporaryDirectory()) : nil
            defer { mount.map(BenchMount.stop) }
            if let mount { r.faultFSDirectory = mount.mountpoint }
            let results = try r.run()
            printFlushed("")
            print(TerminalReport.bench(results), terminator: "")
            let files = try ResultIO.writeBench(results, to: out, torture: torture)
            printFlushed(
                "\nfief bench: \(String(format: "%.0f", results.durationSeconds)) s; "
                    + "wrote \(files.joined(separator: ", "))"
            )
        }
    }
}

/// A FaultFS mount of a fresh folder for the length of one bench run, so small durable
/// transactions can be compared on it and natively in the same run.
enum BenchMount {
    static func start(seed: UInt64, parent: String) throws -> FaultFSMount? {
        if let why = FaultFSMount.unavailableReason() {
            printFlushed("fief bench: no FaultFS comparison: \(why)")
            return nil
        }
        let base = (parent as NSString).appendingPathComponent("fief-bench-faultfs-\(getpid())")
        let mount = FaultFSMount(
            backing: base + "/backing", mountpoint: base + "/mnt", seed: seed, tracePath: base + "/faults.jsonl")
        do {
            try mount.mount()
        } catch {
            printFlushed("fief bench: no FaultFS comparison: \(error)")
            return nil
        }
        printFlushed("fief bench: FaultFS mounted at \(mount.mountpoint) for small-txns.faultfs")
        return mount
    }

    static func stop(_ mount: FaultFSMount) {
        mount.unmount()
        try? FileManager.default.removeItem(atPath: (mount.mountpoint as NSString).deletingLastPathComponent)
    }
}

/// One bulk insert in a process of its own, so its peak memory is one system's alone.
/// Started by `fief bench run`; prints one JSON line.
struct BenchChildCommand: RequestCommand {
    static let commandName = "child"
    static let abstract = "Internal: one bulk insert in its own process (started by fief bench)."
    @Option(help: "The request, as JSON.") var request: String

    func perform(_ r: BulkInsertChild.Request) throws { try printReport(try BulkInsertChild.run(r)) }
}

/// The objects data set loaded into one system in a process of its own, so its peak memory is
/// that system's alone. Started by `fief bench run`; prints one JSON line.
struct BenchObjectChildCommand: RequestCommand {
    static let commandName = "object-child"
    static let abstract = "Internal: one object load in its own process (started by fief bench)."
    @Option(help: "The request, as JSON.") var request: String

    func perform(_ r: ObjectLoadChild.Request) throws { try printReport(try ObjectLoadChild.run(r)) }
}

/// The observer of obj.notify.cross-process, in a process of its own. Started by `fief bench
/// run`; prints "ready", then a CLOCK_MONOTONIC timestamp per change set delivered, until its
/// standard input closes.
struct BenchNotifyChildCommand: RequestCommand {
    static let commandName = "notify-child"
    static let abstract = "Internal: the other process of obj.notify.cross-process (started by fief bench)."
    @Option(help: "The request, as JSON.") var request: String

    func perform(_ r: CrossProcessNotify.Request) throws { try CrossProcessNotify.observe(r) }
}
