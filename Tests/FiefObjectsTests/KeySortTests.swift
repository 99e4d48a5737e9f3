import XCTest
import SeededRandomness
@testable import FiefObjects

final class KeySortTests: XCTestCase {
    func testAgreesWithASortedSetOverEveryRange() {
        var rng = SeededRandom(seed: testSeed("key-sort", default: 4))
        let ranges: [ClosedRange<Int64>] = [
            0...9, 0...200_000, -5_000...5_000, Int64.min...Int64.max, (Int64.max - 10)...Int64.max
        ]
        for r in ranges {
            for n in [0, 1, 2, 3, 64, 65, 512, 1_000] {
                let keys = (0..<n).map { _ in Int64.random(in: r, using: &rng) }
                XCTAssertEqual(KeySort.ascendingUnique(keys), Array(Set(keys)).sorted(), "\(n) keys in \(r)")
            }
        }
        XCTAssertEqual(KeySort.ascendingUnique([3, 3, 1, 3, 1]), [1, 3])
    }
}
