/// Median and spread of repeated measurements. Spread is the half-range relative to the
/// median: with few repetitions (3 to 5) the range says more honestly how far runs wander
/// than a standard deviation would.
public struct SampleStats: Codable, Equatable, Sendable {
    public var samples: [Double]
    public var median: Double
    public var min: Double
    public var max: Double
    /// (max - min) / 2 / median; 0 for one sample.
    public var spread: Double

    public init(_ samples: [Double]) {
        self.samples = samples
        let s = samples.sorted()
        if s.isEmpty {
            median = 0; min = 0; max = 0; spread = 0
            return
        }
        median = s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        min = s.first!
        max = s.last!
        spread = median == 0 ? 0 : (max - min) / 2 / abs(median)
    }
}
