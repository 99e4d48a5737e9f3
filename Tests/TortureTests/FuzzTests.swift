import XCTest
import Foundation
import Engine
@testable import Torture

/// `fief db fuzz`, run as a user runs it: a small seeded slice of damaged engine, object and
/// encrypted object files gives no finding; with checksum verification broken, the same
/// command reports the wrong answers and traps that follow, keeps each damaged file with a
/// reproduce line, and `--only` makes one of them again.
final class FuzzTests: XCTestCase {
    struct Report: Decodable {
        struct Kind: Decodable {
            let kind: String
            let files: Int
            let sameAnswers: Int
            let previousVersion: Int
            let refused: Int
            let findings: [Finding]
        }
        struct Finding: Decodable { let index: Int; let kind: String; let command: String }
        let seed: UInt64
        let kinds: [Kind]
    }

    func fuzz(_ args: [String], broken: String? = nil, trapAt: Int? = nil, _ out: String) throws -> (
        ChildProcess.Ending, Report?
    ) {
        var env = broken.map { ["FIEF_BROKEN": $0] } ?? [:]
        if let trapAt { env["FIEF_FUZZ_TRAP_AT"] = String(trapAt) }
        let child = try ChildProcess(
            arguments: ["db", "fuzz", "--out", out, "--quiet"] + args,
            environment: env, output: out + ".log", label: "fuzz")
        let ending = child.wait()
        let report = try? JSONDecoder().decode(
            Report.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/fuzz.json")))
        return (ending, report)
    }

    func testASeededSliceOfDamagedFilesGivesNoFinding() throws {
        let dir = TempDir()
        let (ending, report) = try fuzz(["--files", "60", "--seed", "11"], dir.file("out"))
        let log = (try? String(contentsOfFile: dir.file("out") + ".log", encoding: .utf8)) ?? ""
        XCTAssertEqual(ending, .exited(0), log)
        let r = try XCTUnwrap(report, log)
        XCTAssertEqual(r.kinds.map(\.kind), ["engine", "objects", "encrypted"])
        for k in r.kinds {
            XCTAssertEqual(k.files, 60, k.kind)
            XCTAssertEqual(k.findings.map(\.kind), [], k.kind)
            // The slice exercises both sides: damage that changes nothing, and damage refused.
            XCTAssertGreaterThan(k.sameAnswers, 0, k.kind)
            XCTAssertGreaterThan(k.refused, 0, k.kind)
        }
    }

    func testWithChecksumVerificationBrokenItReportsWrongAnswersAndTraps() throws {
        guard BrokenVariant.available else { return XCTFail("broken variants exist only in debug builds") }
        let dir = TempDir()
        let out = dir.file("broken")
        let (ending, report) = try fuzz(
            ["--kind", "engine", "--files", "60", "--seed", "11"], broken: "no-checksum-verify", out)
        XCTAssertEqual(ending, .exited(1), "findings make the command fail")
        let engine = try XCTUnwrap(report?.kinds.first)
        let wrong = engine.findings.filter { $0.kind == "wrong-answer" }
        XCTAssertFalse(
            wrong.isEmpty, "damaged pages read without checksums gave no wrong answer: \(engine.findings.map(\.kind))")
        let first = try XCTUnwrap(wrong.first)
        let kept = try String(contentsOfFile: "\(out)/findings/engine-\(first.index).txt", encoding: .utf8)
        XCTAssertTrue(
            kept.contains(
                "reproduce: FIEF_BROKEN=no-checksum-verify fief db fuzz --kind engine --seed 11 --only \(first.index)"),
            kept)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(out)/findings/engine-\(first.index).fief"))
        // The reproduce line makes the same file and the same finding again.
        let (again, one) = try fuzz(
            ["--kind", "engine", "--seed", "11", "--only", String(first.index)], broken: "no-checksum-verify",
            dir.file("again"))
        XCTAssertEqual(again, .exited(1))
        XCTAssertEqual(one?.kinds.first?.findings.map(\.kind).contains("wrong-answer"), true)

        // A trap in a command is a finding of its own, and the files after it still run. No
        // damage makes a command trap any more (short keys read as zeros, not past their
        // end), so the worker traps on purpose on file 5.
        let (_, objects) = try fuzz(
            ["--kind", "objects", "--files", "40", "--seed", "7"], broken: "no-checksum-verify", trapAt: 5,
            dir.file("objects"))
        let o = try XCTUnwrap(objects?.kinds.first)
        // Every file but the trapped one ran to an outcome, the 34 after it too (whether one of
        // those gives a finding depends on where the damage falls in the object format of the day).
        XCTAssertEqual(o.files, 40)
        XCTAssertEqual(o.sameAnswers + o.previousVersion + o.refused, 39, "the files after the trap ran")
        XCTAssertEqual(o.findings.filter { $0.kind == "signal" }.map(\.index), [5], "\(o.findings.map(\.kind))")
    }
}
