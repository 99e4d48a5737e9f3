import Foundation

/// The Mann–Whitney U test (Wilcoxon rank-sum) of two samples, with the Hodges–Lehmann
/// estimate of the shift between them and its confidence interval, as Go's benchstat decides
/// "~" or a delta. Rank-based, so one wild repetition moves it as much as any other, and it
/// assumes nothing about the shape of the noise.
///
/// Samples are compared on a log scale: the shift is a ratio (new / base), so a change of a
/// throughput and of a time read the same way, and the interval stays inside (0, ∞).
public struct ShiftTest: Codable, Equatable, Sendable {
    public var baseCount: Int
    public var newCount: Int
    /// The Hodges–Lehmann estimate of new / base: the median of every ratio new_j / base_i.
    public var ratio: Double
    /// The confidence interval of new / base (at least `level`; with exact small-sample
    /// quantiles the interval's own coverage is slightly above).
    public var ratioLow: Double
    public var ratioHigh: Double
    public var level: Double
    /// Two-sided p-value of "both samples come from one distribution".
    public var pValue: Double

    /// nil when either side is empty or holds a value that is not positive (no log).
    public init?(base: [Double], new: [Double], level: Double = 0.95) {
        guard !base.isEmpty, !new.isEmpty, (base + new).allSatisfy({ $0 > 0 && $0.isFinite }) else { return nil }
        let x = base.map(log), y = new.map(log)
        let m = x.count, n = y.count
        baseCount = m
        newCount = n
        self.level = level

        // Every pairwise difference y_j − x_i, sorted: their median is the estimate, their
        // order statistics the interval (the U statistic counts how many are negative).
        var diffs: [Double] = []
        diffs.reserveCapacity(m * n)
        for b in x { for a in y { diffs.append(a - b) } }
        diffs.sort()
        let mid = diffs.count / 2
        ratio = exp(diffs.count % 2 == 1 ? diffs[mid] : (diffs[mid - 1] + diffs[mid]) / 2)

        let ranks = MannWhitney.midRanks(x + y)
        let rankSumX = ranks[0..<m].reduce(0, +)
        let u = rankSumX - Double(m * (m + 1)) / 2  // pairs where base > new, ties half
        let hasTies = Set(x + y).count < m + n
        let k: Int
        if !hasTies, let exact = MannWhitney.ExactNull(m: m, n: n) {
            pValue = exact.twoSidedP(u: Int(u.rounded()))
            k = exact.lowerCritical(alpha: 1 - level)
        } else {
            pValue = MannWhitney.normalTwoSidedP(u: u, m: m, n: n, ranks: ranks)
            k = MannWhitney.normalLowerCritical(alpha: 1 - level, m: m, n: n)
        }
        // The interval [D_(k), D_(mn+1−k)] (1-based) holds the true shift with probability
        // 1 − 2·P(U ≤ k − 1). With too few samples no k reaches the level: the interval is the
        // whole range of the differences, which is what the data can say.
        let lo = min(max(0, k - 1), diffs.count - 1), hi = max(lo, diffs.count - 1 - lo)
        ratioLow = exp(diffs[lo])
        ratioHigh = exp(diffs[hi])
    }
}

enum MannWhitney {
    /// Ranks 1...N with ties given the mean of the ranks they span.
    static func midRanks(_ v: [Double]) -> [Double] {
        let order = v.indices.sorted { v[$0] < v[$1] }
        var ranks = [Double](repeating: 0, count: v.count)
        var i = 0
        while i < order.count {
            var j = i
            while j + 1 < order.count && v[order[j + 1]] == v[order[i]] { j += 1 }
            let r = Double(i + j + 2) / 2
            for t in i...j { ranks[order[t]] = r }
            i = j + 1
        }
        return ranks
    }

    /// The exact null distribution of U for samples of m and n without ties: the number of
    /// arrangements of the m + n ranks giving each U, by the recurrence
    /// f(m, n, u) = f(m − 1, n, u − n) + f(m, n − 1, u). Kept to small samples (where the
    /// normal approximation is worst and the table is cheap).
    struct ExactNull {
        let counts: [Double]  // counts[u], u = 0...m·n
        let total: Double

        init?(m: Int, n: Int) {
            guard m * n <= 2_500 else { return nil }
            // f over (i, u) for the current n, built up one n at a time.
            var f = [[Double]](repeating: [], count: m + 1)
            for i in 0...m { f[i] = [1] }  // n = 0: only U = 0
            if n > 0 {
                for nn in 1...n {
                    var g = [[Double]](repeating: [], count: m + 1)
                    for i in 0...m {
                        var row = [Double](repeating: 0, count: i * nn + 1)
                        for u in 0...(i * nn) {
                            var c = u < f[i].count ? f[i][u] : 0  // the largest rank is new's
                            if i > 0, u >= nn, u - nn < g[i - 1].count { c += g[i - 1][u - nn] }  // or base's
                            row[u] = c
                        }
                        g[i] = row
                    }
                    f = g
                }
            }
            counts = f[m]
            total = counts.reduce(0, +)
        }

        func cdf(_ u: Int) -> Double {
            guard u >= 0 else { return 0 }
            return counts[0...min(u, counts.count - 1)].reduce(0, +) / total
        }

        func twoSidedP(u: Int) -> Double {
            let tail = min(cdf(u), cdf(counts.count - 1 - u))  // the distribution is symmetric
            return min(1, 2 * tail)
        }

        /// The largest k with P(U ≤ k − 1) ≤ alpha / 2: the interval drops k differences at
        /// each end. 0 when even U = 0 is too likely.
        func lowerCritical(alpha: Double) -> Int {
            var k = 0
            while k < counts.count && cdf(k) <= alpha / 2 { k += 1 }
            return k
        }
    }

    /// Normal approximation with the tie correction of the variance and a continuity
    /// correction, for large samples and for samples with ties.
    static func normalTwoSidedP(u: Double, m: Int, n: Int, ranks: [Double]) -> Double {
        let mn = Double(m * n), big = Double(m + n)
        var tieTerm = 0.0
        var seen: [Double: Int] = [:]
        for r in ranks { seen[r, default: 0] += 1 }
        for t in seen.values where t > 1 { tieTerm += Double(t * t * t - t) }
        let variance = mn / 12 * ((big + 1) - tieTerm / (big * (big - 1)))
        guard variance > 0 else { return 1 }  // every value equal: nothing tells the samples apart
        let z = max(0, abs(u - mn / 2) - 0.5) / variance.squareRoot()
        return min(1, erfc(z / 2.0.squareRoot()))
    }

    static func normalLowerCritical(alpha: Double, m: Int, n: Int) -> Int {
        let mn = Double(m * n)
        let z = quantile(1 - alpha / 2)
        // P(U ≤ k − 1) ≈ Φ((k − 1 + ½ − mn/2) / σ) = alpha / 2.
        let k = mn / 2 - z * (mn * Double(m + n + 1) / 12).squareRoot() + 0.5
        return max(0, Int(k.rounded(.down)))
    }

    /// The standard normal quantile, by bisection on erfc (only a handful of calls per report).
    static func quantile(_ p: Double) -> Double {
        var lo = -10.0, hi = 10.0
        for _ in 0..<80 {
            let mid = (lo + hi) / 2
            if 0.5 * erfc(-mid / 2.0.squareRoot()) < p { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }
}
