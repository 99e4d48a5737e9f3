import Engine

extension Shrinker {
    /// Tries `values` in order (smallest first) and keeps the first that still fails: the
    /// smallest count, pass or size of one part of the case.
    @discardableResult
    func firstFailing<T>(
        _ s: Search, _ values: some Sequence<T>, set: (inout TortureReplay, T) -> Void, describe: (T) -> String,
        _ attempt: (TortureReplay, String) -> Bool
    ) -> Bool {
        for v in values {
            var c = s.best
            set(&c, v)
            if attempt(c, describe(v)) { return true }
        }
        return false
    }

    /// The least value, from `least`, that a count of the case (`key`) can be cut to and still
    /// fail.
    func fewest<T: BinaryInteger>(
        _ s: Search, _ key: WritableKeyPath<TortureReplay, T>, from least: T, describe: (T) -> String,
        _ attempt: (TortureReplay, String) -> Bool
    ) where T.Stride: SignedInteger {
        firstFailing(
            s, least..<max(least, s.best[keyPath: key]), set: { $0[keyPath: key] = $1 }, describe: describe, attempt)
    }

    /// The fewest commits of a count of the case; `when` ends the description ("3 commits
    /// before the fault").
    func fewestCommits(
        _ s: Search, _ key: WritableKeyPath<TortureReplay, UInt64>, from least: UInt64, _ when: String,
        _ attempt: (TortureReplay, String) -> Bool
    ) {
        fewest(s, key, from: least, describe: { "\(counted($0, "commit")) \(when)" }, attempt)
    }
}

extension Shrinker {
    /// A power-cut case: timed cuts become cuts after a crash point, cuts go, each writer dies
    /// as early as still fails, and each cut drops everything unsynced (drop-all) if that
    /// still fails.
    func shrinkCuts(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard s.best.cuts != nil else { return }
        for i in s.best.cuts!.indices where s.best.cuts![i].death == .running {
            search: for nth in 1...3 {
                for point in CrashPoint.commitPoints {
                    var c = s.best
                    c.cuts![i] = PowerCut(
                        death: .crashPoint, crashPoint: point.rawValue, nth: nth, mode: c.cuts![i].mode,
                        faultfsSeed: c.cuts![i].faultfsSeed)
                    if attempt(c, "cut \(i + 1) after a crash at \(point.rawValue):\(nth) instead of a timed one") {
                        break search
                    }
                }
            }
        }
        var i = 0
        while i < s.best.cuts!.count && s.best.cuts!.count > 1 {
            var c = s.best
            c.cuts!.remove(at: i)
            // Tried twice before the cut is kept: which unsynced writes a cut drops follows the
            // order the writers' pages reached FaultFS, and a run whose order hid the damage
            // once kept a cut the case did not need (ShrinkTests, about one run in twenty).
            if !attempt(c, "without cut \(i + 1)") && !attempt(c, "without cut \(i + 1), again") { i += 1 }
        }
        for i in s.best.cuts!.indices {
            guard s.best.cuts![i].nth != nil else { continue }
            fewest(
                s, \.cuts![i].nth!, from: 1, describe: { "cut \(i + 1): the writer dies in its commit \($0)" }, attempt)
        }
        for i in s.best.cuts!.indices where s.best.cuts![i].mode != "drop-all" {
            var c = s.best
            c.cuts![i].mode = "drop-all"
            _ = attempt(c, "cut \(i + 1) drops everything unsynced")
        }
    }
}

extension Shrinker {
    /// A file-ops case: fewer commits before the operation (one at least: compact and copy
    /// need a file) and after it, and a cut that drops everything unsynced if that still fails.
    func shrinkFileOperation(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard let plan = s.best.fileOperation else { return }
        fewestCommits(s, \.fileOperation!.before, from: 1, "before \(plan.operation)", attempt)
        fewestCommits(s, \.fileOperation!.after, from: 0, "after \(plan.operation)", attempt)
        if let mode = s.best.fileOperation!.mode, mode != "drop-all" {
            var c = s.best
            c.fileOperation!.mode = "drop-all"
            _ = attempt(c, "the cut drops everything unsynced")
        }
    }
}

extension Shrinker {
    /// A faults case: fewer commits before the fault, the earliest short write, fewer commits
    /// under a lying fsync, and (bit flips) the fewest rounds that still fail, by delta debugging.
    func shrinkFault(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard let plan = s.best.fault else { return }
        fewestCommits(s, \.fault!.warm, from: 1, "before the fault", attempt)
        if plan.kind == "short-write", plan.nth != nil {
            fewest(s, \.fault!.nth!, from: 1, describe: { "short write \($0)" }, attempt)
        }
        if plan.commitsUnderLie != nil {
            fewestCommits(s, \.fault!.commitsUnderLie!, from: 1, "under the lie", attempt)
        }
        if s.best.fault?.rounds != nil {
            removeByDeltaDebugging(
                s, items: { $0.fault?.rounds ?? [] }, keep: { r, kept in r.fault!.rounds = kept }, minimum: 1,
                describe: { kept, _ in counted(kept, "bit-flip round") }, attempt)
        }
    }
}

extension Shrinker {
    /// A keystream case: fewer threads, fewer writer processes, each stopping earlier.
    func shrinkKeystream(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard s.best.keystream != nil else { return }
        fewest(s, \.keystream!.threads, from: 1, describe: { counted($0, "thread") }, attempt)
        // Fewer processes: the last ones first (each starts where the one before stopped).
        while s.best.keystream!.stepsEndAt.count > 1, !s.outOfTime {
            var c = s.best
            c.keystream!.stepsEndAt.removeLast()
            if !attempt(c, "\(c.keystream!.stepsEndAt.count) writer processes") { break }
        }
        // Each process stops as early as still fails: the ends halved towards the one before.
        for i in s.best.keystream!.stepsEndAt.indices {
            let low = i == 0 ? UInt64(1) : s.best.keystream!.stepsEndAt[i - 1] + 1
            var end = s.best.keystream!.stepsEndAt[i]
            while end > low, !s.outOfTime {
                let mid = low + (end - low) / 2
                var c = s.best
                for j in i..<c.keystream!.stepsEndAt.count { c.keystream!.stepsEndAt[j] -= end - mid }
                guard attempt(c, "writer process \(i + 1) stops at commit \(mid)") else { break }
                end = mid
            }
        }
    }
}

extension Shrinker {
    /// A notify case: one observer, and the last writer's commits as few as still fail.
    func shrinkWatch(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard s.best.watch != nil else { return }
        fewest(s, \.watch!.observers, from: 1, describe: { counted($0, "observer") }, attempt)
        fewest(
            s, \.watch!.lastCommits, from: 0, describe: { "the last writer makes \(counted($0, "commit"))" }, attempt)
    }
}

extension Shrinker {
    /// A readers case: fewer readers killed, then each count of commits halved while it still
    /// fails.
    func shrinkReaders(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        if s.best.churn != nil {
            fewest(
                s, \.churn!.processes, from: 1, describe: { "\($0) reader process\($0 == 1 ? "" : "es")" }, attempt)
            fewest(s, \.churn!.threads, from: 1, describe: { "\(counted($0, "thread")) a reader" }, attempt)
            while s.best.churn!.seconds > 0.2, !s.outOfTime {
                var c = s.best
                c.churn!.seconds = (c.churn!.seconds * 50).rounded() / 100
                guard attempt(c, "readers for \(c.churn!.seconds) s") else { break }
            }
        }
        guard s.best.readers != nil else { return }
        removeByDeltaDebugging(
            s, items: { $0.readers?.readers ?? [] }, keep: { r, kept in r.readers!.readers = kept }, minimum: 1,
            describe: { kept, _ in "\(counted(kept, "reader")) killed" }, attempt)
        let counts: [(String, WritableKeyPath<ReadersScenario.Plan, UInt64>)] = [
            ("commits before the readers", \.warm), ("commits after each reader", \.between),
            ("commits after the last", \.after), ("measured commits", \.measured)
        ]
        for (what, key) in counts {
            while s.best.readers![keyPath: key] > 1, !s.outOfTime {
                var c = s.best
                c.readers![keyPath: key] /= 2
                guard attempt(c, "\(c.readers![keyPath: key]) \(what)") else { break }
            }
        }
    }
}

extension Shrinker {
    /// An isolation case: fewer processes, fewer threads each, fewer transactions per thread.
    func shrinkIsolation(_ s: Search, _ attempt: (TortureReplay, String) -> Bool) {
        guard s.best.isolation != nil else { return }
        let counts: [(String, WritableKeyPath<IsolationScenario.Plan, Int>)] = [
            ("processes", \.processes), ("threads a process", \.threads), ("transactions a thread", \.transactions)
        ]
        for (what, key) in counts {
            firstFailing(
                s, (1..<max(1, s.best.isolation![keyPath: key])).filter { $0 <= 8 || $0 % 20 == 0 },
                set: { $0.isolation![keyPath: key] = $1 }, describe: { "\($0) \(what)" }, attempt)
        }
    }
}
