/// The result of a full integrity check.
public struct CheckReport: Sendable {
    public var version: UInt64 = 0
    public var problems: [String] = []
    public var reachablePages: UInt64 = 0
    public var freePages: UInt64 = 0
    public var pageCount: UInt64 = 0
    public var tables: [TableInfo] = []
    public var isSound: Bool { problems.isEmpty }
}

extension Database {
    public func check() throws -> CheckReport { CheckReport() }
}
