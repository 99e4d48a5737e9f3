#if canImport(Glibc)
    import Glibc
#endif

/// One read of a small `/proc` file (its contents are made at the read, so one `read` gives
/// them whole when the buffer holds them): the bytes, or nil when it cannot be read.
func readProcFile(_ path: String, capacity: Int) -> ArraySlice<UInt8>? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: capacity)
    let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard n > 0 else { return nil }
    return buf[0..<n]
}
