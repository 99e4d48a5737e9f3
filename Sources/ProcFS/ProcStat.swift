#if canImport(Glibc)
    import Glibc
#endif

/// What Fief reads of a process from `/proc/PID/stat`, parsed in one place. The command
/// name comes in parentheses and may itself hold spaces and parentheses, so fields are
/// counted from the last `)`: then the state (field 3), the parent (4), and the start time
/// (22, clock ticks since boot), which tells a live process from a later one reusing its pid.
public struct ProcStat: Sendable, Equatable {
    public let state: UInt8
    public let parent: Int32
    public let startTime: UInt64

    /// Nil when the process does not exist (or its line cannot be read).
    public init?(pid: Int32) {
        guard let line = readProcFile("/proc/\(pid)/stat", capacity: 1024) else { return nil }
        self.init(line: line)
    }

    init?(line: ArraySlice<UInt8>) {
        guard let close = line.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3; field 22 is fields[19].
        guard fields.count > 19, let state = fields[0].first,
            let parent = Int32(String(decoding: fields[1], as: UTF8.self)),
            let start = UInt64(String(decoding: fields[19], as: UTF8.self))
        else { return nil }
        self.state = state
        self.parent = parent
        self.startTime = start
    }

    /// Exited but not yet reaped: gone for every purpose but its pid.
    public var isZombie: Bool { state == UInt8(ascii: "Z") }
}
