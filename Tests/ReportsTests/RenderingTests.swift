import XCTest
@testable import Reports

final class RenderingTests: XCTestCase {
    var torture: TortureSummary { try! JSONDecoder().decode(TortureSummary.self, from: Data(Fixtures.tortureJSON.utf8)) }

    func testMarkdownHasContextTableAndTargets() {
        let md = MarkdownReport.bench(Fixtures.results())
        XCTAssertTrue(md.contains("commit `0123456789ab`"))
        XCTAssertTrue(md.contains("engine format 1, release build"))
        XCTAssertTrue(md.contains("| benchmark | system | median |"))
        XCTAssertTrue(md.contains("| **Random point reads** (`point-reads`) | Fief | 1.00M ops/s |"), md)
        XCTAssertTrue(md.contains("|  | LMDB | 2.00M ops/s | ±1.0% |"), md)
        XCTAssertTrue(md.contains("## Targets"))
        XCTAssertTrue(md.contains("| point-reads | throughput | >= 1.00x LMDB | 0.50x | **missed** |"), md)
    }

    func testTerminalTableAligns() {
        let t = TerminalReport.bench(Fixtures.results())
        let lines = t.split(separator: "\n")
        XCTAssertTrue(lines[0].hasPrefix("benchmark"))
        XCTAssertTrue(lines[1].hasPrefix("---"))
        XCTAssertTrue(t.contains("2.00x"), "Fief vs SQLite on reads")
    }

    func testComparisonMarkdown() {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(label: "new", reads: 800_000), threshold: 0.05)
        let md = ComparisonReport.markdown(c)
        XCTAssertTrue(md.contains("# Fief: new against base"))
        XCTAssertTrue(md.contains("**1 regression(s)**"))
        XCTAssertTrue(md.contains("| point-reads | throughput | Fief | 1.00M ops/s | 800.0k ops/s | -20.0% | [-21.2%, -18.8%] | 0.008 | -20.0% p=0.008 | **regression** |"), md)
        XCTAssertTrue(md.contains("| point-reads | throughput | peers | -20.0% | [-20.0%, -20.0%] | 0.008 |"), md)
    }

    func testHTMLIsSelfContainedWithCharts() {
        let c = Comparison.compare(base: Fixtures.results(), new: Fixtures.results(label: "new", reads: 800_000), threshold: 0.05)
        let html = HTMLReport.page(bench: Fixtures.results(label: "new"), torture: torture, comparison: c)
        for kind in ["throughput", "memory", "latency", "file-size", "torture-matrix", "growth", "comparison"] {
            XCTAssertTrue(html.contains("data-chart=\"\(kind)\""), "missing \(kind) chart")
        }
        XCTAssertFalse(html.contains("<script"), "no script")
        XCTAssertFalse(html.contains("src=\"http"), "nothing fetched")
        XCTAssertFalse(html.contains("href=\"http"), "nothing linked")
        // Titles are escaped.
        XCTAssertTrue(html.contains("Bulk insert &lt;one txn&gt;"))
        XCTAssertFalse(html.contains("Bulk insert <one txn>"))
        // Failing torture cells are marked.
        XCTAssertTrue(html.contains("class=\"cell fail\""))
        XCTAssertTrue(html.contains("class=\"cell pass\""))
    }

    func testHTMLWithoutTortureHasNoMatrix() {
        let html = HTMLReport.page(bench: Fixtures.results(), torture: nil)
        XCTAssertFalse(html.contains("torture-matrix"))
        XCTAssertTrue(html.contains("data-chart=\"throughput\""))
    }

    /// Renders the page in headless Chromium and checks, in the DOM the browser built, that
    /// the charts are there and laid out with a size.
    func testHTMLRendersInHeadlessChromium() throws {
        let candidates = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"]
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        guard let browser = candidates.lazy.compactMap({ c in paths.map { "\($0)/\(c)" }.first { FileManager.default.isExecutableFile(atPath: $0) } }).first else {
            let reason = "SKIPPED testHTMLRendersInHeadlessChromium: no Chromium found (\(candidates.joined(separator: ", "))) on PATH; install Debian's chromium to run it"
            print(reason)
            throw XCTSkip(reason)
        }
        let dir = NSTemporaryDirectory() + "fief-html-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let page = dir + "/report.html"
        try HTMLReport.page(bench: Fixtures.results(), torture: torture).write(toFile: page, atomically: true, encoding: .utf8)

        // A script appended only to the copy the browser loads counts the rendered charts
        // and their boxes, and writes the answer into the DOM that --dump-dom prints.
        let probe = dir + "/probe.html"
        let script = """
            <script>
            const out = [...document.querySelectorAll('svg.chart')].map(s => {
              const r = s.getBoundingClientRect();
              return s.dataset.chart + ':' + Math.round(r.width) + 'x' + Math.round(r.height) + ':' + s.querySelectorAll('rect.bar,path.series,rect.cell').length;
            });
            document.body.insertAdjacentHTML('beforeend', '<pre id="probe">' + out.join(' ') + '</pre>');
            </script>
            """
        try (try String(contentsOfFile: page, encoding: .utf8)).replacingOccurrences(of: "</body>", with: script + "</body>").write(toFile: probe, atomically: true, encoding: .utf8)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: browser)
        p.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(dir)/profile",
                       "--virtual-time-budget=2000", "--dump-dom", "file://\(probe)"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let dom = String(decoding: data, as: UTF8.self)
        // The script's own text holds the marker too: the rendered element is the last one.
        guard let start = dom.range(of: "<pre id=\"probe\">", options: .backwards), let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex) else {
            return XCTFail("Chromium produced no probe output: \(dom.prefix(300))")
        }
        let charts = dom[start.upperBound..<end.lowerBound].split(separator: " ").map { $0.split(separator: ":").map(String.init) }.filter { $0.count == 3 }
        let kinds = Set(charts.map { $0[0] })
        XCTAssertTrue(kinds.isSuperset(of: ["throughput", "memory", "latency", "file-size", "torture-matrix", "growth"]), "\(kinds)")
        for c in charts {
            let size = c[1].split(separator: "x").compactMap { Int($0) }
            XCTAssertTrue(size.count == 2 && size[0] > 100 && size[1] > 40, "chart \(c) has no size")
            XCTAssertGreaterThan(Int(c[2]) ?? 0, 0, "chart \(c) drew nothing")
        }
    }
}

/// Torture runs of several targets render as one target × configuration × scenario matrix.
final class TargetMatrixTests: XCTestCase {
    func run(_ kind: String, _ configuration: String, _ scenario: String, durability: Int, integrity: Int) throws -> TortureSummary {
        let verdict = durability > 0 ? "durability loss" : (integrity > 0 ? "atomicity/integrity violation" : "clean")
        let json = """
            {"tool":"fief torture","seed":1,"profile":"quick","shard":"1/1","started":"","durationSeconds":1,
             "target":{"spec":"\(kind):\(configuration)","kind":"\(kind)","configuration":"\(configuration)"},
             "scenarios":[{"name":"\(scenario)","cycles":5,"violations":\(durability + integrity),"passed":\(durability + integrity == 0),
               "durabilityViolations":\(durability),"atomicityIntegrityViolations":\(integrity),"verdict":"\(verdict)"}]}
            """
        return try JSONDecoder().decode(TortureSummary.self, from: Data(json.utf8))
    }

    func testVerdictsOfSeveralTargetsShareOneMatrix() throws {
        let runs = [
            try run("sqlite", "journal=wal,synchronous=full", "power-cut", durability: 0, integrity: 0),
            try run("sqlite", "journal=wal,synchronous=full", "crash-points", durability: 0, integrity: 0),
            try run("sqlite", "journal=wal,synchronous=normal", "power-cut", durability: 3, integrity: 0),
            try run("lmdb", "nosync", "power-cut", durability: 2, integrity: 1),
        ]
        XCTAssertEqual(runs[2].target.configuration, "journal=wal,synchronous=normal")
        let html = HTMLReport.page(bench: nil, torture: nil, targetRuns: runs)
        XCTAssertTrue(html.contains("target-matrix"))
        XCTAssertEqual(html.components(separatedBy: "<tr><td>sqlite</td>").count - 1, 2, "one row per configuration")
        XCTAssertTrue(html.contains("durability loss"))
        XCTAssertTrue(html.contains("<th>crash-points</th>"))
    }

    func testOlderResultsReadAsFief() throws {
        let t = try JSONDecoder().decode(TortureSummary.self, from: Data(Fixtures.tortureJSON.utf8))
        XCTAssertEqual(t.target.kind, "fief")
    }
}
