/// A row of `fief torture detect`'s detection.json: a broken engine variant, the scenario meant
/// to catch it, and how many cycles that took.
public struct DetectionRow: Codable, Sendable {
    public var variant: String
    public var scenario: String
    public var caught: Bool
    /// The 1-based number of the first cycle that found a violation.
    public var cyclesToDetection: Int?
    public var cyclesRun: Int
    public var firstViolation: Violation?
    /// The first failing cycle shrunk (`fief torture shrink`), for scenarios it takes.
    public var shrunk: Shrunk? = nil
    /// Why the first failing cycle was not shrunk, when shrink was tried and gave up.
    public var notShrunk: String? = nil

    public init(
        variant: String, scenario: String, caught: Bool, cyclesToDetection: Int?, cyclesRun: Int,
        firstViolation: Violation?, shrunk: Shrunk? = nil, notShrunk: String? = nil
    ) {
        self.variant = variant
        self.scenario = scenario
        self.caught = caught
        self.cyclesToDetection = cyclesToDetection
        self.cyclesRun = cyclesRun
        self.firstViolation = firstViolation
        self.shrunk = shrunk
        self.notShrunk = notShrunk
    }

    /// A caught variant's first failing cycle, before and after shrinking.
    public struct Shrunk: Codable, Sendable {
        public var before: ReplaySize
        public var after: ReplaySize
        public var seconds: Double
        /// The shrunk case passes on the correct engine (it must).
        public var passesOnCorrectEngine: Bool
        /// The replay file, under the detection folder.
        public var replay: String

        public init(before: ReplaySize, after: ReplaySize, seconds: Double, passesOnCorrectEngine: Bool, replay: String)
        {
            self.before = before
            self.after = after
            self.seconds = seconds
            self.passesOnCorrectEngine = passesOnCorrectEngine
            self.replay = replay
        }
    }
}
