import XCTest
@testable import FaultFS
import Torture
@_exported import FiefTestSupport

/// FaultFS tests mount for real. Where FUSE is missing they say so (`skipping`) and are
/// reported as skipped, never as passed.
func requireFUSE(test: String = #function) throws {
    if let why = Mounter.fuseUnavailableReason() {
        throw XCTSkip(skipping("FaultFS TESTS CANNOT RUN ON THIS MACHINE: \(why)", test: test))
    }
}

/// A real FaultFS mount of a fresh backing directory, through the `fief` executable.
final class LiveMount {
    let dir = TempDir()
    let fs: FaultFSMount
    var backing: String { fs.backing }
    var mnt: String { fs.mountpoint }
    var trace: String { fs.tracePath }

    init(seed: UInt64, config: String? = nil, name: String = "", model: PersistenceModel = .posix) throws {
        try requireFUSE()
        let base = dir.path + (name.isEmpty ? "" : "/" + name)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        var configPath: String?
        if let config {
            configPath = base + "/faults.toml"
            try config.write(toFile: configPath!, atomically: true, encoding: .utf8)
        }
        fs = FaultFSMount(
            backing: base + "/backing", mountpoint: base + "/mnt", seed: seed,
            tracePath: base + "/trace.jsonl", configPath: configPath, model: model)
        try fs.mount()
    }

    @discardableResult
    func ctl(_ words: String...) throws -> String { try fs.ctl(words) }
    @discardableResult
    func ctl(_ words: [String]) throws -> String { try fs.ctl(words) }

    func status() throws -> FaultFSStatus {
        try JSONDecoder().decode(FaultFSStatus.self, from: Data(try fs.ctl(["status", "--json"]).utf8))
    }

    func unmount() { fs.unmount() }
    deinit { fs.unmount() }
}

/// Thin throwing file calls, so a test reads as the sequence of syscalls it makes. Closed
/// when dropped, so no test leaves its mount busy.
final class RawFile {
    private(set) var fd: Int32
    let path: String

    init(_ path: String, flags: Int32 = O_RDWR | O_CREAT) throws {
        fd = open(path, flags | O_CLOEXEC, 0o644)
        self.path = path
        guard fd >= 0 else { throw Failure(path, "open", errno) }
    }

    struct Failure: Error, CustomStringConvertible {
        let errno: Int32
        let description: String
        init(_ path: String, _ what: String, _ e: Int32) {
            errno = e; description = "\(what) \(path): \(String(cString: strerror(e)))"
        }
    }

    @discardableResult
    func write(_ bytes: [UInt8], at offset: Int) throws -> Int {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n >= 0 else { throw Failure(path, "write", errno) }
        return n
    }

    func write(_ text: String, at offset: Int = 0) throws { try write(Array(text.utf8), at: offset) }

    func sync() throws { guard fsync(fd) == 0 else { throw Failure(path, "fsync", errno) } }

    func dataSync() throws { guard fdatasync(fd) == 0 else { throw Failure(path, "fdatasync", errno) } }

    func read(_ count: Int, at offset: Int = 0) throws -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: count)
        let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n >= 0 else { throw Failure(path, "read", errno) }
        return Array(buf[0..<n])
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }

    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw Failure(path, "open", errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw Failure(path, "fsync", errno) }
    }
}

func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

/// Runs a program and returns its exit status and what it printed.
@discardableResult
func runProgram(_ executable: String, _ args: [String], cwd: String? = nil, environment: [String: String] = [:]) throws
    -> (status: Int32, output: String, signaled: Bool)
{
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = args
    if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    var env = ProcessInfo.processInfo.environment
    env["SWIFT_BACKTRACE"] = "enable=no"
    for (k, v) in environment { env[k] = v }
    p.environment = env
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self), p.terminationReason == .uncaughtSignal)
}

func fief(_ args: String...) throws -> (status: Int32, output: String, signaled: Bool) {
    try runProgram(try FiefExecutable.path(), args)
}
