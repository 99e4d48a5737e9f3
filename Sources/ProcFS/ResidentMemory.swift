#if canImport(Glibc)
    import Glibc
#endif

/// This process's resident memory as `/proc/self/status` gives it: now (`VmRSS`) and its peak
/// (`VmHWM`), which `resetPeak` brings down to now (`5` written to `/proc/self/clear_refs`,
/// Linux 4.0 and later). A measurement that resets the peak first gets its own high-water
/// mark: `getrusage`'s `ru_maxrss` keeps whatever ran before (start-up, building the data), and
/// a load smaller than that read as no memory at all.
public enum ResidentMemory {
    /// The peak since the last reset, and the resident bytes when it was reset.
    public struct Window: Sendable {
        public let baselineBytes: UInt64
        /// Whether the peak was reset; if not, `peakBytes` is the whole process's.
        public let ownPeak: Bool

        public var peakBytes: UInt64 { ResidentMemory.field("VmHWM:") ?? baselineBytes }
        public var peakAboveBaseline: UInt64 { peakBytes > baselineBytes ? peakBytes - baselineBytes : 0 }
    }

    /// Resets the peak to the resident bytes now and returns the window that measures from here.
    public static func startWindow() -> Window {
        let reset = resetPeak()
        return Window(baselineBytes: field("VmRSS:") ?? 0, ownPeak: reset)
    }

    public static var residentBytes: UInt64? { field("VmRSS:") }

    @discardableResult
    public static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// A `kB` line of `/proc/self/status`, in bytes.
    static func field(_ name: String) -> UInt64? {
        guard let status = readProcFile("/proc/self/status", capacity: 8192) else { return nil }
        return kilobytes(in: String(decoding: status, as: UTF8.self), field: name).map { $0 * 1024 }
    }

    /// The number on the line starting with `field` ("VmHWM:\t    1234 kB").
    static func kilobytes(in status: String, field: String) -> UInt64? {
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return line.dropFirst(field.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                .flatMap { UInt64($0) }
        }
        return nil
    }
}
