import Foundation

/// A fresh directory per test, removed afterwards.
public final class TempDir {
    public let path: String

    public init(_ prefix: String = "fief-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("mkdtemp in /tmp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: p)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }
    deinit { _ = try? FileManager.default.removeItem(atPath: path) }
}

/// The seed a randomized test uses: FIEF_TEST_SEED when set, else `d`; printed either way so
/// a failure reproduces.
public func testSeed(_ name: String, default d: UInt64) -> UInt64 {
    let s = ProcessInfo.processInfo.environment["FIEF_TEST_SEED"].flatMap(UInt64.init) ?? d
    print("\(name): seed \(s) (rerun with FIEF_TEST_SEED=\(s))")
    return s
}
