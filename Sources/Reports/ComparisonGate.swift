import Foundation

/// When a comparison fails CI, and the numbers it decides on.
///
/// A row of Fief fails when, with at least `minSamples` repetitions a side:
///
/// 1. Fief got worse *against its peers*: a Mann–Whitney U test of the per-repetition ratio
///    Fief / peers (the geometric mean of Fief/LMDB and Fief/SQLite in each repetition),
///    base against new, gives p < alpha, and the Hodges–Lehmann estimate of its change is
///    beyond the threshold. The peers ran in the same repetitions on the same machine, so
///    drift that slows every system alike leaves this ratio where it was, and noise that hits
///    one repetition of every system (a busy neighbour) mostly cancels too.
/// 2. Fief's own numbers got worse beyond the threshold too (the estimate of their change),
///    so a peer that happened to run fast in the new results does not fail Fief.
///
/// The test decides on the ratio rather than on Fief's raw samples because those carry the
/// machine's noise: on synthetic samples (see `GateErrorRateTests`) requiring a significant
/// raw change as well cut the detection of a 10% slowdown from 99% to 93% and stopped no
/// false alarm. What (2) costs: a regression hidden by a machine that got faster by as much
/// between the runs is not flagged (compare-versions.sh interleaves its runs so that stays
/// small). Without peers in both results, Fief's raw samples decide alone (test and
/// threshold) and the comparison warns that drift is not cancelled.
///
/// Sizes (`metric == "size"`) are deterministic for a seed and measured once: they compare
/// exactly, on the threshold alone.
public struct GatePolicy: Codable, Equatable, Sendable {
    /// Smallest change that fails, as a fraction (the minimum effect size).
    public var threshold: Double
    /// Largest p-value that counts as a change.
    public var alpha: Double
    /// Fewer samples than this on either side: no verdict, no gate (with 5 against 5 the
    /// exact test can reach p = 0.008; with 3 against 3 it cannot go below 0.1).
    public var minSamples: Int

    public static let defaultAlpha = 0.05
    public static let defaultMinSamples = 5

    public init(
        threshold: Double, alpha: Double = GatePolicy.defaultAlpha, minSamples: Int = GatePolicy.defaultMinSamples
    ) {
        self.threshold = threshold
        self.alpha = alpha
        self.minSamples = minSamples
    }
}

/// A shift test read the way the reports read numbers: positive is better, whichever way
/// the unit points.
public struct Change: Codable, Equatable, Sendable {
    /// +0.10: new is 10% better (Hodges–Lehmann estimate).
    public var change: Double
    /// The confidence interval of `change` (`low` ≤ `change` ≤ `high`).
    public var low: Double
    public var high: Double
    public var level: Double
    public var pValue: Double
    public var baseCount: Int
    public var newCount: Int

    init?(base: [Double], new: [Double], higherIsBetter: Bool) {
        guard let t = ShiftTest(base: base, new: new) else { return nil }
        func better(_ r: Double) -> Double { higherIsBetter ? r - 1 : 1 / r - 1 }
        change = better(t.ratio)
        let a = better(t.ratioLow), b = better(t.ratioHigh)
        low = min(a, b)
        high = max(a, b)
        level = t.level
        pValue = t.pValue
        baseCount = t.baseCount
        newCount = t.newCount
    }

    func enoughSamples(_ p: GatePolicy) -> Bool { min(baseCount, newCount) >= p.minSamples }
    func significant(_ p: GatePolicy) -> Bool { enoughSamples(p) && pValue < p.alpha }
    /// Worse by more than the threshold, and not by chance.
    func regressed(_ p: GatePolicy) -> Bool { significant(p) && change < 0 && -change > p.threshold }
}

/// Fief against its peers, one repetition at a time.
public struct PeerChange: Codable, Equatable, Sendable {
    /// "LMDB", "SQLite", or "peers" for the geometric mean of all of them.
    public var against: String
    /// The change of Fief / that peer (positive: Fief gained on it).
    public var test: Change
}

enum PeerControl {
    /// Per repetition, Fief's sample divided by the peers' (the geometric mean when there are
    /// several). nil unless every system has one sample per repetition, in the same order
    /// (as `fief bench` and `fief report combine` write them). The ratio is of the raw
    /// numbers; `Change` turns its direction for lower-is-better units.
    static func ratios(fief: [Double], peers: [[Double]]) -> [Double]? {
        guard !peers.isEmpty, peers.allSatisfy({ $0.count == fief.count }),
            (fief + peers.flatMap { $0 }).allSatisfy({ $0 > 0 && $0.isFinite })
        else { return nil }
        return fief.indices.map { i in
            let logMean = peers.map { log($0[i]) }.reduce(0, +) / Double(peers.count)
            return fief[i] / exp(logMean)
        }
    }

    /// Fief's change against each peer and against all of them together (last).
    static func changes(
        fiefBase: [Double], fiefNew: [Double], peersBase: [(String, [Double])], peersNew: [(String, [Double])],
        higherIsBetter: Bool
    ) -> [PeerChange] {
        var out: [PeerChange] = []
        var allBase: [[Double]] = [], allNew: [[Double]] = []
        for (name, b) in peersBase {
            guard let n = peersNew.first(where: { $0.0 == name })?.1,
                let rb = ratios(fief: fiefBase, peers: [b]), let rn = ratios(fief: fiefNew, peers: [n]),
                let c = Change(base: rb, new: rn, higherIsBetter: higherIsBetter)
            else { continue }
            out.append(PeerChange(against: name, test: c))
            allBase.append(b)
            allNew.append(n)
        }
        if allBase.count > 1, let rb = ratios(fief: fiefBase, peers: allBase),
            let rn = ratios(fief: fiefNew, peers: allNew),
            let c = Change(base: rb, new: rn, higherIsBetter: higherIsBetter)
        {
            out.append(PeerChange(against: "peers", test: c))
        }
        return out
    }
}
