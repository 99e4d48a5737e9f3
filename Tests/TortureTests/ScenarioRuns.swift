import XCTest
import Engine
import FaultFS
import FiefObjects
@testable import Torture
import TortureSchema

/// Runs one scenario of the suite as `fief torture run` would, in a fresh folder. Scenarios on
/// FaultFS say loudly that they cannot run where FUSE is missing, and are skipped, never passed.
func runScenario(
    _ name: String, seed: UInt64, cycles: Int, broken: BrokenVariant? = nil,
    brokenObjects: BrokenObjectLayer? = nil, needsFUSE: Bool = true, encrypt: Bool = false, onlyCycle: Int? = nil
) throws -> ScenarioResult {
    if needsFUSE, let why = Mounter.fuseUnavailableReason() {
        throw XCTSkip(skipping("\(name) NEEDS FUSE AND CANNOT RUN HERE: \(why)"))
    }
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
