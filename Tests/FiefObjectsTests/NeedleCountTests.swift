import XCTest
import SeededRandomness

@testable import FiefObjects

/// `countObjects()` of an equality on a short string reads only the rows that contain the
/// value's serial and bytes (`RowConjunction.needle`): these tests plant those bytes where they
/// must not count (another property, a longer or out-of-row value, a neighbour's row) and
/// check every count against a test of each object.
final class NeedleCountTests: XCTestCase {
    func testAnEqualityCountsOnlyTheRowsWhoseOwnPropertyHoldsTheValue() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        var rng = SeededRandom(seed: testSeed("NeedleCountTests", default: 3))
        let models = ["c17", "c1", "c170", "C17", "", "c17" + String(repeating: "x", count: 70), "\u{7}c17", "7c17"]
        var expected: [String: Int] = [:]
        try ctx.write {
            for i in 0..<2000 {
                let model = models.randomElement(using: &rng)!
                // The plate holds the needle of "c17" too: serial 7 then "c17", or with a prefix.
                let plate = ["c17", "\u{7}c17", "p\(i)"].randomElement(using: &rng)! + "#\(i)"
                try ctx.create(Car.self, value: ["plate": plate, "model": model])
                expected[model, default: 0] += 1
            }
        }
        let cars = ctx.objects(Car.self)
        for m in models where m.utf8.count <= 63 {
            XCTAssertEqual(
                try cars.filter("model == %@", m).countObjects(), expected[m] ?? 0, "model == \(m.debugDescription)")
            XCTAssertEqual(
                try cars.filter("model == %@ AND plate != %@", m, "none").countObjects(), expected[m] ?? 0,
                "model == \(m.debugDescription) AND plate != none")
        }
        XCTAssertEqual(try cars.filter("model == %@", "c18").countObjects(), 0)
        // The same answers from a walk that tests every row.
        for m in models where m.utf8.count <= 63 {
            XCTAssertEqual(
                try cars.filter("model == %@", m).countObjects(), cars.filter { $0.model == m }.count)
        }
    }
}
