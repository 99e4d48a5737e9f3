import Engine
import Foundation

/// The objects suite: Fief's object layer against SQLite with the same schema, on the same
/// seeded data, repetitions interleaved like the engine suite's.
extension BenchRunner {
    public static let objectWorkloadNames = [
        "obj.insert", "obj.file-size", "obj.count", "obj.query", "obj.pk-get", "obj.enumerate",
        "obj.sort-limit", "obj.links", "obj.update", "obj.delete-cascade", "obj.notify", "obj.notify.cross-process",
        "obj.small-txns",
        "obj.encrypted.insert", "obj.encrypted.pk-get", "obj.encrypted.count"
    ]

    /// The objects suite's phases in the order they run; each runs the workloads it owns that
    /// are wanted. The shared data set is loaded whatever is wanted: the file size comes from it.
    static let objectSuite: [(BenchRunner, ObjectRunState) throws -> Void] = [
        { try $0.insertObjects($1) }, { try $0.loadObjects($1) }, { try $0.checkAnswers($1) },
        { try $0.readObjects($1) }, { try $0.updateObjects($1) }, { try $0.deleteObjects($1) },
        { try $0.notifyInProcess($1) }, { try $0.notifyCrossProcess($1) }, { try $0.smallObjectTransactions($1) },
        { try $0.runEncryptedObjects($1) }
    ]

    func runObjects(_ run: BenchRunState) throws {
        let systems = parameters.systems.filter { $0 != .lmdb }
        guard !systems.isEmpty else { return }
        let o = ObjectRunState(run: run, parameters: parameters, systems: systems)
        defer { o.closeStores() }
        progress(
            "objects: \(o.persons) persons, \(o.dogs) dogs, systems \(systems.map(\.rawValue).joined(separator: " "))")
        for phase in BenchRunner.objectSuite { try phase(self, o) }
    }

    func insertObjects(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.insert") else { return }
        let memoryChild = childExecutable.flatMap { parameters.memoryInChild ? $0 : nil }
        var rep = 0
        try repeatInterleaved("obj.insert", &o.run.table, perRep: { rep = $0 }, systems: o.order) { s in
            let dir = "\(o.run.work)/obj-insert-\(s.rawValue)"
            let sys = try o.open(s, dir)
            defer {
                sys.close()
                try? FileManager.default.removeItem(atPath: dir)
            }
            var m = try countingCommits(sys, operations: o.persons + o.dogs) {
                let t = try BenchClock.seconds { try sys.load(o.data) }
                return Measurement(value: Double(o.persons + o.dogs) / t, extra: ["fileBytes": Double(sys.fileBytes())])
            }
            // Once per system, the same load in a process of its own: its peak memory (the
            // timed loads above share this process's high-water mark with the other system's).
            if rep == 0, let exe = memoryChild {
                let r = try ObjectLoadChild.spawn(
                    ObjectLoadChild.Request(
                        system: s, directory: dir + "-memory", persons: o.persons, dogs: o.dogs,
                        durability: o.durability, seed: parameters.seed),
                    executable: exe)
                try? FileManager.default.removeItem(atPath: dir + "-memory")
                r.memory.record(into: &m)
            }
            return m
        }
        if memoryChild == nil { o.run.notes.append("obj.insert: no load in a process of its own, so no peak memory") }
    }

    /// The data set every other workload reads, loaded once per system.
    func loadObjects(_ o: ObjectRunState) throws {
        for s in o.systems {
            let sys = try o.open(s, "\(o.run.work)/obj-data-\(s.rawValue)")
            try sys.load(o.data)
            o.loaded[s] = sys
            if wantsObjects("obj.file-size") {
                o.run.table.add("obj.file-size", s, try spaceMeasurement(sys, objects: o.persons + o.dogs))
            }
        }
    }

    /// Before any read is timed, every system must give the same answers.
    func checkAnswers(_ o: ObjectRunState) throws {
        let readWorkloads = ["obj.count", "obj.query", "obj.pk-get", "obj.enumerate", "obj.sort-limit", "obj.links"]
        guard readWorkloads.contains(where: wantsObjects) else { return }
        let asked = try ObjectAnswerCheck.run(
            o.systems.compactMap { o.loaded[$0] }, cities: o.cities, prefixes: o.prefixes, ids: o.ids)
        if asked > 0 {
            progress(
                "objects: \(o.systems.map(\.rawValue).joined(separator: " and ")) "
                    + "gave the same answers to \(asked) questions"
            )
        }
    }

    func readObjects(_ o: ObjectRunState) throws {
        let (ids, cities, prefixes) = (o.ids, o.cities, o.prefixes)
        try timedOperations("obj.count", cities.count, o) { sys, i in _ = try sys.count(ageAbove: 40, city: cities[i]) }
        try timedOperations("obj.query", prefixes.count, o) { sys, i in
            _ = try sys.prefixQuery(prefixes[i], ageAbove: 30)
        }
        try timedOperations("obj.pk-get", ids.count * 10, o) { sys, i in
            _ = try sys.nameLength(ofPerson: ids[i % ids.count])
        }
        // Passes over the class until about a million objects are read, and a fixed amount
        // of sorting likewise: one pass at 20K persons took under a millisecond, and five
        // top-100s a little more, so a scheduler's hiccup moved a repetition by a third.
        let passes = max(1, 1_000_000 / max(1, o.persons))
        if wantsObjects("obj.enumerate") {
            try repeatInterleaved("obj.enumerate", &o.run.table, systems: o.order) { s in
                let counters = ReadCounters(o.loaded[s]!)
                let t = try BenchClock.seconds { for _ in 0..<passes { _ = try o.loaded[s]!.sumOfAges() } }
                var m = Measurement(value: Double(o.persons * passes) / t)
                counters.record(into: &m, operations: o.persons * passes)  // per object read
                return m
            }
        }
        try timedOperations("obj.sort-limit", max(5, passes), o) { sys, _ in _ = try sys.oldest(100) }
        try timedOperations("obj.links", ids.count, o) { sys, i in _ = try sys.walkLinks(ofPerson: ids[i]) }
    }

    /// `n` calls of `body` on each loaded system, each call's latency recorded.
    func timedOperations(
        _ id: String, _ n: Int, _ o: ObjectRunState, _ body: @escaping (any ObjectBenchSystem, Int) throws -> Void
    ) throws {
        guard wantsObjects(id) else { return }
        try repeatInterleaved(id, &o.run.table, systems: o.order) { s in
            let sys = o.loaded[s]!
            var m = Measurement(value: 0)
            let counters = ReadCounters(sys)
            let t0 = BenchClock.nanos()
            for i in 0..<n {
                let a = BenchClock.nanos()
                try body(sys, i)
                m.latency.record(nanos: BenchClock.nanos() - a)
            }
            m.value = Double(n) / (Double(BenchClock.nanos() - t0) / 1e9)
            counters.record(into: &m, operations: n)
            return m
        }
    }

    func updateObjects(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.update") else { return }
        let batch = o.batch
        var rep = 0
        try repeatInterleaved("obj.update", &o.run.table, perRep: { rep = $0 }, systems: o.order) { s in
            let chosen = (0..<batch).map { Int64(($0 * 7919 + rep * 104_729) % o.persons) }
            return try countingCommits(o.loaded[s]!, operations: batch) {
                Measurement(value: Double(batch) / (try BenchClock.seconds { try o.loaded[s]!.birthday(chosen) }))
            }
        }
    }

    func deleteObjects(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.delete-cascade") else { return }
        var rep = 0
        let per = max(1, min(o.batch / 2, o.persons / (2 * max(1, parameters.repetitions))))
        try repeatInterleaved("obj.delete-cascade", &o.run.table, perRep: { rep = $0 }, systems: o.order) { s in
            let chosen = (0..<per).map { Int64(rep * per + $0) }
            o.deletedBelow = max(o.deletedBelow, Int64(rep * per + per))
            return try countingCommits(o.loaded[s]!, operations: per) {
                Measurement(value: Double(per) / (try BenchClock.seconds { try o.loaded[s]!.delete(chosen) }))
            }
        }
    }

    /// One person's age changes in a durable write (not timed); timed: learning what changed
    /// in a view of every person sorted by age.
    func notifyInProcess(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.notify") else { return }
        let rounds = max(5, min(50, o.queries / 40))
        let liveIDs = o.liveIDs
        var rep = 0
        try repeatInterleaved("obj.notify", &o.run.table, perRep: { rep = $0 }, systems: o.order) { s in
            let sys = o.loaded[s]!
            _ = try sys.refreshSortedView()  // Fief: the observer's initial run, outside the timing
            var m = Measurement(value: 0)
            var timed: UInt64 = 0
            for i in 0..<rounds {
                try sys.setAge(liveIDs[(rep * rounds + i) % liveIDs.count], 200 + (rep * rounds + i) % 50)
                let a = BenchClock.nanos()
                _ = try sys.refreshSortedView()
                let d = BenchClock.nanos() - a
                timed += d
                m.latency.record(nanos: d)
            }
            m.value = Double(rounds) / (Double(timed) / 1e9)
            return m
        }
        // The observer's context reads the version of its last refresh until it is dropped: left
        // open, it pinned that version through every later workload, and the pages each later
        // commit freed piled up in the free list (a sixth page in each one-object write of
        // obj.small-txns, whose raw-engine peer has no such reader).
        for sys in o.loaded.values { sys.stopObserving() }
    }

    /// Fief only: SQLite has no way to tell another process what a commit changed.
    func notifyCrossProcess(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.notify.cross-process") else { return }
        guard let exe = childExecutable, let fief = o.loaded[.fief] as? FiefObjectSystem else {
            o.run.notes.append(
                "obj.notify.cross-process not run: it needs Fief among the systems "
                    + "and the fief executable for its observer process"
            )
            return
        }
        let rounds = max(10, min(200, o.queries / 10))
        let liveIDs = o.liveIDs
        var rep = 0
        try repeatInterleaved(
            "obj.notify.cross-process", &o.run.table, perRep: { rep = $0 }, systems: { _ in [.fief] }
        ) { _ in
            try CrossProcessNotify.measure(
                path: fief.path, rounds: rounds, ids: liveIDs, firstAge: 1_000 + rep * rounds,
                executable: exe
            ) { try fief.setAge($0, $1) }
        }
    }

    /// Durable one-object inserts, and (Fief) the raw engine's own one-record durable commits,
    /// same count, one of each in turn: the disk's flush times drift over seconds, and the raw
    /// commits run after all the object ones moved the ratio by a third between runs.
    func smallObjectTransactions(_ o: ObjectRunState) throws {
        guard wantsObjects("obj.small-txns") else { return }
        let n = max(5, parameters.smallTxnsFull / 2)
        var rep = 0
        try repeatInterleaved("obj.small-txns", &o.run.table, perRep: { rep = $0 }, systems: o.order) { s in
            let base = Int64(o.persons) + 1_000_000 + Int64(rep * n)
            let raw = s == .fief ? try RawEngineCommits(o, rep: rep, durability: parameters.durability) : nil
            defer { raw?.close() }
            var m = try countingCommits(o.loaded[s]!, operations: n) {
                var m = Measurement(value: 0)
                var nanos: UInt64 = 0
                for i in 0..<n {
                    let a = BenchClock.nanos()
                    try o.loaded[s]!.insertOne(base + Int64(i))
                    let d = BenchClock.nanos() - a
                    m.latency.record(nanos: d)
                    nanos += d
                    try raw?.commit(Int64(i))
                }
                m.value = Double(n) * 1e9 / Double(max(nanos, 1))
                return m
            }
            if let raw {
                m.extra["rawEngineOpsPerSecond"] = raw.opsPerSecond
                if let c = raw.perCommit {
                    m.extra["rawEnginePagesPerCommit"] = c.pages
                    m.extra["rawEngineSyncMillisPerCommit"] = c.syncMillis
                }
            }
            return m
        }
    }

    /// The raw engine's one-record durable commits, in a fresh database of their own, timed
    /// one by one.
    final class RawEngineCommits {
        private let dir: String
        private let subject: FiefSubject
        private let value = [UInt8](repeating: 7, count: 48)
        private var count = 0
        private var nanos: UInt64 = 0
        private let before: Database.CommitCounts

        init(_ o: ObjectRunState, rep: Int, durability: Durability) throws {
            dir = "\(o.run.work)/obj-raw-\(rep)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            subject = try FiefSubject(directory: dir, durability: durability)
            before = subject.db.commitCounts
        }

        /// Its commits' pages and sync time per commit: beside the object layer's, what the
        /// ratio's gap is made of.
        var perCommit: (pages: Double, syncMillis: Double)? {
            BenchRunner.perCommit(from: before, to: subject.db.commitCounts)
        }

        func commit(_ key: Int64) throws {
            let a = BenchClock.nanos()
            try subject.write { try $0.put(key, value) }
            nanos += BenchClock.nanos() - a
            count += 1
        }

        var opsPerSecond: Double { Double(count) * 1e9 / Double(max(nanos, 1)) }

        func close() {
            subject.close()
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    /// `body`'s measurement, with what Fief's commits cost per commit during it: pages written
    /// and time waiting for the disk's syncs, and that time's percentage of the `operations` timed.
    func countingCommits(_ sys: any ObjectBenchSystem, operations: Int, _ body: () throws -> Measurement) throws
        -> Measurement
    {
        try countingCommits({ sys.commitCounts }, operations: operations, body)
    }

    /// The same for any store whose counters `counts` reads (nil: a peer, nothing added).
    func countingCommits(
        _ counts: () -> Database.CommitCounts?, operations: Int, _ body: () throws -> Measurement
    ) throws -> Measurement {
        let before = counts()
        var m = try body()
        if let a = before, let b = counts(), let c = Self.perCommit(from: a, to: b) {
            m.extra["pagesPerCommit"] = c.pages
            m.extra["syncMillisPerCommit"] = c.syncMillis
            let timed = Double(operations) / max(m.value, 1e-9)
            m.extra["syncPercent"] = min(100, 100 * Double(b.syncNanos - a.syncNanos) / 1e9 / timed)
        }
        return m
    }

    /// Pages written and milliseconds waited for syncs, per commit, between two readings of a
    /// handle's counters; nil without a commit between them.
    static func perCommit(from a: Database.CommitCounts, to b: Database.CommitCounts)
        -> (pages: Double, syncMillis: Double)?
    {
        guard b.commits > a.commits else { return nil }
        let n = Double(b.commits - a.commits)
        return (Double(b.pages - a.pages) / n, Double(b.syncNanos - a.syncNanos) / 1e6 / n)
    }

    /// The file's size, its bytes per object, and (Fief) each table's pages and leaf fill,
    /// also printed: where a file's bytes go.
    func spaceMeasurement(_ sys: any ObjectBenchSystem, objects: Int) throws -> Measurement {
        let bytes = Double(sys.fileBytes())
        var m = Measurement(value: bytes, extra: ["bytesPerObject": bytes / Double(max(1, objects))])
        var line =
            "obj.file-size \(sys.system.rawValue): "
            + "\(Format.value(bytes, unit: BenchCatalog.entry("obj.file-size").unit)), "
            + "\(Int(bytes) / max(1, objects)) B/object"
        for t in try sys.tableSpace() where t.pages > 1 {
            m.extra["pages:\(t.name)"] = Double(t.pages)
            m.extra["leafFill:\(t.name)"] = t.leafFill
            line += "; \(t.name) \(t.pages) pages, leaves \(Int((t.leafFill * 100).rounded()))% full"
        }
        progress(line)
        return m
    }

    /// Encryption's cost: the same workloads on an encrypted Fief file. The Fief column is the
    /// encrypted store; plain Fief, a store loaded the same way beside it, runs in the same
    /// repetition (`plainOpsPerSecond`), and the SQLite column is plain SQLite, so both ratios
    /// come from one run.
    func runEncryptedObjects(_ o: ObjectRunState) throws {
        let (work, durability, data, loaded, systems) = (o.run.work, parameters.durability, o.data, o.loaded, o.systems)
        let (ids, cities) = (o.ids, o.cities)
        guard systems.contains(.fief),
            ["obj.encrypted.insert", "obj.encrypted.pk-get", "obj.encrypted.count"].contains(where: wantsObjects)
        else { return }
        let fm = FileManager.default
        var keyRandom = BenchRandom.stream(seed: parameters.seed, .objectQueries)
        let key = (0..<64).map { _ in UInt8.random(in: 0...255, using: &keyRandom) }
        let order = { (rep: Int) in (0..<systems.count).map { systems[($0 + rep) % systems.count] } }
        let count = data.persons.count + data.dogs.count
        if wantsObjects("obj.encrypted.insert") {
            var rep = 0
            try repeatInterleaved("obj.encrypted.insert", &o.run.table, perRep: { rep = $0 }, systems: order) { s in
                func insert(_ key: [UInt8]?, _ name: String) throws -> Double {
                    let dir = "\(work)/obj-enc-insert-\(name)-\(rep)"
                    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    defer { try? fm.removeItem(atPath: dir) }
                    let sys: any ObjectBenchSystem =
                        s == .fief
                        ? try FiefObjectSystem(directory: dir, durability: durability, encryptionKey: key)
                        : try SQLiteObjectSystem(directory: dir, durability: durability)
                    defer { sys.close() }
                    return Double(count) / (try BenchClock.seconds { try sys.load(data) })
                }
                guard s == .fief else { return Measurement(value: try insert(nil, s.rawValue)) }
                // Which of the two loads goes first alternates by repetition, so neither always
                // runs on a machine the other has just warmed (or slowed); with an odd number of
                // repetitions the encrypted one goes first once more.
                let plainBefore = rep % 2 == 1 ? try insert(nil, "plain") : nil
                var m = Measurement(value: try insert(key, s.rawValue))
                m.extra["plainOpsPerSecond"] = try plainBefore ?? insert(nil, "plain")
                return m
            }
        }
        guard wantsObjects("obj.encrypted.pk-get") || wantsObjects("obj.encrypted.count") else { return }
        let dir = "\(work)/obj-enc-data"
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let encrypted = try FiefObjectSystem(directory: dir, durability: durability, encryptionKey: key)
        defer { encrypted.close() }
        try encrypted.load(data)
        // The plain store it is compared with holds the same objects with the same history: the
        // shared one has been through updates, deletions and small writes by now (fewer persons,
        // and primary keys that read as cheap misses), which made the encrypted side look slower.
        let plainDir = "\(work)/obj-enc-plain-data"
        try fm.createDirectory(atPath: plainDir, withIntermediateDirectories: true)
        let plain = try FiefObjectSystem(directory: plainDir, durability: durability)
        defer { plain.close() }
        try plain.load(data)
        func ops(_ id: String, _ n: Int, _ body: (any ObjectBenchSystem, Int) throws -> Void) throws {
            guard wantsObjects(id) else { return }
            try repeatInterleaved(id, &o.run.table, systems: order) { s in
                // Every side, SQLite's too, is timed the same way: the sum of its operations'
                // own times, the clock reads and histogram records between them left out. The
                // plain store, once timed without them, gained about a tenth of a lookup's time
                // over the encrypted one it is compared with.
                func timed(_ sys: any ObjectBenchSystem, _ i: Int, _ m: inout Measurement, _ nanos: inout UInt64)
                    throws
                {
                    let a = BenchClock.nanos()
                    try body(sys, i)
                    let d = BenchClock.nanos() - a
                    m.latency.record(nanos: d)
                    nanos += d
                }
                func perSecond(_ nanos: UInt64) -> Double { Double(n) / (Double(max(nanos, 1)) / 1e9) }
                var m = Measurement(value: 0)
                var nanos: UInt64 = 0
                guard s == .fief else {
                    for i in 0..<n { try timed(loaded[s]!, i, &m, &nanos) }
                    m.value = perSecond(nanos)
                    return m
                }
                // The encrypted and the plain store take turns, one operation each, the first
                // of each pair alternating: run one after the other, a change in this machine's
                // speed within a repetition (counts ran at 1.9 or at 3.7 ms for a whole run of
                // them, SQLite's likewise) fell on one side only and moved the ratio by a fifth.
                var plainTimes = Measurement(value: 0)
                var plainNanos: UInt64 = 0
                for i in 0..<n {
                    if i % 2 == 0 {
                        try timed(encrypted, i, &m, &nanos)
                        try timed(plain, i, &plainTimes, &plainNanos)
                    } else {
                        try timed(plain, i, &plainTimes, &plainNanos)
                        try timed(encrypted, i, &m, &nanos)
                    }
                }
                m.value = perSecond(nanos)
                m.extra["plainOpsPerSecond"] = perSecond(plainNanos)
                return m
            }
        }
        try ops("obj.encrypted.pk-get", ids.count * 10) { sys, i in _ = try sys.nameLength(ofPerson: ids[i % ids.count])
        }
        try ops("obj.encrypted.count", cities.count) { sys, i in _ = try sys.count(ageAbove: 40, city: cities[i]) }
    }

    func wantsObjects(_ id: String) -> Bool { only.map { $0.contains(id) || $0.contains("objects") } ?? true }
}

/// What the objects suite's workloads share: the data set, the stores loaded with it once, the
/// questions asked of them, and which persons are gone.
final class ObjectRunState {
    let run: BenchRunState
    let persons: Int
    let dogs: Int
    let queries: Int
    let systems: [SystemName]
    let data: ObjectDataSet
    let durability: Durability
    var loaded: [SystemName: any ObjectBenchSystem] = [:]
    let ids: [Int64]
    let cities: [String]
    let prefixes: [String]
    /// Persons below this key were deleted (by obj.delete-cascade): the notify workloads change
    /// only persons that exist, or a change would change nothing and be awaited forever.
    var deletedBelow: Int64 = 0

    init(run: BenchRunState, parameters p: BenchParameters, systems: [SystemName]) {
        let persons = p.objectPersons ?? 20_000, queries = p.objectQueries ?? 2_000
        self.run = run
        self.persons = persons
        dogs = p.objectDogs ?? persons / 2
        self.queries = queries
        self.systems = systems
        durability = p.durability
        data = ObjectDataSet(persons: persons, dogs: dogs, seed: p.seed)
        var rng = BenchRandom.stream(seed: p.seed, .objectQueries)
        ids = (0..<queries).map { _ in Int64.random(in: 0..<Int64(persons), using: &rng) }
        cities = (0..<max(1, queries / 100)).map { _ in "c\(Int.random(in: 0..<50, using: &rng))" }
        prefixes = (0..<max(1, queries / 10)).map { _ in "p\(Int.random(in: 10..<100, using: &rng))" }
    }

    /// Repetition `rep`'s order of the systems: a rotation, as the engine suite's.
    func order(_ rep: Int) -> [SystemName] { (0..<systems.count).map { systems[($0 + rep) % systems.count] } }

    /// How many objects an update or a delete batch touches.
    var batch: Int { max(10, persons / 20) }

    var liveIDs: [Int64] {
        let alive = ids.filter { $0 >= deletedBelow }
        return alive.isEmpty ? [Int64(persons - 1)] : alive
    }

    func open(_ s: SystemName, _ dir: String) throws -> any ObjectBenchSystem {
        try ObjectRunState.open(s, dir, durability: durability)
    }

    /// A fresh store of system `s` in `dir` (made if missing): Fief's object layer, or SQLite
    /// with the same schema.
    static func open(_ s: SystemName, _ dir: String, durability: Durability) throws -> any ObjectBenchSystem {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return s == .fief
            ? try FiefObjectSystem(directory: dir, durability: durability)
            : try SQLiteObjectSystem(directory: dir, durability: durability)
    }

    func closeStores() { for s in loaded.values { s.close() } }
}
