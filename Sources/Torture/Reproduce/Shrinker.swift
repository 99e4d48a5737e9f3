import Engine
import Foundation

/// Makes a failing case smaller while it keeps failing with the same kind of violation, every
/// candidate run for real (writer processes killed at crash points, the recovery check): timed
/// kills become crash points, writers and threads go, each writer dies at the earliest pass
/// of its crash point that still fails, then the commits are spelled out and cut down (delta
/// debugging over their puts and deletes, bank transfers off, values made short). Stops at the
/// time budget with the smallest case so far.
public struct Shrinker {
    public let budgetSeconds: Double
    public let workDir: String
    let say: (String) -> Void

    public init(budgetSeconds: Double, workDir: String, progress: @escaping (String) -> Void = { _ in }) {
        self.budgetSeconds = budgetSeconds
        self.workDir = workDir
        say = progress
    }

    public struct Result: Sendable {
        public var replay: TortureReplay
        public var before: ReplaySize
        public var after: ReplaySize
        public var candidates: Int
        public var seconds: Double
        /// The shrunk case run on the correct engine: nil when it ran no broken variant.
        public var passesOnCorrectEngine: Bool?
        public var budgetRanOut: Bool
    }

    final class Search {
        var best: TortureReplay
        var bestAttempted: UInt64
        var candidates = 0
        let deadline: Date
        init(_ r: TortureReplay, attempted: UInt64, deadline: Date) {
            best = r
            bestAttempted = attempted
            self.deadline = deadline
        }
        var outOfTime: Bool { Date() >= deadline }
    }

    public func shrink(_ original: TortureReplay) throws -> Result {
        let t0 = Date()
        let dir = workDir + "/candidate"
        // The case must fail first, and say how: its first violation's kind is what every
        // smaller candidate must keep.
        var first = try original.run(in: dir)
        var tries = 1
        while !first.reproduces && tries < 3 {
            first = try original.run(in: dir)
            tries += 1
        }
        guard first.reproduces, let violation = first.violations.first(where: { original.expected == nil || ViolationKind.of($0) == original.expected!.kind }) else {
            throw TortureError.invalid("the case did not fail in \(tries) runs (a timed kill may not die at the same place twice); nothing to shrink")
        }
        var start = original
        start.expected = original.expected ?? .init(kind: ViolationKind.of(violation), violation: violation)
        let before = start.size(commitsAttempted: first.commitsAttempted)
        say("shrink: the case fails (\(start.expected!.kind.rawValue): \(violation.prefix(160))); \(before)")
        let search = Search(start, attempted: first.commitsAttempted, deadline: t0.addingTimeInterval(budgetSeconds))

        /// Keeps `candidate` when it still fails the same way.
        func attempt(_ candidate: TortureReplay, _ what: String) -> Bool {
            guard !search.outOfTime, candidate != search.best else { return false }
            search.candidates += 1
            guard let r = try? candidate.run(in: dir), r.reproduces else { return false }
            search.best = candidate
            search.best.expected = TortureReplay.Expected(kind: start.expected!.kind, violation: r.violations.first { ViolationKind.of($0) == start.expected!.kind } ?? violation)
            search.bestAttempted = r.commitsAttempted
            say("shrink: \(what): \(search.best.size(commitsAttempted: r.commitsAttempted))")
            return true
        }

        determinize(search, attempt)
        dropDeaths(search, attempt)
        earliestPasses(search, attempt)
        cutCommits(search, attempt)

        var shrunk = search.best
        let after = shrunk.size(commitsAttempted: search.bestAttempted)
        let seconds = Date().timeIntervalSince(t0)
        shrunk.origin = TortureReplay.Origin(runSeed: original.origin?.runSeed, cycle: original.origin?.cycle, before: before,
                                             shrinkSeconds: (seconds * 10).rounded() / 10, candidatesRun: search.candidates)
        var correct: Bool?
        if shrunk.broken != nil {
            correct = try shrunk.run(in: dir, broken: .some(nil)).passed
        }
        try? FileManager.default.removeItem(atPath: dir)
        return Result(replay: shrunk, before: before, after: after, candidates: search.candidates, seconds: seconds,
                      passesOnCorrectEngine: correct, budgetRanOut: search.outOfTime)
    }

    /// Timed kills become crash points (the first point and pass that fails the same way),
    /// and several threads one.
    func determinize(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        for i in s.best.deaths.indices where s.best.deaths[i].point == nil {
            search: for nth in 1...3 {
                for point in CrashPoint.commitPoints {
                    var c = s.best
                    c.deaths[i] = .at(point, nth: nth)
                    if attempt(c, "writer \(i + 1) dies at \(point.rawValue):\(nth) instead of a timed kill") { break search }
                }
            }
        }
        for i in s.best.deaths.indices where s.best.deaths[i].threads > 1 {
            var c = s.best
            c.deaths[i].threads = 1
            _ = attempt(c, "writer \(i + 1) on one thread")
        }
    }

    /// Fewer writers: each one left out in turn, the last first (the failure is usually there).
    func dropDeaths(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        var i = 0
        while i < s.best.deaths.count && s.best.deaths.count > 1 {
            var c = s.best
            c.deaths.remove(at: i)
            if !attempt(c, "without writer \(i + 1)") { i += 1 }
        }
    }

    /// Each writer dies at the earliest pass of its crash point that still fails.
    func earliestPasses(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        for i in s.best.deaths.indices {
            guard let point = s.best.deaths[i].crashPoint, let nth = s.best.deaths[i].nth, nth > 1 else { continue }
            for n in 1..<nth {
                var c = s.best
                c.deaths[i].nth = n
                if attempt(c, "writer \(i + 1) dies at \(point):\(n)") { break }
            }
        }
    }

    /// The commits spelled out, then cut: every put and delete of a commit dropped at once,
    /// else halves, quarters, ... (delta debugging), then the bank transfers, then long values.
    func cutCommits(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        let n = Int(s.bestAttempted)
        guard n > 0 else { return }
        if s.best.commits == nil || s.best.commits!.count > n {
            var c = s.best
            c.commits = (1...n).map { c.workload.planned(commit: UInt64($0)) }
            // The same commits, spelled out: taken without a run when it cannot differ.
            if s.best.commits == nil { s.best = c } else { _ = attempt(c, "commits past \(n) dropped") }
        }
        for i in (s.best.commits ?? []).indices {
            deltaDebug(s, commit: i, attempt)
        }
        for i in (s.best.commits ?? []).indices where s.best.commits![i].transfer {
            var c = s.best
            c.commits![i].transfer = false
            _ = attempt(c, "commit \(i + 1) without its bank transfer")
        }
        for i in (s.best.commits ?? []).indices where s.best.commits![i].changes.contains(where: { ($0.length ?? 0) > 8 }) {
            var c = s.best
            c.commits![i].changes = c.commits![i].changes.map { PlannedCommit.Change(key: $0.key, length: $0.length.map { min($0, 8) }) }
            _ = attempt(c, "commit \(i + 1) with short values")
        }
    }

    /// ddmin over one commit's changes: try without each of k chunks, k doubling until the
    /// chunks are single changes.
    func deltaDebug(_ s: Search, commit i: Int, _ attempt: (TortureReplay, String) -> Bool) {
        var chunks = 1
        while let count = s.best.commits?[i].changes.count, count > 0, !s.outOfTime {
            let size = (count + chunks - 1) / chunks
            var removed = false
            var start = 0
            while start < s.best.commits![i].changes.count && !s.outOfTime {
                let cur = s.best.commits![i].changes
                var c = s.best
                c.commits![i].changes = Array(cur[..<start] + cur[min(cur.count, start + size)...])
                if attempt(c, "commit \(i + 1) with \(c.commits![i].changes.count) of \(cur.count) changes") {
                    removed = true
                } else {
                    start += size
                }
            }
            if removed { chunks = max(1, chunks / 2) } else if size == 1 { return } else { chunks = min(chunks * 2, count) }
        }
    }
}
