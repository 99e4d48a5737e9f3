import XCTest
import SeededRandomness
@testable import FiefObjects

final class ByteSearchTests: XCTestCase {
    /// Every occurrence, found from every start, as a byte-by-byte search finds it: needles of 1
    /// to 20 bytes over haystacks of a few letters (so near misses abound), at every length
    /// around the 16- and 32-position steps.
    func testAgreesWithAPlainSearch() {
        var rng = SeededRandom(seed: testSeed("byte-search", default: 5))
        func plain(_ h: [UInt8], _ n: [UInt8], from: Int) -> Int? {
            guard h.count >= n.count, max(0, from) <= h.count - n.count else { return nil }
            for p in max(0, from)...(h.count - n.count) where Array(h[p..<p + n.count]) == n { return p }
            return nil
        }
        for _ in 0..<400 {
            let k = Int.random(in: 1...20, using: &rng)
            let needle = (0..<k).map { _ in UInt8.random(in: 0...2, using: &rng) }
            let len = Int.random(in: 0...100, using: &rng)
            var hay = (0..<len).map { _ in UInt8.random(in: 0...2, using: &rng) }
            if len >= k, Bool.random(using: &rng) {
                let at = Int.random(in: 0...(len - k), using: &rng)
                hay.replaceSubrange(at..<at + k, with: needle)
            }
            needle.withUnsafeBytes { nb in
                hay.withUnsafeBytes { hb in
                    let search = ByteSearch(nb)
                    for from in 0...len {
                        XCTAssertEqual(
                            search.firstOffset(in: hb, from: from), plain(hay, needle, from: from),
                            "needle \(needle) in \(hay) from \(from)")
                    }
                }
            }
        }
    }
}
