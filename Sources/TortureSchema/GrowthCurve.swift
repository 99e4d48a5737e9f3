/// The growth scenario's file size after each commit, the live bytes in it, and where a
/// version was pinned and released.
public struct GrowthCurve: Codable, Sendable, Equatable {
    @Defaulted<Empty<[UInt64]>> public var sizes: [UInt64]
    @Defaulted<Empty<[UInt64]>> public var liveBytes: [UInt64]
    @Defaulted<Zero<Int>> public var pinnedAtCommit: Int
    @Defaulted<Zero<Int>> public var releasedAtCommit: Int
    @Defaulted<Zero<UInt64>> public var boundBytes: UInt64
    @Defaulted<Zero<UInt64>> public var compactedSize: UInt64

    public init() {}
}
