import XCTest
@testable import Reports
import TortureSchema

final class ResultIOTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "fief-reports-io-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testBenchResultsRoundTrip() throws {
        let r = Fixtures.results()
        let path = dir + "/results.json"
        try ResultIO.save(r, to: path)
        let back = try ResultIO.loadBench(path)
        XCTAssertEqual(back, r)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for key in [
            "gitCommit", "engineFormatVersion", "build", "date", "machine", "cores", "memoryBytes", "kernel",
            "durability", "parameters", "seed"
        ] {
            XCTAssertTrue(text.contains("\"\(key)\""), "results.json lacks \(key)")
        }
    }

    func testMissingFileIsOneLineError() {
        XCTAssertThrowsError(try ResultIO.loadBench(dir + "/nope.json")) { e in
            XCTAssertEqual(e as? BenchError, .fileNotFound(dir + "/nope.json"))
            XCTAssertEqual("\(e)", "\(dir)/nope.json: no such file")
        }
    }

    func testMalformedJSONIsOneLineError() throws {
        let path = dir + "/bad.json"
        try "{ this is not json".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ResultIO.loadBench(path)) { e in
            guard case .malformed(let p, let detail)? = e as? BenchError else { return XCTFail("\(e)") }
            XCTAssertEqual(p, path)
            XCTAssertTrue(detail.contains("invalid JSON"), detail)
            XCTAssertFalse("\(e)".contains("\n"))
        }
    }

    func testMissingFieldNamesIt() throws {
        let path = dir + "/partial.json"
        try #"{"tool":"fief bench","schema":1}"#.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ResultIO.loadBench(path)) { e in
            XCTAssertTrue("\(e)".contains("missing '"), "\(e)")
        }
    }

    func testTortureResultsAreNotBenchResults() throws {
        let path = dir + "/torture.json"
        try Fixtures.tortureJSON.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ResultIO.loadBench(path)) { e in
            guard case .malformed? = e as? BenchError else { return XCTFail("\(e)") }
        }
    }

    func testReadsTortureResults() throws {
        let path = dir + "/torture.json"
        try Fixtures.tortureJSON.write(toFile: path, atomically: true, encoding: .utf8)
        let t = try ResultIO.load(TortureResults.self, from: path)
        XCTAssertEqual(t.seed, 42)
        XCTAssertFalse(t.passed)
        XCTAssertEqual(t.scenarios.map(\.name), ["crash-points", "isolation"])
        XCTAssertEqual(t.matrix[0].cells.map(\.name), ["after-data-sync", "random-kill"])
        XCTAssertEqual(t.matrix[1].cells.count, 1, "a scenario without modes is one cell")
        XCTAssertFalse(t.matrix[1].cells[0].passed)
        XCTAssertEqual(t.growth?.sizes.count, 6)
        XCTAssertEqual(t.growth?.releasedAtCommit, 3)
    }

    func testWriteBenchWritesThreeFiles() throws {
        let files = try ResultIO.writeBench(Fixtures.results(), to: dir + "/out")
        XCTAssertEqual(files.map { ($0 as NSString).lastPathComponent }, ["results.json", "report.md", "report.html"])
        for f in files { XCTAssertTrue(FileManager.default.fileExists(atPath: f)) }
    }

    func testSampleStats() {
        let s = SampleStats([10, 30, 20, 12])
        XCTAssertEqual(s.median, 16)
        XCTAssertEqual(s.min, 10)
        XCTAssertEqual(s.max, 30)
        XCTAssertEqual(s.spread, 10.0 / 16.0, accuracy: 1e-12)
        XCTAssertEqual(SampleStats([5]).spread, 0)
        XCTAssertEqual(SampleStats([]).median, 0)
    }
}
