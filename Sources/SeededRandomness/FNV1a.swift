/// 64-bit FNV-1a: a name (a file's path, a scenario's) made into a number that streams are
/// derived from, and a cheap digest of bytes. Not for anything an attacker chooses.
public struct FNV1a: Sendable {
    public private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    public init() {}

    @inline(__always)
    public mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01B3
    }

    public mutating func add<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        for b in bytes { add(b) }
    }

    public static func of(_ s: String) -> UInt64 {
        var h = FNV1a()
        h.add(s.utf8)
        return h.value
    }
}
