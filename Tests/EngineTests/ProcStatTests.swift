import XCTest
@testable import ProcFS

/// `/proc/PID/stat`, read in one place: this process's own line, a command name that holds
/// spaces and parentheses, and a pid that does not exist.
final class ProcStatTests: XCTestCase {
    func testOwnLineAndAwkwardNames() throws {
        let me = try XCTUnwrap(ProcStat(pid: getpid()))
        XCTAssertEqual(me.parent, getppid())
        XCTAssertGreaterThan(me.startTime, 0)
        XCTAssertFalse(me.isZombie)
        let line = Array("4242 (a) b (Z c) S 17 4242 4242 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987654 1 2\n".utf8)
        let odd = try XCTUnwrap(ProcStat(line: line[...]))
        XCTAssertEqual(odd.state, UInt8(ascii: "S"))
        XCTAssertEqual(odd.parent, 17)
        XCTAssertEqual(odd.startTime, 987_654)
        XCTAssertNil(ProcStat(line: Array("4242 (truncated) S 1".utf8)[...]))
        XCTAssertNil(ProcStat(pid: Int32.max))
    }
}
