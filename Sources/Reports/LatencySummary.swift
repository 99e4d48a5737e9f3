import Histogram

/// Latency percentiles of one system in one benchmark, in microseconds, from an HdrHistogram
/// holding every operation of every repetition.
public struct LatencySummary: Codable, Equatable, Sendable {
    public var count: UInt64
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var p999: Double
    public var max: Double
    public var mean: Double

    public static let percentiles: [(label: String, key: KeyPath<LatencySummary, Double>)] = [
        ("p50", \.p50), ("p90", \.p90), ("p99", \.p99), ("p99.9", \.p999), ("max", \.max)
    ]

    public init(count: UInt64, p50: Double, p90: Double, p99: Double, p999: Double, max: Double, mean: Double) {
        self.count = count; self.p50 = p50; self.p90 = p90; self.p99 = p99; self.p999 = p999; self.max = max;
        self.mean = mean
    }
}

/// Records operation latencies in nanoseconds (1 ns to 100 s, three significant digits).
struct LatencyRecorder {
    private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: .three)

    @inline(__always)
    mutating func record(nanos: UInt64) {
        _ = histogram.record(Swift.max(1, Swift.min(nanos, 100_000_000_000)))
    }

    mutating func add(_ other: LatencyRecorder) { histogram.add(other.histogram) }

    var summary: LatencySummary? {
        guard histogram.totalCount > 0 else { return nil }
        func us(_ p: Double) -> Double { Double(histogram.valueAtPercentile(p)) / 1000 }
        return LatencySummary(
            count: histogram.totalCount, p50: us(50), p90: us(90), p99: us(99), p999: us(99.9),
            max: Double(histogram.max) / 1000, mean: histogram.mean / 1000)
    }
}
