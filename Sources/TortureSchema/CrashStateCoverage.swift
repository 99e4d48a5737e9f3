/// How much of one commit's crash-state space the `crash-states` scenario explored. At the
/// sector level every subset of its unsynced sectors (and, when the file grew, of its old or
/// new size) is a state a cut may leave, `2^choices` in all; at the operation level (what is
/// explored when `operations` is set) a state is a subset of the unsynced write operations
/// with at most one torn at a sector boundary, `operationStatesPossible` in all.
public struct CrashStateCoverage: WritesDerivedKeys, Sendable, Equatable {
    public struct Recorded: Codable, Sendable, Equatable {
        public var cycle: Int
        public var commit: UInt64
        public var crashPoint: String
        public var unsyncedSectors: Int
        /// Whether the file grew in the commit, so a cut may also leave its old size.
        public var sizeChoice: Bool
        public var statesExplored: Int
        /// All of them (below the profile's bound), or a seeded sample.
        public var exhaustive: Bool
        /// Unsynced operations (writes, resizes, name changes) on the files the check reads.
        public var operations: Int?
        /// Operation-level states: subsets, prefixes of name changes, one write torn.
        public var operationStatesPossible: Double?
    }

    public var recorded: Recorded
    public init(recorded: Recorded) { self.recorded = recorded }

    public init(
        cycle: Int, commit: UInt64, crashPoint: String, unsyncedSectors: Int, sizeChoice: Bool, statesExplored: Int,
        exhaustive: Bool, operations: Int? = nil, operationStatesPossible: Double? = nil
    ) {
        recorded = Recorded(
            cycle: cycle, commit: commit, crashPoint: crashPoint, unsyncedSectors: unsyncedSectors,
            sizeChoice: sizeChoice, statesExplored: statesExplored, exhaustive: exhaustive, operations: operations,
            operationStatesPossible: operationStatesPossible)
    }

    public var choices: Int { recorded.unsyncedSectors + (recorded.sizeChoice ? 1 : 0) }
    /// `2^choices`, or nil past what a Double holds exactly.
    public var statesPossible: Double? { choices < 53 ? Double(UInt64(1) << UInt64(choices)) : nil }

    public enum DerivedKeys: String, CodingKey { case choices, statesPossible }

    public func encodeDerived(into c: inout KeyedEncodingContainer<DerivedKeys>) throws {
        try c.encode(choices, forKey: .choices)
        try c.encodeIfPresent(statesPossible, forKey: .statesPossible)
    }
}

extension [CrashStateCoverage] {
    /// The share (0...1) of crashed commits explored exhaustively at the operation level, or
    /// nil when none was explored at that level.
    public var operationLevelExhaustiveShare: Double? {
        let level = filter { $0.recorded.operations != nil }
        guard !level.isEmpty else { return nil }
        return Double(level.filter(\.recorded.exhaustive).count) / Double(level.count)
    }
}
