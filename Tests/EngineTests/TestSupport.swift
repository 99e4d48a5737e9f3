import XCTest
@testable import Engine

/// A fresh directory per test, removed afterwards.
final class TempDir {
    let path: String
    init() {
        var template = Array("/tmp/fief-test-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }
    func file(_ name: String) -> String { "\(path)/\(name)" }
    deinit { _ = try? FileManager.default.removeItem(atPath: path) }
}

/// SplitMix64: every random choice in the tests comes from one printed seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func testSeed(_ name: String, default d: UInt64) -> UInt64 {
    let s = ProcessInfo.processInfo.environment["FIEF_TEST_SEED"].flatMap(UInt64.init) ?? d
    print("\(name): seed \(s) (rerun with FIEF_TEST_SEED=\(s))")
    return s
}
