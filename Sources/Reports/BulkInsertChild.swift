import Engine
import Foundation
import TortureSchema

/// A bulk insert run in a process of its own, so the peak memory it reports (`ResidentMemory`)
/// belongs to one system alone: three systems in one process would share one high-water mark.
public enum BulkInsertChild {
    public struct Request: Codable, Sendable {
        public var system: SystemName
        public var directory: String
        public var records: Int
        public var valueSize: Int
        public var durability: Durability
        public var seed: UInt64

    }

    public struct Report: Codable, Sendable {
        public var opsPerSecond: Double
        public var seconds: Double
        /// From before the store was opened (runtime, keys and value built) to after the commit.
        public var memory: PeakMemory
        public var fileBytes: UInt64
    }

    /// Runs the request here (in the child, or in-process when no child can be started).
    public static func run(_ r: Request) throws -> Report {
        let durability = r.durability
        let keys = BenchRandom.permutation(r.records, seed: r.seed, .insertOrder)
        let value = BenchValue.make(size: r.valueSize, seed: r.seed)
        try FileManager.default.createDirectory(atPath: r.directory, withIntermediateDirectories: true)
        let (m, memory) = try PeakMemory.of {
            let store = try StoreFactory.open(r.system, directory: r.directory, durability: durability)
            defer { store.close() }
            return try Workloads.bulkInsert(store, keys: keys, value: value)
        }
        return Report(
            opsPerSecond: m.value, seconds: m.extra["seconds"] ?? 0, memory: memory,
            fileBytes: UInt64(m.extra["fileBytes"] ?? 0))
    }

    /// Runs the request in `executable bench child --request JSON` and reads its report.
    static func spawn(_ r: Request, executable: String) throws -> Report {
        try BenchChild.run(r, executable: executable, what: "\(r.system.rawValue) bulk insert")
    }
}

/// The value every record carries: seeded random bytes, the same for every system.
enum BenchValue {
    static func make(size: Int, seed: UInt64) -> [UInt8] {
        var rng = BenchRandom.stream(seed: seed, .values)
        return (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
}

extension BulkInsertChild.Request: ProcessRequest {
    public static let subcommand = ["bench", "child"]
}
