import XCTest
@testable import FaultFS
import Torture

/// Small programs whose outcome after a power cut differs between persistence models: each
/// model must give exactly the outcome its table in the README promises.
final class PersistenceModelTests: XCTestCase {
    /// A mount with one file, `anchor`, durable with its name; the programs sync it to
    /// commit (or not) everything else.
    func mountWithAnchor(_ model: PersistenceModel, seed: UInt64) throws -> LiveMount {
        let m = try LiveMount(seed: seed, name: model.rawValue, model: model)
        let anchor = try RawFile(m.mnt + "/anchor")
        try anchor.write("anchor")
        try anchor.sync()
        try RawFile.syncDirectory(m.mnt)
        return m
    }

    func testStatusNamesTheModel() throws {
        for model in PersistenceModel.allCases {
            let m = try LiveMount(seed: 1, name: model.rawValue, model: model)
            XCTAssertEqual(try m.status().model, model.rawValue)
            try m.ctl("power-cut", "--mode", "drop-all")
            let trace = (try? String(contentsOfFile: m.trace, encoding: .utf8)) ?? ""
            XCTAssertTrue(
                trace.contains("model \(model.rawValue)"), "the power cut's trace line names the model: \(trace)")
        }
    }

    /// A new file is written, never synced, then another file is fsynced.
    func testANewFileAfterAnotherFilesFsync() throws {
        var outcomes: [PersistenceModel: [UInt8]?] = [:]
        for model in PersistenceModel.allCases {
            let m = try mountWithAnchor(model, seed: 2)
            let fresh = try RawFile(m.mnt + "/fresh")
            try fresh.write("hello")
            let anchor = try RawFile(m.mnt + "/anchor")
            try anchor.write("ANCHOR+", at: 0)
            try anchor.sync()
            fresh.close(); anchor.close()
            try m.ctl("power-cut", "--mode", "drop-all")
            XCTAssertEqual(
                contents(m.backing + "/anchor"), Array("ANCHOR+".utf8), "\(model): the fsynced file keeps its bytes")
            outcomes[model] = contents(m.backing + "/fresh")
        }
        XCTAssertEqual(
            outcomes[.posix], .some(nil), "posix: the create was never made durable by its directory's fsync")
        XCTAssertEqual(
            outcomes[.ext4Ordered], .some([]),
            "ext4-ordered: the journal kept the name, delayed allocation lost the bytes")
        XCTAssertEqual(
            outcomes[.ext4Writeback], .some([0, 0, 0, 0, 0]), "ext4-writeback: the size is durable, the bytes are not")
    }

    /// The replace-by-rename idiom without an fsync of the new file.
    func testRenameOverAnExistingFile() throws {
        var outcomes: [PersistenceModel: [UInt8]?] = [:]
        for model in PersistenceModel.allCases {
            let m = try mountWithAnchor(model, seed: 3)
            let cfg = try RawFile(m.mnt + "/cfg")
            try cfg.write("old")
            try cfg.sync()
            try RawFile.syncDirectory(m.mnt)
            let tmp = try RawFile(m.mnt + "/cfg.tmp")
            try tmp.write("new!")
            tmp.close()
            XCTAssertEqual(rename(m.mnt + "/cfg.tmp", m.mnt + "/cfg"), 0)
            let anchor = try RawFile(m.mnt + "/anchor")
            try anchor.sync()
            anchor.close(); cfg.close()
            try m.ctl("power-cut", "--mode", "drop-all")
            outcomes[model] = contents(m.backing + "/cfg")
            XCTAssertFalse(FileManager.default.fileExists(atPath: m.backing + "/cfg.tmp"), "\(model)")
        }
        XCTAssertEqual(outcomes[.posix], .some(Array("old".utf8)), "posix: the rename was never made durable")
        XCTAssertEqual(
            outcomes[.ext4Ordered], .some(Array("new!".utf8)),
            "ext4-ordered: auto_da_alloc carries the bytes with the rename")
        XCTAssertEqual(
            outcomes[.ext4Writeback], .some([0, 0, 0, 0]), "ext4-writeback: the new name and size, not the bytes")
    }

    /// fdatasync commits the journal only when the file's size changed.
    func testAnFdatasyncThatChangesNoSizeCommitsNoName() throws {
        for model in PersistenceModel.allCases {
            let m = try mountWithAnchor(model, seed: 4)
            let a = try RawFile(m.mnt + "/a")
            try a.write("a")
            let anchor = try RawFile(m.mnt + "/anchor")
            try anchor.write("ANCHOR", at: 0)
            try anchor.dataSync()
            try m.ctl("power-cut", "--mode", "drop-all")
            XCTAssertFalse(
                FileManager.default.fileExists(atPath: m.backing + "/a"),
                "\(model): an overwrite's fdatasync writes no metadata")
            XCTAssertEqual(contents(m.backing + "/anchor"), Array("ANCHOR".utf8), "\(model)")
        }
        for model in PersistenceModel.allCases {
            let m = try mountWithAnchor(model, seed: 5)
            let b = try RawFile(m.mnt + "/b")
            try b.write("b")
            let anchor = try RawFile(m.mnt + "/anchor")
            try anchor.write("+grown", at: 6)
            try anchor.dataSync()
            try m.ctl("power-cut", "--mode", "drop-all")
            XCTAssertEqual(
                FileManager.default.fileExists(atPath: m.backing + "/b"), model != .posix,
                "\(model): an fdatasync that grows its file commits the journal under ext4")
            XCTAssertEqual(contents(m.backing + "/anchor"), Array("anchor+grown".utf8), "\(model)")
        }
    }

    /// A directory's fsync: its own names under posix, every name under ext4.
    func testADirectorySyncCommitsOtherDirectoriesUnderExt4() throws {
        for model in PersistenceModel.allCases {
            let m = try mountWithAnchor(model, seed: 6)
            XCTAssertEqual(mkdir(m.mnt + "/d", 0o755), 0)
            try RawFile.syncDirectory(m.mnt)
            let x = try RawFile(m.mnt + "/d/x")
            try x.write("x")
            try x.sync()
            x.close()
            let y = try RawFile(m.mnt + "/y")
            y.close()
            try RawFile.syncDirectory(m.mnt)
            try m.ctl("power-cut", "--mode", "drop-all")
            XCTAssertTrue(FileManager.default.fileExists(atPath: m.backing + "/y"), "\(model)")
            XCTAssertEqual(
                contents(m.backing + "/d/x"), model == .posix ? nil : Array("x".utf8),
                "\(model): d/x's name needs d's fsync under posix, any sync under ext4")
        }
    }

    func testConfigAndFlagChooseTheModel() throws {
        XCTAssertEqual(try FaultConfig.parseTOML("model = \"ext4-writeback\"\n").model, .ext4Writeback)
        XCTAssertEqual(try FaultConfig.parseJSON(Data(#"{"model": "ext4-ordered"}"#.utf8)).model, .ext4Ordered)
        XCTAssertNil(try FaultConfig.parseTOML("seed = 1\n").model)
        XCTAssertThrowsError(try FaultConfig.parseTOML("model = \"ext3\"\n")) { e in
            XCTAssertTrue("\(e)".contains("posix, ext4-ordered, ext4-writeback"), "\(e)")
        }
        let dir = TempDir()
        let r = try fief("faultfs", "mount", dir.path, dir.path + "/m", "--model", "btrfs")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.output.contains("posix"), r.output)
        XCTAssertFalse(r.output.contains("Fatal error"), r.output)
    }
}

/// The git workload of `scripts/git-on-faultfs.sh`: the same seed gives the same cut and the
/// same verdict under every model, and under posix a repository whose directories git never
/// fsyncs cannot outlive a cut that drops everything unsynced.
final class GitWorkloadTests: XCTestCase {
    func runScript(_ args: [String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let out = TempDir()
        let r = try runProgram(
            "/bin/bash",
            [root + "/scripts/git-on-faultfs.sh", "--fief", try FiefExecutable.path(), "--out", out.path] + args)
        XCTAssertEqual(r.status, 0, r.output)
        return r.output
    }

    func testTheSameSeedGivesTheSameOutcome() throws {
        try requireFUSE()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else {
            throw XCTSkip(skipping("GIT IS NOT INSTALLED: the git workload cannot run"))
        }
        let args = ["--seeds", "1", "--first-seed", "5", "--commits", "4"]
        let first = try runScript(args), second = try runScript(args)
        let lines = { (s: String) in s.split(separator: "\n").filter { $0.hasPrefix("git-on-faultfs: model") } }
        XCTAssertEqual(lines(first).count, 3, first)
        XCTAssertEqual(lines(first), lines(second))
        let dropAll = try runScript(["--seeds", "1", "--commits", "2", "--mode", "drop-all"])
        XCTAssertTrue(dropAll.contains("model posix, seed 1, drop-all: opens no"), dropAll)
    }
}
