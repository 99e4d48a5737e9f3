import Engine
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A configuration the object layer refuses before touching any file.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case emptyInMemoryIdentifier
    case inMemoryIdentifierTooLong(identifier: String, bytes: Int)
    /// The identifier names a file in the store directory, so "/", NUL, "." and ".." cannot be one.
    case inMemoryIdentifierNotAFileName(identifier: String)
    case inMemoryIdentifierWithPath(identifier: String, path: String)
    case inMemoryReadOnly(identifier: String)
    /// The per-user directory of in-memory stores exists but is not ours, or cannot be made.
    case inMemoryDirectory(path: String, detail: String)
    /// A writer needs the newest version and the one it makes: a limit under 2 refuses every write.
    case maximumLiveVersionsTooSmall(Int)

    public var description: String {
        switch self {
        case .emptyInMemoryIdentifier: return "an in-memory identifier cannot be empty"
        case .inMemoryIdentifierTooLong(let id, let n):
            return
                "in-memory identifier '\(id.prefix(40))…' has \(n) bytes; "
                + "at most \(InMemoryFiles.maxIdentifierBytes) are allowed"
        case .inMemoryIdentifierNotAFileName(let id):
            return "in-memory identifier '\(id)' cannot contain '/' or NUL, nor be '.' or '..'"
        case .inMemoryIdentifierWithPath(let id, let p):
            return "a configuration has an in-memory identifier ('\(id)') or a path ('\(p)'), not both"
        case .inMemoryReadOnly(let id): return "in-memory store '\(id)' cannot be opened read-only"
        case .inMemoryDirectory(let p, let d): return "\(p): cannot hold in-memory stores: \(d)"
        case .maximumLiveVersionsTooSmall(let m): return "maximumLiveVersions is \(m); it must be at least 2"
        }
    }
}

/// Where an in-memory store lives, and how its files come and go. The store is the usual
/// engine file, on tmpfs (`/dev/shm/fief-<uid>/<identifier>.fief`, or under `$TMPDIR` where
/// there is no /dev/shm), so every context, thread and process that names the identifier
/// shares it through the ordinary reader table and writer lock, with durability `.none`:
/// tmpfs keeps no data across a reboot, so syncing would buy nothing.
///
/// Who is "last", across processes: every open engine handle holds a shared lock on the
/// `.lock` file's open byte for its life, and the kernel drops that lock when the handle
/// closes or its process dies, however it dies. A store closing tries to turn its shared
/// lock into an exclusive one: that succeeds only when no other handle anywhere holds the
/// file, and then it removes the files. A count kept in a file would need every process to
/// decrement it, and a SIGKILLed one never does; the lock is the count the kernel keeps.
///
/// The close (try-lock, then unlink) and the open (look for a leftover, then create) run
/// under one more lock, a `flock` on the directory itself, which no store ever removes: without
/// it, a process could open the old file just as the last one unlinks it, and keep using a
/// file no one else can find.
struct InMemoryFiles: Sendable {
    let identifier: String
    let directory: String
    var path: String { "\(directory)/\(identifier).fief" }

    static let maxIdentifierBytes = 200

    init(_ id: String, _ configuration: Configuration) throws {
        guard !id.isEmpty else { throw ConfigurationError.emptyInMemoryIdentifier }
        let n = id.utf8.count
        guard n <= InMemoryFiles.maxIdentifierBytes else {
            throw ConfigurationError.inMemoryIdentifierTooLong(identifier: id, bytes: n)
        }
        guard !id.utf8.contains(UInt8(ascii: "/")), !id.utf8.contains(0), id != ".", id != ".." else {
            throw ConfigurationError.inMemoryIdentifierNotAFileName(identifier: id)
        }
        identifier = id
        directory = try InMemoryFiles.userDirectory()
        // A configuration this store handed out (its `path` resolved) opens the same store again.
        guard configuration.path.isEmpty || configuration.path == path else {
            throw ConfigurationError.inMemoryIdentifierWithPath(identifier: id, path: configuration.path)
        }
        guard !configuration.readOnly else { throw ConfigurationError.inMemoryReadOnly(identifier: id) }
    }

    /// `/dev/shm/fief-<uid>` (or `$TMPDIR/fief-<uid>`), made private to this user. /dev/shm is
    /// writable by everyone, so a directory of that name that another user made is refused.
    static func userDirectory() throws -> String {
        var isDir: ObjCBool = false
        let shm =
            FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDir) && isDir.boolValue
            && access("/dev/shm", W_OK) == 0
        let base =
            shm
            ? "/dev/shm" : (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        let dir = "\(base)/fief-\(getuid())"
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw ConfigurationError.inMemoryDirectory(path: dir, detail: String(cString: strerror(errno)))
        }
        var st = stat()
        guard lstat(dir, &st) == 0 else {
            throw ConfigurationError.inMemoryDirectory(path: dir, detail: String(cString: strerror(errno)))
        }
        guard st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid() else {
            throw ConfigurationError.inMemoryDirectory(path: dir, detail: "not a directory owned by uid \(getuid())")
        }
        return dir
    }

    /// Runs `body` holding the directory's lock (see above), against every other open and
    /// close of an in-memory store of this user, in every process.
    func withGate<T>(_ body: () throws -> T) throws -> T {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ConfigurationError.inMemoryDirectory(path: directory, detail: String(cString: strerror(errno)))
        }
        defer { Glibc.close(fd) }  // drops the flock
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw ConfigurationError.inMemoryDirectory(
                    path: directory, detail: "flock: \(String(cString: strerror(errno)))")
            }
        }
        return try body()
    }

    /// Under the gate, before opening: files no handle holds are what dead processes left
    /// (or nothing); they go, so the store starts empty.
    func removeLeftover() throws {
        if try !Database.isOpenAnywhere(path: path) { removeFiles() }
    }

    /// Under the gate, as a store closes: removes the files if `database` is the last handle
    /// on them anywhere. Other handles of this process count as others: each holds its own lock.
    /// The handle is then closed too, so whoever kept it past the store gets `EngineError.closed`
    /// from a new transaction instead of writing to a file no one else can open.
    func close(_ database: Database) {
        _ = try? withGate {
            if try database.becomeOnlyHandle() {
                removeFiles()
                database.close()
            }
        }
    }

    private func removeFiles() {
        unlink(path)
        unlink(path + ".lock")
    }
}
