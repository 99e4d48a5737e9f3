import Engine
import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// What a power cut may leave of a database after its writers died on a FaultFS mount: the
/// file's bytes now (`new`), its durable bytes (`old`, what a drop-all cut leaves), the 512-byte
/// sectors written since its last sync, and its durable size. A crash state is a choice of
/// which unsynced sectors reached the disk (and whether the size did). `crash-states`
/// enumerates the choices; a replay names one. At the operation level, the image is the
/// durable folder and the write operations since the last sync (`OperationStateSpace`).
struct CrashImage {
    static let sector = 512
    static let database = "/db.fief"
    let new: Data
    let old: Data
    /// The backing folder after a drop-all cut, and the pending operations on the database file
    /// (the lock file's reader table is not part of any state: a check starts without it).
    let durable: DurableTree
    let operations: [PendingOperations.Operation]
    /// Unsynced sector numbers, ascending.
    let unsynced: [Int]
    let durableSize: Int
    /// The commit the last writer died in, and the newest commit any state may hold.
    let dying: UInt64
    let newest: UInt64

    var sizeChoice: Bool { durableSize != new.count }
    /// The yes/no choices a state makes: one per unsynced sector, and the size.
    var choices: Int { unsynced.count + (sizeChoice ? 1 : 0) }

    /// Writers on a FaultFS mount in `dir`: `clean` commits that end normally, then one death
    /// per crash point in `deaths` (each in the commit after the last), then a drop-all cut.
    /// Returns the image, or the harness violation that stopped it.
    static func make(
        dir: String, workload: CommitWorkload, seed: UInt64, model: PersistenceModel, clean: UInt64,
        deaths: [CrashPoint], environment: [String: String], notes: inout [String]
    ) throws -> Result<CrashImage, HarnessFailure> {
        let backing = dir + "/backing", mnt = dir + "/mnt"
        let fs = FaultFSMount(
            backing: backing, mountpoint: mnt, seed: seed, tracePath: dir + "/faultfs-trace.jsonl", model: model)
        try fs.mount()
        defer { fs.unmount() }
        var cycle = CrashCycle(dbPath: mnt + "/db.fief", oraclePath: dir + "/oracle.log", workload: workload)
        cycle.environment = environment
        try cycle.writeSchedule()
        let first = try ChildProcess(
            cycle.writer(maxCommit: clean), environment: environment,
            output: dir + "/writer-0.out", label: "writer"
        ).wait()
        guard first == .exited(0) else {
            return .failure(HarnessFailure("the writer \(first) before the commit under test"))
        }
        var status = try decodeStatus(fs)
        if let pending = status.files.first(where: { $0.path.hasSuffix("db.fief") }), pending.unsyncedBytes > 0 {
            notes.append("\(pending.unsyncedBytes) bytes of db.fief were unsynced between commits")
        }
        for (n, p) in deaths.enumerated() {
            let commit = clean + UInt64(n + 1)
            let killed = try ChildProcess(
                cycle.writer(maxCommit: commit + 2),
                environment: environment.merging([CrashPoint.environmentVariable: "\(p.rawValue):1"]) { $1 },
                output: dir + "/writer-\(n + 1).out", label: "writer"
            ).wait()
            guard killed == .signaled(SIGKILL) else {
                return .failure(HarnessFailure("the writer armed at \(p.rawValue) \(killed)"))
            }
        }
        status = try decodeStatus(fs)
        let pending = try decodePending(fs).operations.filter { $0.path == database }
        let new = try Data(contentsOf: URL(fileURLWithPath: backing + "/db.fief"))
        // What is durable, exactly: FaultFS drops everything unsynced and leaves the backing
        // file as a disk would hold it.
        _ = try fs.ctl(["power-cut", "--mode", "drop-all"])
        let old = try Data(contentsOf: URL(fileURLWithPath: backing + "/db.fief"))
        let durable = try DurableTree.read(backing)
        let file = status.files.first { $0.path.hasSuffix("db.fief") }
        var sectors = Set<Int>()
        for r in file?.unsyncedRanges ?? [] where r.count == 2 {
            for i in stride(from: Int(r[0]) / sector, to: (Int(r[1]) + sector - 1) / sector, by: 1) {
                sectors.insert(i)
            }
        }
        let dying = clean + UInt64(deaths.count)
        // Nothing past the last flip written may come back: two deaths, the first flipped.
        let newest = deaths.count > 1 ? clean + 1 : (deaths.last?.selectFlipWritten == true ? dying : clean)
        return .success(
            CrashImage(
                new: new, old: old, durable: durable, operations: pending, unsynced: sectors.sorted(),
                durableSize: Int(file?.durableSize ?? Int64(new.count)),
                dying: dying, newest: newest))
    }

    /// The file with the unsynced sectors in `newSectors` as written and the others as durable
    /// (zeros past the durable end), at the new size or the durable one.
    func state(newSectors: Set<Int>, newSize: Bool) -> Data {
        let s = CrashImage.sector
        var bytes = new
        for sector in unsynced where !newSectors.contains(sector) {
            let lo = sector * s, hi = min(lo + s, new.count)
            guard lo < hi else { continue }
            let keep = lo < old.count ? old[lo..<min(hi, old.count)] : Data()
            bytes.replaceSubrange(lo..<hi, with: keep + Data(count: (hi - lo) - keep.count))
        }
        if sizeChoice && !newSize { bytes = bytes.prefix(durableSize) }
        return bytes
    }

    /// Every state when there are at most `bound`, else the two extremes and a seeded sample.
    func masks(bound: Int, using rng: inout SeededRandom) -> (masks: [[Bool]], exhaustive: Bool) {
        guard choices < 62, 1 << choices <= bound else {
            var masks = [Array(repeating: false, count: choices), Array(repeating: true, count: choices)]
            while masks.count < bound { masks.append((0..<choices).map { _ in Bool.random(using: &rng) }) }
            return (masks, false)
        }
        return ((0..<(1 << choices)).map { m in (0..<choices).map { m & (1 << $0) != 0 } }, true)
    }

    /// The state a mask over `choices` names.
    func state(mask: [Bool]) -> (newSectors: Set<Int>, newSize: Bool) {
        (Set(unsynced.enumerated().filter { mask[$0.offset] }.map(\.element)), sizeChoice ? mask[choices - 1] : true)
    }

    /// The violations of one state, opened and checked as a file at `path`.
    func check(_ bytes: Data, at path: String, oraclePath: String, workload: CommitWorkload, mode: String) throws
        -> [Violation]
    {
        unlink(path)
        unlink(path + ".lock")
        try bytes.write(to: URL(fileURLWithPath: path))
        let v = RecoveryCheck.verify(dbPath: path, oraclePath: oraclePath, workload: workload)
        var found = v.violations
        if found.isEmpty && v.recoveredCommit > newest {
            found.append(
                .harness(
                    "\(mode) in commit \(dying), yet the state recovered commit \(v.recoveredCommit) "
                        + "(at most \(newest))"))
        }
        return found
    }

    /// The database file's bytes in the operation-level crash state `state`.
    func bytes(_ state: OperationState) -> Data {
        durable.applying(state, of: operations).files[CrashImage.database] ?? Data()
    }

    /// The sector-level state whose file is `bytes`, when there is one: each unsynced sector
    /// all new or all old. A state with a sector that two writes share, one kept and one lost,
    /// has none.
    func sectorState(of bytes: Data) -> (newSectors: Set<Int>, newSize: Bool)? {
        guard bytes.count == new.count || bytes.count == durableSize else { return nil }
        let newSize = bytes.count == new.count
        let newSectors = Set(
            unsynced.filter { sector in
                let lo = sector * CrashImage.sector, hi = min(lo + CrashImage.sector, new.count, bytes.count)
                return lo < hi && bytes[lo..<hi] == new[lo..<hi]
            })
        return state(newSectors: newSectors, newSize: newSize) == bytes ? (newSectors, newSize) : nil
    }

    static func decodePending(_ fs: FaultFSMount) throws -> PendingOperations {
        let text = try fs.ctl(["pending"])
        do {
            return try JSONDecoder().decode(PendingOperations.self, from: Data(text.utf8))
        } catch {
            throw TortureError.invalid("faultfs pending gave no operations: \(error)")
        }
    }

    static func decodeStatus(_ fs: FaultFSMount) throws -> FaultFSStatus {
        let text = try fs.ctl(["status", "--json"])
        guard let start = text.firstIndex(of: "{") else {
            throw TortureError.invalid("faultfs status gave no JSON: \(text)")
        }
        return try JSONDecoder().decode(FaultFSStatus.self, from: Data(text[start...].utf8))
    }
}

/// A cycle that could not get to what it tests (a writer that did not die where armed).
struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
