import Engine
import FaultFS
import Foundation

extension ChildRequest {
    /// Performs the request in this process and returns the exit status: 0 when the work is
    /// done, a code the role chose (a changed snapshot, a wrong read), or 1 for an error, told
    /// in one line on stderr that names the role (scenarios look for `fief torture writer:`).
    public func run() -> Int32 {
        TortureEncryption.use(key: encryptionKey)
        do {
            return try role.perform()
        } catch {
            FileHandle.standardError.write(Data("fief torture \(role.name): \(error)\n".utf8))
            return 1
        }
    }
}

extension ChildRole {
    /// The case's name, for messages.
    var name: String { Mirror(reflecting: self).children.first?.label ?? "child" }

    /// The role's work; its exit status (see `ChildRequest.run`).
    func perform() throws -> Int32 {
        switch self {
        case .writer(let db, let oracle, let seed, let threads, let maxCommit, let durability, let batch, let schedule):
            let planned = try schedule.map {
                try JSONDecoder().decode([PlannedCommit].self, from: Data(contentsOf: URL(fileURLWithPath: $0)))
            }
            try CommitWriter(
                dbPath: db, oraclePath: oracle, seed: seed, schedule: planned, durability: durability,
                threads: threads, maxCommit: maxCommit, batch: batch
            ).run()
        case .observer(let of, let db, let log, let stop, let graceSeconds):
            let files = ObserverFiles(dbPath: db, logPath: log, stopPath: stop, graceSeconds: graceSeconds)
            let ok = of == .commits ? try CommitLogObserver(files).run() : try ResultsLogObserver(files).run()
            if !ok { return 3 }
        case .holdSnapshot(let db, let ready, let seconds):
            if try !SnapshotHolder(dbPath: db, readyPath: ready, seconds: seconds).run() {
                FileHandle.standardError.write(Data("fief: snapshot changed under a reader\n".utf8))
                return 3
            }
        case .listAppend(let worker):
            try worker.run()
        case .targetWriter(let target, let dir, let oracle, let seed, let maxCommit):
            try TargetWriter(spec: target, directory: dir, oraclePath: oracle, seed: seed, maxCommit: maxCommit).run()
        case .targetVerify(let target, let dir, let oracle, let seed, let out):
            let verdict = TargetRecoveryCheck.verify(spec: target, directory: dir, oraclePath: oracle, seed: seed)
            try JSONEncoder().encode(verdict).write(to: URL(fileURLWithPath: out))
        case .targetListAppend(let worker):
            try worker.run()
        case .objectsWriter(let db, let oracle, let seed, let maxCommit, let schema):
            try ObjectsWriter(dbPath: db, oraclePath: oracle, seed: seed, maxCommit: maxCommit, schema: schema).run()
        case .objectsCheck(let db, let oracle, let seed, let report, let cacheReopen):
            let v = ObjectRecoveryCheck.verifyHere(
                dbPath: db, oraclePath: oracle, workload: ObjectGraphWorkload(seed: seed), cacheReopen: cacheReopen)
            try ObjectRecoveryCheck.writeReport(v, to: report)
        case .objectsCache(let db, let maxNotes):
            try GraphCache.reopenAndWrite(dbPath: db, maxNotes: maxNotes)
        case .objectsMigrate(let db):
            try ObjectsWriter.migrate(dbPath: db)
        case .objectsConvert(let db):
            try ObjectsWriter.convert(dbPath: db)
        case .fileOperation(let op, let db, let dest):
            try ChildRole.perform(op, db: db, dest: dest)
        case .checkedRead(let db, let oracle, let seed, let verifyChecksums):
            let (outcome, detail) = CheckedReader.run(
                dbPath: db, oraclePath: oracle, seed: seed, verifyChecksums: verifyChecksums)
            print(detail)
            return outcome.rawValue
        case .churnReader(let db, let seed, let seconds, let threads):
            switch try ChurnReader(dbPath: db, seed: seed, seconds: seconds, threads: threads).run() {
            case .success(let n): print("\(n) reads, each exactly its commit's state")
            case .failure(let e):
                print("wrong read: \(e)")
                return 3
            }
        case .faultFSDaemon(let backing, let mountpoint, let seed, let model, let config, let trace):
            try ChildRole.serve(backing, mountpoint, seed: seed, model: model, config: config, trace: trace)
        }
        return 0
    }

    private static func serve(
        _ backing: String, _ mountpoint: String, seed: UInt64, model: PersistenceModel, config: String?,
        trace: String
    ) throws {
        // A session of its own, as `fief faultfs mount` gives its daemon: a signal to the run's
        // process group (Ctrl-C) must not take the filesystem away before the run unmounts it.
        setsid()
        var c = try config.map { try FaultConfig.load(path: $0) } ?? FaultConfig()
        c.model = model
        print("faultfs: serving \(backing) at \(mountpoint), seed \(seed), model \(model), pid \(getpid())")
        fflush(stdout)
        try Mounter.serve(backing: backing, mountpoint: mountpoint, seed: seed, config: c, tracePath: trace)
    }

    private static func perform(_ op: FileOperation, db: String, dest: String?) throws {
        switch op {
        case .create: _ = try Database(path: db, options: TortureEncryption.options())
        case .compact: try Database(path: db, options: TortureEncryption.options(create: false)).compact()
        case .copy:
            guard let dest else { throw TortureError.invalid("a copy needs a destination") }
            try Database(path: db, options: TortureEncryption.options(create: false)).writeCopy(to: dest)
        }
    }
}
