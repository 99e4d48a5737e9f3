import SeededRandomness
import XCTest
@testable import Reports

/// The gate's error rates on synthetic results shaped like `fief bench --quick` (its
/// benchmarks, three systems, the default five repetitions). Noise as this machine shows it:
/// each repetition has a machine factor that every system shares (a busy neighbour, CPU
/// frequency) with a spread of 3%, and each system its own 2% on top.
final class GateErrorRateTests: XCTestCase {
    static let comparisons = 100
    static let benchmarks: [(id: String, unit: String, higherIsBetter: Bool)] = [
        ("bulk-insert", "ops/s", true), ("point-reads", "ops/s", true), ("scan", "ops/s", true),
        ("small-txns.full", "ops/s", true), ("small-txns.none", "ops/s", true),
        ("readers-while-writing", "ops/s", true), ("open", "ms", false)
    ]
    static let level: [SystemName: Double] = [.fief: 1_000, .sqlite: 700, .lmdb: 1_500]

    /// One run. `speed` scales every system (machine drift), `fiefSpeed` Fief alone, in
    /// the benchmarks named by `slowed` (all when nil); both as throughput factors.
    static func run(_ rng: inout SeededRandom, speed: Double = 1, fiefSpeed: Double = 1, slowed: Set<String>? = nil)
        -> BenchResults
    {
        let reps = BenchParameters.quick(seed: 0).repetitions
        var results: [BenchmarkResult] = []
        for b in benchmarks {
            let machine = (0..<reps).map { _ in exp(0.03 * Gaussian.next(&rng)) }
            var systems: [SystemResult] = []
            for s in SystemName.allCases {
                let f = s == .fief && (slowed?.contains(b.id) ?? true) ? fiefSpeed : 1
                let samples = (0..<reps).map { i -> Double in
                    let throughput = level[s]! * speed * f * machine[i] * exp(0.02 * Gaussian.next(&rng))
                    return b.higherIsBetter ? throughput : 1e6 / throughput
                }
                let memory =
                    b.id == "bulk-insert"
                    ? SampleStats((0..<reps).map { _ in 3e7 * exp(0.02 * Gaussian.next(&rng)) }) : nil
                systems.append(SystemResult(system: s, value: SampleStats(samples), peakMemory: memory))
            }
            results.append(
                BenchmarkResult(
                    id: b.id, title: b.id, unit: b.unit, higherIsBetter: b.higherIsBetter, durability: .full,
                    systems: systems))
        }
        return BenchResults(
            context: Fixtures.context(), parameters: .quick(seed: 42), durationSeconds: 60, benchmarks: results)
    }

    /// Failing rows over `comparisons` seeded comparisons of base against `new(seed)`.
    func failures(_ make: (inout SeededRandom) -> (BenchResults, BenchResults)) -> (
        comparisons: Int, rows: [String: Int]
    ) {
        var failed = 0
        var rows: [String: Int] = [:]
        for seed in 1...Self.comparisons {
            var rng = SeededRandom(seed: UInt64(seed))
            let (a, b) = make(&rng)
            let c = Comparison.compare(base: a, new: b, threshold: 0.05)
            if c.exitCode != 0 { failed += 1 }
            for r in c.regressions { rows["\(r.benchmark) \(r.metric)", default: 0] += 1 }
        }
        return (failed, rows)
    }

    func testSameDistributionNeverFails() {
        let f = failures { rng in (Self.run(&rng), Self.run(&rng)) }
        XCTAssertEqual(f.comparisons, 0, "false alarms: \(f.rows)")
    }

    func testDriftOfEverySystemNeverFails() {
        // The machine got 15% slower (or 15% faster) between the runs, for every system alike.
        for speed in [0.85, 1.15] {
            let f = failures { rng in (Self.run(&rng), Self.run(&rng, speed: speed)) }
            XCTAssertEqual(f.comparisons, 0, "drift \(speed): false alarms \(f.rows)")
        }
    }

    func testTenPercentSlowerFiefIsFlagged() {
        // One benchmark, so the rate is per row, not "some row of seven".
        let f = failures { rng in (Self.run(&rng), Self.run(&rng, fiefSpeed: 0.9, slowed: ["point-reads"])) }
        let caught = f.rows["point-reads throughput"] ?? 0
        print("gate: a 10% slower Fief caught in \(caught) of \(Self.comparisons) comparisons")
        XCTAssertGreaterThanOrEqual(caught, 95, "caught in \(caught) of \(Self.comparisons)")
        XCTAssertEqual(f.rows.count, caught > 0 ? 1 : 0, "only the slowed benchmark fails: \(f.rows)")
        // A slower engine (every benchmark) fails every comparison, also on a machine that got
        // slower too. (One that got faster by as much hides it: see `GatePolicy`.)
        let engine = failures { rng in (Self.run(&rng), Self.run(&rng, speed: 0.9, fiefSpeed: 0.9)) }
        XCTAssertEqual(engine.comparisons, Self.comparisons, "\(engine.rows)")
    }

    func testTimesSlowerAreRegressionsToo() {
        // "open" is in ms, smaller is better: a 10% slower Fief there is a regression.
        let f = failures { rng in (Self.run(&rng), Self.run(&rng, fiefSpeed: 0.9, slowed: ["open"])) }
        XCTAssertGreaterThanOrEqual(f.rows["open time"] ?? 0, 95, "\(f.rows)")
    }
}
