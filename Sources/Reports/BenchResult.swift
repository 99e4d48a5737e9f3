import Engine
/// One system's numbers in one benchmark.
public struct SystemResult: Codable, Equatable, Sendable {
    public var system: SystemName
    /// The primary metric over the repetitions (see `BenchmarkResult.unit`).
    public var value: SampleStats
    public var latency: LatencySummary?
    /// Peak resident memory above the process's own baseline, in bytes, one sample a run.
    public var peakMemory: SampleStats?
    /// File size in bytes after the load and after each churn round.
    public var curve: [Double]?
    /// Secondary numbers (medians over repetitions), e.g. the writer's commits per second.
    public var extra: [String: Double]?

    public init(
        system: SystemName, value: SampleStats, latency: LatencySummary? = nil, peakMemory: SampleStats? = nil,
        curve: [Double]? = nil, extra: [String: Double]? = nil
    ) {
        self.system = system; self.value = value; self.latency = latency; self.peakMemory = peakMemory;
        self.curve = curve; self.extra = extra
    }
}

/// One benchmark: a workload at one durability, measured on each system.
public struct BenchmarkResult: Codable, Equatable, Sendable {
    /// Stable name, used to pair benchmarks across results: "bulk-insert", "small-txns.none".
    public var id: String
    public var title: String
    /// "ops/s", "bytes" or "ms".
    public var unit: String
    public var higherIsBetter: Bool
    public var durability: Durability
    public var systems: [SystemResult]
    /// What the latency percentiles measure, when there are any.
    public var latencyOf: String?

    public init(
        id: String, title: String, unit: String, higherIsBetter: Bool, durability: Durability, systems: [SystemResult],
        latencyOf: String? = nil
    ) {
        self.id = id; self.title = title; self.unit = unit; self.higherIsBetter = higherIsBetter
        self.durability = durability; self.systems = systems; self.latencyOf = latencyOf
    }

    public func result(_ s: SystemName) -> SystemResult? { systems.first { $0.system == s } }

    /// How much better `a` does than `b` on the median: above 1 means `a` is better, whichever
    /// way the unit points (for sizes and times, b / a).
    public func advantage(_ a: SystemName, over b: SystemName) -> Double? {
        guard let x = result(a)?.value.median, let y = result(b)?.value.median, x > 0, y > 0 else { return nil }
        return higherIsBetter ? x / y : y / x
    }
}

/// A target from the issue, measured as a ratio in the same run.
public struct TargetStatus: Codable, Equatable, Sendable {
    public var benchmark: String
    /// "throughput" (Fief / peer, at least `bound`), "peak memory" or "latency p50" (Fief /
    /// peer, at most `bound`).
    public var metric: String
    public var peer: SystemName
    public var bound: Double
    public var atLeast: Bool
    public var ratio: Double?
    public var met: Bool?
    /// Set for a bound in absolute terms (`bound` and `ratio` are then in this unit, such as
    /// "ms", and `peer` means nothing); nil for a ratio to a peer. Optional, so results written
    /// before it existed still load.
    public var unit: String? = nil

    public var requirement: String {
        if let unit { return "\(atLeast ? ">=" : "<=") \(Format.value(bound, unit: unit))" }
        return
            "\(atLeast ? ">=" : "<=") \(Format.ratio(bound)) "
            + "\(peer.label)\(metric == "vs raw engine" ? "'s raw engine" : "")"
    }

    /// What was measured, as the report tables print it.
    public var measured: String {
        guard let ratio else { return "n/a" }
        return unit.map { Format.value(ratio, unit: $0) } ?? Format.ratio(ratio)
    }
}

/// Everything one `fief bench` run found, with the context needed to trust a comparison.
public struct BenchResults: Codable, Equatable, Sendable {
    public var tool = "fief bench"
    public var schema = 1
    public var context: RunContext
    public var parameters: BenchParameters
    public var durationSeconds: Double
    public var benchmarks: [BenchmarkResult]
    public var targets: [TargetStatus]
    public var notes: [String]

    public init(
        context: RunContext, parameters: BenchParameters, durationSeconds: Double, benchmarks: [BenchmarkResult],
        notes: [String] = []
    ) {
        self.context = context
        self.parameters = parameters
        self.durationSeconds = durationSeconds
        self.benchmarks = benchmarks
        self.targets = Targets.evaluate(benchmarks)
        self.notes = notes
    }

    public func benchmark(_ id: String) -> BenchmarkResult? { benchmarks.first { $0.id == id } }
}
