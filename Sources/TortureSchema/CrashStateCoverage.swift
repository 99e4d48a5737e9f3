/// How much of one commit's crash-state space the `crash-states` scenario explored. At the
/// sector level every subset of its unsynced sectors (and, when the file grew, of its old or
/// new size) is a state a cut may leave, `2^choices` in all; at the operation level (what is
/// explored when `operations` is set) a state is a subset of the unsynced write operations
/// with at most one torn at a sector boundary, `operationStatesPossible` in all.
public struct CrashStateCoverage: Codable, Sendable, Equatable {
    public var cycle: Int
    public var commit: UInt64
    public var crashPoint: String
    public var unsyncedSectors: Int
    /// Whether the file grew in the commit, so a cut may also leave its old size.
    public var sizeChoice: Bool
    public var choices: Int { unsyncedSectors + (sizeChoice ? 1 : 0) }
    public var statesExplored: Int
    /// All of them (below the profile's bound), or a seeded sample.
    public var exhaustive: Bool
    /// Unsynced operations (writes, resizes, name changes) on the files the check reads.
    public var operations: Int?
    /// Operation-level states: subsets, prefixes of name changes, one write torn.
    public var operationStatesPossible: Double?
    /// `2^choices`, or nil past what a Double holds exactly.
    public var statesPossible: Double? { choices < 53 ? Double(UInt64(1) << UInt64(choices)) : nil }

    public init(
        cycle: Int, commit: UInt64, crashPoint: String, unsyncedSectors: Int, sizeChoice: Bool, statesExplored: Int,
        exhaustive: Bool, operations: Int? = nil, operationStatesPossible: Double? = nil
    ) {
        self.operations = operations
        self.operationStatesPossible = operationStatesPossible
        self.cycle = cycle
        self.commit = commit
        self.crashPoint = crashPoint
        self.unsyncedSectors = unsyncedSectors
        self.sizeChoice = sizeChoice
        self.statesExplored = statesExplored
        self.exhaustive = exhaustive
    }

    // Decoding is synthesised; encoding is hand-written for compatibility: `choices` and
    // `statesPossible` are written for readers that do not recompute them.
    enum DerivedKeys: String, CodingKey { case choices, statesPossible }

    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(cycle, forKey: .cycle)
        try c.encode(commit, forKey: .commit)
        try c.encode(crashPoint, forKey: .crashPoint)
        try c.encode(unsyncedSectors, forKey: .unsyncedSectors)
        try c.encode(sizeChoice, forKey: .sizeChoice)
        try c.encode(statesExplored, forKey: .statesExplored)
        try c.encode(exhaustive, forKey: .exhaustive)
        try c.encodeIfPresent(operations, forKey: .operations)
        try c.encodeIfPresent(operationStatesPossible, forKey: .operationStatesPossible)
        var derived = e.container(keyedBy: DerivedKeys.self)
        try derived.encode(choices, forKey: .choices)
        try derived.encodeIfPresent(statesPossible, forKey: .statesPossible)
    }
}

extension [CrashStateCoverage] {
    /// The share (0...1) of crashed commits explored exhaustively at the operation level, or
    /// nil when none was explored at that level.
    public var operationLevelExhaustiveShare: Double? {
        let level = filter { $0.operations != nil }
        guard !level.isEmpty else { return nil }
        return Double(level.filter(\.exhaustive).count) / Double(level.count)
    }
}
