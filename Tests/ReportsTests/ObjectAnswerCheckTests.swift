import Foundation
import XCTest
@testable import Reports

/// The objects suite refuses to time systems that disagree: proved with a broken object layer
/// (an index range that loses its last object) in the real `fief` binary.
final class ObjectAnswerCheckTests: XCTestCase {
    func testAgreeingSystemsAreCheckedBeforeTiming() throws {
        let dir = NSTemporaryDirectory() + "fief-answers-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var p = BenchParameters.smoke(seed: 5)
        p.suite = "objects"
        var lines: [String] = []
        _ = try BenchRunner(
            parameters: p, workDirectory: dir, only: ["obj.count", "obj.query"], progress: { lines.append($0) }
        ).run()
        XCTAssertTrue(lines.contains { $0.contains("fief and sqlite gave the same answers to") }, "\(lines)")
    }

    func testABrokenObjectLayerIsCaughtAndNothingIsTimed() throws {
        let exe = try builtFiefExecutable()
        let dir = NSTemporaryDirectory() + "fief-answers-broken-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func run(_ broken: String?) throws -> (Int32, String) {
            let proc = Process()
            proc.executableURL = URL(fileURLWithPath: exe)
            proc.arguments = [
                "bench", "run", "--suite", "objects", "--smoke", "--seed", "5", "--systems", "fief,sqlite",
                "--workloads", "obj.query", "--no-faultfs", "--out", dir + "/out", "--work-dir", dir
            ]
            var env = ProcessInfo.processInfo.environment
            env["FIEF_BROKEN"] = broken
            proc.environment = env
            let pipe = Pipe()
            proc.standardOutput = pipe
            proc.standardError = pipe
            try proc.run()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            proc.waitUntilExit()
            return (proc.terminationStatus, out)
        }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (good, goodOut) = try run(nil)
        XCTAssertEqual(good, 0, goodOut)
        let (status, out) = try run("index-range-drops-last")
        XCTAssertNotEqual(status, 0, out)
        XCTAssertTrue(out.contains("the systems disagree on obj.query"), out)
        XCTAssertFalse(out.contains("obj.query             rep 1/"), "no repetition is timed: \(out)")
    }
}
