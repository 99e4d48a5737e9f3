import Foundation
import FiefTestSupport
import XCTest

/// The `fief` binary built next to these tests, for tests that run it as a child process;
/// skips the test (saying where it looked) when there is none.
func builtFiefExecutable(test: String = #function) throws -> String {
    let exe = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        .deletingLastPathComponent().appendingPathComponent("fief").path
    guard FileManager.default.isExecutableFile(atPath: exe) else {
        throw XCTSkip(skipping("no fief executable at \(exe)", test: test))
    }
    return exe
}
