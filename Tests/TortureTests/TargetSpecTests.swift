import XCTest
@testable import Torture
import TortureSchema

/// `--target` strings: each canonical form parses back to the same target, and every bad
/// string is one typed line naming what is wrong.
final class TargetSpecTests: XCTestCase {
    func testCanonicalFormsParseBack() throws {
        let cases: [(String, String)] = [
            ("fief", "fief"),
            ("fief:generic", "fief:generic"),
            ("sqlite", "sqlite:journal=wal,synchronous=full"),
            ("sqlite:journal=delete", "sqlite:journal=delete,synchronous=full"),
            ("sqlite:synchronous=off,journal=wal", "sqlite:journal=wal,synchronous=off"),
            ("lmdb", "lmdb:default"),
            ("lmdb:writemap,nosync", "lmdb:nosync,writemap"),
            ("exec:python3 examples/adapters/sqlite_adapter.py", "exec:python3 examples/adapters/sqlite_adapter.py")
        ]
        for (text, canonical) in cases {
            let spec = try TargetSpec(parsing: text)
            XCTAssertEqual(spec.description, canonical, text)
            XCTAssertEqual(try TargetSpec(parsing: spec.description), spec, "\(canonical) does not parse back")
        }
        XCTAssertTrue(try TargetSpec(parsing: "fief").usesFiefScenarios)
        XCTAssertFalse(try TargetSpec(parsing: "fief:generic").usesFiefScenarios)
    }

    func testBadTargetsAreOneLineErrors() {
        for bad in [
            "", "postgres", "sqlite:journal=memory", "sqlite:synchronous", "sqlite:cache=big", "lmdb:fast",
            "lmdb:nosync=1", "exec:", "exec:   ", "fief:turbo"
        ] {
            XCTAssertThrowsError(try TargetSpec(parsing: bad), bad) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("bad --target"), "\(bad): \(text)")
                XCTAssertFalse(text.contains("\n"), "\(bad): more than one line")
            }
        }
    }

    func testScenariosAreChosenByTarget() throws {
        let sqlite = try TargetSpec(parsing: "sqlite")
        XCTAssertEqual(
            try Scenarios.named(["all"], for: sqlite).map(\.name),
            ["crash-points", "power-cut", "isolation", "io-errors", "crash-states"])
        XCTAssertThrowsError(try Scenarios.named(["growth"], for: sqlite)) {
            XCTAssertTrue("\($0)".contains("runs only on target fief"))
        }
        XCTAssertEqual(try Scenarios.named(["all"], for: .default).count, Scenarios.all.count)
    }

    /// Results written before violations were typed hold bare texts: each reads back with the
    /// kind its checker started it with.
    func testOlderViolationTextsReadBackWithTheirKind() throws {
        func kind(_ text: String) throws -> ViolationKind {
            try JSONDecoder().decode(Violation.self, from: JSONEncoder().encode(text)).kind
        }
        XCTAssertEqual(try kind("drop-all power cut …: durability: commit 3 was acknowledged"), .durability)
        XCTAssertEqual(
            try kind("after eio-write, through the mount: atomicity: the data is not the data after commit 4"),
            .atomicity)
        XCTAssertEqual(try kind("integrity: the target's integrity check: row 3 missing from index"), .integrity)
        XCTAssertEqual(try kind("database does not open after the crash: corrupt"), .integrity)
        XCTAssertEqual(try kind("G1c: cycle p0t0#1 -> p1t0#2"), .isolation)
        XCTAssertEqual(try kind("the cycle could not run: mount failed"), .harness)
        XCTAssertEqual(try kind("the select bit of commit 4 was synced, yet the file recovered commit 3"), .durability)
    }

    func testViolationsAreClassifiedAsDurabilityOrAtomicityIntegrity() {
        XCTAssertEqual(ViolationKind.durability.verdictClass, .durability)
        XCTAssertEqual(ViolationKind.integrity.verdictClass, .atomicityIntegrity)
    }
}
