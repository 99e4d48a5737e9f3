/// Everything one `fief torture run` found: the results.json that Torture writes and Reports
/// reads. Older files lack the fields added since; they read with the defaults below.
public struct TortureResults: Codable, Sendable {
    public var tool = "fief torture"
    public var seed: UInt64
    public var profile: String
    public var shard: String
    public var started: String
    public var durationSeconds: Double = 0
    public var engineFormatVersion: Int
    public var scenarios: [ScenarioResult] = []
    public var growth: GrowthCurve?
    public var target: TargetInfo
    /// The FaultFS persistence model of the run's mounts (older files: posix).
    public var fsModel = "posix"
    /// Every database was encrypted (`--encrypt`, format 3).
    public var encrypted = false
    public var passed: Bool { scenarios.allSatisfy(\.passed) }

    /// The pass/fail matrix: one row per scenario, one cell per mode (or the scenario itself).
    public var matrix: [(scenario: String, cells: [ModeResult])] { scenarios.map { ($0.name, $0.cells) } }

    public init(
        seed: UInt64, profile: String, shard: String, started: String, engineFormatVersion: Int, target: TargetInfo
    ) {
        self.seed = seed
        self.profile = profile
        self.shard = shard
        self.started = started
        self.engineFormatVersion = engineFormatVersion
        self.target = target
    }

    // Hand-written for compatibility: `passed` is written for readers that do not recompute it,
    // files of older runs lack the later fields, and a file another tool wrote is refused.
    enum CodingKeys: String, CodingKey {
        case tool, seed, profile, shard, started, durationSeconds, engineFormatVersion, scenarios, growth, passed,
            target, fsModel, encrypted
    }

    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        if let tool = try c.decodeIfPresent(String.self, forKey: .tool), tool != "fief torture" {
            throw DecodingError.dataCorruptedError(
                forKey: .tool, in: c, debugDescription: "written by '\(tool)', not fief torture")
        }
        seed = try c.decode(UInt64.self, forKey: .seed)
        profile = try c.decodeIfPresent(String.self, forKey: .profile) ?? ""
        shard = try c.decodeIfPresent(String.self, forKey: .shard) ?? "1/1"
        started = try c.decodeIfPresent(String.self, forKey: .started) ?? ""
        durationSeconds = try c.decodeIfPresent(Double.self, forKey: .durationSeconds) ?? 0
        // Files from before the field was written were all format 1.
        engineFormatVersion = try c.decodeIfPresent(Int.self, forKey: .engineFormatVersion) ?? 1
        scenarios = try c.decode([ScenarioResult].self, forKey: .scenarios)
        growth = try c.decodeIfPresent(GrowthCurve.self, forKey: .growth)
        target = try c.decodeIfPresent(TargetInfo.self, forKey: .target) ?? .fief
        fsModel = try c.decodeIfPresent(String.self, forKey: .fsModel) ?? "posix"
        encrypted = try c.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false
    }

    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(tool, forKey: .tool)
        try c.encode(seed, forKey: .seed)
        try c.encode(profile, forKey: .profile)
        try c.encode(shard, forKey: .shard)
        try c.encode(started, forKey: .started)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(engineFormatVersion, forKey: .engineFormatVersion)
        try c.encode(scenarios, forKey: .scenarios)
        try c.encodeIfPresent(growth, forKey: .growth)
        try c.encode(target, forKey: .target)
        try c.encode(fsModel, forKey: .fsModel)
        try c.encode(encrypted, forKey: .encrypted)
        try c.encode(passed, forKey: .passed)
    }
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
}
