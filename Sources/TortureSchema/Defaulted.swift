/// A stored field that files written before it existed lack: decoding such a file gives
/// `Default.value`, so the types keep synthesised `Codable` and older files still read.
/// It encodes as its bare value.
@propertyWrapper
public struct Defaulted<Default: DefaultValue>: Codable, Sendable {
    public var wrappedValue: Default.Value

    public init() { wrappedValue = Default.value }
    public init(wrappedValue: Default.Value) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(Default.Value.self)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(wrappedValue)
    }
}

extension Defaulted: Equatable where Default.Value: Equatable {}

/// What a `Defaulted` field reads as when its key is missing.
public protocol DefaultValue {
    associatedtype Value: Codable & Sendable
    static var value: Value { get }
}

public enum Zero<Value: AdditiveArithmetic & Codable & Sendable>: DefaultValue {
    public static var value: Value { .zero }
}

public enum Empty<Value: RangeReplaceableCollection & Codable & Sendable>: DefaultValue {
    public static var value: Value { Value() }
}

public enum False: DefaultValue {
    public static var value: Bool { false }
}

extension KeyedDecodingContainer {
    /// What the synthesised `init(from:)` calls for a `Defaulted` field: a missing key is the default.
    func decode<D>(_ type: Defaulted<D>.Type, forKey key: Key) throws -> Defaulted<D> {
        try decodeIfPresent(type, forKey: key) ?? Defaulted()
    }
}

/// A collection written only when it holds something (and read as empty when missing).
public enum OmittedWhenEmpty<Value: RangeReplaceableCollection & Codable & Sendable>: DefaultValue {
    public static var value: Value { Value() }
}

extension KeyedEncodingContainer {
    /// What the synthesised `encode(to:)` calls for an `OmittedWhenEmpty` field.
    mutating func encode<V>(_ value: Defaulted<OmittedWhenEmpty<V>>, forKey key: Key) throws {
        if !value.wrappedValue.isEmpty { try encode(value.wrappedValue, forKey: key) }
    }
}
