#if canImport(Glibc)
    import Glibc
#endif
import SystemPackage

/// The database file's descriptor: positional writes, syncs and size, each failure a typed
/// `EngineError` that names the file. Reads go through `Mapping`, never through here, except
/// for the header during open (before anything is mapped).
final class DatabaseFile {
    let path: String
    let fd: FileDescriptor
    /// Mapped by the first commit without sync (nil when the file cannot be mapped writable),
    /// unmapped with this object, never by `close()`: a store may still be under way then.
    private lazy var window: HeaderWindow? = HeaderWindow(fd: fd.rawValue)

    init(path: String, fd: FileDescriptor) {
        self.path = path
        self.fd = fd
    }

    static func open(path: String, writable: Bool, create: Bool = false, exclusive: Bool = false) throws -> DatabaseFile
    {
        var options: FileDescriptor.OpenOptions = [.closeOnExec]
        if create { options.insert(.create) }
        if exclusive { options.insert(.exclusiveCreate) }
        do {
            let fd = try FileDescriptor.open(
                FilePath(path), writable ? .readWrite : .readOnly, options: options,
                permissions: create ? [.ownerReadWrite, .groupRead, .otherRead] : nil)
            return DatabaseFile(path: path, fd: fd)
        } catch let e as SystemPackage.Errno {
            switch e {
            case .noSuchFileOrDirectory: throw EngineError.fileNotFound(path: path)
            case .isDirectory: throw EngineError.notARegularFile(path: path)
            case .fileExists: throw EngineError.alreadyExists(path: path)
            default: throw EngineError.io(path: path, operation: "open", errno: e.rawValue)
            }
        }
    }

    func close() { try? fd.close() }

    func size() throws -> UInt64 {
        var st = stat()
        guard fstat(fd.rawValue, &st) == 0 else { throw ioError("fstat") }
        return UInt64(st.st_size)
    }

    func isRegularFile() throws -> Bool {
        var st = stat()
        guard fstat(fd.rawValue, &st) == 0 else { throw ioError("fstat") }
        return (st.st_mode & S_IFMT) == S_IFREG
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retryingInterrupts("read") {
                pread(fd.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let n = try retryingInterrupts("write") {
                pwrite(fd.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { throw wroteNothing }
            done += BrokenVariant.on(.ignoreShortWrite) ? buffer.count - done : n
        }
    }

    /// At most this many buffers per `pwritev` (IOV_MAX on Linux).
    static let maxIOVecs = 1024

    /// The buffers `iov` names, one after another from `offset`, in one `pwritev` while the
    /// kernel takes everything (I16: a short write is continued from where it stopped).
    /// `iov` is consumed (advanced past what was written).
    func write(_ iov: inout [iovec], at offset: UInt64) throws {
        precondition(iov.count <= DatabaseFile.maxIOVecs)
        var first = 0
        var position = off_t(offset)
        while first < iov.count {
            let n = try retryingInterrupts("write") {
                iov.withUnsafeBufferPointer { v in
                    pwritev(fd.rawValue, v.baseAddress! + first, Int32(v.count - first), position)
                }
            }
            if n == 0 { throw wroteNothing }
            var left = BrokenVariant.on(.ignoreShortWrite) ? iov[first...].reduce(0) { $0 + $1.iov_len } : n
            position += off_t(left)
            while first < iov.count && left >= iov[first].iov_len {
                left -= iov[first].iov_len
                first += 1
            }
            if left > 0 {
                iov[first].iov_base = iov[first].iov_base.map { $0 + left }
                iov[first].iov_len -= left
            }
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// `bytes` into the header page for a commit that will not sync: a store through
    /// `HeaderWindow`, or `pwrite` when the file cannot be mapped writable. Writer only.
    func storeInHeader(_ bytes: [UInt8], at offset: Int) throws {
        if let w = window { w.store(bytes, at: offset) } else { try write(bytes, at: UInt64(offset)) }
    }

    /// fdatasync: flushes data and the file size, which is all a commit needs.
    func sync() throws {
        _ = try retryingInterrupts("fdatasync") { Int(fdatasync(fd.rawValue)) }
    }

    func fullSync() throws {
        _ = try retryingInterrupts("fsync") { Int(fsync(fd.rawValue)) }
    }

    /// `call`'s result (a read, write or sync that returns -1 and sets errno when it fails),
    /// called again for as long as a signal interrupts it.
    @inline(__always) private func retryingInterrupts(_ op: String, _ call: () -> Int) throws -> Int {
        while true {
            let n = call()
            if n >= 0 { return n }
            if errno != EINTR { throw ioError(op) }
        }
    }

    /// A write that took none of a non-empty buffer: an I/O error, rather than a loop retrying forever.
    private var wroteNothing: EngineError { .io(path: path, operation: "write", errno: EIO) }

    func ioError(_ op: String) -> EngineError {
        let e = errno
        if e == ENOSPC || e == EDQUOT { return .diskFull(path: path, operation: op) }
        return .io(path: path, operation: op, errno: e)
    }

    /// fsync of the directory holding `path`, so a create or rename in it survives power loss.
    static func syncDirectory(of path: String) throws {
        let dir = parentDirectory(of: path)
        let fd = Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw EngineError.io(path: dir, operation: "open directory", errno: errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw EngineError.io(path: dir, operation: "fsync directory", errno: errno) }
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }
}
