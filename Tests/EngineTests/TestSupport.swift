import XCTest
@testable import Engine
import SeededRandomness
@_exported import FiefTestSupport

/// What went wrong on several threads at once, collected under a lock.
final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []

    func append(_ s: String) {
        lock.lock()
        items.append(s)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
