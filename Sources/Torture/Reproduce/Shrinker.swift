import Engine
import Foundation
import TortureSchema

/// Makes a failing case smaller while it keeps failing with the same kind of violation, every
/// candidate run for real (writer processes killed at crash points, FaultFS mounts, the
/// recovery checks): timed kills become crash points, writers and threads go, each writer dies
/// at the earliest pass of its crash point that still fails, each scenario's own plan shrinks
/// (ShrinkPlans.swift: power cuts, file operations, faults, keystream writers), then the
/// commits are spelled out and cut down (delta debugging over their puts and deletes, bank
/// transfers off, values made short) and a crash state's lost sectors go. Stops at the time
/// budget with the smallest case so far.
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
        var bestResult: ReplayResult
        var candidates = 0
        let deadline: Date
        init(_ r: TortureReplay, result: ReplayResult, deadline: Date) {
            best = r
            bestResult = result
            self.deadline = deadline
        }
        var outOfTime: Bool { Date() >= deadline }
        var size: ReplaySize { best.size(bestResult) }
    }

    /// States a crash-states candidate searches when the pinned one no longer fails (its
    /// sectors moved): fewer than a run's, so a candidate costs seconds, not minutes.
    static let searchBound = 512

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
        // A violation of the store is kept over a harness one (a writer that did not die where
        // armed): that is what a bug report is about.
        let candidates = first.violations.filter {
            original.expected == nil || $0.kind == original.expected!.kind
        }
        guard first.reproduces,
            let violation = candidates.first(where: { $0.kind != .harness }) ?? candidates.first
        else {
            throw TortureError.invalid(
                "the case did not fail in \(tries) runs "
                    + "(a timed kill may not die at the same place twice); nothing to shrink"
            )
        }
        var start = original
        start.expected = original.expected ?? .init(kind: violation.kind, violation: violation.text)
        // A crash-states case keeps the state that failed: candidates try it first.
        if let state = first.state { start.state = state }
        let before = start.size(first)
        say("shrink: the case fails (\(start.expected!.kind.rawValue): \(violation.text.prefix(160))); \(before)")
        let search = Search(start, result: first, deadline: t0.addingTimeInterval(budgetSeconds))
        let kind = start.expected!.kind

        /// Keeps `candidate` when it still fails the same way; a crash-states candidate whose
        /// pinned state passes searches `searchStates` states for one that fails.
        func attempt(_ candidate: TortureReplay, _ what: String, searchStates: Int?) -> Bool {
            guard !search.outOfTime, candidate != search.best else { return false }
            search.candidates += 1
            var c = candidate
            var r = try? c.run(in: dir)
            if r?.reproduces != true, let bound = searchStates, c.state != nil {
                c.state = nil
                c.stateBound = bound
                search.candidates += 1
                r = try? c.run(in: dir)
                c.stateBound = nil
            }
            guard let r, r.reproduces else { return false }
            if let state = r.state { c.state = state }
            c.expected = TortureReplay.Expected(
                kind: kind, violation: (r.violations.first { $0.kind == kind } ?? violation).text)
            search.best = c
            search.bestResult = r
            say("shrink: \(what): \(search.size)")
            return true
        }
        let structural = { (c: TortureReplay, what: String) in attempt(c, what, searchStates: Shrinker.searchBound) }
        let pinned = { (c: TortureReplay, what: String) in attempt(c, what, searchStates: nil) }

        determinize(search, structural)
        dropDeaths(search, structural)
        earliestPasses(search, structural)
        shrinkCuts(search, structural)
        shrinkFileOperation(search, structural)
        shrinkFault(search, structural)
        shrinkKeystream(search, structural)
        shrinkWatch(search, structural)
        shrinkReaders(search, structural)
        shrinkIsolation(search, structural)
        fewerCleanCommits(search, structural)
        cutCommits(search, structural)
        fewerLostSectors(search, pinned)

        var shrunk = search.best
        let after = search.size
        let seconds = Date().timeIntervalSince(t0)
        shrunk.origin = TortureReplay.Origin(
            runSeed: original.origin?.runSeed, cycle: original.origin?.cycle, before: before,
            shrinkSeconds: (seconds * 10).rounded() / 10, candidatesRun: search.candidates)
        var correct: Bool?
        if shrunk.broken != nil {
            correct = try shrunk.run(in: dir, broken: .some(nil)).passed
        }
        try? FileManager.default.removeItem(atPath: dir)
        return Result(
            replay: shrunk, before: before, after: after, candidates: search.candidates, seconds: seconds,
            passesOnCorrectEngine: correct, budgetRanOut: search.outOfTime)
    }

    /// Fewer commits made cleanly before the writers that die (crash-states): none, else
    /// halving towards the count that fails.
    func fewerCleanCommits(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard var clean = s.best.cleanCommits, clean > 0 else { return }
        var low: UInt64 = 0
        while low < clean && !s.outOfTime {
            var c = s.best
            c.cleanCommits = low
            if attempt(c, "\(low) commits before the deaths") {
                clean = low
                break
            }
            low = low == 0 ? 1 : min(clean, low * 2)
            if low == clean { break }
        }
    }

    /// The smallest set of unsynced sectors lost (crash-states): lost sectors made to reach
    /// the disk, by delta debugging, while the state still fails; then the new size.
    func fewerLostSectors(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard s.best.state != nil, let unsynced = s.bestResult.unsyncedSectors else { return }
        // The lost sectors are the items: leaving one out means it reached the disk.
        removeByDeltaDebugging(
            s,
            items: { r in
                let kept = Set(r.state?.newSectors ?? [])
                return unsynced.filter { !kept.contains($0) }
            },
            keep: { r, lost in
                let gone = Set(lost)
                r.state!.newSectors = unsynced.filter { !gone.contains($0) }
            },
            describe: { lost, before in "\(counted(before - lost, "more sector")) reached the disk"
            }, attempt)
        if s.best.state?.newSize == false {
            var c = s.best
            c.state!.newSize = true
            _ = attempt(c, "the new size reached the disk")
        }
    }

    /// Timed kills become crash points (the first point and pass that fails the same way),
    /// and several threads one.
    func determinize(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        for i in s.best.deaths.indices where s.best.deaths[i].point == nil {
            search: for nth in 1...3 {
                for point in CrashPoint.commitPoints {
                    var c = s.best
                    c.deaths[i] = .at(point, nth: nth)
                    if attempt(c, "writer \(i + 1) dies at \(point.rawValue):\(nth) instead of a timed kill") {
                        break search
                    }
                }
            }
        }
        // The fewest threads that still fail (one, unless the failure needs company).
        for i in s.best.deaths.indices where s.best.deaths[i].threads > 1 {
            firstFailing(
                s, 1..<s.best.deaths[i].threads, set: { $0.deaths[i].threads = $1 },
                describe: { "writer \(i + 1) on \(counted($0, "thread"))" }, attempt)
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
            firstFailing(
                s, 1..<nth, set: { $0.deaths[i].nth = $1 }, describe: { "writer \(i + 1) dies at \(point):\($0)" },
                attempt)
        }
    }

    /// The commits spelled out, then cut: every put and delete of a commit dropped at once,
    /// else halves, quarters, ... (delta debugging), then the bank transfers, then long values.
    func cutCommits(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        let n = Int(s.bestResult.commitsAttempted)
        guard n > 0, s.best.canSpellOutCommits else { return }
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
        for i in (s.best.commits ?? []).indices
        where s.best.commits![i].changes.contains(where: { ($0.length ?? 0) > 8 }) {
            var c = s.best
            c.commits![i].changes = c.commits![i].changes.map {
                PlannedCommit.Change(key: $0.key, length: $0.length.map { min($0, 8) })
            }
            _ = attempt(c, "commit \(i + 1) with short values")
        }
    }

    /// One commit's puts and deletes cut by delta debugging.
    func deltaDebug(_ s: Search, commit i: Int, _ attempt: (TortureReplay, String) -> Bool) {
        removeByDeltaDebugging(
            s, items: { $0.commits?[i].changes ?? [] }, keep: { r, kept in r.commits![i].changes = kept },
            describe: { kept, all in "commit \(i + 1) with \(kept) of \(all) changes" }, attempt)
    }

    /// ddmin's removal half: leaves out one of k chunks of `items` at a time (k doubling up to
    /// single items, halving after a success) while the case still fails; `minimum` items stay.
    func removeByDeltaDebugging<T>(
        _ s: Search, items: (TortureReplay) -> [T], keep: (inout TortureReplay, [T]) -> Void,
        minimum: Int = 0, describe: (Int, Int) -> String, _ attempt: (TortureReplay, String) -> Bool
    ) {
        var chunks = 1
        while !s.outOfTime {
            let count = items(s.best).count
            guard count > minimum else { return }
            let size = max(1, (count + chunks - 1) / chunks)
            var removed = false
            var start = 0
            while start < items(s.best).count, items(s.best).count > minimum, !s.outOfTime {
                let cur = items(s.best)
                let kept = Array(cur[..<start] + cur[min(cur.count, start + size)...])
                var c = s.best
                keep(&c, kept)
                if kept.count >= minimum, attempt(c, describe(kept.count, cur.count)) {
                    removed = true
                } else {
                    start += size
                }
            }
            if removed {
                chunks = max(1, chunks / 2)
            } else if size == 1 {
                return
            } else {
                chunks = min(chunks * 2, count)
            }
        }
    }

    /// "1 commit", "2 commits": how a step names what it kept.
    func counted(_ n: some BinaryInteger, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
