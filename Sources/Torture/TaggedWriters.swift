import Foundation

/// The writer processes of one cycle on one Fief file: each is started from `cycle` and named
/// by what it is for ("warm", "fault", "resume"), its output in `dir/writer-<tag>.out`.
struct TaggedWriters {
    let cycle: CrashCycle
    let dir: String
    let environment: [String: String]

    func start(upTo n: UInt64, _ tag: String) throws -> ChildProcess {
        try ChildProcess(
            cycle.writer(maxCommit: n), environment: environment, output: outputPath(tag), label: "writer")
    }

    func outputPath(_ tag: String) -> String { "\(dir)/writer-\(tag).out" }

    /// What the writer printed, trimmed.
    func output(_ tag: String) -> String {
        ((try? String(contentsOfFile: outputPath(tag), encoding: .utf8)) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }
}
