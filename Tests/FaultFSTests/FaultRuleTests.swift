import XCTest
@testable import FaultFS

final class FaultRuleTests: XCTestCase {
    func testWordsMakeARule() throws {
        let r = try FaultRule(words: ["eio", "op=write", "path=db.fief", "nth=3", "once"])
        XCTAssertEqual(r.kind, .eio)
        XCTAssertEqual(r.operations, [.write])
        XCTAssertEqual(r.nth, 3)
        XCTAssertTrue(r.once)
        XCTAssertTrue(r.matches(.write, path: "dir/db.fief"))
        XCTAssertFalse(r.matches(.write, path: "db.fief.lock"))
        XCTAssertFalse(r.matches(.read, path: "db.fief"))
        XCTAssertEqual(
            try FaultRule(words: r.description.split(separator: " ").map(String.init)), r,
            "status shows words that make the rule again")
        XCTAssertEqual(try FaultRule(words: ["enospc", "quota=10M"]).quota, 10 << 20)
    }

    func testBadWordsAreRefusedWithAReason() {
        let cases: [([String], String)] = [
            (["explode"], "unknown fault 'explode'"),
            (["eio", "op=frobnicate"], "unknown operation"),
            (["eio", "colour=red"], "unknown key 'colour'"),
            (["eio", "nth=0"], "counts from 1"),
            (["eio", "probability=2"], "within 0...1"),
            (["enospc"], "needs quota"),
            (["latency"], "needs ms"),
            (["bitflip", "op=write"], "cannot act on write"),
            (["eio", "nth"], "not key=value")
        ]
        for (words, expected) in cases {
            XCTAssertThrowsError(try FaultRule(words: words), "\(words)") { e in
                XCTAssertTrue("\(e)".contains(expected), "\(words): '\(e)' should say '\(expected)'")
            }
        }
    }

    func testPlanFiresFromTheNthMatchAndOnce() {
        var plan = FaultPlan(seed: 1)
        plan.add(try! FaultRule(words: ["eio", "op=write", "nth=2", "once"]))
        let fired = (0..<5).map { _ in !plan.decide(.write, path: "f", length: 10) { _ in false }.isEmpty }
        XCTAssertEqual(fired, [false, true, false, false, false])
        XCTAssertEqual(plan.counters["eio"], 1)
    }

    func testProbabilityDrawsRepeatWithTheSeed() {
        func draws(_ seed: UInt64) -> [Bool] {
            var plan = FaultPlan(seed: seed)
            plan.add(try! FaultRule(words: ["eio", "probability=0.5"]))
            return (0..<64).map { _ in !plan.decide(.read, path: "f", length: 1) { _ in false }.isEmpty }
        }
        XCTAssertEqual(draws(7), draws(7))
        XCTAssertNotEqual(draws(7), draws(8))
        XCTAssertTrue(draws(7).contains(true) && draws(7).contains(false))
    }

    func testQuotaFiresOnlyPastTheQuota() {
        var plan = FaultPlan(seed: 1)
        plan.add(try! FaultRule(words: ["enospc", "quota=100"]))
        XCTAssertTrue(plan.decide(.write, path: "f", length: 10) { q in 50 > q }.isEmpty)
        XCTAssertEqual(plan.decide(.write, path: "f", length: 10) { q in 150 > q }.first?.action, .fail(errno: ENOSPC))
    }

    func testTOMLAndJSONConfigsReadTheSame() throws {
        let dir = TempDir()
        try """
        seed = 42   # comment
        trace = "t.jsonl"
        [[fault]]
        kind = "eio"
        op = "write"
        path = "*.db"
        nth = 3
        once = true
        [[fault]]
        kind = "latency"
        min-ms = 1
        max-ms = 5
        """.write(toFile: dir.file("a.toml"), atomically: true, encoding: .utf8)
        try """
        {"seed": 42, "trace": "t.jsonl", "faults": [
          {"kind": "eio", "op": "write", "path": "*.db", "nth": 3, "once": true},
          {"kind": "latency", "min-ms": 1, "max-ms": 5}]}
        """.write(toFile: dir.file("a.json"), atomically: true, encoding: .utf8)
        let toml = try FaultConfig.load(path: dir.file("a.toml"))
        let json = try FaultConfig.load(path: dir.file("a.json"))
        XCTAssertEqual(toml, json)
        XCTAssertEqual(toml.seed, 42)
        XCTAssertEqual(toml.faults.count, 2)
        XCTAssertEqual(toml.faults[0].nth, 3)
    }

    func testMalformedConfigsSayWhere() throws {
        let dir = TempDir()
        let cases = [
            ("kind = eio\n[[fault]]\nkind = \"eio\"\n", "expected a quoted string"),
            ("[[fault]]\nop = \"write\"\n", "has no kind"),
            ("[[fault]]\nkind = \"melt\"\n", "unknown fault 'melt'"),
            ("{\"faults\": 3}", "must be a list"),
            ("{not json", "malformed JSON"),
            ("colour = \"red\"\n", "unknown setting")
        ]
        for (i, (text, expected)) in cases.enumerated() {
            let p = dir.file("c\(i)")
            try text.write(toFile: p, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try FaultConfig.load(path: p)) { e in
                XCTAssertTrue(
                    "\(e)".contains(expected) && "\(e)".contains(p), "'\(e)' should name the file and say '\(expected)'"
                )
            }
        }
        XCTAssertThrowsError(try FaultConfig.load(path: dir.file("missing.toml")))
    }
}
