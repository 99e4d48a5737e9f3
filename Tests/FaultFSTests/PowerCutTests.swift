import XCTest
@testable import FaultFS
import Torture
import SeededRandomness

/// Power cuts on real mounts: the backing directory afterwards holds only states a disk
/// could hold after losing power.
final class PowerCutTests: XCTestCase {
    func testDropAllKeepsExactlyWhatWasSynced() throws {
        let m = try LiveMount(seed: 1)
        let a = try RawFile(m.mnt + "/a")
        try RawFile.syncDirectory(m.mnt)
        try a.write("durable")
        try a.sync()
        try a.write(" and then some", at: 7)
        let b = try RawFile(m.mnt + "/b")
        try b.write("synced file, synced name")
        try b.sync()
        try RawFile.syncDirectory(m.mnt)
        let c = try RawFile(m.mnt + "/c")
        try c.write("synced data, name never synced")
        try c.sync()
        XCTAssertEqual(try m.status().files.map(\.path), ["/a"])
        XCTAssertEqual(try m.status().files.first?.unsyncedRanges, [[7, 21]])

        try m.ctl("power-cut", "--mode", "drop-all")
        XCTAssertThrowsError(try a.write("x", at: 0), "an open handle must fail after a power cut") { e in
            XCTAssertEqual((e as? RawFile.Failure)?.errno, EIO)
        }
        a.close(); b.close(); c.close()
        XCTAssertEqual(contents(m.backing + "/a"), Array("durable".utf8))
        XCTAssertEqual(contents(m.backing + "/b"), Array("synced file, synced name".utf8))
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: m.backing + "/c"),
            "a create whose directory was never synced is lost")
        // The workload restarts, as after a reboot.
        let again = try RawFile(m.mnt + "/a", flags: O_RDWR)
        XCTAssertEqual(try again.read(100), Array("durable".utf8))
        again.close()
    }

    func testUnlinkAndRenameComeBackUnlessTheDirectoryWasSynced() throws {
        let m = try LiveMount(seed: 2)
        for name in ["keep", "gone", "old"] {
            let f = try RawFile(m.mnt + "/" + name)
            try f.write(name)
            try f.sync()
            f.close()
        }
        try RawFile.syncDirectory(m.mnt)
        XCTAssertEqual(unlink(m.mnt + "/gone"), 0)
        XCTAssertEqual(rename(m.mnt + "/old", m.mnt + "/keep"), 0)
        XCTAssertEqual(try m.status().unsyncedDirectoryChanges, 2)
        try m.ctl("power-cut", "--mode", "drop-all")
        XCTAssertEqual(contents(m.backing + "/gone"), Array("gone".utf8))
        XCTAssertEqual(contents(m.backing + "/old"), Array("old".utf8))
        XCTAssertEqual(contents(m.backing + "/keep"), Array("keep".utf8))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: m.backing).sorted(), ["gone", "keep", "old"],
            "FaultFS's stash must not show")

        XCTAssertEqual(rename(m.mnt + "/old", m.mnt + "/keep"), 0)
        try RawFile.syncDirectory(m.mnt)
        try m.ctl("power-cut", "--mode", "drop-all")
        XCTAssertEqual(contents(m.backing + "/keep"), Array("old".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: m.backing + "/old"))
    }

    /// Sector-disjoint unsynced writes over a synced base; each mode may only produce the
    /// states it allows, and over many seeds it must produce more than the two trivial ones.
    func testEachModeProducesOnlyTheStatesItAllows() throws {
        let seed = testSeed("power-cut modes", default: 20261122)
        var rng = SeededRandom(seed: seed)
        let modes: [(String, [String])] = [
            ("drop-random", ["--mode", "drop-random"]), ("prefix", ["--mode", "prefix"]),
            ("torn-512", ["--mode", "torn", "--sector", "512"]), ("torn-4096", ["--mode", "torn", "--sector", "4096"])
        ]
        for (name, args) in modes {
            var intermediate = 0
            for round in 0..<8 {
                let m = try LiveMount(seed: rng.next(), name: "\(name)-\(round)")
                let base = (0..<16384).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let f = try RawFile(m.mnt + "/data")
                try f.write(base, at: 0)
                try f.sync()
                try RawFile.syncDirectory(m.mnt)
                // Writes in distinct 1 KiB slots, some crossing sector edges, some growing the file.
                var writes: [(Int, [UInt8])] = []
                for slot in [0, 3, 6, 9, 14, 17, 20].shuffled(using: &rng) {
                    let off = slot * 1024 + Int.random(in: 0...300, using: &rng)
                    writes.append(
                        (
                            off,
                            (0..<Int.random(in: 1...700, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                            }
                        ))
                }
                for (off, bytes) in writes { try f.write(bytes, at: off) }
                f.close()
                let final = contents(m.mnt + "/data")!
                try m.ctl(["power-cut"] + args)
                m.unmount()
                let got = contents(m.backing + "/data")!
                var durable = base
                durable += [UInt8](repeating: 0, count: max(0, final.count - base.count))
                let context = "\(name) round \(round) (seed \(seed))"
                switch name {
                case "prefix":
                    var state = base
                    var allowed = [state]
                    for (off, bytes) in writes {
                        if state.count < off + bytes.count {
                            state += [UInt8](repeating: 0, count: off + bytes.count - state.count)
                        }
                        state.replaceSubrange(off..<(off + bytes.count), with: bytes)
                        allowed.append(state)
                    }
                    XCTAssertTrue(allowed.contains(got), "\(context): not a prefix of the writes")
                case "torn-512", "torn-4096", "drop-random":
                    let block = name == "torn-4096" ? 4096 : 512
                    XCTAssertTrue(
                        got.count == base.count || got.count == final.count || name == "drop-random",
                        "\(context): size \(got.count)")
                    for start in stride(from: 0, to: got.count, by: block) {
                        let end = min(got.count, start + block)
                        let g = got[start..<end]
                        let old = start < durable.count ? durable[start..<min(end, durable.count)] : []
                        let new = start < final.count ? final[start..<min(end, final.count)] : []
                        XCTAssertTrue(
                            g.elementsEqual(old) || g.elementsEqual(new),
                            "\(context): block at \(start) is neither its old nor its new contents")
                    }
                default: XCTFail(name)
                }
                if got != base && got != final { intermediate += 1 }
            }
            XCTAssertGreaterThan(
                intermediate, 0, "\(name): eight cuts and never a state between the synced and the written one")
        }
    }

    /// A program nobody here wrote: SQLite in WAL mode with synchronous=FULL keeps every
    /// acknowledged commit across power cuts; with synchronous=OFF the loss shows.
    func testSQLiteFullLosesNothingAndOffLosesCommits() throws {
        try requireFUSE()
        guard
            let sqlite = ["/usr/bin/sqlite3", "/bin/sqlite3"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            XCTFail("sqlite3 is not installed (scripts/setup.sh installs it)")
            return
        }
        let seed = testSeed("sqlite power cuts", default: 7)
        var rng = SeededRandom(seed: seed)
        let modes = [
            ["drop-all"], ["drop-random"], ["prefix"], ["torn", "--sector", "512"], ["torn", "--sector", "4096"]
        ]
        var lost = 0
        for (i, sync) in (Array(repeating: "FULL", count: 5) + Array(repeating: "OFF", count: 3)).enumerated() {
            let m = try LiveMount(seed: rng.next(), name: "sqlite-\(i)")
            let db = m.mnt + "/t.db"
            var acked = 0
            for n in 1...12 {
                let r = try runProgram(
                    sqlite,
                    [
                        db,
                        "PRAGMA journal_mode=WAL; PRAGMA synchronous=\(sync); "
                            + "CREATE TABLE IF NOT EXISTS t(n INTEGER); INSERT INTO t VALUES(\(n));"
                    ])
                XCTAssertEqual(r.status, 0, r.output)
                acked = n
            }
            let mode = sync == "OFF" ? ["drop-all"] : modes[i % modes.count]
            try m.ctl(["power-cut", "--mode"] + mode)
            m.unmount()
            let after = try runProgram(sqlite, [m.backing + "/t.db", "PRAGMA integrity_check; SELECT count(*) FROM t;"])
            let lines = after.output.split(separator: "\n")
            let count = after.status == 0 && lines.count == 2 && lines[0] == "ok" ? Int(lines[1]) ?? -1 : -1
            if sync == "FULL" {
                XCTAssertEqual(
                    count, acked, "synchronous=FULL after a \(mode.joined(separator: " ")) cut: \(after.output)")
            } else if count < acked {
                lost += 1
            }
        }
        XCTAssertGreaterThan(
            lost, 0, "synchronous=OFF never lost an acknowledged commit: FaultFS is not dropping unsynced writes")
    }
}
