import Engine
import FaultFS
import FiefObjects
import Foundation
import SeededRandomness
import TortureSchema

/// A failing crash cycle as one small JSON document: the writers' deaths, the commits they
/// make, the engine they run and the violation expected. `fief torture replay FILE` runs it on
/// any machine (real processes killed at real crash points, the real recovery check) and says
/// whether it still fails; `fief torture shrink` writes it, as small as it could make it.
public struct TortureReplay: Codable, Sendable, Equatable {
    /// The file format's version.
    public var replay = 1
    public var scenario = "crash-points"
    /// The broken engine variant the writers ran (debug builds), if any.
    public var broken: String?
    /// The seed the run drew its encryption key from, when its files were encrypted.
    public var encryptionSeed: UInt64?
    /// The workload's seed: bank transfers, and every commit `commits` does not spell out.
    public var seed: UInt64
    public var deaths: [WriterDeath]
    /// Explicit commits (commit i is `commits[i - 1]`); nil: derived from `seed`.
    public var commits: [PlannedCommit]?
    /// power-cut: the cuts, in order on one file (instead of `deaths`), and the FaultFS
    /// persistence model.
    public var cuts: [PowerCut]?
    public var fsModel: String?
    /// isolation: the list-append workers.
    public var isolation: IsolationScenario.Plan?
    /// readers: the reader processes killed and the commits around them (even cycles), or the
    /// readers racing a writer (odd cycles).
    public var readers: ReadersScenario.Plan?
    public var churn: ReadersScenario.Churn?
    /// notify: the observers and the last writer (the deaths are `deaths`).
    public var watch: NotifyScenario.Watch?
    /// keystream: the writer processes (always on encrypted files).
    public var keystream: KeystreamScenario.Plan?
    /// faults: the fault, its details and the commits before it.
    public var fault: FaultKindsScenario.Plan?
    /// file-ops: the operation, how it ends, and the commits around it.
    public var fileOperation: FileOperationsScenario.Plan?
    /// batch: the writers commit through `Database.batch`.
    public var batch: Bool?
    /// crash-states: the commits made (and synced) before the writers that die.
    public var cleanCommits: UInt64?
    /// crash-states: the state built after the deaths (nil: every state up to `stateBound`,
    /// then a seeded sample, until one fails).
    public var state: CrashState?
    public var stateBound: Int?
    /// The violation the case is kept for.
    public var expected: Expected?
    /// Where the case came from and how big it was before shrinking.
    public var origin: Origin?

    public struct Expected: Codable, Sendable, Equatable {
        public var kind: ViolationKind
        public var violation: String
    }

    /// Which of the unsynced sectors reached the disk, and whether the file's new size did.
    public struct CrashState: Codable, Sendable, Equatable {
        public var newSectors: [Int]
        public var newSize: Bool
    }

    public struct Origin: Codable, Sendable, Equatable {
        public var runSeed: UInt64?
        public var cycle: Int?
        public var before: ReplaySize
        public var shrinkSeconds: Double?
        public var candidatesRun: Int?

        public init(
            runSeed: UInt64?, cycle: Int?, before: ReplaySize, shrinkSeconds: Double? = nil, candidatesRun: Int? = nil
        ) {
            self.runSeed = runSeed
            self.cycle = cycle
            self.before = before
            self.shrinkSeconds = shrinkSeconds
            self.candidatesRun = candidatesRun
        }
    }

    public init(seed: UInt64, deaths: [WriterDeath], commits: [PlannedCommit]? = nil, broken: String? = nil) {
        self.seed = seed
        self.deaths = deaths
        self.commits = commits
        self.broken = broken
    }

    /// The case of a failed crash-points cycle, from the artifacts folder its run kept.
    public init(artifacts dir: String) throws {
        guard let data = FileManager.default.contents(atPath: dir + "/cycle.json"),
            let record = try? JSONDecoder().decode(ReproductionRecord.self, from: data)
        else {
            throw TortureError.invalid(
                "\(dir)/cycle.json is missing or unreadable; give a folder printed by a failed torture run")
        }
        guard TortureReplay.shrinkableScenarios.contains(record.scenario),
            record.target == nil || record.target == TargetSpec.default.description
        else {
            throw TortureError.invalid(
                "shrink handles \(TortureReplay.shrinkableScenarios.sorted().joined(separator: " and ")) "
                    + "cycles of target fief; this is \(record.scenario) on \(record.target ?? "fief") "
                    + "(rerun it with `fief torture reproduce \(dir)`)"
            )
        }
        if let b = record.broken, BrokenVariant(rawValue: b) == nil && BrokenObjectLayer(rawValue: b) == nil {
            throw TortureError.invalid("shrink runs broken variants; '\(b)' is not one")
        }
        self.init(seed: record.cycleSeed, deaths: [], broken: record.broken)
        scenario = record.scenario
        fsModel = record.fsModel
        var rng = SeededRandom(seed: record.cycleSeed)
        let (cycle, seed) = (record.cycle, record.cycleSeed)
        switch scenario {
        case CrashStatesScenario().name:
            deaths = CrashStatesScenario.deaths(cycle: cycle).map { .at($0, nth: 1) }
            cleanCommits = CrashStatesScenario.cleanCommits(using: &rng)
            stateBound = CrashStatesScenario.bound(TortureProfile(rawValue: record.profile) ?? .ci)
        case PowerCutScenario().name:
            cuts = PowerCutScenario.cuts(cycle: cycle, seed: seed)
        case FileOperationsScenario().name:
            fileOperation = FileOperationsScenario.plan(cycle: cycle, seed: seed)
        case FaultKindsScenario().name:
            fault = FaultKindsScenario.plan(cycle: cycle, seed: seed)
        case IsolationScenario().name:
            isolation = IsolationScenario.Plan()
        case ReadersScenario().name:
            if cycle % 2 == 0 { readers = ReadersScenario.plan(seed: seed) } else { churn = ReadersScenario.Churn() }
        case NotifyScenario().name:
            // The commit cycles; the object cycles (odd) are rerun whole.
            guard cycle % 2 == 0 else {
                throw TortureError.invalid(
                    "notify cycle \(cycle) watches object results; shrink takes the commit cycles "
                        + "(rerun it with `fief torture reproduce \(dir)`)"
                )
            }
            deaths = NotifyScenario.deaths(cycle: cycle, seed: seed)
            watch = NotifyScenario.Watch()
        case KeystreamScenario().name:
            keystream = KeystreamScenario.plan(cycle: cycle)
            // Always encrypted, with the run's key.
            encryptionSeed = record.runSeed
        case BatchScenario().name:
            // The cycle's first event (a death at a crash point); the two-process kill and the
            // power cut after it are rerun whole with `fief torture reproduce`.
            deaths = [BatchScenario.firstDeath(cycle: cycle, using: &rng)]
            batch = true
        case ObjectsScenario().name:
            // The cycle's three objects writers; its migration, schema-2 writer, cache reopen
            // and power cuts are rerun whole with `fief torture reproduce`.
            guard cycle % 3 != 2 else {
                throw TortureError.invalid(
                    "objects cycle \(cycle) is a power-cut cycle; shrink takes the writer-death cycles "
                        + "(rerun it with `fief torture reproduce \(dir)`)"
                )
            }
            deaths = ObjectsScenario.deaths(cycle: cycle, using: &rng)
        default:
            deaths = CrashPointsScenario.deaths(cycle: cycle, seed: seed)
        }
        if record.encrypted == true { encryptionSeed = record.runSeed }
        origin = Origin(
            runSeed: record.runSeed, cycle: record.cycle,
            before: ReplaySize(deaths: 0, threads: 0, commits: 0, changes: 0))
    }

    /// Whether the case runs on a FaultFS mount.
    public var needsFUSE: Bool {
        scenario == CrashStatesScenario().name || scenario == PowerCutScenario().name
            || scenario == FaultKindsScenario().name
            || fileOperation?.mode != nil
    }

    /// Whether the writers make `CommitWorkload`'s commits (all but the objects scenario's).
    public var usesCommitWorkload: Bool { scenario != ObjectsScenario().name && scenario != IsolationScenario().name }
    /// Whether the commits can be spelled out (the faults scenario's writers and readers, and
    /// the churn readers, check against the seeded ones).
    public var canSpellOutCommits: Bool { usesCommitWorkload && scenario != FaultKindsScenario().name && churn == nil }

    /// Scenarios whose failing cycles `fief torture shrink` takes.
    public static let shrinkableScenarios: Set<String> = [
        CrashPointsScenario().name, CrashStatesScenario().name, PowerCutScenario().name,
        BatchScenario().name, FileOperationsScenario().name, ObjectsScenario().name,
        FaultKindsScenario().name, KeystreamScenario().name, NotifyScenario().name,
        ReadersScenario().name, IsolationScenario().name
    ]

    /// Whether every run dies at the same places: crash points, one writer thread, no timed
    /// kill. A replay that is not is run several times before it is called fixed.
    public var isDeterministic: Bool {
        if let keystream { return keystream.threads == 1 }
        // Observers deliver when they are woken, readers die at moments: a matter of timing.
        if watch != nil || readers != nil || churn != nil || isolation != nil { return false }
        if let fault { return fault.kind == "short-write" || fault.kind == "kill-caller" || fault.kind == "fsync-lie" }
        if fileOperation != nil { return true }
        guard let cuts else { return deaths.allSatisfy(\.isDeterministic) }
        return cuts.allSatisfy(\.isDeterministic)
    }

    /// What the case does, in a line.
    public var summary: String {
        var steps: [String] = deaths.map(\.description)
        if let cuts { steps = cuts.map(\.description) }
        if let fileOperation { steps = [fileOperation.description] }
        if let fault { steps = ["\(fault.kind) after \(fault.warm) commits"] }
        if let churn {
            steps = [
                "\(churn.processes) reader processes x \(churn.threads) threads for \(churn.seconds) s against a writer"
            ]
        }
        if let isolation {
            steps = [
                "\(isolation.processes) processes x \(isolation.threads) threads "
                    + "x \(isolation.transactions) list-append transactions"
            ]
        }
        if let readers { steps = ["\(readers.readers.count) readers killed, \(readers.measured) commits measured"] }
        if let keystream {
            steps = [
                "\(keystream.stepsEndAt.count) writer processes of \(keystream.threads) threads, "
                    + "to commits \(keystream.stepsEndAt)"
            ]
        }
        var text = "\(scenario): " + steps.joined(separator: ", ")
        if batch == true { text += " (through batch)" }
        if encryptionSeed != nil { text += " (encrypted)" }
        return text
    }

    public var workload: CommitWorkload { CommitWorkload(seed: seed, schedule: commits) }

    /// Runs the case in `dir` (emptied first); `broken` overrides the file's engine variant
    /// (`.some(nil)`: the correct engine).
    public func run(in dir: String, broken override: String?? = nil) throws -> ReplayResult {
        let fm = FileManager.default
        try? fm.removeItem(atPath: dir)
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let variant = override ?? broken
        if let variant, BrokenVariant(rawValue: variant) == nil && BrokenObjectLayer(rawValue: variant) == nil {
            throw TortureError.invalid("unknown broken variant '\(variant)'")
        }
        if variant != nil && !BrokenVariant.available {
            throw TortureError.invalid(
                "this replay runs the broken variant '\(variant!)': it needs a debug build (or --broken none)")
        }
        if let s = encryptionSeed { TortureEncryption.activate(seed: s) } else { TortureEncryption.deactivate() }
        defer { TortureEncryption.deactivate() }
        let env = variant.map { [BrokenVariant.environmentVariable: $0] } ?? [:]
        if needsFUSE, let why = FaultFSMount.unavailableReason() {
            throw TortureError.invalid("\(scenario) replays need FUSE: \(why)")
        }
        let outcome: CycleOutcome
        switch scenario {
        case CrashStatesScenario().name:
            return try runCrashStates(in: dir, environment: env)
        case ObjectsScenario().name:
            outcome = try ObjectsScenario.runDeaths(deaths, dir: dir, seed: seed, environment: env).0
        case FileOperationsScenario().name:
            guard let plan = fileOperation else {
                throw TortureError.invalid("a file-ops replay needs its fileOperation")
            }
            outcome = try FileOperationsScenario().run(
                plan, dir: dir, workload: workload, environment: env, model: try model())
        case IsolationScenario().name:
            outcome = try IsolationScenario().run(
                isolation ?? IsolationScenario.Plan(), seed: seed, dir: dir, environment: env)
        case ReadersScenario().name:
            if let churn {
                outcome = try ReadersScenario().runChurn(churn, dir: dir, workload: workload, environment: env)
            } else {
                guard let plan = readers else { throw TortureError.invalid("a readers replay needs its readers") }
                outcome = try ReadersScenario().runDeaths(plan, dir: dir, workload: workload, environment: env)
            }
        case NotifyScenario().name:
            outcome = try NotifyScenario().runCommitCycle(
                deaths: deaths, watch: watch ?? NotifyScenario.Watch(), dir: dir, workload: workload, environment: env)
        case KeystreamScenario().name:
            guard let plan = keystream else { throw TortureError.invalid("a keystream replay needs its writers") }
            outcome = try KeystreamScenario().run(plan, dir: dir, workload: workload, environment: env)
        case FaultKindsScenario().name:
            guard let plan = fault else { throw TortureError.invalid("a faults replay needs its fault") }
            outcome = try FaultKindsScenario().run(plan, dir: dir, seed: seed, environment: env, model: try model())
        case PowerCutScenario().name:
            outcome = try PowerCut.run(cuts ?? [], dir: dir, workload: workload, environment: env, model: try model())
        case CrashPointsScenario().name, BatchScenario().name:
            outcome = try WriterDeath.run(deaths, dir: dir, workload: workload, environment: env, batch: batch ?? false)
        default:
            throw TortureError.invalid(
                "replays of \(scenario) are not supported "
                    + "(\(TortureReplay.shrinkableScenarios.sorted().joined(separator: ", ")))"
            )
        }
        let attempted = (try? OracleLog.read(dir + "/oracle.log").lastIntent) ?? 0
        return ReplayResult(violations: outcome.violations, commitsAttempted: attempted, expected: expected)
    }

    /// The FaultFS persistence model the case runs under.
    func model() throws -> PersistenceModel {
        guard let m = fsModel else { return .posix }
        guard let model = PersistenceModel(rawValue: m) else {
            throw TortureError.invalid("unknown FaultFS model '\(m)'")
        }
        return model
    }

    /// Writers on a FaultFS mount, then one crash state (or a search for a failing one).
    func runCrashStates(in dir: String, environment: [String: String]) throws -> ReplayResult {
        let points = try deaths.map { d -> CrashPoint in
            guard let p = d.point, d.nth ?? 1 == 1 else {
                throw TortureError.invalid("crash-states writers die at a crash point's first pass")
            }
            return p
        }
        var notes: [String] = []
        let made = try CrashImage.make(
            dir: dir, workload: workload, seed: seed, model: .posix, clean: cleanCommits ?? 0, deaths: points,
            environment: environment, notes: &notes)
        let attempted = (try? OracleLog.read(dir + "/oracle.log").lastIntent) ?? 0
        var result = ReplayResult(violations: [], commitsAttempted: attempted, expected: expected)
        guard case .success(let image) = made else {
            if case .failure(let f) = made { result.violations = [Violation(.harness, f.description)] }
            return result
        }
        result.unsyncedSectors = image.unsynced
        let mode = CrashStatesScenario.mode(points)
        func check(_ newSectors: Set<Int>, _ newSize: Bool) throws -> Bool {
            let found = try image.check(
                image.state(newSectors: newSectors, newSize: newSize), at: dir + "/state.fief",
                oraclePath: dir + "/oracle.log", workload: workload, mode: mode)
            guard !found.isEmpty else { return false }
            let lost = image.unsynced.filter { !newSectors.contains($0) }
            let named = lost.count <= 8 ? " \(lost)" : ""
            result.violations = found.map {
                $0.prefixed(
                    "\(mode), \(lost.count) of \(image.unsynced.count) unsynced sectors lost\(named)"
                        + "\(image.sizeChoice && !newSize ? " and the size" : "")")
            }
            result.state = CrashState(newSectors: newSectors.sorted(), newSize: newSize)
            return true
        }
        if let state {
            _ = try check(Set(state.newSectors).intersection(image.unsynced), state.newSize)
            return result
        }
        // The scenario's search: operation-level states, every one up to the bound.
        var rng = SeededRandom(seed: seed)
        for state in OperationStateSpace(image.operations).states(bound: stateBound ?? 4096, using: &rng).states {
            let bytes = image.bytes(state)
            let found = try image.check(
                bytes, at: dir + "/state.fief", oraclePath: dir + "/oracle.log", workload: workload, mode: mode)
            guard !found.isEmpty else { continue }
            result.violations = found.map { $0.prefixed("\(mode), \(state.describe(image.operations))") }
            // Pinned as sectors, which shrinking knows how to make fewer.
            result.state = image.sectorState(of: bytes).map {
                CrashState(newSectors: $0.newSectors.sorted(), newSize: $0.newSize)
            }
            break
        }
        return result
    }

    /// How big the case is: what shrinking makes smaller.
    public func size(_ r: ReplayResult) -> ReplaySize {
        let n = Int(r.commitsAttempted)
        // An objects case's commits are one object write each (ObjectGraphWorkload's).
        let changes =
            usesCommitWorkload ? (0..<n).reduce(0) { $0 + workload.planned(commit: UInt64($1 + 1)).changes.count } : n
        let threads = cuts.map { $0.map { $0.threads ?? 1 }.max() ?? 1 } ?? deaths.map(\.threads).max() ?? 1
        var size = ReplaySize(
            deaths: fileOperation != nil || fault != nil
                ? 1
                : isolation?.processes ?? churn?.processes ?? readers?.readers.count ?? keystream?.stepsEndAt.count
                    ?? cuts?.count ?? deaths.count,
            threads: isolation?.threads ?? churn?.threads ?? keystream?.threads ?? threads, commits: n, changes: changes
        )
        if scenario == ObjectsScenario().name { size.commitsAre = "one object write each" }
        if let isolation {
            size.commits = isolation.processes * isolation.threads * isolation.transactions
            size.commitsAre = "list-append transactions"
        }
        if let unsynced = r.unsyncedSectors, let s = r.state ?? state {
            size.lostSectors = unsynced.count - Set(s.newSectors).intersection(unsynced).count
            size.unsyncedSectors = unsynced.count
        }
        return size
    }

    public static func read(_ path: String) throws -> TortureReplay {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TortureError.invalid("\(path): no such replay file")
        }
        do {
            return try JSONDecoder().decode(TortureReplay.self, from: data)
        } catch {
            throw TortureError.invalid("\(path) is not a torture replay file: \(error)")
        }
    }

    public func write(to path: String) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try enc.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

/// What one run of a replay found.
public struct ReplayResult: Sendable {
    public var violations: [Violation]
    public var commitsAttempted: UInt64
    public var expected: TortureReplay.Expected?
    /// crash-states: the unsynced sectors after the deaths, and the state that failed.
    public var unsyncedSectors: [Int]?
    public var state: TortureReplay.CrashState?

    public var passed: Bool { violations.isEmpty }
    /// Fails with the kind of violation the case is kept for (any violation when none is named).
    public var reproduces: Bool {
        guard let expected else { return !passed }
        return violations.contains { $0.kind == expected.kind }
    }
}
