import ArgumentParser
import Foundation
import TortureSchema
import Reports

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Compare, render and combine benchmark results; render torture results.",
        subcommands: [
            ReportCompare.self, ReportHTML.self, ReportMarkdown.self, ReportTable.self, ReportCombine.self,
            ReportScaling.self,
            ReportMerge.self
        ]
    )
}

struct ReportCompare: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract:
            "Compare two bench results; exit 2 when Fief regressed, "
            + "against itself and its peers, beyond the threshold.",
        discussion: """
            Per benchmark and system: the medians, the change (Hodges-Lehmann estimate) with its \
            95% confidence interval and the Mann-Whitney U p-value over the repetitions, and a \
            verdict: regression, improvement, within noise, machine drift or too few samples. \
            A row of Fief fails when both its own numbers and its per-repetition ratio to the \
            peers (Fief/LMDB, Fief/SQLite, measured in the same runs) got worse with p < alpha \
            and beyond the threshold, so drift that slows every system alike does not fail. \
            Rows with fewer than --min-samples repetitions a side are not gated (a warning says \
            so). Sizes compare exactly. Exit status: 0 without a regression of Fief, 2 with one, \
            1 on bad input. The peers' rows are never gated: they show how much the machine drifted.
            """
    )

    @Argument(help: "The base results.json.") var base: String
    @Argument(help: "The new results.json.") var new: String
    @Option(help: "Smallest regression that fails (the minimum effect size), e.g. 5% or 2.5.") var threshold: String =
        "5%"
    @Option(help: "Largest p-value that counts as a change.") var alpha: Double = GatePolicy.defaultAlpha
    @Option(help: "Fewest repetitions a side for a verdict.") var minSamples: Int = GatePolicy.defaultMinSamples
    @Option(help: "Also write the comparison as Markdown here.") var markdown: String?
    @Option(help: "Also write an HTML page (comparison and the new results) here.") var html: String?
    @Option(help: "Also write the comparison as JSON here.") var json: String?

    func run() throws {
        var code: Int32 = 0
        try reportingErrors {
            let t = try Comparison.parseThreshold(threshold)
            guard alpha > 0, alpha < 1 else {
                throw BenchError.badArgument("--alpha must be between 0 and 1, not \(alpha)")
            }
            guard minSamples >= 2 else {
                throw BenchError.badArgument("--min-samples must be at least 2, not \(minSamples)")
            }
            let b = try ResultIO.loadBench(base), n = try ResultIO.loadBench(new)
            let c = Comparison.compare(
                base: b, new: n, policy: GatePolicy(threshold: t, alpha: alpha, minSamples: minSamples))
            print(ComparisonReport.terminal(c), terminator: "")
            if let markdown { try ResultIO.saveText(ComparisonReport.markdown(c), to: markdown) }
            if let html { try ResultIO.saveText(HTMLReport.page(bench: n, torture: nil, comparison: c), to: html) }
            if let json { try ResultIO.save(c, to: json) }
            code = c.exitCode
        }
        if code != 0 { throw ExitCode(code) }
    }
}

struct ReportHTML: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "html",
        abstract: "Write one self-contained HTML page with SVG charts from bench and/or torture results.")

    @Option(help: "A bench results.json.") var bench: String?
    @Option(help: "A torture results.json (pass/fail matrix and growth curve).") var torture: String?
    @Option(
        name: .customLong("targets"), parsing: .upToNextOption,
        help: """
            Torture results.json files of several targets or configurations: \
            a target × configuration × scenario matrix.
            """
    )
    var targetResults: [String] = []
    @Option(help: "A `fief torture detect` detection.json (default: the one beside --torture's results.json, if any).")
    var detection: String?
    @Option(help: "A base bench results.json to compare --bench against.") var base: String?
    @Option(help: "Threshold for the comparison, e.g. 5%.") var threshold: String = "5%"
    @Option(help: "The HTML file to write.") var out: String = "fief-out/report.html"

    func validate() throws {
        if bench == nil && torture == nil && targetResults.isEmpty && detection == nil {
            throw ValidationError("give --bench, --torture, --targets, --detection or several")
        }
        if base != nil && bench == nil { throw ValidationError("--base needs --bench") }
    }

    func run() throws {
        try reportingErrors {
            let b = try bench.map { try ResultIO.loadBench($0) }
            let t = try torture.map { try ResultIO.load(TortureResults.self, from: $0) }
            let runs = try targetResults.map { try ResultIO.load(TortureResults.self, from: $0) }
            let beside = torture.map { ($0 as NSString).deletingLastPathComponent + "/detection.json" }
            let detectionPath = detection ?? beside.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
            let rows = try detectionPath.map { try ResultIO.load([DetectionRow].self, from: $0) } ?? []
            var c: Comparison?
            if let base, let b {
                c = Comparison.compare(
                    base: try ResultIO.loadBench(base), new: b, threshold: try Comparison.parseThreshold(threshold))
            }
            let dir = (out as NSString).deletingLastPathComponent
            if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
            try ResultIO.saveText(
                HTMLReport.page(bench: b, torture: t, comparison: c, targetRuns: runs, detection: rows), to: out)
            print("wrote \(out)")
        }
    }
}

struct ReportMarkdown: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "markdown", abstract: "Print bench results as Markdown (for CI summaries).")
    @OptionGroup var file: BenchResultsFile

    func run() throws { try file.print(MarkdownReport.bench) }
}

struct ReportScaling: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scaling",
        abstract: "Lay objects-suite results at several sizes side by side (targets, growth with N, memory).",
        discussion: """
            Give one results.json per size, each from `fief bench run --suite objects --objects N` \
            (scripts/objects-scaling.sh runs 20K, 200K and 1M persons). Prints Markdown: each target \
            at each size, every workload's medians with how its cost per operation grows with N (the \
            exponent k in cost ∝ N^k), and each system's peak memory and file size.
            """)
    @Argument(help: "Objects-suite results.json files, one per size.") var results: [String]
    @Option(help: "Also write the Markdown to this file.") var out: String?

    func run() throws {
        try reportingErrors {
            let md = try ScalingReport.markdown(
                try results.map { ScalingReport.Run(path: $0, results: try ResultIO.loadBench($0)) })
            if let out {
                let dir = (out as NSString).deletingLastPathComponent
                if !dir.isEmpty {
                    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                }
                try ResultIO.saveText(md, to: out)
            }
            print(md, terminator: "")
        }
    }
}

struct ReportTable: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table", abstract: "Print bench results as a terminal table.")
    @OptionGroup var file: BenchResultsFile

    func run() throws { try file.print(TerminalReport.bench) }
}

/// The bench results.json that `report markdown` and `report table` print, each its own way.
struct BenchResultsFile: ParsableArguments {
    @Argument(help: "A bench results.json.") var bench: String

    func print(_ render: (BenchResults) -> String) throws {
        try reportingErrors { Swift.print(render(try ResultIO.loadBench(bench)), terminator: "") }
    }
}

struct ReportCombine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "combine",
        abstract: "Pool several bench results of one build (same parameters) into one.",
        discussion:
            "compare-versions.sh runs each build several times, "
            + "interleaved with the other, and combines each build's runs before comparing."
    )
    @OptionGroup var files: PooledResultsArguments<ReportCombine>

    func run() throws {
        try reportingErrors {
            guard !files.inputs.isEmpty else {
                throw BenchError.badArgument("give at least one results.json to combine")
            }
            let c = try BenchResults.combine(try files.load())
            try ResultIO.save(c, to: files.out)
            print("wrote \(files.out) (\(files.inputs.count) runs, \(c.parameters.repetitions) repetitions)")
        }
    }
}

extension ReportCombine: PoolingCommand {
    static let inputsHelp = "Bench results.json files of the same build."
    static let outHelp = "The combined results.json to write."
    static func load(_ path: String) throws -> BenchResults { try ResultIO.loadBench(path) }
}
