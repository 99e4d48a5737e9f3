import XCTest
import Engine
import Torture

/// A read-only reader that cannot open the `.lock` file pins nothing, so it may read without
/// one only where no writer can exist. Run as an unprivileged user (root passes every
/// permission check).
final class ReaderWithoutLockFileTests: XCTestCase {
    func runAsNobody(_ args: [String], _ dir: TempDir) throws -> (ChildProcess.Ending, String) {
        let out = dir.file("nobody.out")
        let child = try ChildProcess(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", try FiefExecutable.path()] + args,
            output: out, label: "reader as nobody")
        let ending = child.wait()
        return (ending, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    func testAReaderThatCannotPinIsRefusedUnlessNobodyCanWrite() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip(skipping("needs root and setpriv to run a reader as another user"))
        }
        let dir = TempDir()
        let db = dir.file("db.fief")
        _ = try Database(path: db)
        let fief = try FiefExecutable.path()
        // nobody must reach the file and the binary (search permission on the folders on the
        // way, added only where missing), and must not be able to write either.
        func letOthersThrough(_ p: String) {
            var st = stat()
            if stat(p, &st) == 0 && st.st_mode & 0o001 == 0 { chmod(p, (st.st_mode & 0o7777) | 0o001) }
        }
        var path = (fief as NSString).deletingLastPathComponent
        while path != "/" && !path.isEmpty {
            letOthersThrough(path); path = (path as NSString).deletingLastPathComponent
        }
        letOthersThrough(dir.path)
        chmod(db, 0o644)
        chmod(db + ".lock", 0o644)
        let (refused, said) = try runAsNobody(["db", "schema", db], dir)
        XCTAssertNotEqual(refused, .exited(0), said)
        XCTAssertTrue(said.contains("lock file"), said)
        XCTAssertFalse(said.contains("Fatal error"), said)

        chmod(db, 0o444)
        let (read, said2) = try runAsNobody(["db", "schema", db], dir)
        XCTAssertEqual(read, .exited(0), "a file no one may write is read without a lock file: \(said2)")
    }
}
