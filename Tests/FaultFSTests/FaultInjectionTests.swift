import XCTest
@testable import FaultFS
import Torture

/// Each fault kind on a real mount, driven through `fief faultfs ctl`.
final class FaultInjectionTests: XCTestCase {
    func testEIOOnTheNthWriteOnly() throws {
        let m = try LiveMount(seed: 3)
        try m.ctl("inject", "eio", "op=write", "path=*.dat", "nth=2", "once")
        let f = try RawFile(m.mnt + "/x.dat")
        XCTAssertNoThrow(try f.write("one"))
        XCTAssertThrowsError(try f.write("two", at: 3)) { XCTAssertEqual(($0 as? RawFile.Failure)?.errno, EIO) }
        XCTAssertNoThrow(try f.write("three", at: 3))
        let other = try RawFile(m.mnt + "/y.txt")
        XCTAssertNoThrow(try other.write("not matched"))
        XCTAssertEqual(try m.status().faultsInjected["eio"], 1)
        let trace = try String(contentsOfFile: m.trace, encoding: .utf8)
        XCTAssertTrue(
            trace.contains("\"fault\":\"eio\"") && trace.contains("\"path\":\"/x.dat\"")
                && trace.contains("\"outcome\":\"EIO\""), trace)
    }

    func testENOSPCPastTheQuota() throws {
        let m = try LiveMount(seed: 4)
        let f = try RawFile(m.mnt + "/big")
        try f.write([UInt8](repeating: 1, count: 10_000), at: 0)
        try m.ctl("inject", "enospc", "quota=16K")
        XCTAssertNoThrow(try f.write([UInt8](repeating: 2, count: 10_000), at: 0), "rewriting in place takes no space")
        // The kernel splits the write at page edges: the part that fits lands (a short
        // write), the next one fails.
        var written = 0
        XCTAssertThrowsError(
            try {
                while written < 10_000 {
                    written += try f.write([UInt8](repeating: 3, count: 10_000 - written), at: 10_000 + written)
                }
            }()
        ) {
            XCTAssertEqual(($0 as? RawFile.Failure)?.errno, ENOSPC)
        }
        XCTAssertLessThan(written, 10_000)
        try m.ctl("clear")
        XCTAssertNoThrow(try f.write([UInt8](repeating: 3, count: 10_000), at: 10_000))
        f.close()
    }

    func testFailingFsyncLosesTheUnsyncedData() throws {
        let m = try LiveMount(seed: 5)
        let f = try RawFile(m.mnt + "/f")
        try f.write("old!")
        try f.sync()
        try f.write("new!")
        try m.ctl("inject", "fsync-fail", "path=f", "once")
        XCTAssertThrowsError(try f.sync()) { XCTAssertEqual(($0 as? RawFile.Failure)?.errno, EIO) }
        XCTAssertEqual(
            contents(m.backing + "/f"), Array("old!".utf8), "after a writeback error the data never reaches the disk")
        XCTAssertNoThrow(try f.sync(), "the error is reported once")
    }

    func testLyingFsyncMakesNothingDurable() throws {
        let m = try LiveMount(seed: 6)
        let f = try RawFile(m.mnt + "/f")
        try RawFile.syncDirectory(m.mnt)
        try f.write("old!")
        try f.sync()
        try m.ctl("inject", "fsync-lie")
        try f.write("new!")
        XCTAssertNoThrow(try f.sync())
        XCTAssertEqual(try m.status().files.first?.unsyncedBytes, 4)
        try m.ctl("power-cut", "--mode", "drop-all")
        XCTAssertEqual(contents(m.backing + "/f"), Array("old!".utf8))
    }

    func testShortWritesLatencyAndBitFlips() throws {
        let m = try LiveMount(seed: 7)
        let f = try RawFile(m.mnt + "/f")
        try m.ctl("inject", "short-write", "once")
        let n = try f.write([UInt8](repeating: 5, count: 4096), at: 0)
        XCTAssertLessThan(n, 4096)
        XCTAssertGreaterThan(n, 0)

        try f.write([UInt8](repeating: 0, count: 4096), at: 0)
        try m.ctl("inject", "latency", "op=fsync", "ms=60", "once")
        let start = Date()
        try f.sync()
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.05, "the injected delay did not happen")
        f.close()

        try m.ctl("inject", "bitflip", "path=f", "bits=3", "once")
        let r = try RawFile(m.mnt + "/f", flags: O_RDONLY)
        let seen = try r.read(4096)
        r.close()
        let flipped = zip(seen, contents(m.backing + "/f")!).reduce(0) { $0 + ($1.0 ^ $1.1).nonzeroBitCount }
        XCTAssertTrue((1...3).contains(flipped), "expected up to 3 flipped bits, found \(flipped)")
        XCTAssertEqual(
            contents(m.backing + "/f"), [UInt8](repeating: 0, count: 4096), "a bit flip on read never reaches the disk")
    }

    func testKillCallerKillsTheProcessAtTheNthOperation() throws {
        let m = try LiveMount(seed: 8)
        try m.ctl("inject", "kill-caller", "op=fsync", "path=victim", "nth=2", "when=before")
        let script =
            "import os\nfd=os.open('\(m.mnt)/victim', os.O_CREAT|os.O_RDWR)\n"
            + "for i in range(5):\n    os.write(fd, b'x'); os.fsync(fd); print(i, flush=True)\n"
        let r = try runProgram("/usr/bin/env", ["python3", "-c", script])
        XCTAssertTrue(r.signaled && r.status == SIGKILL, "expected SIGKILL, got status \(r.status): \(r.output)")
        XCTAssertEqual(r.output, "0\n", "killed at the second fsync, before it ran")
    }

    func testSameSeedConfigAndWorkloadGiveTheSameTrace() throws {
        let config = """
            trace_operations = false
            [[fault]]
            kind = "eio"
            op = "write"
            probability = 0.2
            [[fault]]
            kind = "short-write"
            probability = 0.2
            [[fault]]
            kind = "fsync-fail"
            probability = 0.3
            """
        func runOnce(seed: UInt64, name: String) throws -> (trace: String, data: [UInt8]?) {
            let m = try LiveMount(seed: seed, config: config, name: name)
            let f = try RawFile(m.mnt + "/w")
            for i in 0..<200 {
                _ = try? f.write((0..<300).map { UInt8(truncatingIfNeeded: $0 &* i) }, at: i * 211)
                if i % 10 == 9 { _ = try? f.sync() }
            }
            try m.ctl("power-cut", "--mode", "drop-random")
            f.close()
            m.unmount()
            return (try String(contentsOfFile: m.trace, encoding: .utf8), contents(m.backing + "/w"))
        }
        let a = try runOnce(seed: 42, name: "a"), b = try runOnce(seed: 42, name: "b"),
            c = try runOnce(seed: 43, name: "c")
        XCTAssertGreaterThan(a.trace.split(separator: "\n").count, 20)
        XCTAssertEqual(a.trace, b.trace, "same seed, config and workload, different fault trace")
        XCTAssertEqual(a.data, b.data, "same seed, different file after the power cut")
        XCTAssertNotEqual(a.trace, c.trace, "the seed does not steer the faults")
    }
}
