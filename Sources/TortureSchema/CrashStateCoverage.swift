/// How much of one commit's crash-state space the `crash-states` scenario explored: every
/// subset of its unsynced sectors (and, when the file grew, of its old or new size) is a
/// state a cut may leave; `2^choices` in all.
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
    /// `2^choices`, or nil past what a Double holds exactly.
    public var statesPossible: Double? { choices < 53 ? Double(UInt64(1) << UInt64(choices)) : nil }

    public init(
        cycle: Int, commit: UInt64, crashPoint: String, unsyncedSectors: Int, sizeChoice: Bool, statesExplored: Int,
        exhaustive: Bool
    ) {
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
        var derived = e.container(keyedBy: DerivedKeys.self)
        try derived.encode(choices, forKey: .choices)
        try derived.encodeIfPresent(statesPossible, forKey: .statesPossible)
    }
}
