import Foundation
import TortureSchema

/// Writes a run's results as results.json, junit.xml (a test case per scenario and fault
/// mode) and summary.md.
public enum ResultFiles {
    public static func write(_ r: TortureResults, to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try enc.encode(r).write(to: URL(fileURLWithPath: dir + "/results.json"))
        try Data(junit(r).utf8).write(to: URL(fileURLWithPath: dir + "/junit.xml"))
        let detection = FileManager.default.contents(atPath: dir + "/" + Detection.fileName).flatMap {
            try? JSONDecoder().decode([Detection.Row].self, from: $0)
        }
        try Data(markdown(r, detection: detection ?? []).utf8).write(to: URL(fileURLWithPath: dir + "/summary.md"))
    }

    static func xml(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    public static func junit(_ r: TortureResults) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let tests = r.scenarios.reduce(0) { $0 + max(1, $1.modes.count) }
        let failures = r.scenarios.reduce(0) {
            $0 + ($1.modes.isEmpty ? ($1.passed ? 0 : 1) : $1.modes.filter { !$0.passed }.count)
        }
        out +=
            "<testsuites name=\"fief torture \(xml(r.target.spec))\" tests=\"\(tests)\" "
            + "failures=\"\(failures)\" time=\"\(String(format: "%.3f", r.durationSeconds))\">\n"
        // Fief's own run keeps the names CI history already knows; other targets are prefixed.
        let qualifier = r.target.spec == TargetSpec.default.description ? "" : xml(r.target.spec) + "."
        for s in r.scenarios {
            let modes = s.cells
            out +=
                "  <testsuite name=\"\(qualifier)\(xml(s.name))\" tests=\"\(modes.count)\" "
                + "failures=\"\(modes.filter { !$0.passed }.count)\" "
                + "time=\"\(String(format: "%.3f", s.durationSeconds))\">\n"
            let properties = [
                ("seed", "\(r.seed)"), ("cycles", "\(s.cycles)"), ("target", r.target.kind),
                ("configuration", r.target.configuration), ("verdict", s.verdict)
            ]
            out += "    <properties>"
            out += properties.map { "<property name=\"\($0.0)\" value=\"\(xml($0.1))\"/>" }.joined()
            out += "</properties>\n"
            for m in modes {
                out += "    <testcase classname=\"torture.\(qualifier)\(xml(s.name))\" name=\"\(xml(m.name))\">\n"
                if !m.passed {
                    let related = s.failures.filter { $0.description.contains(m.name) || s.modes.isEmpty }
                    let text = (related.isEmpty ? s.failures : related).prefix(5).map {
                        "\($0.description): \($0.violations.map(\.text).joined(separator: "; "))\n"
                            + "reproduce: \($0.reproduce)"
                    }.joined(separator: "\n\n")
                    out +=
                        "      <failure message=\"\(m.violations) violation(s) in \(m.cycles) cycles\">"
                        + "\(xml(text))</failure>\n"
                }
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    /// The run's summary; `detection` (from `fief torture detect` into the same folder) adds
    /// the table of broken variants and what caught them.
    public static func markdown(_ r: TortureResults, detection: [Detection.Row] = []) -> String {
        var md = "# Fief torture: \(r.passed ? "passed" : "FAILED")\n\n"
        md += "target `\(r.target.kind)`" + (r.target.configuration.isEmpty ? "" : " (`\(r.target.configuration)`)")
        md +=
            ", seed `\(r.seed)`, profile `\(r.profile)`, "
            + "FaultFS model `\(r.fsModel)`\(r.encrypted ? ", **encrypted** (format 3)" : ""), "
            + "shard `\(r.shard)`, \(String(format: "%.1f", r.durationSeconds)) s\n\n"
        md +=
            "| scenario | result | verdict | cycles | cycles/min | durability "
            + "| atomicity/integrity | violations | faults injected | crash points |\n"
        md += "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n"
        for s in r.scenarios {
            md +=
                "| \(s.name) | \(s.passed ? "pass" : "**FAIL**") | \(s.verdict) "
                + "| \(s.cycles) | \(String(format: "%.0f", s.cyclesPerMinute))"
            md +=
                " | \(s.durabilityViolations) | \(s.atomicityIntegrityViolations) | \(s.violations) "
                + "| \(s.faultsInjected) | \(s.crashPointsCovered.joined(separator: ", ")) |\n"
        }
        for s in r.scenarios where !s.modes.isEmpty {
            md += "\n### \(s.name)\n\n| mode | cycles | violations |\n|---|---:|---:|\n"
            for m in s.modes { md += "| \(m.name) | \(m.cycles) | \(m.violations) |\n" }
            for n in s.notes { md += "\n- \(n)" }
            if !s.notes.isEmpty { md += "\n" }
        }
        let failures = r.scenarios.flatMap { s in s.failures.map { (s.name, $0) } }
        if !failures.isEmpty {
            md += "\n## Failures\n\n"
            for (name, f) in failures.prefix(20) {
                md += "- **\(name)** cycle \(f.cycle) (seed \(f.seed)): \(f.description)\n"
                for v in f.violations.prefix(5) { md += "  - \(v.text)\n" }
                md += "  - reproduce: `\(f.reproduce)`\n"
            }
        }
        for s in r.scenarios where !s.crashStates.isEmpty { md += CrashStatesSummary.markdown(s) }
        if !detection.isEmpty { md += "\n" + Detection.markdownTable(detection) }
        if let g = r.growth, !g.sizes.isEmpty {
            md +=
                "\n## Growth\n\n"
                + "file size from \(g.sizes.first!) to max \(g.sizes.max()!) bytes over \(g.sizes.count) commits; "
                + "pinned at commit \(g.pinnedAtCommit), released at \(g.releasedAtCommit); "
                + "bound while pinned \(g.boundBytes) bytes; after compact \(g.compactedSize) bytes.\n"
        }
        return md
    }
}
