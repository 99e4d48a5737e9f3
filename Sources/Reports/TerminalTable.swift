/// Plain-text tables with aligned columns, for the terminal.
public struct TextTable {
    public var header: [String]
    public var rows: [[String]] = []
    /// Columns aligned right (numbers).
    public var rightAligned: Set<Int> = []

    public init(header: [String], rightAligned: Set<Int> = []) {
        self.header = header
        self.rightAligned = rightAligned
    }

    public mutating func add(_ row: [String]) { rows.append(row) }

    public func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { i in all.map { i < $0.count ? $0[i].count : 0 }.max() ?? 0 }
        func line(_ r: [String]) -> String {
            header.indices.map { i in
                let cell = i < r.count ? r[i] : ""
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return rightAligned.contains(i) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

/// The bench results as terminal tables: every benchmark with each system's median and
/// spread and Fief's ratio to each peer, then the targets.
public enum TerminalReport {
    public static func bench(_ r: BenchResults) -> String {
        var t = TextTable(
            header: ["benchmark", "system", "median", "spread", "p50", "p99", "peak mem", "Fief vs it"],
            rightAligned: [2, 3, 4, 5, 6, 7])
        for b in r.benchmarks {
            for (i, s) in b.systems.enumerated() {
                let lat = s.latency
                var row: [String] = [i == 0 ? b.id : "", s.system.rawValue]
                row.append(Format.value(s.value.median, unit: b.unit))
                row.append("±" + Format.percent(s.value.spread))
                row.append(lat.map { Format.micros($0.p50) } ?? "")
                row.append(lat.map { Format.micros($0.p99) } ?? "")
                row.append(s.peakMemory.map { Format.bytes($0.median) } ?? "")
                let adv: Double? = s.system == .fief ? nil : b.advantage(.fief, over: s.system)
                row.append(adv.map(Format.ratio) ?? "")
                t.add(row)
            }
        }
        var out = t.render()
        if !r.targets.isEmpty {
            var tt = TextTable(header: ["target", "requirement", "measured", "status"], rightAligned: [2])
            for g in r.targets {
                tt.add([
                    "\(g.benchmark) \(g.metric)", g.requirement, g.measured,
                    g.met.map { $0 ? "met" : "MISSED" } ?? "not measured"
                ])
            }
            out += "\n" + tt.render()
        }
        return out
    }
}
