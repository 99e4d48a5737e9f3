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

    public static func quick(seed: UInt64) -> BenchParameters { preset(.quick, seed: seed) }
    public static func standard(seed: UInt64) -> BenchParameters { preset(.standard, seed: seed) }
    public static func smoke(seed: UInt64) -> BenchParameters { preset(.smoke, seed: seed) }

    private enum Preset: String {
        case quick, standard = "default", smoke
    }

    /// The profiles side by side, a parameter a line, as quick, default, smoke: what one
    /// profile sets another can be read against, and a new parameter is set for all three.
    private static func preset(_ preset: Preset, seed: UInt64) -> BenchParameters {
        func pick<T>(_ quick: T, _ standard: T, _ smoke: T) -> T {
            switch preset {
            case .quick: return quick
            case .standard: return standard
            case .smoke: return smoke
            }
        }
        var p = BenchParameters(
            profile: preset.rawValue, seed: seed,
            repetitions: pick(5, 5, 2),
            durability: pick(.full, .full, .none),
            systems: SystemName.allCases,
            records: pick(200_000, 1_000_000, 2_000),
            valueSize: pick(100, 100, 32),
            pointReads: pick(300_000, 1_000_000, 2_000),
            latencySamples: pick(20_000, 100_000, 200),
            scanPasses: pick(5, 3, 2),
            smallTxnsFull: pick(500, 2_000, 5),
            smallTxnsNone: pick(5_000, 20_000, 20),
            concurrentSeconds: pick(1.0, 3.0, 0.1),
            readerThreads: 1,
            churnRecords: pick(20_000, 100_000, 500),
            churnRounds: pick(8, 10, 2),
            opens: pick(10, 20, 2),
            memoryInChild: pick(true, true, false),
            objectPersons: pick(20_000, 200_000, 300),
            objectDogs: pick(10_000, 100_000, 150),
            objectQueries: pick(2_000, 10_000, 100))
        p.writerThreadCounts = pick([1, 4, 16], [1, 4, 16], [1, 4])
        p.writerSeconds = pick(0.4, 2.0, 0.05)
        return p
    }
}
