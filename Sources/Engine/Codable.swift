/// Types usable as table keys. Int64 keys are stored big-endian with the sign bit flipped,
/// so byte order is numeric order; byte and string keys are stored as they are.
public protocol KeyCodable {
    static var keyKind: KeyKind { get }
    var keyBytes: [UInt8] { get }
    init(keyBytes: UnsafeRawBufferPointer) throws
    /// Lends the key's stored bytes (`keyBytes`) to `body`, valid only during the call. The
    /// default goes through `keyBytes`; `Int64` lends them from the stack, so a typed get
    /// allocates no array for its key.
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension KeyCodable {
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try keyBytes.withUnsafeBytes(body)
    }
}

/// Types usable as table values. Int64 values are 8 bytes little-endian.
public protocol ValueCodable {
    static var valueKind: ValueKind { get }
    var valueBytes: [UInt8] { get }
    init(valueBytes: UnsafeRawBufferPointer) throws
}

/// A stored value that does not decode as the table's type says.
public struct ValueDecodingError: Error, CustomStringConvertible {
    public let detail: String
    public var description: String { detail }
}

extension Int64 {
    /// The integer an Int64 key's bytes hold, read big-endian: the value with its sign bit
    /// flipped, so that byte order is numeric order. Package-wide: the object layer's keys
    /// and index entries are read with the same codec.
    @inlinable package var keyBits: UInt64 { UInt64(bitPattern: self) ^ (1 << 63) }
    @inlinable package init(keyBits u: UInt64) { self = Int64(bitPattern: u ^ (1 << 63)) }
}

extension Int64: KeyCodable, ValueCodable {
    public static var keyKind: KeyKind { .int64 }
    public static var valueKind: ValueKind { .int64 }

    public var keyBytes: [UInt8] {
        // Big-endian with the sign bit flipped, so byte order is numeric order. (One copy of
        // the integer's bytes: every typed get and put makes one of these.)
        let u = keyBits.bigEndian
        return withUnsafeBytes(of: u) { Array($0) }
    }

    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // The same bytes as `keyBytes`, from the stack.
        try withUnsafeBytes(of: keyBits.bigEndian, body)
    }

    public init(keyBytes b: UnsafeRawBufferPointer) throws {
        guard b.count == 8 else { throw ValueDecodingError(detail: "an int64 key has \(b.count) bytes, not 8") }
        var u: UInt64 = 0
        for i in 0..<8 { u = (u << 8) | UInt64(b[i]) }
        self = Int64(keyBits: u)
    }

    public var valueBytes: [UInt8] {
        let u = UInt64(bitPattern: self)
        return (0..<8).map { UInt8(truncatingIfNeeded: u >> (8 * UInt64($0))) }
    }

    public init(valueBytes b: UnsafeRawBufferPointer) throws {
        guard b.count == 8 else { throw ValueDecodingError(detail: "an int64 value has \(b.count) bytes, not 8") }
        self = Int64(bitPattern: b.u64(0))
    }
}

extension Array: KeyCodable, ValueCodable where Element == UInt8 {
    public static var keyKind: KeyKind { .bytes }
    public static var valueKind: ValueKind { .bytes }
    public var keyBytes: [UInt8] { self }
    public var valueBytes: [UInt8] { self }
    public init(keyBytes b: UnsafeRawBufferPointer) throws { self = Array(b) }
    public init(valueBytes b: UnsafeRawBufferPointer) throws { self = Array(b) }
}

extension String: KeyCodable, ValueCodable {
    public static var keyKind: KeyKind { .bytes }
    public static var valueKind: ValueKind { .bytes }
    public var keyBytes: [UInt8] { Array(utf8) }
    public var valueBytes: [UInt8] { Array(utf8) }
    public init(keyBytes b: UnsafeRawBufferPointer) throws { self = String(decoding: b, as: UTF8.self) }
    public init(valueBytes b: UnsafeRawBufferPointer) throws { self = String(decoding: b, as: UTF8.self) }
}
