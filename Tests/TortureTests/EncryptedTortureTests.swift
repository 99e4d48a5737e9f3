import XCTest
import Engine
@testable import Torture
import TortureSchema

/// The torture suite on encrypted files: the correct engine loses nothing and every file
/// authenticates; each broken encryption is caught by the scenario meant for it.
final class EncryptedTortureTests: XCTestCase {
    func testEncryptedRunsAreCleanAndTheirFilesAreEncrypted() throws {
        for name in ["crash-points", "power-cut", "objects", "file-ops"] {
            let r = try runScenario(name, seed: 7, cycles: name == "objects" ? 4 : 3, encrypt: true)
            XCTAssertTrue(r.passed, "\(name): \(r.failures.flatMap(\.violations).map(\.text).prefix(3))")
        }
        // The key is gone with the run: a later plain run opens its files without one.
        XCTAssertFalse(TortureEncryption.isActive)
        let k = try runScenario("keystream", seed: 7, cycles: 2, needsFUSE: false)
        XCTAssertTrue(k.passed, "\(k.failures.flatMap(\.violations).map(\.text).prefix(3))")
    }

    func testAnEncryptedRunOpensOnlyEncryptedFiles() throws {
        // The recovery check opens every file with the run's key: a plain file would be refused
        // (`EncryptionError.notEncrypted`), so a clean encrypted run proves its files are format 3.
        let dir = TempDir()
        let path = dir.file("plain.fief")
        _ = try Database(path: path)
        TortureEncryption.activate(seed: 1)
        defer { TortureEncryption.deactivate() }
        XCTAssertThrowsError(try Database(path: path, options: TortureEncryption.options(create: false))) {
            XCTAssertEqual($0 as? EncryptionError, .notEncrypted(path: path))
        }
    }

    func testBrokenEncryptionIsCaught() throws {
        try requireBrokenVariants()
        // A power cut catches this variant only when it strikes while a page is half rewritten,
        // which depends on timing: 6 cycles missed it once in CI; 16 give it many more chances.
        let inPlace = try runScenario("power-cut", seed: 7, cycles: 16, broken: .encryptInPlace, encrypt: true)
        XCTAssertFalse(inPlace.passed, "encrypt-in-place went unnoticed by power-cut --encrypt")
        XCTAssertTrue(
            inPlace.failures.flatMap(\.violations).map(\.text).contains { $0.contains("failed authentication") },
            "\(inPlace.failures.flatMap(\.violations).map(\.text).prefix(3))")

        let salt = try runScenario("keystream", seed: 7, cycles: 1, broken: .fixedSalt, needsFUSE: false)
        XCTAssertFalse(salt.passed, "fixed-salt went unnoticed by keystream")
        XCTAssertTrue(salt.failures.flatMap(\.violations).map(\.text).contains { $0.contains("share one keystream") })

        let mac = try runScenario("faults", seed: 5, cycles: 8, broken: .skipMAC, encrypt: true)
        XCTAssertFalse(mac.passed, "skip-mac went unnoticed by faults --encrypt")
        XCTAssertTrue(
            mac.failures.flatMap(\.violations).map(\.text).contains { $0.contains("bit flips") },
            "\(mac.failures.flatMap(\.violations).map(\.text).prefix(3))")
    }
}
