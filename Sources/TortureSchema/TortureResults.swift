/// Everything one `fief torture run` found: the results.json that Torture writes and Reports
/// reads.
public struct TortureResults: WritesDerivedKeys, Sendable {
    /// What the run recorded; older files lack the fields added since and read with the
    /// defaults below.
    public struct Recorded: Codable, Sendable {
        @Defaulted<Tool> public var tool: String
        public var seed: UInt64
        @Defaulted<Empty<String>> public var profile: String
        @Defaulted<OneShard> public var shard: String
        @Defaulted<Empty<String>> public var started: String
        @Defaulted<Zero<Double>> public var durationSeconds: Double
        /// Files from before the field was written were all format 1.
        @Defaulted<FormatOne> public var engineFormatVersion: Int
        public var scenarios: [ScenarioResult] = []
        public var growth: GrowthCurve?
        /// Older files: Fief's own engine.
        @Defaulted<TargetInfo.Fief> public var target: TargetInfo
        /// The FaultFS persistence model of the run's mounts (older files: posix).
        @Defaulted<Posix> public var fsModel: String
        /// Every database was encrypted (`--encrypt`, format 3).
        @Defaulted<False> public var encrypted: Bool

        public enum Tool: DefaultValue { public static var value: String { "fief torture" } }
        public enum OneShard: DefaultValue { public static var value: String { "1/1" } }
        public enum FormatOne: DefaultValue { public static var value: Int { 1 } }
        public enum Posix: DefaultValue { public static var value: String { "posix" } }
    }

    public var recorded: Recorded
    public var passed: Bool { recorded.scenarios.allSatisfy(\.passed) }

    /// The pass/fail matrix: one row per scenario, one cell per mode (or the scenario itself).
    public var matrix: [(scenario: String, cells: [ModeResult])] { recorded.scenarios.map { ($0.name, $0.cells) } }

    public init(recorded: Recorded) { self.recorded = recorded }

    public init(
        seed: UInt64, profile: String, shard: String, started: String, engineFormatVersion: Int, target: TargetInfo
    ) {
        recorded = Recorded(seed: seed)
        recorded.profile = profile
        recorded.shard = shard
        recorded.started = started
        recorded.engineFormatVersion = engineFormatVersion
        recorded.target = target
    }

    /// A file another tool wrote is refused.
    public init(from decoder: Decoder) throws {
        recorded = try Recorded(from: decoder)
        guard recorded.tool == Recorded.Tool.value else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath + [Recorded.toolKey],
                    debugDescription: "written by '\(recorded.tool)', not fief torture"))
        }
    }

    public enum DerivedKeys: String, CodingKey { case passed }

    public func encodeDerived(into c: inout KeyedEncodingContainer<DerivedKeys>) throws {
        try c.encode(passed, forKey: .passed)
    }
}

extension TortureResults.Recorded {
    static var toolKey: any CodingKey { CodingKeys.tool }
}

/// The target a run drove, as results.json carries it: `spec` parses back with `--target`.
public struct TargetInfo: Codable, Sendable, Equatable {
    public var spec: String
    public var kind: String
    public var configuration: String

    public init(spec: String, kind: String, configuration: String) {
        self.spec = spec
        self.kind = kind
        self.configuration = configuration
    }

    /// Fief's own engine: what runs drove before results named their target.
    public static let fief = TargetInfo(spec: "fief", kind: "fief", configuration: "")

    public enum Fief: DefaultValue { public static var value: TargetInfo { .fief } }
}
