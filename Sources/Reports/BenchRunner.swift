import Engine
import Foundation

/// Runs every workload on every system, repetitions interleaved (A B C, B C A, C A B, ...:
/// each system takes every place in the order, so drift and warm-up cancel out instead of
/// landing on one system), and gathers the results with their context.
public struct BenchRunner {
    public var parameters: BenchParameters
    /// Where the stores are made; emptied of the run's files at the end.
    public var workDirectory: String
    /// The `fief` binary, to run each bulk insert in a child process for its peak memory.
    /// Without one, bulk inserts run in this process and peak memory is not reported.
    public var childExecutable: String?
    /// Workload names to run (nil: all). See `BenchRunner.workloadNames`.
    public var only: Set<String>?
    public var label: String?
    /// Hook for the FaultFS comparison: a folder on a FaultFS mount the caller made (no
    /// faults armed). When set, small durable transactions also run with stores there, as
    /// benchmark `small-txns.faultfs`, next to the native `small-txns.full`.
    public var faultFSDirectory: String?
    public var progress: (String) -> Void

    public static let workloadNames = [
        "bulk-insert", "point-reads", "scan", "small-txns", "small-txns.concurrent", "readers-while-writing", "open",
        "churn"
    ]

    public init(
        parameters: BenchParameters, workDirectory: String, childExecutable: String? = nil, only: Set<String>? = nil,
        label: String? = nil, progress: @escaping (String) -> Void = { _ in }
    ) {
        self.parameters = parameters
        self.workDirectory = workDirectory
        self.childExecutable = childExecutable
        self.only = only
        self.label = label
        self.progress = progress
    }

    /// Repetition `rep`'s order of the systems: a rotation, so each leads as often as the others.
    func order(_ rep: Int) -> [SystemName] {
        let s = parameters.systems
        return (0..<s.count).map { s[($0 + rep) % s.count] }
    }

    /// Which suites run: "engine" (the default), "objects" or "all".
    var suite: String { parameters.suite ?? "engine" }

    func wants(_ name: String) -> Bool { suite != "objects" && (only.map { $0.contains(name) } ?? true) }

    public func run() throws -> BenchResults {
        let p = parameters
        try checkParameters()
        let fm = FileManager.default
        let work = workDirectory + "/fief-bench-\(getpid())"
        try? fm.removeItem(atPath: work)
        do { try fm.createDirectory(atPath: work, withIntermediateDirectories: true) } catch {
            throw BenchError.io("cannot create \(work): \(error.localizedDescription)")
        }
        defer { try? fm.removeItem(atPath: work) }
        let started = BenchClock.nanos()
        progress(
            "seed \(p.seed), profile \(p.profile), \(p.repetitions) repetitions, durability \(p.durability), "
                + "systems \(p.systems.map(\.rawValue).joined(separator: " ")), "
                + "\(p.records) records of \(p.valueSize) bytes"
        )
        let state = BenchRunState(
            work: work, value: BenchValue.make(size: p.valueSize, seed: p.seed), records: p.records)
        defer { state.closeStores() }
        for phase in BenchRunner.engineSuite where phase.workloads.contains(where: wants) {
            try phase.run(self, state)
        }
        if suite != "engine" {
            try runObjects(state)
        }
        let duration = Double(BenchClock.nanos() - started) / 1e9
        if RunContext.buildConfiguration == "debug" {
            state.notes.append("debug build: numbers are not representative; use `swift build -c release`")
        }
        return BenchResults(
            context: runContext(scratch: work), parameters: p, durationSeconds: duration,
            benchmarks: state.table.benchmarks(p), notes: state.notes)
    }

    /// Refuses, before any work, a run that names no system, an unknown workload or suite.
    func checkParameters() throws {
        guard !parameters.systems.isEmpty else { throw BenchError.badArgument("no systems to run") }
        let known = BenchRunner.workloadNames + BenchRunner.objectWorkloadNames + ["objects"]
        if let only, let bad = only.first(where: { !known.contains($0) }) {
            throw BenchError.badArgument("unknown workload '\(bad)' (known: \(known.joined(separator: ", ")))")
        }
        guard ["engine", "objects", "all"].contains(suite) else {
            throw BenchError.badArgument("unknown suite '\(suite)' (use engine, objects or all)")
        }
    }

    /// What the results were measured on: the source tree, the engine's format, the machine.
    func runContext(scratch work: String) -> RunContext {
        let versionDir = "\(work)/format"
        try? FileManager.default.createDirectory(atPath: versionDir, withIntermediateDirectories: true)
        // The tree the run started in, else the one the binary was built in (.build is inside it).
        var git = RunContext.git(in: FileManager.default.currentDirectoryPath)
        if git.commit == "unknown", let exe = childExecutable {
            git = RunContext.git(in: (exe as NSString).deletingLastPathComponent)
        }
        return RunContext(
            gitCommit: git.commit, gitDirty: git.dirty, label: label,
            engineFormatVersion: FiefSubject.formatVersion(scratchDirectory: versionDir),
            build: RunContext.buildConfiguration, date: RunContext.isoNow(), machine: .current(),
            durability: parameters.durability,
            peerVersions: ["sqlite": SQLitePeer.libraryVersion, "lmdb": LMDBPeer.libraryVersion])
    }

    /// Runs `body` for every repetition and every system in rotated order, printing a line each.
    func repeatInterleaved(
        _ id: String, _ table: inout ResultTable, perRep: (Int) -> Void = { _ in },
        systems: ((Int) -> [SystemName])? = nil,
        _ body: (SystemName) throws -> Measurement
    ) throws {
        try withoutActuallyEscaping(body) {
            try repeatInterleaved([(id, $0)], &table, perRep: perRep, systems: systems)
        }
    }

    /// Several workloads measured rep by rep in turn (each rep: every workload on every system).
    func repeatInterleaved(
        _ workloads: [(id: String, body: (SystemName) throws -> Measurement)], _ table: inout ResultTable,
        perRep: (Int) -> Void = { _ in }, systems: ((Int) -> [SystemName])? = nil
    ) throws {
        for rep in 0..<parameters.repetitions {
            perRep(rep)
            for (id, body) in workloads {
                let unit = BenchCatalog.entry(id).unit
                for s in (systems ?? order)(rep) {
                    let m = try body(s)
                    table.add(id, s, m)
                    let paddedID = id.count >= 21 ? id : id.padding(toLength: 21, withPad: " ", startingAt: 0)
                    var line =
                        "\(paddedID) rep \(rep + 1)/\(parameters.repetitions) \(s.rawValue): "
                        + "\(Format.value(m.value, unit: unit))"
                    if let l = m.latency.summary {
                        line += ", p50 \(Format.micros(l.p50)), p99 \(Format.micros(l.p99))"
                    }
                    if let w = m.extra["writerCommitsPerSecond"] { line += ", writer \(Format.si(w)) commits/s" }
                    if let g = m.extra["callsPerCommit"] { line += String(format: ", %.1f calls per commit", g) }
                    if let g = m.extra["pagesPerCommit"] { line += String(format: ", %.1f pages per commit", g) }
                    if let g = m.extra["syncMillisPerCommit"], let p = m.extra["syncPercent"] {
                        line += String(format: ", %.2f ms sync per commit (%.0f %% of the time)", g, p)
                    }
                    if let g = m.extra["rawEnginePagesPerCommit"], let t = m.extra["rawEngineSyncMillisPerCommit"] {
                        line += String(format: " (raw engine: %.1f pages, %.2f ms sync)", g, t)
                    }
                    if let g = m.extra["peakMemory"] { line += ", peak memory +\(Format.bytes(g)) (own process)" }
                    if let g = m.extra["treeDescentsPerOp"] { line += String(format: ", %.1f descents/op", g) }
                    if let g = m.extra["heapAllocationsPerOp"] { line += String(format: ", %.1f allocations/op", g) }
                    progress(line)
                }
            }
        }
    }

    func fileBytesOf(_ s: SystemName, _ dir: String) -> UInt64 {
        switch s {
        case .fief: return fileSize(dir + "/bench.fief")
        case .sqlite: return fileSize(dir + "/bench.sqlite") + fileSize(dir + "/bench.sqlite-wal")
        case .lmdb: return fileSize(dir + "/bench.mdb")
        }
    }
}

/// Measurements gathered per benchmark and system, in the order they first appeared.
struct ResultTable {
    private var ids: [String] = []
    private var runs: [String: [SystemName: [Measurement]]] = [:]

    mutating func add(_ id: String, _ s: SystemName, _ m: Measurement) {
        if runs[id] == nil { ids.append(id); runs[id] = [:] }
        runs[id]![s, default: []].append(m)
    }

    func benchmarks(_ p: BenchParameters) -> [BenchmarkResult] {
        ids.map { id in
            let e = BenchCatalog.entry(id)
            let durability: Durability =
                id == "small-txns.none" ? .none : id.hasPrefix("small-txns.") ? .full : p.durability
            let systems = p.systems.compactMap { s -> SystemResult? in
                guard let ms = runs[id]![s], !ms.isEmpty else { return nil }
                var latency = LatencyRecorder()
                for m in ms { latency.add(m.latency) }
                var extra: [String: Double] = [:]
                for key in Set(ms.flatMap(\.extra.keys)) where key != "peakMemory" {
                    extra[key] = SampleStats(ms.compactMap { $0.extra[key] }).median
                }
                let mem = ms.compactMap { $0.extra["peakMemory"] }
                return SystemResult(
                    system: s, value: SampleStats(ms.map(\.value)), latency: latency.summary,
                    peakMemory: mem.isEmpty ? nil : SampleStats(mem), curve: ms.last?.curve,
                    extra: extra.isEmpty ? nil : extra)
            }
            return BenchmarkResult(
                id: id, title: e.title, unit: e.unit, higherIsBetter: e.higherIsBetter, durability: durability,
                systems: systems, latencyOf: e.latencyOf)
        }
    }
}
