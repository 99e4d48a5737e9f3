public enum HTMLReport {
    public static func page(bench: BenchResults?, torture: TortureSummary?, comparison: Comparison? = nil) -> String {
        "<!doctype html><html><body><pre>\(bench.map(TerminalReport.bench) ?? "")</pre></body></html>"
    }
}
public struct Comparison {}
