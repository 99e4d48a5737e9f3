import XCTest
import Engine
@testable import Torture
import TortureSchema

/// The bank checker passes a sound history and fires on each kind of damage.
final class BankTransfersTests: XCTestCase {
    func bank(commits: UInt64) throws -> (TempDir, Database, CommitWorkload) {
        let dir = TempDir()
        let db = try Database(path: dir.file("bank.fief"), options: DatabaseOptions(durability: .none))
        let w = CommitWorkload(seed: 5)
        for i in 1...commits { try db.write { try w.apply(commit: i, in: $0) } }
        return (dir, db, w)
    }

    func violations(_ db: Database, _ w: CommitWorkload, _ k: UInt64) throws -> [Violation] {
        try db.read { try BankTransfers(seed: w.seed).verify(in: $0, afterCommit: k) }
    }

    func testSoundHistoryPasses() throws {
        let (_, db, w) = try bank(commits: 40)
        XCTAssertEqual(try violations(db, w, 40), [])
    }

    func testMoneyFromNowhereIsCaught() throws {
        let (_, db, w) = try bank(commits: 10)
        try db.write { tx in
            try tx.openTable(BankTransfers.accountsTable, key: Int64.self, value: Int64.self).put(3, 99_999)
        }
        let v = try violations(db, w, 10)
        XCTAssertTrue(
            v.contains { $0.kind == .atomicity && $0.text.hasPrefix("bank: ") && $0.text.contains("add up to") }, "\(v)"
        )
    }

    func testATransferWithoutItsHistoryIsCaught() throws {
        let (_, db, w) = try bank(commits: 10)
        try db.write { tx in
            let a = try tx.openTable(BankTransfers.accountsTable, key: Int64.self, value: Int64.self)
            try a.put(0, try a.get(0)! - 5)
            try a.put(1, try a.get(1)! + 5)
        }
        let v = try violations(db, w, 10)
        XCTAssertTrue(v.contains { $0.kind == .atomicity && $0.text.contains("history entries") }, "\(v)")
    }

    func testAStateFromAnotherCommitIsCaught() throws {
        let (_, db, w) = try bank(commits: 10)
        XCTAssertFalse(try violations(db, w, 9).isEmpty, "the balances of commit 10 passed as commit 9's")
    }
}
