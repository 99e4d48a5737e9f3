/// The growth scenario's file size after each commit, the live bytes in it, and where a
/// version was pinned and released.
public struct GrowthCurve: Codable, Sendable, Equatable {
    public var sizes: [UInt64] = []
    public var liveBytes: [UInt64] = []
    public var pinnedAtCommit: Int = 0
    public var releasedAtCommit: Int = 0
    public var boundBytes: UInt64 = 0
    public var compactedSize: UInt64 = 0

    public init() {}

    // Hand-written for compatibility: files of older runs lack the later fields.
    enum CodingKeys: String, CodingKey {
        case sizes, liveBytes, pinnedAtCommit, releasedAtCommit, boundBytes, compactedSize
    }

    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        sizes = try c.decodeIfPresent([UInt64].self, forKey: .sizes) ?? []
        liveBytes = try c.decodeIfPresent([UInt64].self, forKey: .liveBytes) ?? []
        pinnedAtCommit = try c.decodeIfPresent(Int.self, forKey: .pinnedAtCommit) ?? 0
        releasedAtCommit = try c.decodeIfPresent(Int.self, forKey: .releasedAtCommit) ?? 0
        boundBytes = try c.decodeIfPresent(UInt64.self, forKey: .boundBytes) ?? 0
        compactedSize = try c.decodeIfPresent(UInt64.self, forKey: .compactedSize) ?? 0
    }
}
