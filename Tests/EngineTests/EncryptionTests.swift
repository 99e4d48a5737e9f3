import XCTest
@testable import Engine
import FiefTestSupport
import SeededRandomness

/// Encrypted files (format 3): what they hold reads back, nothing of it is in the file in
/// the clear, a wrong or missing key is told before any page is read, and damage anywhere
/// is an authentication error, never data.
final class EncryptionTests: XCTestCase {
    static let key = [UInt8]((0..<64).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) })
    static let otherKey = [UInt8]((0..<64).map { UInt8(truncatingIfNeeded: $0 * 11 + 5) })

    func options(_ key: [UInt8]? = EncryptionTests.key, create: Bool = true) -> DatabaseOptions {
        DatabaseOptions(durability: .full, create: create, encryptionKey: key)
    }

    /// 8 rounds of 300 rows, every 50th with a value past a page (an overflow extent).
    func fill(_ db: Database, rounds: Int = 8) throws {
        for round in 0..<rounds {
            try db.write { tx in
                let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
                for k in 0..<300 { try t.put(Int64(k * 8 + round), EncryptionTests.value(k, round)) }
            }
        }
    }

    static func value(_ k: Int, _ round: Int) -> [UInt8] {
        let marker = Array("SECRET-\(k)-\(round)-".utf8)
        let n = k % 50 == 0 ? 9000 : 40
        return (0..<n).map { marker[$0 % marker.count] }
    }

    func contents(_ db: Database) throws -> [Int64: [UInt8]] {
        try db.read { tx in
            var all: [Int64: [UInt8]] = [:]
            try tx.table("t", key: Int64.self, value: [UInt8].self).scan { k, v in
                all[k] = v; return true
            }
            return all
        }
    }

    func expected(rounds: Int = 8) -> [Int64: [UInt8]] {
        var all: [Int64: [UInt8]] = [:]
        for round in 0..<rounds { for k in 0..<300 { all[Int64(k * 8 + round)] = EncryptionTests.value(k, round) } }
        return all
    }

    func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        let first = needle[0]
        for i in 0...(haystack.count - needle.count) where haystack[i] == first {
            if Array(haystack[i..<(i + needle.count)]) == needle { return true }
        }
        return false
    }

    func testRoundTripAndNothingInTheClear() throws {
        let dir = TempDir()
        let path = dir.file("e.fief")
        do {
            let db = try Database(path: path, options: options())
            try fill(db)
            XCTAssertEqual(try contents(db), expected())
            XCTAssertTrue(try db.check().isSound)
        }
        let raw = bytes(path)
        XCTAssertEqual(raw.withUnsafeBytes { $0.u32(Layout.formatOffset) }, FileFormat.currentEncrypted.number)
        XCTAssertFalse(contains(raw, Array("SECRET-".utf8)), "plaintext found in an encrypted file")
        let db = try Database(path: path, options: options(create: false))
        XCTAssertEqual(try contents(db), expected())
        let report = try db.check()
        XCTAssertTrue(report.isSound, "\(report.problems)")

        // The same data in a plain file is in the clear: the search above can fail.
        let plain = dir.file("p.fief")
        try fill(try Database(path: plain))
        XCTAssertTrue(contains(bytes(plain), Array("SECRET-".utf8)))
        XCTAssertEqual(bytes(plain).withUnsafeBytes { $0.u32(Layout.formatOffset) }, FileFormat.current.number)
    }

    func testKeysThatDoNotFitAreRefusedBeforeAnyPageAndNothingIsWritten() throws {
        let dir = TempDir()
        let enc = dir.file("e.fief"), plain = dir.file("p.fief")
        try fill(try Database(path: enc, options: options()), rounds: 2)
        try fill(try Database(path: plain), rounds: 2)
        let encBytes = bytes(enc), plainBytes = bytes(plain)

        XCTAssertThrowsError(try Database(path: enc, options: options(EncryptionTests.otherKey, create: false))) {
            XCTAssertEqual($0 as? EncryptionError, .wrongKey(path: enc))
        }
        XCTAssertThrowsError(try Database(path: enc, options: options(nil, create: false))) {
            XCTAssertEqual($0 as? EncryptionError, .keyRequired(path: enc))
        }
        XCTAssertThrowsError(try Database(path: plain, options: options(create: false))) {
            XCTAssertEqual($0 as? EncryptionError, .notEncrypted(path: plain))
        }
        XCTAssertThrowsError(
            try Database(path: enc, options: options(Array(EncryptionTests.key.prefix(32)), create: false))
        ) {
            XCTAssertEqual($0 as? EncryptionError, .invalidKeyLength(found: 32))
            XCTAssertTrue("\($0)".contains("64"), "\($0)")
        }
        XCTAssertThrowsError(try Database(path: dir.file("new.fief"), options: options([1, 2, 3]))) {
            XCTAssertEqual($0 as? EncryptionError, .invalidKeyLength(found: 3))
        }
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: dir.file("new.fief")), "a file was created with a bad key")
        XCTAssertEqual(bytes(enc), encBytes)
        XCTAssertEqual(bytes(plain), plainBytes)
    }

    func testTruncatedEncryptedFileIsATypedError() throws {
        let dir = TempDir()
        let path = dir.file("e.fief")
        try fill(try Database(path: path, options: options()), rounds: 3)
        let raw = bytes(path)
        for cut in [100, 4096, 4096 + 100, raw.count / 2, raw.count - 4096] {
            let p = dir.file("cut\(cut).fief")
            XCTAssertTrue(FileManager.default.createFile(atPath: p, contents: Data(raw[0..<cut])))
            XCTAssertThrowsError(
                try {
                    let db = try Database(path: p, options: options(create: false)); _ = try contents(db)
                }()
            ) { e in
                XCTAssertTrue(e is EngineError, "cut at \(cut): \(e)")
            }
        }
    }

    /// A byte changed in any page the newest version reaches fails that page's tag: every
    /// flip is an error on open, read or check, or is in a page nothing reads — and never
    /// reads as different data.
    func testAFlippedByteInAnyPageIsAnAuthenticationErrorNeverData() throws {
        let dir = TempDir()
        let path = dir.file("e.fief")
        try fill(try Database(path: path, options: options()), rounds: 4)
        let original = bytes(path)
        let want = expected(rounds: 4)
        var rng = SeededRandom(seed: testSeed("encrypted-flips", default: 4242))
        var authentication = 0, unread = 0
        for page in 1..<(original.count / Layout.pageSize) {
            var damaged = original
            let at = page * Layout.pageSize + Int.random(in: 0..<Layout.pageSize, using: &rng)
            damaged[at] ^= UInt8.random(in: 1...255, using: &rng)
            let p = dir.file("flip\(page).fief")
            XCTAssertTrue(FileManager.default.createFile(atPath: p, contents: Data(damaged)))
            do {
                let db = try Database(path: p, options: options(create: false))
                let got = try contents(db)
                XCTAssertEqual(got, want, "page \(page): damage read as data")
                let report = try db.check()
                if report.isSound { unread += 1 } else { authentication += 1 }
            } catch let e as EngineError {
                XCTAssertTrue("\(e)".contains("failed authentication"), "page \(page): \(e)")
                authentication += 1
            }
            XCTAssertEqual(bytes(p), damaged, "the engine wrote to a damaged file")
            try? FileManager.default.removeItem(atPath: p)
        }
        print("encrypted flips: \(authentication) failed authentication, \(unread) in pages nothing reads")
        XCTAssertGreaterThan(authentication, 10)
    }

    func testCompactKeepsTheKeyAndWriteCopyEncryptsDecryptsAndRekeys() throws {
        let dir = TempDir()
        let path = dir.file("e.fief")
        let db = try Database(path: path, options: options())
        try fill(db)
        try db.write { tx in
            let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<1000 where k % 3 == 0 { _ = try t.delete(Int64(k)) }
        }
        let want = try contents(db)
        try db.compact()
        XCTAssertEqual(try contents(db), want)
        XCTAssertTrue(try db.check().isSound)
        XCTAssertEqual(bytes(path).withUnsafeBytes { $0.u32(Layout.formatOffset) }, FileFormat.currentEncrypted.number)

        let plain = dir.file("plain.fief"), rekeyed = dir.file("rekeyed.fief"), same = dir.file("same.fief")
        try db.writeCopy(to: plain, encryptionKey: nil)
        try db.writeCopy(to: rekeyed, encryptionKey: EncryptionTests.otherKey)
        try db.writeCopy(to: same)
        XCTAssertEqual(try contents(try Database(path: plain, options: options(nil, create: false))), want)
        XCTAssertEqual(
            try contents(try Database(path: rekeyed, options: options(EncryptionTests.otherKey, create: false))), want)
        XCTAssertEqual(try contents(try Database(path: same, options: options(create: false))), want)
        XCTAssertThrowsError(try Database(path: rekeyed, options: options(create: false)))

        // And back: the plain copy encrypted again.
        let again = dir.file("again.fief")
        try Database(path: plain, options: options(nil, create: false)).writeCopy(
            to: again, encryptionKey: EncryptionTests.key)
        let reopened = try Database(path: again, options: options(create: false))
        XCTAssertEqual(try contents(reopened), want)
        XCTAssertTrue(try reopened.check().isSound)
        XCTAssertThrowsError(try db.writeCopy(to: dir.file("bad.fief"), encryptionKey: [0])) {
            XCTAssertEqual($0 as? EncryptionError, .invalidKeyLength(found: 1))
        }
    }

    /// Every write draws a new salt: two seals of one page at one offset never share a
    /// keystream (with CTR, a shared keystream gives away the XOR of the two plaintexts).
    func testTwoWritesOfOnePageNeverShareAKeystream() throws {
        let (cipher, _) = FileCipher.forNewFile(key: EncryptionTests.key)
        let a = [UInt8](repeating: 0x41, count: PageGeometry.encrypted.pageBytes)
        let b = [UInt8](repeating: 0x42, count: PageGeometry.encrypted.pageBytes)
        func seal(_ node: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: Layout.pageSize)
            node.withUnsafeBytes { n in out.withUnsafeMutableBytes { cipher.seal(n, offset: 8192, into: $0) } }
            return out
        }
        let ca = seal(a), cb = seal(b)
        let keystreamA = zip(ca[PageEnvelope.size...], a).map { $0 ^ $1 }
        let keystreamB = zip(cb[PageEnvelope.size...], b).map { $0 ^ $1 }
        XCTAssertNotEqual(keystreamA, keystreamB, "two writes of page 2 used one keystream")
        // And each opens back to what was sealed, only at its own offset.
        var back = [UInt8](repeating: 0, count: a.count)
        XCTAssertTrue(
            ca.withUnsafeBytes { c in back.withUnsafeMutableBytes { cipher.open(c, offset: 8192, into: $0) } })
        XCTAssertEqual(back, a)
        XCTAssertFalse(
            ca.withUnsafeBytes { c in back.withUnsafeMutableBytes { cipher.open(c, offset: 12288, into: $0) } })
    }

    func testReadersInOtherHandlesWhileAWriterCommitsNeverFailAuthentication() throws {
        let dir = TempDir()
        let path = dir.file("e.fief")
        let writer = try Database(
            path: path, options: DatabaseOptions(durability: .none, encryptionKey: EncryptionTests.key))
        try fill(writer, rounds: 1)
        let reader = try Database(path: path, options: options(create: false))
        let stop = ManagedAtomicFlag()
        let failures = FailureLog()
        let threads = (0..<2).map { _ in
            Thread {
                while !stop.isSet {
                    do {
                        try reader.read { tx in
                            let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                            var n = 0
                            try t.scan { k, v in
                                if v.count != 40 && v.count != 9000 {
                                    throw EngineError.invalidArgument("bad value at \(k)")
                                }
                                n += 1; return true
                            }
                            if n < 300 { throw EngineError.invalidArgument("only \(n) rows") }
                        }
                    } catch {
                        failures.append("\(error)")
                    }
                }
            }
        }
        threads.forEach { $0.start() }
        for round in 0..<200 {
            try writer.write { tx in
                let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                for k in 0..<20 { try t.put(Int64((round * 20 + k) % 2400), EncryptionTests.value(k, round)) }
            }
        }
        stop.set()
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(failures.all.prefix(3), [])
    }
}

/// A flag one thread sets and others poll.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
