#if canImport(Glibc)
    import Glibc
#endif

/// Everything that can go wrong mounting, driving or unmounting FaultFS, each with a message
/// that says what to do.
public enum FaultFSError: Error, CustomStringConvertible, Equatable {
    case noFuse(String)
    case missingDirectory(role: String, path: String)
    case notADirectory(role: String, path: String)
    case mountpointNotEmpty(String)
    case alreadyMounted(String)
    case nested(backing: String, mountpoint: String)
    case notMounted(String)
    case badConfig(path: String, detail: String)
    case badSpec(String)
    case mountFailed(String)
    case control(String)
    case io(path: String, what: String, errno: Int32)

    public var description: String {
        switch self {
        case .noFuse(let why): return "FUSE is not available on this machine: \(why)"
        case .missingDirectory(let role, let p): return "\(role) \(p) does not exist"
        case .notADirectory(let role, let p): return "\(role) \(p) is not a directory"
        case .mountpointNotEmpty(let p):
            return "mountpoint \(p) is not empty; FaultFS mounts only on an empty directory"
        case .alreadyMounted(let p): return "\(p) is already a mountpoint; unmount it first (fief faultfs unmount \(p))"
        case .nested(let b, let m):
            return "the mountpoint \(m) and the backing directory \(b) must not contain each other"
        case .notMounted(let p): return "no FaultFS is mounted at \(p)"
        case .badConfig(let p, let d): return "config \(p): \(d)"
        case .badSpec(let d): return d
        case .mountFailed(let d): return "mount failed: \(d)"
        case .control(let d): return d
        case .io(let p, let w, let e): return "\(p): cannot \(w): \(String(cString: strerror(e)))"
        }
    }
}
