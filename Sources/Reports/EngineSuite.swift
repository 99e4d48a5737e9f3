import Engine
import Foundation

/// What one run carries from workload to workload: where it works, what it measured so far,
/// the stores the read workloads share, and the next fresh key for the writing ones.
final class BenchRunState {
    let work: String
    let value: [UInt8]
    var table = ResultTable()
    var notes: [String] = []
    var stores: [SystemName: any BenchStore] = [:]
    /// Fresh keys above the data set for every writing run, the same for every system.
    var nextKey: Int64

    init(work: String, value: [UInt8], records: Int) {
        self.work = work
        self.value = value
        self.nextKey = Int64(records) + 1_000_000
    }

    func dataDir(_ s: SystemName) -> String { "\(work)/data-\(s.rawValue)" }

    func reopenAll(_ systems: [SystemName], _ d: Durability) throws {
        for s in systems {
            stores[s]?.close()
            stores[s] = try StoreFactory.open(s, directory: dataDir(s), durability: d)
        }
    }

    func closeStores() { for s in stores.values { s.close() } }
}

/// The engine suite as a table: each phase runs when any of its workloads is wanted, in this
/// order (the shared data set is loaded before the workloads that read it).
extension BenchRunner {
    static let engineSuite: [(workloads: [String], run: (BenchRunner, BenchRunState) throws -> Void)] = [
        (["bulk-insert"], { try $0.bulkInserts($1) }),
        (
            ["point-reads", "scan", "small-txns", "small-txns.concurrent", "readers-while-writing", "open"],
            { try $0.loadSharedData($1) }
        ),
        (["point-reads"], { try $0.pointReads($1) }),
        (["scan"], { try $0.scans($1) }),
        (["small-txns"], { try $0.smallTransactions($1) }),
        (["small-txns.concurrent"], { try $0.concurrentSmallTransactions($1) }),
        (["readers-while-writing"], { try $0.readersWhileWriting($1) }),
        (["open"], { try $0.opens($1) }),
        (["churn"], { try $0.churn($1) })
    ]

    /// Bulk insert: a fresh store each run, in a child process when we can start one.
    func bulkInserts(_ state: BenchRunState) throws {
        let p = parameters
        for rep in 0..<p.repetitions {
            for s in order(rep) {
                let dir = "\(state.work)/bulk-\(s.rawValue)-\(rep)"
                let req = BulkInsertChild.Request(
                    system: s, directory: dir, records: p.records, valueSize: p.valueSize, durability: p.durability,
                    seed: p.seed)
                let report =
                    try childExecutable.flatMap { p.memoryInChild ? $0 : nil }.map {
                        try BulkInsertChild.spawn(req, executable: $0)
                    } ?? BulkInsertChild.run(req)
                try? FileManager.default.removeItem(atPath: dir)
                var m = Measurement(value: report.opsPerSecond, extra: ["fileBytes": Double(report.fileBytes)])
                let inChild = childExecutable != nil && p.memoryInChild
                if inChild { report.memory.record(into: &m) }
                state.table.add("bulk-insert", s, m)
                progress(
                    "bulk-insert  rep \(rep + 1)/\(p.repetitions) \(s.rawValue): \(Format.si(m.value)) records/s"
                        + (inChild ? ", peak memory +\(Format.bytes(Double(report.memory.aboveBaseline)))" : ""))
            }
        }
        if childExecutable == nil || !p.memoryInChild {
            state.notes.append("bulk inserts ran in-process: peak memory not measured")
        }
    }

    /// The data set the read workloads share: one store per system, loaded once.
    func loadSharedData(_ state: BenchRunState) throws {
        let p = parameters
        let keys = BenchRandom.permutation(p.records, seed: p.seed, .insertOrder)
        for s in p.systems {
            try FileManager.default.createDirectory(atPath: state.dataDir(s), withIntermediateDirectories: true)
            let store = try StoreFactory.open(s, directory: state.dataDir(s), durability: .none)
            let t = try BenchClock.seconds { try Workloads.load(store, keys: keys, value: state.value) }
            store.close()
            progress("loaded       \(s.rawValue): \(p.records) records in \(String(format: "%.2f", t)) s")
        }
        try state.reopenAll(p.systems, p.durability)
    }

    func pointReads(_ state: BenchRunState) throws {
        let p = parameters
        let keys = BenchRandom.keys(p.pointReads, below: p.records, seed: p.seed, .readKeys)
        try repeatInterleaved("point-reads", &state.table) { s in
            try Workloads.pointReads(state.stores[s]!, keys: keys, latencySamples: p.latencySamples)
        }
    }

    func scans(_ state: BenchRunState) throws {
        let p = parameters
        try repeatInterleaved("scan", &state.table) { s in
            try Workloads.scan(state.stores[s]!, expected: p.records, passes: p.scanPasses)
        }
    }

    /// Durable and non-durable one-record commits; on a FaultFS mount, the same durable commits
    /// rep by rep beside the native ones, so the machine's drift moves both sides of their
    /// ratio alike.
    func smallTransactions(_ state: BenchRunState) throws {
        let p = parameters
        let fm = FileManager.default
        var onMount: [SystemName: any BenchStore] = [:]
        defer {
            for (sys, st) in onMount {
                st.close()
                try? fm.removeItem(atPath: "\(faultFSDirectory ?? "")/fief-bench-\(getpid())-\(sys.rawValue)")
            }
        }
        if let mount = faultFSDirectory, p.smallTxnsFull > 0 {
            for s in p.systems {
                let dir = "\(mount)/fief-bench-\(getpid())-\(s.rawValue)"
                try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
                onMount[s] = try StoreFactory.open(s, directory: dir, durability: .full)
            }
        }
        for (d, count) in [(Durability.full, p.smallTxnsFull), (Durability.none, p.smallTxnsNone)] where count > 0 {
            try state.reopenAll(p.systems, d)
            var base: [Int: Int64] = [:]
            for rep in 0..<p.repetitions {
                base[rep] = state.nextKey
                state.nextKey += Int64(count)
            }
            var rep = 0
            var workloads: [(String, (SystemName) throws -> Measurement)] = [
                (
                    "small-txns.\(d.rawValue)",
                    { s in
                        let b = base[rep]!, store = state.stores[s]!
                        return try countingCommits({ store.commitCounts }, operations: count) {
                            try Workloads.smallTransactions(
                                store, keys: (b..<(b + Int64(count))).map { $0 }, value: state.value)
                        }
                    }
                )
            ]
            if d == .full && !onMount.isEmpty {
                workloads.append(
                    (
                        "small-txns.faultfs",
                        { s in
                            state.nextKey += Int64(count)
                            return try Workloads.smallTransactions(
                                onMount[s]!, keys: ((state.nextKey - Int64(count))..<state.nextKey).map { $0 },
                                value: state.value)
                        }
                    ))
            }
            try repeatInterleaved(workloads, &state.table, perRep: { rep = $0 })
        }
        try state.reopenAll(p.systems, p.durability)
    }

    func concurrentSmallTransactions(_ state: BenchRunState) throws {
        let p = parameters
        try state.reopenAll(p.systems, .full)
        for writers in p.writerThreadCounts ?? [1, 4, 16] {
            try repeatInterleaved("small-txns.concurrent.\(writers)", &state.table) { s in
                state.nextKey += Int64(writers) << 32
                return try Workloads.concurrentSmallTransactions(
                    state.stores[s]!, writers: writers, keyBase: state.nextKey, value: state.value,
                    seconds: p.writerSeconds ?? p.concurrentSeconds)
            }
        }
        try state.reopenAll(p.systems, p.durability)
    }

    func readersWhileWriting(_ state: BenchRunState) throws {
        let p = parameters
        try repeatInterleaved("readers-while-writing", &state.table) { s in
            state.nextKey += 10_000_000
            return try Workloads.readersWhileWriting(
                state.stores[s]!, records: p.records, writeKeyBase: state.nextKey, value: state.value,
                seconds: p.concurrentSeconds, readers: p.readerThreads, seed: p.seed)
        }
    }

    /// Opening the shared stores cold: the last workload to use them.
    func opens(_ state: BenchRunState) throws {
        let p = parameters
        state.closeStores()
        state.stores = [:]
        try repeatInterleaved("open", &state.table) { s in
            var m = Measurement(value: 0)
            var times: [Double] = []
            for i in 0..<p.opens {
                let t = try Workloads.open(
                    s, directory: state.dataDir(s), durability: p.durability, key: Int64(i % p.records))
                times.append(t)
                m.latency.record(nanos: UInt64(t * 1e6))
            }
            m.value = SampleStats(times).median
            m.extra["fileBytes"] = Double(fileBytesOf(s, state.dataDir(s)))
            return m
        }
    }

    /// Sizes do not wander between runs of the same seed: one run per system.
    func churn(_ state: BenchRunState) throws {
        let p = parameters
        for s in p.systems {
            let dir = "\(state.work)/churn-\(s.rawValue)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let store = try StoreFactory.open(s, directory: dir, durability: p.durability)
            let m = try Workloads.churn(
                store, records: p.churnRecords, rounds: p.churnRounds, value: state.value, seed: p.seed)
            store.close()
            try? FileManager.default.removeItem(atPath: dir)
            state.table.add("churn", s, m)
            progress(
                "churn        \(s.rawValue): \(Format.bytes(m.curve!.first!)) after load, "
                    + "\(Format.bytes(m.value)) after \(p.churnRounds) rounds"
            )
        }
    }
}
