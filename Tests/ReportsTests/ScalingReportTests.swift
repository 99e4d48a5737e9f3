import Foundation
import FiefTestSupport
@testable import ProcFS
import XCTest

@testable import Reports

/// `fief report scaling`: objects-suite results at several sizes, laid side by side.
final class ScalingReportTests: XCTestCase {
    /// An objects-suite result at `persons`: counts, the load (with each system's peak memory)
    /// and the file size, at the numbers given.
    private func objects(
        persons: Int, fiefCount: Double, sqliteCount: Double, fiefMemory: Double, fiefFile: Double
    ) -> BenchResults {
        var p = BenchParameters.quick(seed: 11)
        p.suite = "objects"
        p.objectPersons = persons
        func one(_ v: Double) -> SampleStats { SampleStats([v]) }
        let benchmarks = [
            BenchmarkResult(
                id: "obj.insert", title: "insert", unit: "ops/s", higherIsBetter: true, durability: .full,
                systems: [
                    SystemResult(system: .fief, value: one(300_000), peakMemory: one(fiefMemory)),
                    SystemResult(system: .sqlite, value: one(200_000), peakMemory: one(2_097_152))
                ]),
            BenchmarkResult(
                id: "obj.count", title: "count", unit: "ops/s", higherIsBetter: true, durability: .full,
                systems: [
                    SystemResult(system: .fief, value: one(fiefCount)),
                    SystemResult(system: .sqlite, value: one(sqliteCount))
                ]),
            BenchmarkResult(
                id: "obj.file-size", title: "file", unit: "bytes", higherIsBetter: false, durability: .full,
                systems: [
                    SystemResult(system: .fief, value: one(fiefFile)),
                    SystemResult(system: .sqlite, value: one(fiefFile))
                ])
        ]
        return BenchResults(
            context: Fixtures.context(), parameters: p, durationSeconds: 1, benchmarks: benchmarks)
    }

    func testTargetsGrowthAndMemoryAtEachSize() throws {
        // Given largest first: the report orders by size.
        let big = objects(persons: 10_000, fiefCount: 100, sqliteCount: 25, fiefMemory: 8_388_608, fiefFile: 1_048_576)
        let small = objects(persons: 1_000, fiefCount: 1000, sqliteCount: 200, fiefMemory: 1_048_576, fiefFile: 102_400)
        let md = try ScalingReport.markdown([.init(path: "b.json", results: big), .init(path: "s.json", results: small)]
        )
        XCTAssertTrue(md.hasPrefix("# Fief's object layer at 1K, 10K persons\n"), md)
        // 1000 / 200 = 5.00x meets >= 5x; 100 / 25 = 4.00x misses it.
        XCTAssertTrue(md.contains("| `obj.count` throughput | >= 5.00x SQLite | 5.00x met | 4.00x **missed** |"), md)
        // A count's time grows 10x over 10x the objects (k = 1); SQLite's 8x (k = log 8 / log 10).
        XCTAssertTrue(md.contains("| `obj.count` | Fief | 1000 ops/s | 100 ops/s | 10.00 | 1.00 |"), md)
        XCTAssertTrue(md.contains("| `obj.count` | SQLite | 200 ops/s | 25 ops/s | 8.00 | 0.90 |"), md)
        // An insert's time per object stays flat (k = 0); a size is its own cost.
        XCTAssertTrue(md.contains("| `obj.insert` | Fief | 300.0k ops/s | 300.0k ops/s | 1.00 | 0.00 |"), md)
        XCTAssertTrue(md.contains("| `obj.file-size` | Fief | 100.0 KiB | 1.0 MiB | 10.24 | 1.01 |"), md)
        XCTAssertTrue(
            md.contains(
                "| peak memory of the load above the process's baseline (`obj.insert`) | Fief | 1.0 MiB | 8.0 MiB |"),
            md)
        XCTAssertTrue(
            md.contains(
                "| peak memory of the load above the process's baseline (`obj.insert`) | SQLite | 2.0 MiB | 2.0 MiB |"),
            md)
        XCTAssertFalse(md.contains("different builds"))
    }

    func testRefusesWhatCannotBeLaidSideBySide() throws {
        let one = objects(persons: 1_000, fiefCount: 1, sqliteCount: 1, fiefMemory: 1, fiefFile: 1)
        func refusal(_ runs: [ScalingReport.Run]) -> String {
            do {
                _ = try ScalingReport.markdown(runs)
                return "accepted"
            } catch let e as BenchError {
                return e.description
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(refusal([.init(path: "a", results: one)]).contains("two or more sizes"))
        XCTAssertTrue(
            refusal([.init(path: "a", results: one), .init(path: "b", results: one)]).contains("both at 1000 persons"))
        // An engine-suite result has the profile's object count but measured no objects.
        XCTAssertTrue(
            refusal([.init(path: "a", results: one), .init(path: "e.json", results: Fixtures.results())])
                .contains("e.json: not an objects-suite result"))
    }

    func testDifferentBuildsAreSaid() throws {
        let a = objects(persons: 1_000, fiefCount: 1, sqliteCount: 1, fiefMemory: 1, fiefFile: 1)
        var b = objects(persons: 2_000, fiefCount: 1, sqliteCount: 1, fiefMemory: 1, fiefFile: 1)
        b.context.gitCommit = "fedcba9876543210fedcba9876543210fedcba98"
        let md = try ScalingReport.markdown([.init(path: "a", results: a), .init(path: "b", results: b)])
        XCTAssertTrue(md.contains("**These results come from different builds**"), md)
    }
}

/// The peak memory a benchmark child reports is its own: reset at the start of its window.
final class ResidentMemoryTests: XCTestCase {
    func testParsesStatusLines() {
        let status = "Name:\tfief\nVmHWM:\t    1234 kB\nVmRSS:\t  1000 kB\n"
        XCTAssertEqual(ResidentMemory.kilobytes(in: status, field: "VmHWM:"), 1234)
        XCTAssertEqual(ResidentMemory.kilobytes(in: status, field: "VmRSS:"), 1000)
        XCTAssertNil(ResidentMemory.kilobytes(in: status, field: "VmSwap:"))
    }

    func testAWindowSeesWhatWasTouchedInItAfterALargerPeakBefore() throws {
        guard ResidentMemory.residentBytes != nil else {
            throw XCTSkip(skipping("no /proc/self/status on this machine"))
        }
        // A high-water mark before the window, larger than what the window touches: with
        // `ru_maxrss` the window read as nothing.
        touch(megabytes: 96)
        let w = ResidentMemory.startWindow()
        XCTAssertTrue(w.ownPeak, "writing 5 to /proc/self/clear_refs resets the peak (Linux 4.0 and later)")
        XCTAssertGreaterThan(w.baselineBytes, 0)
        touch(megabytes: 32)
        XCTAssertGreaterThanOrEqual(w.peakAboveBaseline, 28 << 20, "peak \(w.peakBytes), baseline \(w.baselineBytes)")
        XCTAssertLessThan(w.peakAboveBaseline, 90 << 20, "the earlier 96 MiB is not this window's")
    }

    /// Maps, writes every page of, and unmaps `megabytes` of anonymous memory.
    private func touch(megabytes: Int) {
        let n = megabytes << 20
        guard let p = mmap(nil, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED else {
            XCTFail("mmap failed")
            return
        }
        memset(p, 1, n)
        munmap(p, n)
    }
}
