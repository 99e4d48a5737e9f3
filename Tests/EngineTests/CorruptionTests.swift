import XCTest
@testable import Engine
import SeededRandomness

/// Damaged files: open or check reports an error (or the damage is provably harmless), the
/// process never traps, and the file is never written.
final class CorruptionTests: XCTestCase {
    func makeDatabase(_ path: String) throws {
        let db = try Database(path: path)
        for round in 0..<8 {
            try db.write { tx in
                let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
                for k in 0..<300 {
                    try t.put(Int64(k * 8 + round), [UInt8](repeating: UInt8(k % 200), count: k % 50 == 0 ? 9000 : 40))
                }
            }
        }
    }

    func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    /// Opens, checks and reads everything; returns a description of what was detected, or nil
    /// when the file read back sound.
    func probe(_ path: String) -> String? {
        do {
            let db = try Database(path: path, options: .init(create: false))
            let report = try db.check()
            if !report.isSound { return "check: \(report.problems[0])" }
            try db.read { tx in for name in try tx.tableNames() { try tx.scan(table: name) { _, _ in true } } }
            return nil
        } catch let e as EngineError {
            return "\(e)"
        } catch {
            return "untyped error \(error)"
        }
    }

    func testRandomByteFlipsAreDetectedOrHarmless() throws {
        let dir = TempDir()
        let good = dir.file("good.fief")
        try makeDatabase(good)
        let original = bytes(good)
        var rng = SeededRandom(seed: testSeed("byte-flips", default: 31337))
        var detected = 0, harmless = 0
        for i in 0..<150 {
            var damaged = original
            let flips = Int.random(in: 1...4, using: &rng)
            for _ in 0..<flips {
                // Half the flips aim at the header page and the in-use pages near the start.
                let limit = Bool.random(using: &rng) ? min(damaged.count, 8 * 4096) : damaged.count
                damaged[Int.random(in: 0..<limit, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            }
            let path = dir.file("flip\(i).fief")
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(damaged)))
            let result = probe(path)
            if let r = result {
                XCTAssertFalse(r.hasPrefix("untyped"), r)
                detected += 1
            } else {
                harmless += 1
            }
            XCTAssertEqual(bytes(path), damaged, "the engine wrote to a damaged file")
        }
        print("byte flips: \(detected) detected, \(harmless) harmless (in free or unused bytes)")
        XCTAssertGreaterThan(detected, 50)
    }

    func testTruncationsAreReported() throws {
        let dir = TempDir()
        let good = dir.file("good.fief")
        try makeDatabase(good)
        let original = bytes(good)
        var rng = SeededRandom(seed: testSeed("truncation", default: 4242))
        var cuts = [0, 1, 7, 8, 100, 4095, 4096, 4097, 8192, original.count - 4096, original.count - 1]
        for _ in 0..<20 { cuts.append(Int.random(in: 0..<original.count, using: &rng)) }
        for cut in cuts {
            let path = dir.file("cut\(cut).fief")
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(original[0..<cut])))
            let r = probe(path)
            XCTAssertNotNil(r, "a file cut to \(cut) of \(original.count) bytes read back as sound")
            if let r { XCTAssertFalse(r.hasPrefix("untyped"), r) }
            XCTAssertEqual(bytes(path).count, cut)
        }
    }

    func testEachSlotAndTheSelectBit() throws {
        let dir = TempDir()
        let good = dir.file("good.fief")
        try makeDatabase(good)
        let original = bytes(good)
        let select = Int(original[Layout.selectOffset])

        // Damage the inactive slot: harmless, the selected one still rules.
        var inactive = original
        inactive[Layout.slotOffsets[1 - select] + 3] ^= 0x40
        let p1 = dir.file("inactive.fief")
        XCTAssertTrue(FileManager.default.createFile(atPath: p1, contents: Data(inactive)))
        XCTAssertNil(probe(p1))

        // Damage the selected slot: refused with a clear error.
        var active = original
        active[Layout.slotOffsets[select] + 9] ^= 0x01
        let p2 = dir.file("active.fief")
        XCTAssertTrue(FileManager.default.createFile(atPath: p2, contents: Data(active)))
        XCTAssertTrue(probe(p2)?.contains("damaged") ?? false, probe(p2) ?? "nil")

        // Select bit pointing at a damaged slot.
        var flipped = inactive
        flipped[Layout.selectOffset] = UInt8(1 - select)
        let p3 = dir.file("flipped.fief")
        XCTAssertTrue(FileManager.default.createFile(atPath: p3, contents: Data(flipped)))
        XCTAssertNotNil(probe(p3))

        // Select byte neither 0 nor 1.
        var weird = original
        weird[Layout.selectOffset] = 7
        let p4 = dir.file("weird.fief")
        XCTAssertTrue(FileManager.default.createFile(atPath: p4, contents: Data(weird)))
        XCTAssertTrue(probe(p4)?.contains("select byte") ?? false)

        // A newer format and a foreign file.
        var newer = original
        newer[Layout.formatOffset] = 99
        let p5 = dir.file("newer.fief")
        XCTAssertTrue(FileManager.default.createFile(atPath: p5, contents: Data(newer)))
        XCTAssertNotNil(probe(p5))
        let p6 = dir.file("foreign.fief")
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: p6, contents: Data("SQLite format 3\0".utf8 + [UInt8](repeating: 0, count: 8000))))
        XCTAssertTrue(probe(p6)?.contains("not a Fief database") ?? false)
    }

    func testUserMistakesGiveTypedErrors() throws {
        let dir = TempDir()
        XCTAssertThrowsError(try Database(path: dir.file("missing.fief"), options: .init(create: false))) {
            XCTAssertEqual($0 as? EngineError, .fileNotFound(path: dir.file("missing.fief")))
        }
        XCTAssertThrowsError(try Database(path: dir.path, options: .init(create: false))) {
            XCTAssertEqual($0 as? EngineError, .notARegularFile(path: dir.path))
        }
        let db = try Database(path: dir.file("u.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: [UInt8].self) }
        XCTAssertThrowsError(
            try db.write { tx in
                try tx.table("t", key: Int64.self, value: [UInt8].self).put(
                    1, [UInt8](repeating: 0, count: Layout.maxValueSize + 1))
            }
        ) {
            guard case EngineError.valueTooLarge = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(
            try db.write { tx in try tx.put(table: "t", key: [UInt8](repeating: 1, count: 2000), value: []) }
        ) {
            guard case EngineError.keyTooLarge = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try db.read { try $0.table("t", key: String.self, value: String.self) }) {
            guard case EngineError.tableTypeMismatch = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try db.read { try $0.table("nope", key: String.self, value: String.self) }) {
            XCTAssertEqual($0 as? EngineError, .tableNotFound("nope"))
        }
        XCTAssertThrowsError(try db.write { _ in try db.write { _ in } }) {
            XCTAssertEqual($0 as? EngineError, .nestedWrite)
        }
        // The biggest allowed value round-trips.
        let big = [UInt8](repeating: 0xAB, count: Layout.maxValueSize)
        try db.write { try $0.table("t", key: Int64.self, value: [UInt8].self).put(9, big) }
        XCTAssertEqual(try db.read { try $0.table("t", key: Int64.self, value: [UInt8].self).get(9) }, big)
        XCTAssertTrue(try db.check().isSound)
        // A failed body rolls back.
        struct Boom: Error {}
        XCTAssertThrowsError(
            try db.write { tx in
                try tx.table("t", key: Int64.self, value: [UInt8].self).put(10, [1]); throw Boom()
            })
        XCTAssertNil(try db.read { try $0.table("t", key: Int64.self, value: [UInt8].self).get(10) })
    }

    func testMalformedCrashPointIsRefused() {
        XCTAssertNotNil(try? CrashArming.parse("after-select-flip:2").get())
        guard case .failure = CrashArming.parse("after-nothing") else { return XCTFail() }
        guard case .failure = CrashArming.parse("after-select-flip:0") else { return XCTFail() }
    }
}
