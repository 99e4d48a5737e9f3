import XCTest
import Engine
@testable import Torture
import TortureSchema

/// Group commit under crashes: the correct engine keeps every call `batch` acknowledged; an
/// engine that acknowledges before its commit is durable is caught on the same seed.
final class BatchScenarioTests: XCTestCase {
    static let seed: UInt64 = 2611

    func testCorrectEngineKeepsEveryAcknowledgedBatchCall() throws {
        let r = try runScenario("batch", seed: BatchScenarioTests.seed, cycles: 3)
        XCTAssertTrue(r.passed, "\(r.failures.flatMap(\.violations).map(\.text).prefix(3))")
        XCTAssertEqual(r.cycles, 3)
    }

    func testEarlyAcknowledgementIsCaught() throws {
        try requireBrokenVariants()
        let r = try runScenario("batch", seed: BatchScenarioTests.seed, cycles: 3, broken: .batchEarlyAck)
        let all = r.failures.flatMap(\.violations)
        XCTAssertFalse(r.passed, "batch-early-ack went unnoticed")
        XCTAssertTrue(
            all.contains { $0.kind == .durability }, "caught, but not as lost acknowledged calls: \(all.prefix(3))")
        print("batch-early-ack caught: \(all.first?.text ?? "")")
    }
}
