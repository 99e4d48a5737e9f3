import ArgumentParser
import Engine
import FaultFS
import FiefObjects
import Foundation
import Torture
import TortureSchema

struct TortureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "Kill writers mid-commit, cut power, and verify recovery.",
        subcommands: [
            TortureRunCommand.self, TortureReproduce.self, TortureShrink.self, TortureReplayCommand.self,
            TortureDetect.self, TortureChild.self
        ]
    )
}

extension TortureProfile: ExpressibleByArgument {}

struct TortureRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run torture scenarios and write results.json, junit.xml and summary.md.",
        discussion: """
            Scenarios: \(Scenarios.all.map(\.name).joined(separator: ", ")), or all (the default suite); \
            on targets other than fief: \(Scenarios.generic.map(\.name).joined(separator: ", ")).
            Targets: fief (default), fief:generic, sqlite[:journal=wal|delete,synchronous=full|normal|off|extra], \
            lmdb[:default|nosync|nometasync|writemap], exec:COMMAND \
            (a program speaking the JSON-lines adapter protocol).
            The seed is printed first; the same seed and scenario choose the same crash points, \
            faults and operations. --shard K/N runs the K-th of N disjoint slices of the cycles, \
            so a CI matrix can spread a soak over machines; merge the results with \
            `fief report merge`. Exit status: 0 when no violation, 1 when any.
            """
    )

    @Option(
        name: .long,
        help: """
            Scenario to run (repeatable, or comma-separated): \
            \(Scenarios.all.map(\.name).joined(separator: ", ")), all.
            """
    )
    var scenario: [String] = ["all"]
    @Option(help: "Seed for every random choice (default: a random one, printed).") var seed: UInt64?
    @Option(help: "quick (~2 min), ci (~10 min) or soak (use with --duration).") var profile: TortureProfile = .quick
    @Option(help: "Cycles per scenario (overrides the profile).") var cycles: Int?
    @Option(help: "Run for this many seconds in all, split across scenarios (overrides cycles).") var duration: Double?
    @Option(help: "Cycles to run at once.") var jobs: Int = 1
    @Option(help: "Run slice K of N of the cycles, as K/N.") var shard: String = "1/1"
    @Option(help: "Folder for results and artifacts.") var out: String = "fief-out/torture"
    @Option(
        help: """
            Run writers on a deliberately broken engine or object layer (debug builds): \
            \(TortureRunCommand.brokenNames.joined(separator: ", ")).
            """
    )
    var broken: String?
    @Option(help: "Run only this cycle (to reproduce a failure).") var onlyCycle: Int?
    @Option(help: "Persistence model of the FaultFS mounts: posix (default, strictest), ext4-ordered, ext4-writeback.")
    var fsModel: PersistenceModel = .posix
    @Flag(help: "Encrypt every database the scenarios make (format 3), with a key drawn from the seed.")
    var encrypt = false
    @Option(
        help: """
            The store under test: fief, fief:generic, sqlite:journal=wal,synchronous=full, \
            lmdb:nosync, exec:\"COMMAND\".
            """
    )
    var target: String = "fief"

    static var brokenNames: [String] {
        BrokenVariant.allCases.map(\.rawValue) + BrokenObjectLayer.allCases.map(\.rawValue)
    }

    func parsedShard() throws -> (Int, Int) {
        let parts = shard.split(separator: "/").compactMap { Int($0) }
        guard parts.count == 2, parts[1] >= 1, parts[0] >= 1, parts[0] <= parts[1] else {
            throw ValidationError("--shard must be K/N with 1 <= K <= N, e.g. 2/8")
        }
        return (parts[0], parts[1])
    }

    func validate() throws {
        _ = try parsedShard()
        if let cycles, cycles < 1 { throw ValidationError("--cycles must be at least 1") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let broken {
            var probe = TortureOptions(seed: 0)
            guard probe.chooseBroken(broken) else {
                throw ValidationError(
                    "unknown broken variant '\(broken)'; known: "
                        + "\(TortureRunCommand.brokenNames.joined(separator: ", "))"
                )
            }
            guard BrokenVariant.available else {
                throw ValidationError("--broken needs a debug build (release builds carry no broken variants)")
            }
        }
        if profile == .soak && duration == nil && cycles == nil {
            throw ValidationError("--profile soak needs --duration SECONDS (or --cycles)")
        }
    }

    func run() throws {
        // A bad target or a scenario it cannot run: one line, exit 1 (not a usage screen).
        let spec: TargetSpec
        do {
            spec = try TargetSpec(parsing: target)
            _ = try Scenarios.named(scenario.flatMap { $0.split(separator: ",").map(String.init) }, for: spec)
            if broken != nil && !spec.usesFiefScenarios {
                throw TortureError.invalid("--broken needs --target fief, not \(spec)")
            }
        } catch {
            FileHandle.standardError.write(Data("fief: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let s = seed ?? UInt64.random(in: 0...UInt64(Int64.max))
        let rerun = "--seed \(s)\(fsModel == .posix ? "" : " --fs-model \(fsModel)")\(encrypt ? " --encrypt" : "")"
        print(
            "fief torture: target \(spec), seed \(s), FaultFS model \(fsModel)\(encrypt ? ", encrypted" : "") "
                + "(rerun with \(rerun))"
        )
        fflush(stdout)
        var o = TortureOptions(seed: s)
        o.target = spec
        o.profile = profile
        o.scenarios = scenario.flatMap { $0.split(separator: ",").map(String.init) }
        o.cycles = cycles
        o.duration = duration
        o.jobs = jobs
        o.shard = try parsedShard()
        o.out = out
        if let broken { _ = o.chooseBroken(broken) }
        o.onlyCycle = onlyCycle
        o.fsModel = fsModel
        o.encrypt = encrypt
        let results: TortureResults
        do {
            results = try TortureRun(options: o).run()
        } catch {
            FileHandle.standardError.write(Data("fief torture: \(error)\n".utf8))
            throw ExitCode(2)
        }
        print(
            "fief torture: \(results.passed ? "passed" : "FAILED") "
                + "in \(String(format: "%.0f", results.durationSeconds)) s; "
                + "results in \(out)/results.json, junit.xml, summary.md"
        )
        if !results.passed { throw ExitCode(1) }
    }
}

struct TortureReproduce: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reproduce", abstract: "Run a failed cycle again from its artifacts folder.")
    @Argument(help: "An artifacts folder printed by a failed run (it holds cycle.json).") var dir: String
    @Option(help: "Folder for the rerun's results.") var out: String?

    func run() throws {
        guard let data = FileManager.default.contents(atPath: dir + "/cycle.json"),
            let record = try? JSONDecoder().decode(ReproductionRecord.self, from: data)
        else {
            FileHandle.standardError.write(
                Data(
                    "fief: \(dir)/cycle.json is missing or unreadable; give a folder printed by a failed torture run\n"
                        .utf8))
            throw ExitCode(2)
        }
        let target: TargetSpec
        do {
            target = try record.target.map(TargetSpec.init(parsing:)) ?? .default
        } catch {
            FileHandle.standardError.write(Data("fief: \(dir)/cycle.json: \(error)\n".utf8))
            throw ExitCode(2)
        }
        print(
            "fief torture reproduce: target \(target), scenario \(record.scenario), "
                + "seed \(record.runSeed), cycle \(record.cycle)"
        )
        print("originally: \(record.violations.prefix(3).map(\.text).joined(separator: "; "))")
        var o = TortureOptions(seed: record.runSeed)
        o.target = target
        o.profile = TortureProfile(rawValue: record.profile) ?? .quick
        o.scenarios = [record.scenario]
        o.onlyCycle = record.cycle
        if let b = record.broken { _ = o.chooseBroken(b) }
        if let m = record.fsModel, let model = PersistenceModel(rawValue: m) { o.fsModel = model }
        o.encrypt = record.encrypted ?? false
        o.out = out ?? (dir + "/rerun")
        let results = try TortureRun(options: o).run()
        let outcome =
            results.passed ? "no violation this time (timing-dependent kills may not repeat exactly)" : "reproduced"
        print("fief torture reproduce: \(outcome)")
        if !results.passed { throw ExitCode(1) }
    }
}

struct TortureShrink: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shrink",
        abstract: "Shrink a failing crash cycle to its smallest form and write it as a replay file.",
        discussion: """
            PATH is an artifacts folder printed by a failed run (crash-points scenario) or a replay file. \
            Every candidate runs for real (writer processes killed at crash points, the recovery check) \
            and is kept only if it fails with the same kind of violation. Writes replay.json into the \
            folder (or --out); run it with `fief torture replay`. Exit status: 0 when a replay was \
            written, 2 when the case could not be read or did not fail.
            """
    )
    @Argument(help: "An artifacts folder (with cycle.json) or a replay file.") var path: String
    @Option(help: "Stop after this many seconds, keeping the smallest case so far.") var budget: Double = 120
    @Option(help: "Where to write the shrunk replay (default: PATH/replay.json, or PATH.shrunk.json for a file).")
    var out: String?

    func run() throws {
        do {
            let (original, defaultOut) = try TortureShrink.load(path)
            let target = out ?? defaultOut
            let work = NSTemporaryDirectory() + "fief-shrink-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: work) }
            let r = try Shrinker(budgetSeconds: budget, workDir: work) {
                print($0); fflush(stdout)
            }.shrink(original)
            try r.replay.write(to: target)
            print(
                "fief torture shrink: \(r.before) -> \(r.after) in \(String(format: "%.1f", r.seconds)) s, "
                    + "\(r.candidates) candidates\(r.budgetRanOut ? " (budget ran out)" : "")"
            )
            if let ok = r.passesOnCorrectEngine {
                print(
                    "fief torture shrink: on the correct engine the shrunk case "
                        + "\(ok ? "passes" : "FAILS TOO (not the broken variant's doing)")"
                )
            }
            print("fief torture shrink: wrote \(target); run it with: fief torture replay \(target)")
        } catch {
            FileHandle.standardError.write(Data("fief torture shrink: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The case at `path`, and where its shrunk replay goes by default.
    static func load(_ path: String) throws -> (TortureReplay, String) {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw TortureError.invalid("\(path): no such file or folder")
        }
        if !isDir.boolValue {
            return (try TortureReplay.read(path), path.replacingOccurrences(of: ".json", with: "") + ".shrunk.json")
        }
        return (try TortureReplay(artifacts: path), path + "/replay.json")
    }
}

struct TortureReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run a replay file and say whether its failure is still there.",
        discussion: """
            The file names the writers' deaths, the commits and the engine; `--broken none` runs it on \
            the correct engine instead of the variant it was recorded on. Exit status: 0 when the case \
            passes (fixed), 1 when it still fails (or fails another way), 2 when it cannot run; so it \
            serves as the test of `git bisect run` (scripts/bisect.sh).
            """
    )
    @Argument(help: "A replay file (written by `fief torture shrink`).") var file: String
    @Option(
        help:
            "Run on this broken engine variant instead of the file's (debug builds), or 'none' for the correct engine.")
    var broken: String?
    @Option(help: "Folder for the run's database and logs (kept).") var out: String?
    @Option(
        help: "Runs before the case is called fixed (default: 1, or 5 for a case with several threads or a timed kill)."
    ) var runs: Int?

    func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
    }

    func run() throws {
        let replay: TortureReplay
        var result: ReplayResult
        let dir = out ?? NSTemporaryDirectory() + "fief-replay-\(getpid())"
        do {
            replay = try TortureReplay.read(file)
            var override: String??
            if let broken { override = .some(broken == "none" ? nil : broken) }
            let engine = (override ?? replay.broken).map { "broken variant \($0)" } ?? "the correct engine"
            print("fief torture replay: \(replay.summary) on \(engine)")
            // A timing-dependent case may pass once and fail the next time: fixed only when
            // every run passes.
            let tries = runs ?? (replay.isDeterministic ? 1 : 5)
            result = try replay.run(in: dir, broken: override)
            var n = 1
            while result.passed && n < tries {
                result = try replay.run(in: dir, broken: override)
                n += 1
            }
            if tries > 1 {
                print(
                    "fief torture replay: \(n) run\(n == 1 ? "" : "s") (the case is timing-dependent: up to \(tries))")
            }
        } catch {
            FileHandle.standardError.write(Data("fief torture replay: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if out == nil { try? FileManager.default.removeItem(atPath: dir) }
        for v in result.violations.prefix(5) { print("  \(v.text)") }
        if result.passed {
            let failedWith = replay.expected.map { " (it failed with \($0.kind.rawValue))" } ?? ""
            print("fief torture replay: passes: fixed\(failedWith)")
            return
        }
        let expected = replay.expected?.kind.rawValue ?? "?"
        print(
            "fief torture replay: \(result.reproduces ? "still failing" : "FAILS ANOTHER WAY (expected \(expected))")")
        throw ExitCode(1)
    }
}
