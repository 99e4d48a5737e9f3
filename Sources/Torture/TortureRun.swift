import Engine
import FaultFS
import FiefObjects
import Foundation
import SeededRandomness
import TortureSchema

public enum TortureProfile: String, CaseIterable, Sendable {
    /// About two minutes on a 2-core machine.
    case quick
    /// About ten minutes.
    case ci
    /// Open-ended: give --duration.
    case soak

    var scale: Int {
        switch self {
        case .quick: return 1
        case .ci: return 5
        case .soak: return 50
        }
    }
}

public struct TortureOptions: Sendable {
    public var seed: UInt64
    public var profile: TortureProfile = .quick
    public var scenarios: [String] = ["all"]
    public var cycles: Int?
    public var duration: Double?
    public var jobs: Int = 1
    public var shard: (index: Int, count: Int) = (1, 1)
    public var out: String = "fief-out/torture"
    /// Run the writers on a deliberately broken engine (debug builds), to see the checkers fire.
    package var broken: BrokenVariant?
    /// Run the object writers on a deliberately broken object layer (debug builds).
    package var brokenObjects: BrokenObjectLayer?
    /// The name of whichever broken variant is chosen.
    public var brokenName: String? { broken?.rawValue ?? brokenObjects?.rawValue }

    /// Chooses an engine or object-layer variant by name; nil when the name is neither.
    public mutating func chooseBroken(_ name: String) -> Bool {
        if let v = BrokenVariant(rawValue: name) { broken = v; return true }
        if let v = BrokenObjectLayer(rawValue: name) { brokenObjects = v; return true }
        return false
    }
    /// Run only this cycle (reproduction).
    public var onlyCycle: Int?
    /// The store under test (default: Fief's engine with its own scenarios).
    public var target: TargetSpec = .default
    /// What a sync makes durable on the FaultFS mounts the scenarios use.
    public var fsModel: PersistenceModel = .posix
    /// Every database encrypted, with a key drawn from the seed (`TortureEncryption`).
    public var encrypt = false

    public init(seed: UInt64) { self.seed = seed }
}

/// One thing a cycle did to the store (a cut, a kill, a fault, a run of checks), under its
/// mode, and what checking the store after it found.
public struct CycleEvent: Sendable {
    public var mode: String
    public var violations: [Violation]
    public var description: String

    public init(_ mode: String, _ violations: [Violation], _ description: String) {
        self.mode = mode
        self.violations = violations
        self.description = description
    }
}

/// What one cycle found. A cycle may hold several crash events, each under its own mode.
public struct CycleOutcome: Sendable {
    public var events: [CycleEvent] = []
    public var faults = 0
    public var crashPoints: Set<String> = []
    public var growth: GrowthCurve?
    public var notes: [String] = []
    public var crashStates: [CrashStateCoverage] = []
    public init() {}
    public var violations: [Violation] { events.flatMap { e in e.violations.map { $0.prefixed(e.description) } } }
}

/// A torture scenario: a number of independent cycles, each reproducible from its seed.
public protocol Scenario: Sendable {
    var name: String { get }
    func plannedCycles(_ profile: TortureProfile) -> Int
    func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome
    /// Runs on encrypted files whether or not the run is `--encrypt`.
    var alwaysEncrypted: Bool { get }
}

extension Scenario {
    public var alwaysEncrypted: Bool { false }
}

public struct ScenarioContext: Sendable {
    public let options: TortureOptions
    /// Environment for writer processes.
    public var writerEnvironment: [String: String] {
        options.brokenName.map { [BrokenVariant.environmentVariable: $0] } ?? [:]
    }
}

public enum Scenarios {
    /// Fief's engine and object layer, with their named crash points, version checks and growth under pins.
    public static let all: [Scenario] = [
        CrashPointsScenario(), PowerCutScenario(), IsolationScenario(), GrowthScenario(), IOErrorScenario(),
        ObjectsScenario(), FileOperationsScenario(), FaultKindsScenario(), ReadersScenario(), CrashStatesScenario(),
        NotifyScenario(), BatchScenario(), KeystreamScenario()
    ]
    /// Every other target, through `TortureTarget`.
    public static let generic: [Scenario] = [
        TargetCrashScenario(), TargetPowerCutScenario(), TargetIsolationScenario(), TargetIOErrorScenario(),
        TargetCrashStatesScenario()
    ]

    public static func available(for target: TargetSpec) -> [Scenario] { target.usesFiefScenarios ? all : generic }

    public static func named(_ names: [String], for target: TargetSpec = .default) throws -> [Scenario] {
        let known = available(for: target)
        if names.contains("all") { return known }
        return try names.map { n in
            guard let s = known.first(where: { $0.name == n }) else {
                let onlyFief = all.contains { $0.name == n } ? " ('\(n)' runs only on target fief)" : ""
                throw TortureError.invalid(
                    "unknown scenario '\(n)' for target \(target)\(onlyFief); "
                        + "known: \(known.map(\.name).joined(separator: ", ")), all"
                )
            }
            return s
        }
    }
}

/// Runs scenarios, keeps the evidence of every failure, and writes the result files.
public final class TortureRun {
    let options: TortureOptions
    let progress: Progress

    public init(options: TortureOptions, progress: Progress = Progress()) {
        self.options = options
        self.progress = progress
    }

    static func seed(_ run: UInt64, scenario: String, cycle: Int) -> UInt64 {
        var r = SeededRandom.derive(run ^ FNV1a.of(scenario), UInt64(cycle) &+ 1)
        return r.next()
    }

    public func run() throws -> TortureResults {
        let scenarios = try Scenarios.named(options.scenarios, for: options.target)
        if options.broken != nil && !options.target.usesFiefScenarios {
            throw TortureError.invalid(
                "--broken runs Fief's broken engine variants; it needs --target fief, not \(options.target)")
        }
        let started = ISO8601DateFormatter().string(from: Date())
        var results = TortureResults(
            seed: options.seed, profile: options.profile.rawValue,
            shard: "\(options.shard.index)/\(options.shard.count)", started: started)
        results.target = TargetInfo(options.target)
        results.fsModel = options.fsModel.rawValue
        if options.encrypt {
            guard options.target.usesFiefScenarios else {
                throw TortureError.invalid(
                    "--encrypt runs Fief's own scenarios on encrypted files; "
                        + "it needs --target fief, not \(options.target)"
                )
            }
            results.encrypted = true
        }
        defer { TortureEncryption.deactivate() }
        let t0 = Date()
        try FileManager.default.createDirectory(atPath: options.out, withIntermediateDirectories: true)
        // A run killed mid-cycle leaves its FaultFS mounts in its folder, and a cycle of the next
        // run into the same folder would find its mountpoint taken.
        for m in Mounter.faultFSMounts(under: options.out) {
            progress.say("torture: \(try Mounter.unmount(m)), a FaultFS mount an earlier run left in \(options.out)")
        }
        let perScenarioDeadline = options.duration.map { $0 / Double(scenarios.count) }
        for s in scenarios {
            let r = try runScenario(s, deadlineSeconds: perScenarioDeadline)
            results.scenarios.append(r.result)
            if let g = r.growth { results.growth = g }
            try ResultFiles.write(results, to: options.out)
        }
        results.durationSeconds = Date().timeIntervalSince(t0)
        try ResultFiles.write(results, to: options.out)
        return results
    }

    func runScenario(_ s: Scenario, deadlineSeconds: Double?) throws -> (result: ScenarioResult, growth: GrowthCurve?) {
        var result = ScenarioResult(name: s.name)
        if options.encrypt || s.alwaysEncrypted {
            TortureEncryption.activate(seed: options.seed)
        } else {
            TortureEncryption.deactivate()
        }
        let planned = options.cycles ?? s.plannedCycles(options.profile)
        let t0 = Date()
        let deadline = deadlineSeconds.map { t0.addingTimeInterval($0) }
        let context = ScenarioContext(options: options)
        let work = options.out + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // Shard k of n takes cycles k-1, k-1+n, ...: disjoint slices of one seed space.
        let owned: (Int) -> Bool = { [options] i in i % options.shard.count == options.shard.index - 1 }
        let lock = NSLock()
        var growth: GrowthCurve?
        var points = Set<String>()
        var next = 0
        var done = 0
        func take() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            while true {
                if let only = options.onlyCycle {
                    if next > only { return nil }
                    next = only + 1
                    return only
                }
                if let deadline {
                    if Date() >= deadline { return nil }
                } else if next >= planned {
                    return nil
                }
                let i = next
                next += 1
                if owned(i) { return i }
            }
        }
        let totalOwned = options.onlyCycle != nil ? 1 : (deadline == nil ? (0..<planned).filter(owned).count : nil)
        let group = ThreadGroup()
        let firstError = FirstError()
        for _ in 0..<max(1, options.jobs) {
            group.spawn { [self] in
                while let i = take() {
                    let seed = TortureRun.seed(options.seed, scenario: s.name, cycle: i)
                    let dir = "\(work)/\(s.name)-\(i)"
                    try? FileManager.default.removeItem(atPath: dir)
                    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    var outcome: CycleOutcome
                    do {
                        outcome = try s.runCycle(i, seed: seed, dir: dir, context: context)
                    } catch {
                        outcome = CycleOutcome()
                        outcome.events.append(
                            CycleEvent(
                                "harness", [Violation(kind: .harness, text: "the cycle could not run: \(error)")],
                                "cycle \(i)"))
                        firstError.record(error)
                    }
                    var failure: CycleFailure?
                    if !outcome.violations.isEmpty {
                        failure = keepArtifacts(scenario: s.name, cycle: i, seed: seed, dir: dir, outcome: outcome)
                    } else {
                        try? FileManager.default.removeItem(atPath: dir)
                    }
                    lock.lock()
                    done += 1
                    result.cycles += 1
                    result.faultsInjected += outcome.faults
                    for e in outcome.events {
                        result.record(mode: e.mode, violations: e.violations.count)
                        for v in e.violations { result.classify(v) }
                    }
                    result.violations += outcome.violations.count
                    result.notes += outcome.notes
                    result.crashStates += outcome.crashStates
                    points.formUnion(outcome.crashPoints)
                    if let f = failure { result.failures.append(f) }
                    if let g = outcome.growth { growth = g }
                    let snapshot = (done, result.faultsInjected, result.violations)
                    lock.unlock()
                    if let f = failure {
                        progress.say(
                            "FAIL \(s.name) cycle \(i): \(f.violations.first?.text ?? "")\n  reproduce: \(f.reproduce)")
                    }
                    let remaining = deadline.map { $0.timeIntervalSinceNow }
                    progress.update(
                        scenario: s.name, cycles: snapshot.0, total: totalOwned, faults: snapshot.1,
                        violations: snapshot.2, remaining: remaining)
                }
            }
        }
        group.join()
        progress.endLine()
        try? FileManager.default.removeItem(atPath: work)
        result.durationSeconds = Date().timeIntervalSince(t0)
        result.cyclesPerMinute = result.durationSeconds > 0 ? Double(result.cycles) * 60 / result.durationSeconds : 0
        result.crashPointsCovered =
            CrashPoint.allCases.map(\.rawValue).filter { points.contains($0) }
            + points.filter { CrashPoint(rawValue: $0) == nil }.sorted()
        result.failures.sort { $0.cycle < $1.cycle }
        result.crashStates.sort { ($0.cycle, $0.commit) < ($1.cycle, $1.commit) }
        if let share = result.crashStates.operationLevelExhaustiveShare {
            let all = result.crashStates.filter { $0.operations != nil }
            result.notes.append(
                "operation level: \(all.filter(\.exhaustive).count) of \(all.count) crashed commits "
                    + "(\(String(format: "%.1f", share * 100)) %) explored exhaustively")
        }
        progress.say(
            "\(options.target) \(s.name): \(result.passed ? "passed" : "FAILED") "
                + "(\(result.verdict)), \(result.cycles) cycles, \(result.violations) violations, "
                + "\(String(format: "%.0f", result.cyclesPerMinute)) cycles/min"
        )
        return (result, growth)
    }

    /// Moves a failed cycle's files (database as found after the crash, oracle log, traces,
    /// process output) to the artifacts folder, with what is needed to run it again.
    func keepArtifacts(scenario: String, cycle: Int, seed: UInt64, dir: String, outcome: CycleOutcome) -> CycleFailure {
        let target = "\(options.out)/artifacts/\(scenario)-cycle\(cycle)"
        try? FileManager.default.createDirectory(atPath: options.out + "/artifacts", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: target)
        let kept = (try? FileManager.default.moveItem(atPath: dir, toPath: target)) != nil
        let record = ReproductionRecord(
            scenario: scenario, runSeed: options.seed, cycle: cycle, cycleSeed: seed,
            profile: options.profile.rawValue, broken: options.brokenName,
            violations: outcome.violations, target: options.target.description,
            fsModel: options.fsModel == .posix ? nil : options.fsModel.rawValue,
            encrypted: options.encrypt ? true : nil)
        if kept, let data = try? JSONEncoder().encode(record) {
            try? data.write(to: URL(fileURLWithPath: target + "/cycle.json"))
        }
        var command = "fief torture run --scenario \(scenario) --seed \(options.seed) --only-cycle \(cycle)"
        if let b = options.brokenName { command += " --broken \(b)" }
        if options.encrypt { command += " --encrypt" }
        if options.target != .default { command += " --target \(TortureRun.shellQuoted(options.target.description))" }
        if kept { command = "fief torture reproduce \(target)   (or: \(command))" }
        if kept && TortureReplay.shrinkableScenarios.contains(scenario) && options.target == .default {
            command += "; shrink it to a replay file: fief torture shrink \(target)"
        }
        return CycleFailure(
            cycle: cycle, seed: seed,
            description: outcome.events.first { !$0.violations.isEmpty }?.description ?? "cycle \(cycle)",
            violations: outcome.violations, artifacts: kept ? target : nil, reproduce: command)
    }
}

extension TortureRun {
    /// `text` as one shell word.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "-_=,.:/".contains($0) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// What `fief torture reproduce DIR` needs to run a failed cycle again.
public struct ReproductionRecord: Codable, Sendable {
    public var scenario: String
    public var runSeed: UInt64
    public var cycle: Int
    public var cycleSeed: UInt64
    public var profile: String
    public var broken: String?
    public var violations: [Violation]
    /// The target, canonical (`sqlite:journal=wal,synchronous=full`); absent in older records: fief.
    public var target: String?
    /// The FaultFS persistence model; absent: posix.
    public var fsModel: String?
    /// The run encrypted its databases; absent: plain.
    public var encrypted: Bool? = nil
}
