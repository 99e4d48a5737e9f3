import Engine
import FiefObjects
import Foundation
import TortureSchema

/// The proof that the checkers fire, as a table: every broken variant run under the scenario
/// meant to catch it, with how many cycles it took. Debug builds only (release builds carry
/// no broken variants).
public struct Detection {
    /// A row of detection.json (the schema Reports reads too).
    public typealias Row = DetectionRow
    public typealias Shrunk = DetectionRow.Shrunk

    /// Which scenario is meant to catch each variant.
    public static let plan: [(variant: String, scenario: String)] = [
        ("flip-before-top", "crash-points"), ("top-in-active-slot", "crash-points"),
        ("overwrite-in-place", "crash-points"), ("patch-mapped-page", "crash-points"),
        ("read-uncommitted", "crash-points"), ("reuse-pinned", "isolation"), ("reuse-pinned", "readers"),
        ("reuse-between-pins", "readers"),
        ("no-data-sync", "power-cut"), ("no-data-sync", "crash-states"), ("no-base-sync", "crash-states"),
        ("compact-no-dir-sync", "file-ops"), ("copy-no-sync", "file-ops"), ("ignore-short-write", "faults"),
        ("no-checksum-verify", "faults"), ("gap-over-cells", "faults"), ("no-reclaim", "readers"),
        ("no-high-water", "readers"), ("batch-early-ack", "batch"),
        ("no-doorbell", "notify"), ("change-set-drops-insertion", "notify"),
        ("change-set-drops-modifications", "notify"), ("notify-skip", "notify"), ("notify-dup", "notify"),
        ("notify-off-by-one", "notify"),
        ("encrypt-in-place", "power-cut --encrypt"), ("encrypt-in-place", "crash-states --encrypt"),
        ("fixed-salt", "keystream"), ("skip-mac", "faults --encrypt"),
        ("inline-list-leak", "readers"), ("catalog-in-old-top", "crash-points"),
        ("skip-backlink", "objects"), ("stale-index", "objects"), ("no-cascade", "objects"),
        ("migration-split", "objects"),
        ("conversion-split", "objects"),
        ("short-row", "objects"), ("key-counter-behind", "objects"), ("list-chunk-from-one", "objects"),
        ("index-range-drops-last", "objects"), ("rewrite-drops-backlinks", "objects"),
        ("stale-cluster-summary", "objects")
    ]

    /// Where `fief torture detect` writes its rows; a run's summary.md and the HTML report
    /// pick them up from the same folder.
    public static let fileName = "detection.json"

    public let seed: UInt64
    public let cycles: Int
    public let out: String
    /// Only these variants (nil: every one in the plan).
    public var only: Set<String>?

    public init(seed: UInt64, cycles: Int, out: String) {
        self.seed = seed
        self.cycles = cycles
        self.out = out
    }

    public func run(progress: (String) -> Void = { _ in }) throws -> [Row] {
        guard BrokenVariant.available else {
            throw TortureError.invalid(
                "the detection table needs a debug build (release builds carry no broken variants)")
        }
        var rows: [Row] = []
        for (variant, scenario) in Detection.plan where only?.contains(variant) ?? true {
            var o = TortureOptions(seed: seed)
            // "power-cut --encrypt": the scenario on encrypted files.
            let parts = scenario.split(separator: " ").map(String.init)
            o.scenarios = [parts[0]]
            o.encrypt = parts.dropFirst().contains("--encrypt")
            o.cycles = cycles
            o.out = "\(out)/runs/\(variant)-\(parts.joined(separator: "-"))"
            _ = o.chooseBroken(variant)
            let quiet = Progress()
            quiet.quiet = true
            let r = try TortureRun(options: o, progress: quiet).run().scenarios[0]
            let first = r.failures.min { $0.cycle < $1.cycle }
            var row = Row(
                variant: variant, scenario: scenario, caught: !r.passed, cyclesToDetection: first.map { $0.cycle + 1 },
                cyclesRun: r.cycles, firstViolation: first?.violations.first)
            let outcome =
                row.caught ? "caught in cycle \(row.cyclesToDetection ?? 0)" : "NOT caught in \(r.cycles) cycles"
            progress("\(variant) under \(scenario): \(outcome)")
            if TortureReplay.shrinkableScenarios.contains(parts[0]), let artifacts = first?.artifacts {
                // A failure shrink does not take (a migration, a timed kill that does not repeat)
                // keeps its row, with the reason.
                do {
                    row.shrunk = try shrink(artifacts, variant: variant, scenario: scenario, progress: progress)
                } catch {
                    row.notShrunk = "\(error)"
                    progress("\(variant): not shrunk: \(error)")
                }
            }
            rows.append(row)
        }
        try write(rows)
        return rows
    }

    /// Shrinks a caught variant's first failing cycle and keeps its replay beside the table.
    func shrink(_ artifacts: String, variant: String, scenario: String, progress: (String) -> Void) throws -> Shrunk {
        let r = try Shrinker(budgetSeconds: 120, workDir: out + "/shrink-work").shrink(
            try TortureReplay(artifacts: artifacts))
        try FileManager.default.createDirectory(atPath: out + "/replays", withIntermediateDirectories: true)
        let file = "replays/\(variant)-\(scenario.split(separator: " ").joined(separator: "-")).json"
        try r.replay.write(to: out + "/" + file)
        progress("\(variant): shrunk from \(r.before) to \(r.after) in \(String(format: "%.1f", r.seconds)) s")
        return Shrunk(
            before: r.before, after: r.after, seconds: (r.seconds * 10).rounded() / 10,
            passesOnCorrectEngine: r.passesOnCorrectEngine ?? true, replay: file)
    }

    func write(_ rows: [Row]) throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try enc.encode(rows).write(to: URL(fileURLWithPath: out + "/" + Detection.fileName))
        let md =
            "# Fief torture: detection\n\nseed `\(seed)`, at most \(cycles) cycles per variant\n\n"
            + Detection.markdownTable(rows).dropFirst("## Detection\n\n".count)
        try Data(md.utf8).write(to: URL(fileURLWithPath: out + "/detection.md"))
    }

    /// Each broken variant, the scenario that caught it, and how many cycles it took.
    public static func markdownTable(_ rows: [Row]) -> String {
        var md =
            "## Detection\n\n"
            + "| broken variant | scenario | caught | cycles to detection | shrunk: commits | writers | threads "
            + "| sectors lost | shrink time | first violation |\n"
        md += "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n"
        for r in rows {
            let v = (r.firstViolation?.text ?? "").replacingOccurrences(of: "|", with: "\\|").prefix(160)
            md +=
                "| `\(r.variant)` | \(r.scenario) | \(r.caught ? "yes" : "**NO**") "
                + "| \(r.cyclesToDetection.map(String.init) ?? "-") | "
            if let s = r.shrunk {
                let sectors =
                    s.before.lostSectors.map {
                        "\($0) of \(s.before.unsyncedSectors ?? 0) → "
                            + "\(s.after.lostSectors ?? 0) of \(s.after.unsyncedSectors ?? 0)"
                    } ?? "-"
                md +=
                    "\(s.before.commits) → \(s.after.commits) | \(s.before.deaths) → \(s.after.deaths) "
                    + "| \(s.before.threads) → \(s.after.threads) "
                    + "| \(sectors) | \(String(format: "%.1f", s.seconds)) s"
                md += s.passesOnCorrectEngine ? " | " : " (**fails on the correct engine too**) | "
            } else {
                md += "- | - | - | - | \(r.notShrunk == nil ? "-" : "not shrunk") | "
            }
            md += "\(v) |\n"
        }
        let shrunk = rows.compactMap(\.shrunk).map(\.after.commits).sorted()
        if !shrunk.isEmpty {
            md +=
                "\nShrunk (`fief torture shrink`, every candidate a real cycle): \(shrunk.count) cases, median "
                + "\(shrunk[shrunk.count / 2]) commit\(shrunk[shrunk.count / 2] == 1 ? "" : "s") after shrinking; "
            md += "the replays are under `replays/` (`fief torture replay FILE`).\n"
        }
        return md
    }
}
