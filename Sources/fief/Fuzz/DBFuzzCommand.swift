import ArgumentParser
import Engine
import Foundation
import Torture

/// `fief db fuzz`: damages copies of an engine file, an object store and an encrypted object
/// store (bit flips, zeroed runs, truncations, spliced pages, header bytes; see `FileDamage`)
/// and runs the `fief db` read commands on each. A command must answer as on the undamaged
/// file (or on its previous version, which a damaged header may rightly select) or fail with
/// a one-line typed error; a signal, a hang, an answer that differs, an untyped error or a
/// write to the damaged file is a finding, kept with its file and a reproduce line.
struct DBFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Damage database files in seeded ways and run the db commands on each: no trap, no wrong answer.",
        discussion: """
            Example: fief db fuzz --files 20000 --seed 7 --out fuzz-out
            Reproduce one file: fief db fuzz --kind objects --seed 7 --only 1234 --out fuzz-out
            """)
    @Option(help: "Which files to damage: engine, objects, encrypted or all.") var kind: String = "all"
    @Option(help: "Damaged files per kind.") var files: Int = 2000
    @Option(help: "Seed of the base files and of every damage (default: random, printed).") var seed: UInt64?
    @Option(help: "Run only the damaged file with this index (reproduces a finding).") var only: Int?
    @Option(help: "Where base files, findings and fuzz.json go.") var out: String = "fuzz-out"
    @Option(help: "Seconds one file may take before it counts as a hang.") var timeout: Double = 30
    @Flag(help: "Print no progress.") var quiet = false

    func validate() throws {
        if files < 1 { throw ValidationError("--files must be 1 or more") }
        if timeout <= 0 { throw ValidationError("--timeout must be above 0") }
        if kind != "all" && FuzzKind(rawValue: kind) == nil {
            throw ValidationError(
                "--kind must be one of all, \(FuzzKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        try reportingErrors {
            let seed = self.seed ?? UInt64.random(in: 1...UInt64(UInt32.max))
            let kinds = kind == "all" ? FuzzKind.allCases : [FuzzKind(rawValue: kind)!]
            print(
                "fuzz: seed \(seed), \(only.map { "file \($0)" } ?? "\(files) files") per kind, "
                    + "kinds \(kinds.map(\.rawValue).joined(separator: ", ")); out \(out)"
            )
            var summaries: [FuzzSummary] = []
            for k in kinds {
                // A reproduction reuses the run's base files: an encrypted file gets a new salt
                // each time it is built, so rebuilding would damage other bytes.
                let corpus =
                    try only.flatMap { _ in FuzzCorpus.existing(k, dir: "\(out)/base") }
                    ?? FuzzCorpus.build(k, dir: "\(out)/base", seed: seed)
                let range = only.map { $0..<($0 + 1) } ?? 0..<files
                let s = try FuzzRun(corpus: corpus, seed: seed, range: range, out: out, timeout: timeout, quiet: quiet)
                    .run()
                print(s.line)
                summaries.append(s)
            }
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            try enc.encode(FuzzReport(seed: seed, kinds: summaries)).write(to: URL(fileURLWithPath: "\(out)/fuzz.json"))
            let findings = summaries.reduce(0) { $0 + $1.findings.count }
            print(
                "fuzz: \(findings == 0 ? "clean" : "\(findings) finding(s), kept in \(out)/findings"); \(out)/fuzz.json"
            )
            if findings > 0 { throw ExitCode(1) }
        }
    }
}

/// The worker process of `fief db fuzz`: damages files `from..<to` one by one and runs the
/// read commands on each in this process, writing `begin I` before and a verdict line after
/// each, so the parent knows which file a signal or a hang came from. Not for direct use.
struct DBFuzzWorker: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz-worker", abstract: "(internal) Damage files and run the db commands on them.",
        shouldDisplay: false)
    @Option var request: String

    func run() throws {
        try FuzzWorkerRun(try FuzzWorkerRequest(argument: request)).run()
    }
}
