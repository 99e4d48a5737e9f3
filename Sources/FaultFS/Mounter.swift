import ProcFS
import Foundation

/// Mounting, driving and unmounting FaultFS from another process: what `fief faultfs` and
/// the torture suite use.
public enum Mounter {
    /// Why FUSE cannot run here, or nil when it can.
    public static func fuseUnavailableReason() -> String? {
        if access("/dev/fuse", R_OK | W_OK) != 0 {
            return "/dev/fuse is missing or not accessible (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    public static func absolutePath(_ path: String) -> String {
        if let r = realpath(path, nil) { defer { free(r) }; return String(cString: r) }
        return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Mountpoints as /proc/self/mountinfo lists them (octal escapes decoded).
    static func mountpoints() -> [(point: String, type: String)] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            guard f.count > 7, let dash = f.firstIndex(of: "-"), dash + 1 < f.count else { return nil }
            return (unescape(String(f[4])), String(f[dash + 1]))
        }
    }

    private static func unescape(_ s: String) -> String {
        var out = [UInt8](), bytes = Array(s.utf8), i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\"), i + 3 < bytes.count,
                let v = UInt8(String(decoding: bytes[(i + 1)...(i + 3)], as: UTF8.self), radix: 8)
            {
                out.append(v); i += 4
            } else {
                out.append(bytes[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func isMounted(_ mountpoint: String) -> Bool {
        let p = absolutePath(mountpoint)
        return mountpoints().contains { $0.point == p }
    }

    /// The FaultFS mounts at or below `dir`, deepest first (so each can be unmounted in turn).
    public static func faultFSMounts(under dir: String) -> [String] {
        let root = absolutePath(dir)
        return mountpoints().filter {
            $0.type == "fuse.faultfs" && ($0.point == root || $0.point.hasPrefix(root + "/"))
        }
        .map(\.point).sorted { $0.count > $1.count }
    }

    public static func isFaultFS(_ mountpoint: String) -> Bool {
        let p = absolutePath(mountpoint)
        return mountpoints().contains { $0.point == p && $0.type == "fuse.faultfs" }
    }

    /// Checks everything a mount needs before anything is started; returns absolute paths.
    public static func validate(backing: String, mountpoint: String) throws -> (backing: String, mountpoint: String) {
        if let why = fuseUnavailableReason() { throw FaultFSError.noFuse(why) }
        for (role, path) in [("backing directory", backing), ("mountpoint", mountpoint)] {
            var st = stat()
            guard stat(path, &st) == 0 else { throw FaultFSError.missingDirectory(role: role, path: path) }
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw FaultFSError.notADirectory(role: role, path: path) }
        }
        let b = absolutePath(backing), m = absolutePath(mountpoint)
        if isMounted(m) { throw FaultFSError.alreadyMounted(m) }
        if b == m || b.hasPrefix(m + "/") || m.hasPrefix(b + "/") {
            throw FaultFSError.nested(backing: b, mountpoint: m)
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: m)) ?? []
        if !entries.isEmpty { throw FaultFSError.mountpointNotEmpty(m) }
        return (b, m)
    }

    /// Serves the mount in this process until it is unmounted or signalled. `threads` bounds
    /// the requests handled at once while fault rules are armed (one at a time otherwise).
    public static func serve(
        backing: String, mountpoint: String, seed: UInt64, config: FaultConfig,
        tracePath: String?, threads: UInt32 = 16
    ) throws {
        let (b, m) = try validate(backing: backing, mountpoint: mountpoint)
        let fs = try FaultFileSystem(
            backing: b, seed: seed, model: config.model ?? .posix, rules: config.faults,
            tracePath: tracePath ?? config.trace, traceOperations: config.traceOperations)
        try FUSEBridge.serve(fs, at: m, threads: threads)
    }

    /// Starts `executable arguments` (a foreground mount) as a daemon and returns once the
    /// mount is up; if the daemon dies first, throws with what it printed.
    public static func startDaemon(executable: String, arguments: [String], mountpoint: String, log: String) throws
        -> Int32
    {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["FIEF_FAULTFS_DAEMON"] = "1"
        p.environment = env
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        guard let out = FileHandle(forWritingAtPath: log) else {
            throw FaultFSError.io(path: log, what: "create the daemon log", errno: errno)
        }
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw FaultFSError.mountFailed("cannot start \(executable): \(error)") }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if isFaultFS(mountpoint) { return p.processIdentifier }
            if !p.isRunning {
                let said = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines)
                throw FaultFSError.mountFailed(
                    said.isEmpty ? "the daemon exited with status \(p.terminationStatus)" : said)
            }
            usleep(10_000)
        }
        kill(p.processIdentifier, SIGKILL)
        throw FaultFSError.mountFailed("the mount did not appear within 15 s (daemon log: \(log))")
    }

    /// Sends one control command to the mount at `mountpoint` and returns its answer.
    public static func control(_ mountpoint: String, _ words: [String]) throws -> String {
        let m = absolutePath(mountpoint)
        guard isFaultFS(m) else { throw FaultFSError.notMounted(m) }
        let fd = open(m + "/" + FaultFileSystem.controlName, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw FaultFSError.io(path: m, what: "reach the FaultFS daemon", errno: errno) }
        defer { close(fd) }
        let request = try JSONSerialization.data(withJSONObject: words)
        let wrote = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard wrote == request.count else { throw FaultFSError.io(path: m, what: "send the command", errno: errno) }
        var answer = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(answer.count)) }
            guard n >= 0 else { throw FaultFSError.io(path: m, what: "read the answer", errno: errno) }
            if n == 0 { break }
            answer += buf[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let nl = text.firstIndex(of: "\n") else {
            throw FaultFSError.control("no answer from the FaultFS daemon")
        }
        let body = String(text[text.index(after: nl)...])
        if text[..<nl] == "ok" { return body }
        throw FaultFSError.control(body.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Alive and not a zombie (an orphaned daemon may wait for a reaper that never comes).
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = ProcStat(pid: pid) else { return true }
        return !stat.isZombie
    }

    /// Unmounts, lazily when the mount is busy or its daemon died, and waits for the daemon
    /// to exit. Returns what was done.
    public static func unmount(_ mountpoint: String) throws -> String {
        let m = absolutePath(mountpoint)
        guard isMounted(m) else { throw FaultFSError.notMounted(m) }
        var st = stat()
        let alive = stat(m, &st) == 0
        var pid: Int32?
        if alive, let s = try? control(m, ["status", "--json"]),
            let status = try? JSONDecoder().decode(FaultFSStatus.self, from: Data(s.utf8))
        {
            pid = status.pid
        }
        var how = "unmounted \(m)"
        var patience = 10.0
        if umount2(m, 0) != 0 {
            let e = errno
            if e == EPERM {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/bin/sh")
                p.arguments = ["-c", "fusermount3 -u -z \"$0\"", m]
                try? p.run(); p.waitUntilExit()
                guard p.terminationStatus == 0 else {
                    throw FaultFSError.io(path: m, what: "unmount (fusermount3)", errno: e)
                }
            } else {
                guard umount2(m, Int32(MNT_DETACH)) == 0 else {
                    throw FaultFSError.io(path: m, what: "unmount", errno: errno)
                }
                patience = 2  // a lazy unmount waits for every open file: do not wait with it
                how =
                    alive
                    ? "lazily unmounted \(m) (it was busy: \(String(cString: strerror(e))))"
                    : "lazily unmounted \(m) (its daemon had died)"
            }
        }
        if let pid {
            let deadline = Date().addingTimeInterval(patience)
            while isAlive(pid) && Date() < deadline { usleep(10_000) }
            if isAlive(pid) { kill(pid, SIGKILL); how += "; the daemon did not exit and was killed" }
        }
        return how
    }
}
