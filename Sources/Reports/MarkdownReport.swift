/// Markdown for CI summaries (GitHub's job summary renders it).
public enum MarkdownReport {
    static func cell(_ s: String) -> String { s.replacingOccurrences(of: "|", with: "\\|") }

    public static func context(_ c: RunContext, _ p: BenchParameters) -> String {
        let commit = String(c.gitCommit.prefix(12)) + (c.gitDirty == true ? " (with local changes)" : "")
        var md =
            "commit `\(commit)`\(c.label.map { ", label `\($0)`" } ?? ""), "
            + "engine format \(c.engineFormatVersion.map(String.init) ?? "?"), \(c.build) build, \(c.date)\n\n"
        md +=
            "machine: \(c.machine.cores) cores, \(Format.bytes(Double(c.machine.memoryBytes))), "
            + "\(c.machine.kernel), \(c.machine.cpu)\n\n"
        md +=
            "profile `\(p.profile)`, seed `\(p.seed)`, \(p.repetitions) repetitions interleaved, "
            + "durability `\(c.durability)` (Fief full = SQLite WAL synchronous=FULL = LMDB default; "
            + "none = synchronous=OFF = MDB_NOSYNC), "
        md +=
            "\(p.records) records of \(p.valueSize) bytes inserted in random order; "
            + "SQLite \(c.peerVersions["sqlite"] ?? "?"), LMDB \(c.peerVersions["lmdb"] ?? "?")\n"
        return md
    }

    /// What each measured stretch cost beyond time, where the workload counts it.
    static let counterColumns: [(key: String, title: String)] = [
        ("treeDescentsPerOp", "tree descents/op"), ("heapAllocationsPerOp", "heap allocations/op"),
        ("pagesPerCommit", "pages/commit"), ("syncMillisPerCommit", "sync ms/commit"),
        ("syncPercent", "% of time in sync"),
        ("rawEnginePagesPerCommit", "raw engine pages/commit"),
        ("rawEngineSyncMillisPerCommit", "raw engine sync ms/commit"),
        ("bytesPerObject", "bytes/object")
    ]

    /// The counter columns' cells of each benchmark's system that has any, formatted: the
    /// Markdown report's table and the HTML report's.
    static func counterRows(_ r: BenchResults) -> [(benchmark: String, system: String, cells: [String])] {
        var rows: [(benchmark: String, system: String, cells: [String])] = []
        for b in r.benchmarks {
            for s in b.systems {
                let values = counterColumns.map { s.extra?[$0.key] }
                guard values.contains(where: { $0 != nil }) else { continue }
                let cells = values.map { $0.map { String(format: $0 < 10 ? "%.2f" : "%.0f", $0) } ?? "" }
                rows.append((b.id, s.system.label, cells))
            }
        }
        return rows
    }

    static func counters(_ r: BenchResults) -> String {
        let rows = counterRows(r).map {
            "| `\($0.benchmark)` | \($0.system) | " + $0.cells.joined(separator: " | ") + " |\n"
        }
        .joined()
        guard !rows.isEmpty else { return "" }
        return "\n## Counters\n\nMedians over repetitions; per operation (`obj.enumerate`: per object read). "
            + "Tree descents are Fief's own count (walks toward a table's leaves: a get, a scan, a cursor "
            + "lookup that leaves its leaf); heap allocations are every `malloc` on the measuring thread, "
            + "Swift's and SQLite's alike.\n\n"
            + "| benchmark | system | " + counterColumns.map(\.title).joined(separator: " | ") + " |\n"
            + "|---|---|" + String(repeating: "---:|", count: counterColumns.count) + "\n" + rows
    }

    public static func bench(_ r: BenchResults) -> String {
        var md = "# Fief benchmarks\n\n" + context(r.context, r.parameters) + "\n"
        md +=
            "| benchmark | system | median | spread | p50 | p99 | p99.9 | peak memory | Fief vs it |\n"
            + "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        for b in r.benchmarks {
            for (i, s) in b.systems.enumerated() {
                let lat = s.latency
                var cells: [String] = [i == 0 ? "**\(b.title)** (`\(b.id)`)" : "", s.system.label]
                cells.append(Format.value(s.value.median, unit: b.unit))
                cells.append("±" + Format.percent(s.value.spread))
                cells.append(lat.map { Format.micros($0.p50) } ?? "")
                cells.append(lat.map { Format.micros($0.p99) } ?? "")
                cells.append(lat.map { Format.micros($0.p999) } ?? "")
                cells.append(s.peakMemory.map { Format.bytes($0.median) } ?? "")
                let adv: Double? = s.system == .fief ? nil : b.advantage(.fief, over: s.system)
                cells.append(adv.map(Format.ratio) ?? "")
                md += "| " + cells.map(cell).joined(separator: " | ") + " |\n"
            }
        }
        md +=
            "\nRatios: how many times better Fief does than the peer (throughput ratio; for sizes and times, "
            + "the inverse). Spread: half the range over repetitions, relative to the median.\n"
        md += counters(r)
        if !r.targets.isEmpty {
            md += "\n## Targets\n\n| benchmark | metric | requirement | measured | status |\n|---|---|---|---:|---|\n"
            for t in r.targets {
                md +=
                    "| \(t.benchmark) | \(t.metric) | \(cell(t.requirement)) | \(t.measured) "
                    + "| \(t.met.map { $0 ? "met" : "**missed**" } ?? "not measured") |\n"
            }
        }
        if !r.notes.isEmpty {
            md += "\n## Notes\n\n" + r.notes.map { "- \($0)\n" }.joined()
        }
        md += "\n_\(String(format: "%.0f", r.durationSeconds)) s_\n"
        return md
    }
}
