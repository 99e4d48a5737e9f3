#if canImport(Glibc)
    import Glibc
#endif

/// Little-endian integers in byte buffers. All on-disk integers are little-endian. Package-wide
/// (and inlinable): the object layer's records read and write theirs with the same helpers.
extension UnsafeRawBufferPointer {
    @inlinable @inline(__always) package func u64(_ at: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }
    @inlinable @inline(__always) package func u32(_ at: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self))
    }
    @inlinable @inline(__always) package func u16(_ at: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self))
    }
    @inlinable @inline(__always) package func u8(_ at: Int) -> UInt8 { load(fromByteOffset: at, as: UInt8.self) }
}

extension UnsafeMutableRawBufferPointer {
    @inlinable @inline(__always) package func setU64(_ v: UInt64, at: Int) {
        storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt64.self)
    }
    @inlinable @inline(__always) package func setU32(_ v: UInt32, at: Int) {
        storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self)
    }
    @inlinable @inline(__always) package func setU16(_ v: UInt16, at: Int) {
        storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt16.self)
    }
    @inlinable @inline(__always) package func setU8(_ v: UInt8, at: Int) {
        storeBytes(of: v, toByteOffset: at, as: UInt8.self)
    }
    @inlinable @inline(__always) package func copy(_ src: UnsafeRawBufferPointer, at: Int) {
        if src.count > 0 { (baseAddress! + at).copyMemory(from: src.baseAddress!, byteCount: src.count) }
    }
}

/// Lexicographic comparison of byte strings, the one key order of every tree.
@inline(__always)
package func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    if a.count == 8 && b.count == 8 {
        // Int64 keys, the common case: two loads instead of a call to memcmp. Big-endian
        // integers compare as their bytes do.
        let x = UInt64(bigEndian: a.loadUnaligned(as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
        return x == y ? 0 : (x < y ? -1 : 1)
    }
    let n = Swift.min(a.count, b.count)
    if n > 0 {
        let c = memcmp(a.baseAddress!, b.baseAddress!, n)
        if c != 0 { return c < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

@inline(__always)
package func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBytes(pa, pb) } }
}
