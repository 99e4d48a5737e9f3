/// What the reports need from a `fief torture run` results.json, decoded here with its own
/// types so Reports does not depend on Torture. Unknown fields are ignored; missing optional
/// ones default, so older and newer files still read.
public struct TortureSummary: Decodable, Equatable, Sendable {
    public struct Mode: Decodable, Equatable, Sendable {
        public var name: String
        public var cycles: Int
        public var violations: Int
        public var passed: Bool { violations == 0 }

        enum CodingKeys: String, CodingKey { case name, cycles, violations }
        public init(name: String, cycles: Int, violations: Int) {
            self.name = name; self.cycles = cycles; self.violations = violations
        }
        public init(from d: Decoder) throws {
            let c = try d.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            cycles = try c.decodeIfPresent(Int.self, forKey: .cycles) ?? 0
            violations = try c.decodeIfPresent(Int.self, forKey: .violations) ?? 0
        }
    }

    public struct Scenario: Decodable, Equatable, Sendable {
        public var name: String
        public var cycles: Int
        public var violations: Int
        public var passed: Bool
        public var durationSeconds: Double
        public var modes: [Mode]
        /// Lost acknowledged commits, and states no commit made or failed integrity checks.
        public var durabilityViolations = 0
        public var atomicityIntegrityViolations = 0
        /// `clean`, `durability loss`, `atomicity/integrity violation`, … (older files: from `passed`).
        public var verdict = ""
        /// The crash-states scenario's coverage, one entry per commit.
        public var crashStates: [CrashStates] = []

        enum CodingKeys: String, CodingKey {
            case name, cycles, violations, passed, durationSeconds, modes, durabilityViolations,
                atomicityIntegrityViolations, verdict, crashStates
        }
        public init(
            name: String, cycles: Int, violations: Int, passed: Bool, durationSeconds: Double = 0, modes: [Mode] = []
        ) {
            self.name = name; self.cycles = cycles; self.violations = violations; self.passed = passed;
            self.durationSeconds = durationSeconds; self.modes = modes
        }
        public init(from d: Decoder) throws {
            let c = try d.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            cycles = try c.decodeIfPresent(Int.self, forKey: .cycles) ?? 0
            violations = try c.decodeIfPresent(Int.self, forKey: .violations) ?? 0
            passed = try c.decodeIfPresent(Bool.self, forKey: .passed) ?? (violations == 0)
            durationSeconds = try c.decodeIfPresent(Double.self, forKey: .durationSeconds) ?? 0
            modes = try c.decodeIfPresent([Mode].self, forKey: .modes) ?? []
            durabilityViolations = try c.decodeIfPresent(Int.self, forKey: .durabilityViolations) ?? 0
            atomicityIntegrityViolations = try c.decodeIfPresent(Int.self, forKey: .atomicityIntegrityViolations) ?? 0
            verdict = try c.decodeIfPresent(String.self, forKey: .verdict) ?? (passed ? "clean" : "violations")
            crashStates = try c.decodeIfPresent([CrashStates].self, forKey: .crashStates) ?? []
        }
    }

    /// One commit's crash states: how many a cut may leave (`2^choices`), how many were checked.
    public struct CrashStates: Decodable, Equatable, Sendable {
        public var cycle: Int
        public var commit: UInt64
        public var crashPoint: String
        public var unsyncedSectors: Int
        public var choices: Int
        public var statesExplored: Int
        public var exhaustive: Bool
    }

    /// A row of `fief torture detect`'s detection.json: a broken variant and what caught it.
    public struct DetectionRow: Decodable, Equatable, Sendable {
        public var variant: String
        public var scenario: String
        public var caught: Bool
        public var cyclesToDetection: Int?
        public var cyclesRun: Int
        public var firstViolation: String?
        public var shrunk: Shrunk?

        /// The first failing cycle before and after `fief torture shrink`.
        public struct Shrunk: Decodable, Equatable, Sendable {
            public struct Size: Decodable, Equatable, Sendable {
                public var deaths: Int
                public var threads: Int
                public var commits: Int
                public var lostSectors: Int?
            }
            public var before: Size
            public var after: Size
            public var seconds: Double
        }
    }

    /// The store a run drove (older files: Fief's engine).
    public struct Target: Decodable, Equatable, Sendable {
        public var spec: String
        public var kind: String
        public var configuration: String
        public init(spec: String = "fief", kind: String = "fief", configuration: String = "") {
            self.spec = spec; self.kind = kind; self.configuration = configuration
        }
    }

    /// The growth scenario's file size after each commit, and where the pin was held.
    public struct Growth: Decodable, Equatable, Sendable {
        public var sizes: [UInt64]
        public var liveBytes: [UInt64]
        public var pinnedAtCommit: Int
        public var releasedAtCommit: Int
        public var boundBytes: UInt64
        public var compactedSize: UInt64

        enum CodingKeys: String, CodingKey {
            case sizes, liveBytes, pinnedAtCommit, releasedAtCommit, boundBytes, compactedSize
        }
        public init(
            sizes: [UInt64], liveBytes: [UInt64] = [], pinnedAtCommit: Int = 0, releasedAtCommit: Int = 0,
            boundBytes: UInt64 = 0, compactedSize: UInt64 = 0
        ) {
            self.sizes = sizes; self.liveBytes = liveBytes; self.pinnedAtCommit = pinnedAtCommit;
            self.releasedAtCommit = releasedAtCommit
            self.boundBytes = boundBytes; self.compactedSize = compactedSize
        }
        public init(from d: Decoder) throws {
            let c = try d.container(keyedBy: CodingKeys.self)
            sizes = try c.decodeIfPresent([UInt64].self, forKey: .sizes) ?? []
            liveBytes = try c.decodeIfPresent([UInt64].self, forKey: .liveBytes) ?? []
            pinnedAtCommit = try c.decodeIfPresent(Int.self, forKey: .pinnedAtCommit) ?? 0
            releasedAtCommit = try c.decodeIfPresent(Int.self, forKey: .releasedAtCommit) ?? 0
            boundBytes = try c.decodeIfPresent(UInt64.self, forKey: .boundBytes) ?? 0
            compactedSize = try c.decodeIfPresent(UInt64.self, forKey: .compactedSize) ?? 0
        }
    }

    public var seed: UInt64
    public var profile: String
    public var shard: String
    public var started: String
    public var durationSeconds: Double
    public var scenarios: [Scenario]
    public var growth: Growth?
    public var target = Target()
    /// The FaultFS persistence model (older files: posix).
    public var fsModel = "posix"
    /// The run encrypted every database (older files: plain).
    public var encrypted = false
    public var passed: Bool { scenarios.allSatisfy(\.passed) }

    enum CodingKeys: String, CodingKey {
        case tool, seed, profile, shard, started, durationSeconds, scenarios, growth, target, fsModel, encrypted
    }

    public init(
        seed: UInt64, profile: String = "quick", shard: String = "1/1", started: String = "",
        durationSeconds: Double = 0, scenarios: [Scenario], growth: Growth? = nil
    ) {
        self.seed = seed; self.profile = profile; self.shard = shard; self.started = started
        self.durationSeconds = durationSeconds; self.scenarios = scenarios; self.growth = growth
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
        scenarios = try c.decode([Scenario].self, forKey: .scenarios)
        growth = try c.decodeIfPresent(Growth.self, forKey: .growth)
        target = try c.decodeIfPresent(Target.self, forKey: .target) ?? Target()
        fsModel = try c.decodeIfPresent(String.self, forKey: .fsModel) ?? "posix"
        encrypted = try c.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false
    }

    /// The pass/fail matrix: one row per scenario, one cell per mode (or the scenario itself).
    public var matrix: [(scenario: String, cells: [Mode])] {
        scenarios.map { s in
            (
                s.name,
                s.modes.isEmpty
                    ? [Mode(name: s.name, cycles: s.cycles, violations: s.passed ? 0 : max(1, s.violations))] : s.modes
            )
        }
    }
}

extension TortureSummary.Scenario {
    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.cycles == b.cycles && a.violations == b.violations && a.modes == b.modes
    }
}
