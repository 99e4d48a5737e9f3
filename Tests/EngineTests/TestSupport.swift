import XCTest
@testable import Engine
import SeededRandomness

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

func testSeed(_ name: String, default d: UInt64) -> UInt64 {
    let s = ProcessInfo.processInfo.environment["FIEF_TEST_SEED"].flatMap(UInt64.init) ?? d
    print("\(name): seed \(s) (rerun with FIEF_TEST_SEED=\(s))")
    return s
}
