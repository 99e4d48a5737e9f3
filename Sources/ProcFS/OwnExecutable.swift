#if canImport(Glibc)
    import Glibc
#endif

/// This executable's path (`/proc/self/exe`), so a command can start itself again as a child
/// process or daemon; nil where /proc cannot say.
public func ownExecutablePath() -> String? {
    var buf = [UInt8](repeating: 0, count: 4096)
    let n = buf.withUnsafeMutableBytes {
        readlink("/proc/self/exe", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1)
    }
    return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : nil
}
