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

/// How a body run under `runWithWatchdog` ended.
public enum WatchedRun: Equatable {
    case finished
    case threw(String)
    /// Still running when the time was up (the thread is left behind).
    case timedOut
}

/// Runs `body` on a thread of its own and waits at most `seconds`, so a test of something
/// that could hang (a lock nobody will release) fails instead of stopping the suite.
public func runWithWatchdog(seconds: Double, _ body: @escaping @Sendable () throws -> Void) -> WatchedRun {
    final class Outcome: @unchecked Sendable { var error: String? }
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    Thread {
        do { try body() } catch { outcome.error = "\(error)" }
        done.signal()  // orders the store above before the caller's read
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else { return .timedOut }
    return outcome.error.map(WatchedRun.threw) ?? .finished
}

/// Says why a test cannot run where it will be seen, and returns `why` for `XCTSkip`: on
/// stderr, and as a line appended to the file FIEF_TEST_SKIPS names, which `scripts/test.sh`
/// lists after the run. `swift test --parallel` shows no output of a test that passed or
/// skipped, and a test that cannot run must never pass silently.
public func skipping(_ why: String, test: String = #function, file: String = #fileID) -> String {
    // Under `--parallel` each process runs one test, named by its last argument
    // ("Module.Class/testName"); `#function` would name a helper such as `requireFUSE`.
    let named = CommandLine.arguments.dropFirst().last.flatMap { $0.contains("/test") && !$0.contains(",") ? $0 : nil }
    let line = "\(named ?? "\(file) \(test)"): \(why)"
    FileHandle.standardError.write(Data("\n*** SKIPPED \(line) ***\n".utf8))
    if let path = ProcessInfo.processInfo.environment["FIEF_TEST_SKIPS"] {
        // O_APPEND: tests in other processes append to the same file at the same time.
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        if fd >= 0 {
            _ = Array((line + "\n").utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }
    return why
}
