import FiefTestSupport
import XCTest
@testable import Reports
import TortureSchema

final class RenderingTests: XCTestCase {
    var torture: TortureResults {
        try! JSONDecoder().decode(TortureResults.self, from: Data(Fixtures.tortureJSON.utf8))
    }

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

    func testMarkdownListsCountersWhereAWorkloadHasThem() {
        var r = Fixtures.results()
        XCTAssertFalse(MarkdownReport.bench(r).contains("## Counters"), "no counters, no section")
        r.benchmarks[0].systems[0].extra = ["treeDescentsPerOp": 1.5, "heapAllocationsPerOp": 173.4]
        r.benchmarks[0].systems[1].extra = ["heapAllocationsPerOp": 7]
        let md = MarkdownReport.bench(r)
        XCTAssertTrue(md.contains("## Counters"), md)
        XCTAssertTrue(md.contains("| `point-reads` | Fief | 1.50 | 173 |  |  |"), md)
        XCTAssertTrue(md.contains("| `point-reads` | SQLite |  | 7.00 |  |  |"), md)
        XCTAssertFalse(HTMLReport.benchSections(Fixtures.results()).contains("<h3>Counters</h3>"))
        r.benchmarks[0].systems[0].extra?["syncMillisPerCommit"] = 0.5
        let html = HTMLReport.benchSections(r)
        XCTAssertTrue(html.contains("<h3>Counters</h3>"), html)
        XCTAssertTrue(html.contains("<th>sync ms/commit</th>"), html)
        XCTAssertTrue(html.contains("<td>1.50</td><td>173</td><td></td><td>0.50</td>"), html)
    }

    func testHeapAllocationsCountThisThreadsMallocs() {
        XCTAssertTrue(HeapAllocations.available, "the executable's malloc is the one the process calls")
        final class Box { var x = 0 }
        let before = HeapAllocations.count
        var boxes: [Box] = []
        for i in 0..<1_000 {
            let b = Box()
            b.x = i
            boxes.append(b)
        }
        XCTAssertGreaterThanOrEqual(HeapAllocations.count - before, 1_000, "one allocation per Box at least")
        XCTAssertEqual(boxes.count, 1_000)
    }

    func testTerminalTableAligns() {
        let t = TerminalReport.bench(Fixtures.results())
        let lines = t.split(separator: "\n")
        XCTAssertTrue(lines[0].hasPrefix("benchmark"))
        XCTAssertTrue(lines[1].hasPrefix("---"))
        XCTAssertTrue(t.contains("2.00x"), "Fief vs SQLite on reads")
    }

    func testComparisonMarkdown() {
        let c = Comparison.compare(
            base: Fixtures.results(), new: Fixtures.results(label: "new", reads: 800_000), threshold: 0.05)
        let md = ComparisonReport.markdown(c)
        XCTAssertTrue(md.contains("# Fief: new against base"))
        XCTAssertTrue(md.contains("**1 regression(s)**"))
        XCTAssertTrue(
            md.contains(
                "| point-reads | throughput | Fief | 1.00M ops/s | 800.0k ops/s "
                    + "| -20.0% | [-21.2%, -18.8%] | 0.008 | -20.0% p=0.008 | **regression** |"
            ), md)
        XCTAssertTrue(md.contains("| point-reads | throughput | peers | -20.0% | [-20.0%, -20.0%] | 0.008 |"), md)
    }

    func testHTMLIsSelfContainedWithCharts() {
        let c = Comparison.compare(
            base: Fixtures.results(), new: Fixtures.results(label: "new", reads: 800_000), threshold: 0.05)
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

    /// Every benchmark that measured peak memory gets its chart: the objects' insert as the
    /// engine's bulk insert.
    func testHTMLChartsEachBenchmarksPeakMemory() {
        var r = Fixtures.results()
        r.benchmarks.append(
            BenchmarkResult(
                id: "obj.insert", title: "Objects: insert", unit: "ops/s", higherIsBetter: true, durability: .full,
                systems: [
                    SystemResult(system: .fief, value: SampleStats([300_000]), peakMemory: SampleStats([131_072_000])),
                    SystemResult(system: .sqlite, value: SampleStats([200_000]), peakMemory: SampleStats([3_145_728]))
                ]))
        let html = HTMLReport.page(bench: r, torture: nil, comparison: nil)
        XCTAssertTrue(html.contains("Bulk insert &lt;one txn&gt;: peak memory above baseline"), "the bulk insert's")
        XCTAssertTrue(html.contains("Objects: insert: peak memory above baseline"), "the objects' insert's")
        XCTAssertTrue(html.contains("125.0 MiB"))
    }

    func testHTMLWithoutTortureHasNoMatrix() {
        let html = HTMLReport.page(bench: Fixtures.results(), torture: nil)
        XCTAssertFalse(html.contains("torture-matrix"))
        XCTAssertTrue(html.contains("data-chart=\"throughput\""))
    }

    /// Renders the bench report and the torture report in headless Chromium and checks, in the
    /// DOM the browser built, what a person would see: every chart laid out with a size and
    /// something drawn in it, a row for every torture scenario, and no script error.
    func testHTMLRendersInHeadlessChromium() throws {
        let candidates = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"]
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        guard
            let browser = candidates.lazy.compactMap({ c in
                paths.map { "\($0)/\(c)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
            }).first
        else {
            throw XCTSkip(
                skipping(
                    "no Chromium found (\(candidates.joined(separator: ", "))) on PATH; "
                        + "install Debian's chromium to run it"))
        }
        let dir = NSTemporaryDirectory() + "fief-html-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scenarios = torture.scenarios.map(\.name)
        XCTAssertFalse(scenarios.isEmpty)

        let bench = try render(
            HTMLReport.page(bench: Fixtures.results(), torture: torture), browser: browser, dir: dir, name: "bench")
        XCTAssertTrue(
            Set(bench.charts.map(\.kind)).isSuperset(of: [
                "throughput", "memory", "latency", "file-size", "torture-matrix", "growth"
            ]), "\(bench.charts.map(\.kind))")
        let tortureOnly = try render(
            HTMLReport.page(bench: nil, torture: torture), browser: browser, dir: dir, name: "torture")
        XCTAssertTrue(
            Set(tortureOnly.charts.map(\.kind)).isSuperset(of: ["torture-matrix", "growth"]),
            "\(tortureOnly.charts.map(\.kind))")
        for (page, r) in [("bench", bench), ("torture", tortureOnly)] {
            XCTAssertEqual(r.errors, [], "\(page) report: script errors")
            for c in r.charts {
                XCTAssertTrue(
                    c.width > 100 && c.height > 40,
                    "\(page) report: chart \(c.kind) has no size (\(c.width)x\(c.height))")
                XCTAssertGreaterThan(c.marks, 0, "\(page) report: chart \(c.kind) drew nothing")
            }
            for s in scenarios { XCTAssertTrue(r.firstCells.contains(s), "\(page) report: no row for scenario \(s)") }
        }
    }

    struct Rendered {
        struct Chart { var kind: String, width: Int, height: Int, marks: Int }
        var charts: [Chart] = []
        var firstCells: Set<String> = []
        var errors: [String] = []
    }

    /// Loads `html` in the browser with two scripts of the test's own (an error listener first,
    /// a probe last) and reads what the probe wrote into the DOM that --dump-dom prints.
    func render(_ html: String, browser: String, dir: String, name: String) throws -> Rendered {
        let listen =
            "<script>window.__errors = []; window.addEventListener('error', "
            + "e => window.__errors.push(String(e.message)));</script>"
        let probe = """
            <script>
            const probe = {
              charts: [...document.querySelectorAll('svg.chart')].map(s => {
                const r = s.getBoundingClientRect();
                return {kind: s.dataset.chart, width: Math.round(r.width), height: Math.round(r.height),
                        marks: s.querySelectorAll('rect.bar,path.series,rect.cell').length};
              }),
              firstCells: [...document.querySelectorAll('tr > td:first-child')].map(td => td.textContent.trim()),
              errors: window.__errors
            };
            document.body.insertAdjacentHTML('beforeend', '<pre id="probe">' + btoa(JSON.stringify(probe)) + '</pre>');
            </script>
            """
        guard let head = html.range(of: "<head>"), html.contains("</body>") else {
            throw XCTSkip(skipping("the \(name) page has no <head> or </body>"))
        }
        var page = html
        page.insert(contentsOf: listen, at: head.upperBound)
        page = page.replacingOccurrences(of: "</body>", with: probe + "</body>")
        let path = "\(dir)/\(name).html"
        try page.write(toFile: path, atomically: true, encoding: .utf8)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: browser)
        p.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--user-data-dir=\(dir)/profile-\(name)",
            "--virtual-time-budget=2000", "--dump-dom", "file://\(path)"
        ]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(name): the browser exited with \(p.terminationStatus)")
        let dom = String(decoding: data, as: UTF8.self)
        // The script's own text holds the marker too: the rendered element is the last one.
        guard let start = dom.range(of: "<pre id=\"probe\">", options: .backwards),
            let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex),
            let json = Data(base64Encoded: String(dom[start.upperBound..<end.lowerBound])),
            let o = try JSONSerialization.jsonObject(with: json) as? [String: Any]
        else {
            XCTFail("\(name): Chromium produced no probe output: \(dom.prefix(300))")
            return Rendered()
        }
        var r = Rendered()
        for c in o["charts"] as? [[String: Any]] ?? [] {
            r.charts.append(
                .init(
                    kind: c["kind"] as? String ?? "", width: c["width"] as? Int ?? 0, height: c["height"] as? Int ?? 0,
                    marks: c["marks"] as? Int ?? 0))
        }
        r.firstCells = Set(o["firstCells"] as? [String] ?? [])
        r.errors = o["errors"] as? [String] ?? ["the probe could not read the error list"]
        return r
    }
}

/// Torture runs of several targets render as one target × configuration × scenario matrix.
final class TargetMatrixTests: XCTestCase {
    func run(_ kind: String, _ configuration: String, _ scenario: String, durability: Int, integrity: Int) throws
        -> TortureResults
    {
        let verdict = durability > 0 ? "durability loss" : (integrity > 0 ? "atomicity/integrity violation" : "clean")
        let json = """
            {"tool":"fief torture","seed":1,"profile":"quick","shard":"1/1","started":"","durationSeconds":1,
             "target":{"spec":"\(kind):\(configuration)","kind":"\(kind)","configuration":"\(configuration)"},
             "scenarios":[{"name":"\(scenario)","cycles":5,"violations":\(durability + integrity),\
            "passed":\(durability + integrity == 0),
               "durabilityViolations":\(durability),"atomicityIntegrityViolations":\(integrity),\
            "verdict":"\(verdict)"}]}
            """
        return try JSONDecoder().decode(TortureResults.self, from: Data(json.utf8))
    }

    func testVerdictsOfSeveralTargetsShareOneMatrix() throws {
        let runs = [
            try run("sqlite", "journal=wal,synchronous=full", "power-cut", durability: 0, integrity: 0),
            try run("sqlite", "journal=wal,synchronous=full", "crash-points", durability: 0, integrity: 0),
            try run("sqlite", "journal=wal,synchronous=normal", "power-cut", durability: 3, integrity: 0),
            try run("lmdb", "nosync", "power-cut", durability: 2, integrity: 1)
        ]
        XCTAssertEqual(runs[2].target.configuration, "journal=wal,synchronous=normal")
        let html = HTMLReport.page(bench: nil, torture: nil, targetRuns: runs)
        XCTAssertTrue(html.contains("target-matrix"))
        XCTAssertEqual(html.components(separatedBy: "<tr><td>sqlite</td>").count - 1, 2, "one row per configuration")
        XCTAssertTrue(html.contains("durability loss"))
        XCTAssertTrue(html.contains("<th>crash-points</th>"))
    }

    func testOlderResultsReadAsFief() throws {
        let t = try JSONDecoder().decode(TortureResults.self, from: Data(Fixtures.tortureJSON.utf8))
        XCTAssertEqual(t.target.kind, "fief")
    }
}
