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

    func runObjects(_ table: inout ResultTable, _ notes: inout [String], work: String, durability: Durability) throws {
        let p = parameters
        let persons = p.objectPersons ?? 20_000, dogs = p.objectDogs ?? persons / 2, queries = p.objectQueries ?? 2_000
        let systems = p.systems.filter { $0 != .lmdb }
        guard !systems.isEmpty else { return }
        let data = ObjectDataSet(persons: persons, dogs: dogs, seed: p.seed)
        let fm = FileManager.default
        func open(_ s: SystemName, _ dir: String) throws -> any ObjectBenchSystem {
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
            return s == .fief
                ? try FiefObjectSystem(directory: dir, durability: durability)
                : try SQLiteObjectSystem(directory: dir, durability: durability)
        }
        progress("objects: \(persons) persons, \(dogs) dogs, systems \(systems.map(\.rawValue).joined(separator: " "))")
        let objectOrder = { (rep: Int) in (0..<systems.count).map { systems[($0 + rep) % systems.count] } }

        if wantsObjects("obj.insert") {
            try repeatInterleaved("obj.insert", &table, systems: objectOrder) { s in
                let dir = "\(work)/obj-insert-\(s.rawValue)"
                let sys = try open(s, dir)
                defer { sys.close(); try? fm.removeItem(atPath: dir) }
                return try countingCommits(sys) {
                    let t = try BenchClock.seconds { try sys.load(data) }
                    return Measurement(value: Double(persons + dogs) / t, extra: ["fileBytes": Double(sys.fileBytes())])
                }
            }
        }
        // The data set every other workload reads, loaded once per system.
        var loaded: [SystemName: any ObjectBenchSystem] = [:]
        defer { for s in loaded.values { s.close() } }
        for s in systems {
            let sys = try open(s, "\(work)/obj-data-\(s.rawValue)")
            try sys.load(data)
            loaded[s] = sys
            if wantsObjects("obj.file-size") {
                table.add("obj.file-size", s, try spaceMeasurement(sys, objects: persons + dogs))
            }
        }
        var rng = BenchRandom.stream(seed: p.seed, .objectQueries)
        let ids = (0..<queries).map { _ in Int64.random(in: 0..<Int64(persons), using: &rng) }
        let cities = (0..<max(1, queries / 100)).map { _ in "c\(Int.random(in: 0..<50, using: &rng))" }
        let prefixes = (0..<max(1, queries / 10)).map { _ in "p\(Int.random(in: 10..<100, using: &rng))" }

        let readWorkloads = ["obj.count", "obj.query", "obj.pk-get", "obj.enumerate", "obj.sort-limit", "obj.links"]
        if readWorkloads.contains(where: wantsObjects) {
            let asked = try ObjectAnswerCheck.run(
                systems.compactMap { loaded[$0] }, cities: cities, prefixes: prefixes, ids: ids)
            if asked > 0 {
                progress(
                    "objects: \(systems.map(\.rawValue).joined(separator: " and ")) "
                        + "gave the same answers to \(asked) questions"
                )
            }
        }

        func ops(_ id: String, _ n: Int, _ body: @escaping (any ObjectBenchSystem, Int) throws -> Void) throws {
            guard wantsObjects(id) else { return }
            try repeatInterleaved(id, &table, systems: objectOrder) { s in
                let sys = loaded[s]!
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
        try ops("obj.count", cities.count) { sys, i in _ = try sys.count(ageAbove: 40, city: cities[i]) }
        try ops("obj.query", prefixes.count) { sys, i in _ = try sys.prefixQuery(prefixes[i], ageAbove: 30) }
        try ops("obj.pk-get", ids.count * 10) { sys, i in _ = try sys.nameLength(ofPerson: ids[i % ids.count]) }
        if wantsObjects("obj.enumerate") {
            try repeatInterleaved("obj.enumerate", &table, systems: objectOrder) { s in
                let counters = ReadCounters(loaded[s]!)
                let t = try BenchClock.seconds { _ = try loaded[s]!.sumOfAges() }
                var m = Measurement(value: Double(persons) / t)
                counters.record(into: &m, operations: persons)  // per object read
                return m
            }
        }
        try ops("obj.sort-limit", 5) { sys, _ in _ = try sys.oldest(100) }
        try ops("obj.links", ids.count) { sys, i in _ = try sys.walkLinks(ofPerson: ids[i]) }
        let batch = max(10, persons / 20)
        if wantsObjects("obj.update") {
            var rep = 0
            try repeatInterleaved("obj.update", &table, perRep: { rep = $0 }, systems: objectOrder) { s in
                let chosen = (0..<batch).map { Int64(($0 * 7919 + rep * 104_729) % persons) }
                return try countingCommits(loaded[s]!) {
                    Measurement(value: Double(batch) / (try BenchClock.seconds { try loaded[s]!.birthday(chosen) }))
                }
            }
        }
        // Persons below this key were deleted (by obj.delete-cascade): the notify workloads
        // change only persons that exist, or a change would change nothing and be awaited
        // forever.
        var deletedBelow: Int64 = 0
        if wantsObjects("obj.delete-cascade") {
            var rep = 0
            let per = max(1, min(batch / 2, persons / (2 * max(1, p.repetitions))))
            try repeatInterleaved("obj.delete-cascade", &table, perRep: { rep = $0 }, systems: objectOrder) { s in
                let chosen = (0..<per).map { Int64(rep * per + $0) }
                deletedBelow = max(deletedBelow, Int64(rep * per + per))
                return try countingCommits(loaded[s]!) {
                    Measurement(value: Double(per) / (try BenchClock.seconds { try loaded[s]!.delete(chosen) }))
                }
            }
        }
        let alive = ids.filter { $0 >= deletedBelow }
        let liveIDs = alive.isEmpty ? [Int64(persons - 1)] : alive
        if wantsObjects("obj.notify") {
            // One person's age changes in a durable write (not timed); timed: learning what
            // changed in a view of every person sorted by age.
            let rounds = max(5, min(50, queries / 40))
            var rep = 0
            try repeatInterleaved("obj.notify", &table, perRep: { rep = $0 }, systems: objectOrder) { s in
                let sys = loaded[s]!
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
        }
        if wantsObjects("obj.notify.cross-process") {
            // Fief only: SQLite has no way to tell another process what a commit changed.
            if let exe = childExecutable, let fief = loaded[.fief] as? FiefObjectSystem {
                let rounds = max(10, min(200, queries / 10))
                var rep = 0
                try repeatInterleaved(
                    "obj.notify.cross-process", &table, perRep: { rep = $0 }, systems: { _ in [.fief] }
                ) { _ in
                    try CrossProcessNotify.measure(
                        path: fief.path, rounds: rounds, ids: liveIDs, firstAge: 1_000 + rep * rounds,
                        executable: exe
                    ) { try fief.setAge($0, $1) }
                }
            } else {
                notes.append(
                    "obj.notify.cross-process not run: it needs Fief among the systems "
                        + "and the fief executable for its observer process"
                )
            }
        }
        if wantsObjects("obj.small-txns") {
            let n = max(5, p.smallTxnsFull / 2)
            var rep = 0
            try repeatInterleaved("obj.small-txns", &table, perRep: { rep = $0 }, systems: objectOrder) { s in
                let base = Int64(persons) + 1_000_000 + Int64(rep * n)
                var m = try countingCommits(loaded[s]!) {
                    var m = Measurement(value: 0)
                    let t = try BenchClock.seconds {
                        for i in 0..<n {
                            let a = BenchClock.nanos()
                            try loaded[s]!.insertOne(base + Int64(i))
                            m.latency.record(nanos: BenchClock.nanos() - a)
                        }
                    }
                    m.value = Double(n) / t
                    return m
                }
                if s == .fief {
                    // The raw engine's own one-record durable commits, same count, same run.
                    let dir = "\(work)/obj-raw-\(rep)"
                    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    defer { try? fm.removeItem(atPath: dir) }
                    let raw = try FiefSubject(directory: dir, durability: durability)
                    defer { raw.close() }
                    let value = [UInt8](repeating: 7, count: 48)
                    let rt = try BenchClock.seconds {
                        for i in 0..<n { try raw.write { try $0.put(Int64(i), value) } }
                    }
                    m.extra["rawEngineOpsPerSecond"] = Double(n) / rt
                }
                return m
            }
        }
        try runEncryptedObjects(
            &table, work: work, durability: durability, data: data, loaded: loaded, systems: systems, ids: ids,
            cities: cities)
    }

    /// `body`'s measurement, with the pages Fief's commits wrote per commit during it.
    func countingCommits(_ sys: any ObjectBenchSystem, _ body: () throws -> Measurement) throws -> Measurement {
        let before = sys.commitCounts
        var m = try body()
        if let a = before, let b = sys.commitCounts, b.commits > a.commits {
            m.extra["pagesPerCommit"] = Double(b.pages - a.pages) / Double(b.commits - a.commits)
        }
        return m
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
    /// encrypted store; plain Fief runs in the same repetition (`plainOpsPerSecond`), and the
    /// SQLite column is plain SQLite, so both ratios come from one run.
    func runEncryptedObjects(
        _ table: inout ResultTable, work: String, durability: Durability, data: ObjectDataSet,
        loaded: [SystemName: any ObjectBenchSystem], systems: [SystemName],
        ids: [Int64], cities: [String]
    ) throws {
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
            try repeatInterleaved("obj.encrypted.insert", &table, perRep: { rep = $0 }, systems: order) { s in
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
                var m = Measurement(value: try insert(s == .fief ? key : nil, s.rawValue))
                if s == .fief { m.extra["plainOpsPerSecond"] = try insert(nil, "plain") }
                return m
            }
        }
        guard wantsObjects("obj.encrypted.pk-get") || wantsObjects("obj.encrypted.count") else { return }
        let dir = "\(work)/obj-enc-data"
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let encrypted = try FiefObjectSystem(directory: dir, durability: durability, encryptionKey: key)
        defer { encrypted.close() }
        try encrypted.load(data)
        func ops(_ id: String, _ n: Int, _ body: (any ObjectBenchSystem, Int) throws -> Void) throws {
            guard wantsObjects(id) else { return }
            try repeatInterleaved(id, &table, systems: order) { s in
                func timed(_ sys: any ObjectBenchSystem, latency: Bool) throws -> Measurement {
                    var m = Measurement(value: 0)
                    let t0 = BenchClock.nanos()
                    for i in 0..<n {
                        let a = BenchClock.nanos()
                        try body(sys, i)
                        if latency { m.latency.record(nanos: BenchClock.nanos() - a) }
                    }
                    m.value = Double(n) / (Double(BenchClock.nanos() - t0) / 1e9)
                    return m
                }
                guard s == .fief else { return try timed(loaded[s]!, latency: true) }
                var m = try timed(encrypted, latency: true)
                m.extra["plainOpsPerSecond"] = try timed(loaded[.fief]!, latency: false).value
                return m
            }
        }
        try ops("obj.encrypted.pk-get", ids.count * 10) { sys, i in _ = try sys.nameLength(ofPerson: ids[i % ids.count])
        }
        try ops("obj.encrypted.count", cities.count) { sys, i in _ = try sys.count(ageAbove: 40, city: cities[i]) }
    }

    func wantsObjects(_ id: String) -> Bool { only.map { $0.contains(id) || $0.contains("objects") } ?? true }
}
