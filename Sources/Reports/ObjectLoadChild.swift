import Engine
import Foundation
import TortureSchema

/// The objects suite's data set loaded into one system in a process of its own, so the peak
/// memory it reports (`ResidentMemory`) is that system's alone: Fief and SQLite measured in one
/// process would share one high-water mark.
public enum ObjectLoadChild {
    public struct Request: Codable, Sendable {
        public var system: SystemName
        public var directory: String
        public var persons: Int
        public var dogs: Int
        public var durability: Durability
        public var seed: UInt64
    }

    public struct Report: Codable, Sendable {
        public var objectsPerSecond: Double
        /// From once the data set is built (runtime and the caller's data) to after the load's
        /// one write committed.
        public var memory: PeakMemory
        public var fileBytes: UInt64
    }

    /// Runs the request here (in the child, or in-process in a test). What the load builds on
    /// the way counts against the system: for Fief, the object graph a Realm-style caller makes
    /// before `add`; for SQLite, the statements bound straight from the data set.
    public static func run(_ r: Request) throws -> Report {
        let data = ObjectDataSet(persons: r.persons, dogs: r.dogs, seed: r.seed)
        let ((seconds, fileBytes), memory) = try PeakMemory.of {
            let sys = try ObjectRunState.open(r.system, r.directory, durability: r.durability)
            defer { sys.close() }
            return (try BenchClock.seconds { try sys.load(data) }, sys.fileBytes())
        }
        return Report(objectsPerSecond: Double(r.persons + r.dogs) / seconds, memory: memory, fileBytes: fileBytes)
    }

    /// Runs the request in `executable bench object-child --request JSON` and reads its report.
    static func spawn(_ r: Request, executable: String) throws -> Report {
        try BenchChild.run(r, executable: executable, what: "\(r.system.rawValue) object load")
    }
}

extension ObjectLoadChild.Request: ProcessRequest {
    public static let subcommand = ["bench", "object-child"]
}
