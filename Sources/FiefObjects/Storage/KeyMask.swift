/// A few keys hashed into 64 bits, asked before a search of them: nearly every key asked is not
/// among them, and the mask says so in a multiply and a shift. A key among them always finds
/// its bit set; a key not among them may too (then the caller searches).
struct KeyMask {
    private(set) var bits: UInt64 = 0

    init() {}

    init<S: Sequence>(_ keys: S) where S.Element == Int64 {
        for k in keys { insert(k) }
    }

    mutating func insert(_ k: Int64) { bits |= KeyMask.bit(k) }

    @inline(__always) func mayContain(_ k: Int64) -> Bool { bits & KeyMask.bit(k) != 0 }

    @inline(__always) private static func bit(_ k: Int64) -> UInt64 {
        1 << ((UInt64(bitPattern: k) &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }
}
