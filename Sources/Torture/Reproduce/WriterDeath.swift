import Engine

/// How one writer process of a crash cycle dies: the `nth` time it reaches a named crash
/// point (deterministic), or by SIGKILL after a delay (timing-dependent: a replay of it may
/// not die at the same place). The crash-points scenario draws these from a cycle's seed; a
/// replay file lists them.
public struct WriterDeath: Codable, Sendable, Equatable, CustomStringConvertible {
    /// A `CrashPoint` raw value; nil for a timed kill.
    public var crashPoint: String?
    public var nth: Int?
    public var killAfterMicros: UInt32?
    public var threads: Int

    public static func at(_ point: CrashPoint, nth: Int) -> WriterDeath {
        WriterDeath(crashPoint: point.rawValue, nth: nth, killAfterMicros: nil, threads: 1)
    }

    public static func kill(afterMicros delay: UInt32, threads: Int) -> WriterDeath {
        WriterDeath(crashPoint: nil, nth: nil, killAfterMicros: delay, threads: threads)
    }

    public var point: CrashPoint? { crashPoint.flatMap(CrashPoint.init(rawValue:)) }
    /// Whether a rerun dies at the same place: a crash point with one writer thread.
    public var isDeterministic: Bool { point != nil && threads == 1 }

    public var description: String {
        if let p = crashPoint { return "crash at \(p):\(nth ?? 1)" + (threads > 1 ? " (\(threads) threads)" : "") }
        return "SIGKILL after \((killAfterMicros ?? 0) / 1000) ms (\(threads) threads)"
    }

    /// Kills writers on one file, one after another, each checked as it died: the events
    /// of a crash-points cycle, or of a replay.
    /// `batch`: the writers commit through `Database.batch` (the batch scenario's).
    public static func run(
        _ deaths: [WriterDeath], dir: String, workload: CommitWorkload, environment: [String: String],
        batch: Bool = false
    ) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        for (e, death) in deaths.enumerated() {
            var cycle = CrashCycle(
                dbPath: dir + "/db.fief", oraclePath: dir + "/oracle.log", workload: workload,
                threads: death.threads, logPath: dir + "/writer-\(e).out")
            cycle.environment = environment
            cycle.batch = batch
            if e == 0 { try cycle.writeSchedule() }
            if let raw = death.crashPoint {
                guard let point = CrashPoint(rawValue: raw) else {
                    throw TortureError.invalid("unknown crash point '\(raw)'")
                }
                let o = try cycle.crash(at: point, nth: death.nth ?? 1)
                outcome.events.append(CycleEvent(point.rawValue, o.violations, o.description))
                outcome.crashPoints.insert(point.rawValue)
            } else {
                let o = try cycle.kill(afterMicros: death.killAfterMicros ?? 0)
                outcome.events.append(
                    CycleEvent("random-kill", o.violations, o.description + " (\(death.threads) threads)"))
                outcome.crashPoints.insert("random-kill")
            }
        }
        return outcome
    }
}
