import Foundation
@testable import Reports

/// Hand-made results with known numbers, so the arithmetic can be checked by hand.
enum Fixtures {
    static let machine = Machine(
        hostname: "test", cores: 2, memoryBytes: 1 << 34, kernel: "Linux 6.1 x86_64", cpu: "Test CPU")

    static func context(label: String = "base", build: String = "release") -> RunContext {
        RunContext(
            gitCommit: "0123456789abcdef0123456789abcdef01234567", gitDirty: false, label: label,
            engineFormatVersion: 1,
            build: build, date: "2026-01-01T00:00:00Z", machine: machine, durability: .full,
            peerVersions: ["sqlite": "3.40.1", "lmdb": "0.9.24"])
    }

    static func latency(_ p50: Double) -> LatencySummary {
        LatencySummary(
            count: 1000, p50: p50, p90: p50 * 2, p99: p50 * 5, p999: p50 * 10, max: p50 * 40, mean: p50 * 1.3)
    }

    /// Five samples (the bench's default repetitions) centred on `median` with the given
    /// relative half-range.
    static func samples(_ median: Double, spread: Double) -> SampleStats {
        SampleStats([-1, -0.5, 0, 0.5, 1].map { median * (1 + $0 * spread) })
    }

    static func results(
        label: String = "base", reads: Double = 1_000_000, readsSpread: Double = 0.01, size: Double = 4_000_000,
        insert: Double = 500_000, sqliteReads: Double = 500_000, build: String = "release"
    ) -> BenchResults {
        let benchmarks = [
            BenchmarkResult(
                id: "point-reads", title: "Random point reads", unit: "ops/s", higherIsBetter: true, durability: .full,
                systems: [
                    SystemResult(system: .fief, value: samples(reads, spread: readsSpread), latency: latency(1.0)),
                    SystemResult(system: .sqlite, value: samples(sqliteReads, spread: 0.01), latency: latency(2.0)),
                    SystemResult(system: .lmdb, value: samples(2_000_000, spread: 0.01), latency: latency(0.5))
                ], latencyOf: "one get"),
            BenchmarkResult(
                id: "bulk-insert", title: "Bulk insert <one txn>", unit: "ops/s", higherIsBetter: true,
                durability: .full,
                systems: [
                    SystemResult(
                        system: .fief, value: samples(insert, spread: 0.02),
                        peakMemory: samples(30_000_000, spread: 0)),
                    SystemResult(
                        system: .sqlite, value: samples(400_000, spread: 0.02),
                        peakMemory: samples(10_000_000, spread: 0)),
                    SystemResult(
                        system: .lmdb, value: samples(800_000, spread: 0.02), peakMemory: samples(20_000_000, spread: 0)
                    )
                ]),
            BenchmarkResult(
                id: "churn", title: "File size after churn", unit: "bytes", higherIsBetter: false, durability: .full,
                systems: [
                    SystemResult(
                        system: .fief, value: SampleStats([size]), curve: [1_000_000, 2_000_000, size],
                        extra: ["liveBytes": 900_000]),
                    SystemResult(
                        system: .sqlite, value: SampleStats([3_000_000]), curve: [1_000_000, 2_000_000, 3_000_000]),
                    SystemResult(
                        system: .lmdb, value: SampleStats([5_000_000]), curve: [1_000_000, 3_000_000, 5_000_000])
                ])
        ]
        return BenchResults(
            context: context(label: label, build: build), parameters: .quick(seed: 42), durationSeconds: 60,
            benchmarks: benchmarks)
    }

    /// A torture results.json shaped as `fief torture run` writes it (extra fields included).
    static let tortureJSON = """
        {"tool":"fief torture","seed":42,"profile":"quick","shard":"1/1",\
        "started":"2026-01-01T00:00:00Z","durationSeconds":95.5,
         "engineFormatVersion":1,"passed":false,
         "scenarios":[
          {"name":"crash-points","cycles":12,"violations":0,"durationSeconds":40,"cyclesPerMinute":18,\
        "crashPointsCovered":["after-publish"],
           "faultsInjected":0,"modes":[{"name":"after-data-sync","cycles":6,"violations":0,"passed":true},\
        {"name":"random-kill","cycles":6,"violations":0,"passed":true}],
           "failures":[],"notes":[],"passed":true},
          {"name":"isolation","cycles":3,"violations":1,"durationSeconds":20,"cyclesPerMinute":9,\
        "crashPointsCovered":[],"faultsInjected":0,"modes":[],
           "failures":[{"cycle":2,"seed":9,"description":"G1c","violations":["cycle"],\
        "reproduce":"fief torture reproduce x"}],"notes":[],"passed":false}
         ],
         "growth":{"sizes":[8192,16384,32768,40960,40960,40960],"liveBytes":[8192,8192,12288,12288,12288,12288],\
        "pinnedAtCommit":1,"releasedAtCommit":3,"boundBytes":65536,"compactedSize":16384}}
        """
}
