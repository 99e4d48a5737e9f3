import XCTest
@testable import FaultFS
import Torture

/// The mount as a plain filesystem: real programs give the same results on it as on a plain
/// directory; bad input is refused before anything is mounted; unmount always cleans up.
final class MountTests: XCTestCase {
    /// Copy, append, rename-over, many small files, links, truncation, concurrent writers,
    /// SQLite through its command-line shell.
    static let workload = """
        set -e
        cp /etc/services copy
        for i in $(seq 1 50); do echo "line $i" >> appended; done
        printf 'first' > target; printf 'second' > incoming; mv incoming target
        mkdir -p many/deeper
        for i in $(seq 1 200); do echo "$i" > many/f$i; done
        for i in $(seq 1 20); do rm many/f$i; done
        ln -s copy symlinked; ln copy hardlinked
        head -c 100000 /dev/zero > shrunk; truncate -s 1234 shrunk
        for w in 1 2 3 4; do (for i in $(seq 1 200); do echo "writer $w $i" >> concurrent$w; done) & done; wait
        mkdir gone && rmdir gone
        if command -v sqlite3 >/dev/null; then
          sqlite3 t.db 'CREATE TABLE t(n INTEGER, s TEXT); \
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<2000) \
        INSERT INTO t SELECT x, hex(randomblob(20)) FROM c;'
          sqlite3 t.db 'UPDATE t SET s = "x" WHERE n % 3 = 0; DELETE FROM t WHERE n % 7 = 0; \
        PRAGMA integrity_check;' > sqlite.out
          sqlite3 t.db 'SELECT count(*), sum(n), sum(length(s)) FROM t;' >> sqlite.out
          rm -f t.db
        fi
        """

    /// Every file under `root` with its contents (symlinks as their targets).
    func manifest(_ root: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let walk = FileManager.default.enumerator(atPath: root)!
        while let rel = walk.nextObject() as? String {
            if rel == Namespace.stashName { walk.skipDescendants(); continue }  // FaultFS's own, until unmount
            let p = root + "/" + rel
            var st = stat()
            lstat(p, &st)
            switch st.st_mode & S_IFMT {
            case S_IFLNK: out[rel] = Array((try FileManager.default.destinationOfSymbolicLink(atPath: p)).utf8)
            case S_IFREG: out[rel] = contents(p) ?? []
            case S_IFDIR: out[rel + "/"] = []
            default: break
            }
        }
        return out
    }

    func testProgramsSeeTheSameFilesAsOnAPlainDirectory() throws {
        let m = try LiveMount(seed: 9)
        let plain = m.dir.file("plain")
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let onPlain = try runProgram("/bin/bash", ["-c", MountTests.workload], cwd: plain)
        let onMount = try runProgram("/bin/bash", ["-c", MountTests.workload], cwd: m.mnt)
        XCTAssertEqual(onPlain.status, 0, onPlain.output)
        XCTAssertEqual(onMount.status, 0, onMount.output)
        let expected = try manifest(plain), got = try manifest(m.mnt)
        XCTAssertEqual(expected.keys.sorted(), got.keys.sorted())
        for (k, v) in expected where got[k] != v { XCTFail("\(k) differs on the mount") }
        let behind = try manifest(m.backing)
        XCTAssertEqual(behind.keys.sorted(), got.keys.sorted())
        for (k, v) in got where behind[k] != v { XCTFail("\(k) differs in the backing directory") }
        if let out = expected["sqlite.out"] { XCTAssertTrue(String(decoding: out, as: UTF8.self).hasPrefix("ok\n")) }
    }

    func testEngineFilesWorkThroughTheMount() throws {
        let m = try LiveMount(seed: 10)
        for i in 1...5 {
            XCTAssertEqual(try fief("db", "put", m.mnt + "/shop.fief", "prices", "k\(i)", "v\(i)").status, 0)
        }
        let scan = try fief("db", "scan", m.mnt + "/shop.fief", "prices")
        XCTAssertEqual(scan.output.split(separator: "\n").count, 5, scan.output)
        XCTAssertEqual(try fief("db", "check", m.mnt + "/shop.fief").status, 0)
    }

    /// flock, POSIX and open-file-description locks exclude each other between processes on
    /// the mount, as on any local filesystem.
    func testLocksWorkBetweenProcesses() throws {
        let m = try LiveMount(seed: 14)
        let script = """
            import fcntl, os, subprocess, sys, struct
            path = sys.argv[1]
            fd = os.open(path, os.O_CREAT | os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.lockf(fd, fcntl.LOCK_EX, 1, 100)
            probe = '''
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            out = []
            for name, f in (("flock", lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
                            ("posix", lambda: fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 100))):
                try:
                    f(); out.append(name + " granted")
                except OSError:
                    out.append(name + " refused")
            print(", ".join(out))
            '''
            r = subprocess.run([sys.executable, "-c", probe, path], capture_output=True, text=True)
            print(r.stdout.strip())
            """
        let r = try runProgram("/usr/bin/env", ["python3", "-c", script, m.mnt + "/locked"])
        XCTAssertEqual(
            r.output.trimmingCharacters(in: .whitespacesAndNewlines), "flock refused, posix refused", r.output)
    }

    func testBadInputIsRefusedAndNothingIsMounted() throws {
        try requireFUSE()
        let d = TempDir()
        for sub in ["backing", "mnt", "full"] {
            try FileManager.default.createDirectory(atPath: d.file(sub), withIntermediateDirectories: true)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: d.file("full/x"), contents: Data()))
        try "[[fault]]\nkind = \"melt\"\n".write(toFile: d.file("unknown.toml"), atomically: true, encoding: .utf8)
        try "{\"faults\": [".write(toFile: d.file("broken.json"), atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["faultfs", "mount", d.file("nope"), d.file("mnt")], "does not exist"),
            (["faultfs", "mount", d.file("backing"), d.file("nope")], "does not exist"),
            (["faultfs", "mount", d.file("backing"), d.file("full")], "not empty"),
            (["faultfs", "mount", d.file("backing"), d.file("backing")], "must not contain each other"),
            (
                ["faultfs", "mount", d.file("backing"), d.file("mnt"), "--config", d.file("unknown.toml")],
                "unknown fault 'melt'"
            ),
            (
                ["faultfs", "mount", d.file("backing"), d.file("mnt"), "--config", d.file("broken.json")],
                "malformed JSON"
            ),
            (["faultfs", "mount", d.file("backing"), d.file("mnt"), "--config", d.file("missing.toml")], "cannot read"),
            (["faultfs", "ctl", d.file("mnt"), "status"], "no FaultFS is mounted"),
            (["faultfs", "unmount", d.file("mnt")], "no FaultFS is mounted")
        ]
        for (args, expected) in cases {
            let r = try runProgram(try FiefExecutable.path(), args)
            XCTAssertNotEqual(r.status, 0, "\(args) succeeded")
            XCTAssertFalse(r.signaled, "\(args) died of a signal")
            XCTAssertTrue(r.output.contains(expected), "\(args): '\(r.output)' should say '\(expected)'")
            XCTAssertEqual(r.output.split(separator: "\n").count, 1, "one line, no stack trace: \(r.output)")
            XCTAssertFalse(Mounter.isMounted(d.file("mnt")), "\(args) left a mount behind")
        }
        let m = try LiveMount(seed: 11)
        let r = try runProgram(try FiefExecutable.path(), ["faultfs", "ctl", m.mnt, "inject", "melt"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.output.contains("unknown fault 'melt'"), r.output)
        let again = try runProgram(try FiefExecutable.path(), ["faultfs", "mount", m.dir.file("x"), m.mnt])
        XCTAssertNotEqual(again.status, 0, "mounting twice on one mountpoint must fail")
    }

    /// A run killed mid-cycle leaves a FaultFS mount in its `--out` folder; the next run into
    /// that folder unmounts it, says so, and runs its cycles.
    func testATortureRunUnmountsWhatAKilledRunLeftInItsFolder() throws {
        let m = try LiveMount(seed: 14, name: "work/power-cut-7")
        let out = m.dir.path
        // Should the run leave it (moved with the failed cycle's files), it goes here.
        defer { for p in Mounter.faultFSMounts(under: out) { _ = try? Mounter.unmount(p) } }
        let r = try fief(
            "torture", "run", "--scenario", "power-cut", "--cycles", "8", "--seed", "5", "--out", out)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.output.contains("a FaultFS mount an earlier run left in"), r.output)
        XCTAssertFalse(Mounter.isMounted(m.mnt), "the leftover mount is still there")
        XCTAssertEqual(Mounter.faultFSMounts(under: out), [])
    }

    func testUnmountCleansUpEvenAfterTheDaemonDied() throws {
        let m = try LiveMount(seed: 12)
        let pid = try m.status().pid
        XCTAssertEqual(kill(pid, SIGKILL), 0)
        usleep(200_000)
        let r = try fief("faultfs", "unmount", m.mnt)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertFalse(Mounter.isMounted(m.mnt))

        let n = try LiveMount(seed: 13)
        let npid = try n.status().pid
        let r2 = try fief("faultfs", "unmount", n.mnt)
        XCTAssertEqual(r2.status, 0, r2.output)
        XCTAssertFalse(Mounter.isMounted(n.mnt))
        XCTAssertFalse(Mounter.isAlive(npid), "the daemon outlived its mount")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: n.backing), [],
            "FaultFS left files in the backing directory")
    }
}
