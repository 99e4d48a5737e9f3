import XCTest
import Engine
import FaultFS
import FiefObjects
@testable import Torture
import TortureSchema

/// Skips the test, saying so (`skipping`), where `what` needs FUSE and the machine has none.
func requireFUSE(for what: String, test: String = #function) throws {
    if let why = FaultFSMount.unavailableReason() {
        throw XCTSkip(skipping("\(what) NEEDS FUSE AND CANNOT RUN HERE: \(why)", test: test))
    }
}

/// Skips the test, saying so, in a build without the broken variants it needs (release).
func requireBrokenVariants(test: String = #function) throws {
    guard BrokenVariant.available else {
        throw XCTSkip(skipping("broken variants exist only in debug builds", test: test))
    }
}

/// Runs one scenario of the suite as `fief torture run` would, in a fresh folder. Scenarios on
/// FaultFS say loudly that they cannot run where FUSE is missing, and are skipped, never passed.
func runScenario(
    _ name: String, seed: UInt64, cycles: Int, broken: BrokenVariant? = nil,
    brokenObjects: BrokenObjectLayer? = nil, needsFUSE: Bool = true, encrypt: Bool = false, onlyCycle: Int? = nil
) throws -> ScenarioResult {
    if needsFUSE { try requireFUSE(for: name) }
    let dir = TempDir()
    var o = TortureOptions(seed: seed)
    o.scenarios = [name]
    o.cycles = cycles
    o.out = dir.file("out")
    o.broken = broken
    o.brokenObjects = brokenObjects
    o.encrypt = encrypt
    o.onlyCycle = onlyCycle
    return try TortureRun(options: o).run().scenarios[0]
}
