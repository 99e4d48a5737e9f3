import SeededRandomness
import XCTest
@testable import Reports

/// The rank test against values computed independently (SciPy's `mannwhitneyu`, exact and
/// asymptotic with continuity correction), and the interval's coverage on seeded samples.
final class MannWhitneyTests: XCTestCase {
    func testExactPValues() throws {
        let cases: [([Double], [Double], Double)] = [
            ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], 0.007936507936507936),
            ([1, 3, 5, 7, 9], [2, 4, 6, 8, 10], 0.6904761904761905),
            ([1.0, 1.1, 1.2], [1.05, 1.3, 1.4, 1.5], 0.22857142857142856)
        ]
        for (b, n, p) in cases {
            XCTAssertEqual(try XCTUnwrap(ShiftTest(base: b, new: n)).pValue, p, accuracy: 1e-12, "\(b) \(n)")
            XCTAssertEqual(try XCTUnwrap(ShiftTest(base: n, new: b)).pValue, p, accuracy: 1e-12, "symmetric")
        }
    }

    func testTiesUseTheCorrectedNormalApproximation() throws {
        let t = try XCTUnwrap(ShiftTest(base: [1, 2, 2, 3], new: [2, 3, 4, 4, 5]))
        XCTAssertEqual(t.pValue, 0.07854585095119067, accuracy: 1e-9)
        // Every value equal: nothing tells the sides apart.
        XCTAssertEqual(try XCTUnwrap(ShiftTest(base: [2, 2, 2], new: [2, 2])).pValue, 1)
    }

    func testEstimateAndIntervalAreOrderStatisticsOfTheRatios() throws {
        // The 25 ratios new_j / base_i: the 3rd smallest is 6/4, the 3rd largest 8/1 (5 against
        // 5 at 95% drops two at each end: P(U ≤ 2) = 4/252 ≤ 2.5% < P(U ≤ 3)).
        let t = try XCTUnwrap(ShiftTest(base: [1, 2, 3, 4, 5], new: [6, 7, 8, 9, 10]))
        XCTAssertEqual(t.ratioLow, 1.5, accuracy: 1e-12)
        XCTAssertEqual(t.ratioHigh, 8, accuracy: 1e-12)
        XCTAssertEqual(t.ratio, 8.0 / 3, accuracy: 1e-12, "the 13th of the 25 ratios")
        XCTAssertNil(ShiftTest(base: [], new: [1]))
        XCTAssertNil(ShiftTest(base: [0, 1], new: [1]), "no log of zero")
    }

    func testIntervalCoversTheTrueShiftAtItsLevel() throws {
        var rng = SeededRandom(seed: 7)
        var covered = 0
        let trials = 1000
        for _ in 0..<trials {
            let base = (0..<5).map { _ in exp(0.05 * Gaussian.next(&rng)) }
            let new = (0..<5).map { _ in 0.9 * exp(0.05 * Gaussian.next(&rng)) }
            let t = try XCTUnwrap(ShiftTest(base: base, new: new))
            if t.ratioLow <= 0.9 && 0.9 <= t.ratioHigh { covered += 1 }
        }
        // Nominal 96.8% for 5 against 5; binomial noise over 1000 trials is about ±0.6%.
        XCTAssertGreaterThan(covered, 950, "\(covered) of \(trials)")
        XCTAssertLessThan(covered, 990, "\(covered) of \(trials): an interval that always covers is too wide")
    }

    func testLargeSamplesUseTheNormalApproximation() throws {
        let base = (1...60).map(Double.init), new = base.map { $0 + 10.5 }
        let t = try XCTUnwrap(ShiftTest(base: base, new: new))
        XCTAssertEqual(t.pValue, 0.0025668879435241754, accuracy: 1e-9)
        XCTAssertLessThan(t.ratioLow, t.ratio)
        XCTAssertGreaterThan(t.ratioHigh, t.ratio)
    }
}

/// Standard normal draws from a seeded generator (Box–Muller).
enum Gaussian {
    static func next(_ rng: inout SeededRandom) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &rng)
        let u2 = Double.random(in: 0..<1, using: &rng)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
