import Engine
import FiefObjects
import Foundation
import SeededRandomness
import TortureSchema

/// An object graph (links, lists, backlinks, an index, cascading deletes, upserts) written
/// through the object layer, one engine commit per object write. Writer processes die at
/// every engine crash point and at random times, power is cut under every FaultFS mode, and
/// each cycle ends with a schema migration killed at a crash point. After every death the
/// file must hold exactly the graph after one commit k (acknowledged <= k <= attempted), pass
/// the engine's and the object layer's checks, and be wholly before or wholly after the
/// migration.
public struct ObjectsScenario: Scenario {
    public var name: String { "objects" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 9 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        if index % 3 == 2 { return try powerCutCycle(index, seed: seed, dir: dir, context: context) }
        var rng = SeededRandom(seed: seed)
        let db = dir + "/objects.fief", oracle = dir + "/oracle.log"
        let workload = ObjectGraphWorkload(seed: seed)
        let points = CrashPoint.commitPoints
        var (outcome, current) = try ObjectsScenario.runDeaths(
            ObjectsScenario.deaths(cycle: index, using: &rng), dir: dir, seed: seed,
            environment: context.writerEnvironment)
        if !outcome.violations.isEmpty { return outcome }
        if index % 3 == 0 {
            // Starting past the flip, stepping over every point in seven such cycles.
            // Format 1 and format 2 in turn: each conversion path is killed at every point.
            try convert(
                &outcome, from: Int64(1 + (index / 3) % 2), killedAt: points[(index / 3 * 4 + 3) % points.count],
                db: db, dir: dir,
                seed: seed, context: context)
            if !outcome.violations.isEmpty { return outcome }
        }
        // A migration to schema 2, killed at a crash point (rotating over the cycles). Not when
        // the writers died before their first commit: a file without a schema is made at schema 2
        // with no migration run (as Realm does), which the model of a migrated graph is not.
        let schemaBefore = (try? ObjectStore.storedSchemaVersion(at: db, encryptionKey: TortureEncryption.key)) ?? nil
        guard schemaBefore != nil else { return outcome }
        let point = points[index % points.count]
        let notKilled = try run(
            .objectsMigrate(db: db), killedAt: point, 1, output: "\(dir)/migrate.out",
            label: "objects migration", context)
        var verdict = ObjectRecoveryCheck.verify(
            dbPath: db, oraclePath: oracle, workload: workload, environment: context.writerEnvironment)
        if let notKilled {
            verdict.violations.append(notKilled)
        } else if let s = try? ObjectStore.storedSchemaVersion(at: db, encryptionKey: TortureEncryption.key),
            (s == 2) != point.newVersionSurvivesProcessKill
        {
            verdict.violations.append(
                .harness(
                    "migration killed at \(point.rawValue): "
                        + "expected schema \(point.newVersionSurvivesProcessKill ? 2 : 1), found \(s)"))
        }
        outcome.crashPoints.insert("migration-\(point.rawValue)")
        outcome.events.append(
            CycleEvent(
                "objects-migration", verdict.violations,
                "migration to schema 2 killed at \(point.rawValue):1 at commit \(current)"
            ))
        guard verdict.violations.isEmpty else { return outcome }
        // Schema 2 goes on: a writer with its models (migrating first when the migration died
        // before its flip) adds, links and deletes objects until it is killed at a crash point.
        current = verdict.recoveredCommit
        let p2 = points[(index + 2) % points.count], nth = Int.random(in: 1...4, using: &rng)
        let writer2NotKilled = try run(
            .objectsWriter(db: db, oracle: oracle, seed: seed, maxCommit: current + UInt64(nth) + 3, schema: 2),
            killedAt: p2, nth,
            output: "\(dir)/writer-schema-2.out", label: "schema-2 objects writer", context)
        var after = ObjectRecoveryCheck.verify(
            dbPath: db, oraclePath: oracle, workload: workload, environment: context.writerEnvironment)
        after.violations += writer2NotKilled.map { [$0] } ?? []
        outcome.events.append(
            CycleEvent(
                "objects-schema-2", after.violations,
                "schema-2 objects writer killed at \(p2.rawValue):\(nth) from commit \(current)"
            ))
        guard after.violations.isEmpty, index % 4 == 1 else { return outcome }
        // Every fourth cycle the file is reopened as a cache (deleteIfMigrationNeeded), killed
        // at a crash point of its first commits.
        let p3 = points[(index / 4) % points.count], nth3 = Int.random(in: 1...3, using: &rng)
        let cacheNotKilled = try run(
            .objectsCache(db: db, maxNotes: nth3 + 3), killedAt: p3, nth3,
            output: "\(dir)/cache.out", label: "cache reopen", context)
        var reopened = ObjectRecoveryCheck.verify(
            dbPath: db, oraclePath: oracle, workload: workload, environment: context.writerEnvironment,
            cacheReopen: true)
        reopened.violations += cacheNotKilled.map { [$0] } ?? []
        outcome.crashPoints.insert("cache-reopen-\(p3.rawValue)")
        outcome.events.append(
            CycleEvent(
                "objects-cache-reopen", reopened.violations,
                "reopened as a cache (deleteIfMigrationNeeded), killed at \(p3.rawValue):\(nth3)"
            ))
        return outcome
    }

    /// The file written back in object format `old` (1 or 2), then opened by a process that
    /// converts it to the current format and is killed at `point` of that one write: the file
    /// must be in one format or the other, whole (the current one only past the flip), and hold
    /// the same graph.
    func convert(
        _ outcome: inout CycleOutcome, from old: Int64, killedAt point: CrashPoint, db: String, dir: String,
        seed: UInt64,
        context: ScenarioContext
    ) throws {
        let before = ObjectRecoveryCheck.verify(
            dbPath: db, oraclePath: dir + "/oracle.log", workload: ObjectGraphWorkload(seed: seed),
            environment: context.writerEnvironment)
        let wroteOld = try {
            let handle = try Database(path: db, options: TortureEncryption.options(create: false))
            return try FormatConversion.downgrade(handle, path: db, to: old)
        }()
        guard wroteOld else {
            // The writers died before their first commit: no objects, so no format to convert.
            outcome.events.append(
                CycleEvent(
                    "objects-conversion", before.violations,
                    "no object layer at commit \(before.recoveredCommit): nothing to convert"
                ))
            return
        }
        let notKilled = try run(
            .objectsConvert(db: db), killedAt: point, 1, output: "\(dir)/convert.out",
            label: "format conversion", context)
        var violations = notKilled.map { [$0] } ?? []
        do {
            let format = try FormatConversion.format(
                try Database(path: db, options: TortureEncryption.options(create: false)))
            let expected = point.newVersionSurvivesProcessKill ? FormatConversion.current : old
            if format != expected {
                violations.append(
                    .harness(
                        "format conversion killed at \(point.rawValue): expected object format \(expected), "
                            + "found \(format)"))
            }
        } catch {
            violations.append(
                Violation(
                    kind: .integrity,
                    text: "format conversion killed at \(point.rawValue): the file does not open: \(error)"))
        }
        let after = ObjectRecoveryCheck.verify(
            dbPath: db, oraclePath: dir + "/oracle.log", workload: ObjectGraphWorkload(seed: seed),
            environment: context.writerEnvironment)
        violations += after.violations
        if after.recoveredCommit != before.recoveredCommit {
            violations.append(
                .harness(
                    "format conversion killed at \(point.rawValue): "
                        + "the graph was commit \(before.recoveredCommit) and is \(after.recoveredCommit)"))
        }
        // A conversion that died before its flip left the old format: converted here, so the
        // migration that follows is killed in its own write, not in the conversion's.
        if violations.isEmpty, !point.newVersionSurvivesProcessKill { try ObjectsWriter.convert(dbPath: db) }
        outcome.crashPoints.insert("conversion-\(point.rawValue)")
        outcome.events.append(
            CycleEvent(
                "objects-conversion", violations,
                "format-\(old) file converted, killed at \(point.rawValue):1 at commit \(before.recoveredCommit)"
            ))
    }

    /// The cycle's first three objects writers: each dies at an engine crash point (in turn
    /// over the cycles) or by SIGKILL at a seeded time.
    static func deaths(cycle index: Int, using rng: inout SeededRandom) -> [WriterDeath] {
        let points = CrashPoint.commitPoints
        return (0..<3).map { e in
            let kind = (index * 3 + e) % (points.count + 1)
            // Every commit passes each point once, so the writer reaches the n-th well before
            // it runs out of commits.
            if kind < points.count { return .at(points[kind], nth: Int.random(in: 1...6, using: &rng)) }
            return .kill(afterMicros: UInt32.random(in: 30_000...400_000, using: &rng), threads: 1)
        }
    }

    /// Objects writers on one file, each checked (in a verifier process) after it died; stops
    /// at the first violation. Returns the outcome and the commit the file holds.
    static func runDeaths(_ deaths: [WriterDeath], dir: String, seed: UInt64, environment: [String: String]) throws -> (
        CycleOutcome, UInt64
    ) {
        var outcome = CycleOutcome()
        let db = dir + "/objects.fief", oracle = dir + "/oracle.log"
        let workload = ObjectGraphWorkload(seed: seed)
        var current: UInt64 = 0
        for (e, death) in deaths.enumerated() {
            let log = "\(dir)/writer-\(e).out"
            let description: String
            let ending: ChildProcess.Ending
            if let point = death.point {
                let nth = death.nth ?? 1
                let child = try ChildProcess(
                    .objectsWriter(db: db, oracle: oracle, seed: seed, maxCommit: current + UInt64(nth) + 3),
                    environment: environment.merging([CrashPoint.environmentVariable: "\(point.rawValue):\(nth)"]) {
                        $1
                    },
                    output: log, label: "objects writer")
                ending = child.wait()
                description = "objects writer killed at \(point.rawValue):\(nth) from commit \(current)"
                outcome.crashPoints.insert(point.rawValue)
            } else {
                let child = try ChildProcess(
                    .objectsWriter(db: db, oracle: oracle, seed: seed, maxCommit: UInt64.max / 2),
                    environment: environment,
                    output: log, label: "objects writer")
                let delay = death.killAfterMicros ?? 0
                usleep(delay)
                child.kill9()
                ending = child.wait()
                description = "objects writer SIGKILLed after \(delay / 1000) ms from commit \(current)"
                outcome.crashPoints.insert("random-kill")
            }
            var verdict = ObjectRecoveryCheck.verify(
                dbPath: db, oraclePath: oracle, workload: workload, environment: environment)
            if ending != .signaled(SIGKILL) {
                verdict.violations.append(.harness("objects writer \(ending) instead of being killed; see \(log)"))
            }
            current = verdict.recoveredCommit
            outcome.events.append(
                CycleEvent(
                    "objects-" + (death.point != nil ? "crash-point" : "random-kill"), verdict.violations, description))
            if !verdict.violations.isEmpty { break }
        }
        return (outcome, current)
    }

    /// Runs a child process armed to kill itself at the `nth` pass of `point`; nil when it
    /// was killed there, else the violation that it was not.
    func run(
        _ role: ChildRole, killedAt point: CrashPoint, _ nth: Int, output: String, label: String,
        _ context: ScenarioContext
    ) throws -> Violation? {
        let child = try ChildProcess(
            role,
            environment: context.writerEnvironment.merging([CrashPoint.environmentVariable: "\(point.rawValue):\(nth)"])
            { $1 },
            output: output, label: label)
        let ending = child.wait()
        return ending == .signaled(SIGKILL)
            ? nil : .harness("\(label) \(ending) instead of being killed at \(point.rawValue):\(nth); see \(output)")
    }

    /// On a FaultFS mount: a writer killed at a crash point, then a cut; a cut while a writer runs.
    func powerCutCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let missing = FaultFSMount.missingOutcome("objects power cuts", mode: "no-fuse", cycle: index) {
            return missing
        }
        var rng = SeededRandom(seed: seed)
        let mode = PowerCutScenario.modes[(index / 3) % PowerCutScenario.modes.count]
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let workload = ObjectGraphWorkload(seed: seed)
        var current: UInt64 = 0
        for e in 0..<2 {
            let fs = FaultFSMount(
                backing: backing, mountpoint: mnt, seed: seed &+ UInt64(e),
                tracePath: "\(dir)/faultfs-trace-\(e).jsonl", model: context.options.fsModel)
            try fs.mount()
            defer { fs.unmount() }
            let writer = ChildRole.objectsWriter(
                db: mnt + "/objects.fief", oracle: oracle, seed: seed, maxCommit: e == 0 ? current + 10 : UInt64.max / 2
            )
            var description: String
            if e == 0 {
                let p = CrashPoint.commitPoints[(index / 3) % CrashPoint.commitPoints.count]
                let nth = Int.random(in: 1...6, using: &rng)
                let child = try ChildProcess(
                    writer,
                    environment: context.writerEnvironment.merging([
                        CrashPoint.environmentVariable: "\(p.rawValue):\(nth)"
                    ]) { $1 },
                    output: "\(dir)/writer-\(e).out", label: "objects writer")
                let ending = child.wait()
                try fs.cutPower(mode)
                description = "\(mode.name) power cut after the objects writer died at \(p.rawValue):\(nth)"
                if ending != .signaled(SIGKILL) {
                    outcome.events.append(
                        CycleEvent(
                            "objects-\(mode.name)",
                            [
                                .harness(
                                    "objects writer \(ending) instead of dying at \(p.rawValue):\(nth); "
                                        + "see \(dir)/writer-\(e).out")
                            ], description
                        ))
                    break
                }
                outcome.crashPoints.insert(p.rawValue)
            } else {
                let child = try ChildProcess(
                    writer, environment: context.writerEnvironment, output: "\(dir)/writer-\(e).out",
                    label: "objects writer")
                let delay = UInt32.random(in: 100_000...500_000, using: &rng)
                usleep(delay)
                try fs.cutPower(mode)
                child.kill9()
                _ = child.wait()
                description = "\(mode.name) power cut \(delay / 1000) ms into an objects writer's run"
            }
            outcome.faults += 1
            fs.unmount()
            let verdict = ObjectRecoveryCheck.verify(
                dbPath: backing + "/objects.fief", oraclePath: oracle, workload: workload,
                environment: context.writerEnvironment)
            current = verdict.recoveredCommit
            outcome.events.append(CycleEvent("objects-\(mode.name)", verdict.violations, description))
            if !verdict.violations.isEmpty { break }
        }
        return outcome
    }
}
