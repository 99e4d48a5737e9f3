import Engine
/// Sizes and counts of one bench run. `quick` fits in two minutes on a 2-core machine, the
/// default profile in ten; `smoke` is for tests (seconds, numbers meaningless).
public struct BenchParameters: Codable, Equatable, Sendable {
    public var profile: String
    public var seed: UInt64
    public var repetitions: Int
    public var durability: Durability
    public var systems: [SystemName]
    /// Records in the bulk insert and in the data set the reads, scans and opens run on.
    public var records: Int
    public var valueSize: Int
    /// Keys are inserted in a seeded random order (not appended), for every system alike.
    public var insertOrder = "random"
    public var pointReads: Int
    public var latencySamples: Int
    public var scanPasses: Int
    /// One-record commits per repetition at `full` durability, and at `none`.
    public var smallTxnsFull: Int
    public var smallTxnsNone: Int
    public var concurrentSeconds: Double
    /// `small-txns.concurrent`: the writer thread counts, and seconds per run (nil in results
    /// written before it existed: [1, 4, 16] and `concurrentSeconds`).
    public var writerThreadCounts: [Int]?
    public var writerSeconds: Double?
    public var readerThreads: Int
    public var churnRecords: Int
    public var churnRounds: Int
    public var opens: Int
    /// Run each bulk insert in its own child process so its peak memory is its own.
    public var memoryInChild: Bool
    /// "engine" (nil), "objects" or "all".
    public var suite: String?
    /// The objects suite's data set and query count (nil: the profile's).
    public var objectPersons: Int?
    public var objectDogs: Int?
    public var objectQueries: Int?

    public static func quick(seed: UInt64) -> BenchParameters {
        var p = BenchParameters(
            profile: "quick", seed: seed, repetitions: 5, durability: .full, systems: SystemName.allCases,
            records: 200_000, valueSize: 100, pointReads: 300_000, latencySamples: 20_000, scanPasses: 5,
            smallTxnsFull: 500, smallTxnsNone: 5_000, concurrentSeconds: 1.0, readerThreads: 1,
            churnRecords: 20_000, churnRounds: 8, opens: 10, memoryInChild: true,
            objectPersons: 20_000, objectDogs: 10_000, objectQueries: 2_000)
        p.writerThreadCounts = [1, 4, 16]
        p.writerSeconds = 0.4
        return p
    }

    public static func standard(seed: UInt64) -> BenchParameters {
        var p = BenchParameters(
            profile: "default", seed: seed, repetitions: 5, durability: .full, systems: SystemName.allCases,
            records: 1_000_000, valueSize: 100, pointReads: 1_000_000, latencySamples: 100_000, scanPasses: 3,
            smallTxnsFull: 2_000, smallTxnsNone: 20_000, concurrentSeconds: 3.0, readerThreads: 1,
            churnRecords: 100_000, churnRounds: 10, opens: 20, memoryInChild: true,
            objectPersons: 200_000, objectDogs: 100_000, objectQueries: 10_000)
        p.writerThreadCounts = [1, 4, 16]
        p.writerSeconds = 2.0
        return p
    }

    public static func smoke(seed: UInt64) -> BenchParameters {
        var p = BenchParameters(
            profile: "smoke", seed: seed, repetitions: 2, durability: .none, systems: SystemName.allCases,
            records: 2_000, valueSize: 32, pointReads: 2_000, latencySamples: 200, scanPasses: 2,
            smallTxnsFull: 5, smallTxnsNone: 20, concurrentSeconds: 0.1, readerThreads: 1,
            churnRecords: 500, churnRounds: 2, opens: 2, memoryInChild: false,
            objectPersons: 300, objectDogs: 150, objectQueries: 100)
        p.writerThreadCounts = [1, 4]
        p.writerSeconds = 0.05
        return p
    }
}
