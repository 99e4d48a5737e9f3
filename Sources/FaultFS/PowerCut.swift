#if canImport(Glibc)
    import Glibc
    import SeededRandomness
#endif

/// What a power cut keeps of the writes and directory changes that were never synced.
public enum PowerCutMode: Equatable, Sendable, CustomStringConvertible {
    /// Every unsynced write and directory change is lost.
    case dropAll
    /// Each unsynced write is kept, lost, or torn sector by sector (as SQLite's crash VFS);
    /// directory changes survive as a random prefix, as a journal commits them in order.
    case dropRandom
    /// A random prefix of all unsynced operations, in the order they were made.
    case prefix
    /// Each changed block of `sectorSize` bytes ends up all old or all new, in any mix.
    case torn(sectorSize: Int)

    public init(name: String, sectorSize: Int?) throws {
        switch name {
        case "drop-all": self = .dropAll
        case "drop-random": self = .dropRandom
        case "prefix": self = .prefix
        case "torn":
            let s = sectorSize ?? 512
            guard s == 512 || s == 4096 else {
                throw FaultFSError.badSpec("--sector \(s): torn writes tear at 512 or 4096 bytes")
            }
            self = .torn(sectorSize: s)
        case "torn-512": self = .torn(sectorSize: 512)
        case "torn-4096": self = .torn(sectorSize: 4096)
        default:
            throw FaultFSError.badSpec(
                "unknown power-cut mode '\(name)' (modes: drop-all, drop-random, prefix, torn [--sector 512|4096])")
        }
    }

    public var description: String {
        switch self {
        case .dropAll: return "drop-all"
        case .dropRandom: return "drop-random"
        case .prefix: return "prefix"
        case .torn(let s): return "torn-\(s)"
        }
    }
}

/// A reference box, so the decision closures of one cut draw from one stream in order.
private final class Draws {
    var random: SeededRandom
    init(_ r: SeededRandom) { random = r }
    func coin() -> Bool { Bool.random(using: &random) }
    func below(_ n: Int) -> Int { Int.random(in: 0..<n, using: &random) }
}

extension FaultFileSystem {
    /// Each file draws from its own stream, named by its path, so writes to one file (the
    /// kernel writing back a shared mapping whenever it likes, say) never shift the fate of
    /// another's.
    private func fileStream(_ f: DurableFile, cut: Int) -> SeededRandom {
        SeededRandom.derive(seed ^ FNV1a.of(f.path), 0xC07 &+ UInt64(cut))
    }

    /// Cuts the power: puts every backing file and directory in a state a disk could hold
    /// after losing power, makes that the durable state, and fails every open handle from
    /// now on. Returns a summary line.
    public func powerCut(_ mode: PowerCutMode) throws -> String {
        pthread_rwlock_wrlock(&cutLock)
        defer { pthread_rwlock_unlock(&cutLock) }
        lock.lock()
        defer { lock.unlock() }
        powerCuts += 1
        let draws = Draws(SeededRandom.derive(seed, 0xC07 &+ UInt64(powerCuts)))
        // Files in the order the workload first changed them, so draws repeat with the seed
        // whatever inode numbers the backing filesystem handed out.
        let changed = files.values.filter { !$0.isClean }.sorted {
            ($0.pending.first?.seq ?? 0) < ($1.pending.first?.seq ?? 0)
        }
        let seqs = (changed.flatMap { $0.pending.map(\.seq) } + namespace.pending.map(\.seq)).sorted()
        var keptOps = 0, totalOps = 0
        var keepNames = 0
        switch mode {
        case .dropAll:
            for f in changed { totalOps += try f.powerCut(.dropAll).of }
        case .prefix:
            let k = draws.below(seqs.count + 1)
            let cut = k < seqs.count ? seqs[k] : UInt64.max
            for f in changed {
                let r = try f.powerCut(.choose { $0.seq < cut ? .all : .none })
                keptOps += r.kept; totalOps += r.of
            }
            keepNames = namespace.pending.filter { $0.seq < cut }.count
        case .dropRandom:
            for f in changed {
                let draws = Draws(fileStream(f, cut: powerCuts))
                let r = try f.powerCut(
                    .choose { _ in
                        switch draws.below(3) {
                        case 0: return .all
                        case 1: return .none
                        default: return .sectors { _ in draws.coin() }
                        }
                    })
                keptOps += r.kept; totalOps += r.of
            }
            keepNames = draws.below(namespace.pending.count + 1)
        case .torn(let size):
            for f in changed {
                let draws = Draws(fileStream(f, cut: powerCuts))
                let r = try f.powerCut(.torn(sectorSize: size, newSize: draws.coin(), keepBlock: { _ in draws.coin() }))
                keptOps += r.kept; totalOps += r.of
            }
            keepNames = draws.below(namespace.pending.count + 1)
        }
        let names = namespace.pending.count
        let undone = namespace.powerCut(keep: keepNames)
        files.removeAll()
        generation += 1
        let what: String
        if case .torn = mode {
            what = "kept \(keptOps) changed blocks"
        } else {
            what = "kept \(keptOps) of \(totalOps) unsynced writes"
        }
        let summary =
            "power cut \(powerCuts) (\(mode), model \(model)): \(changed.count) files changed, "
            + "\(what), undid \(undone) of \(names) directory changes"
        seq += 1
        trace?.append(
            TraceEvent(
                seq: seq, seed: seed, op: "power-cut", path: "/", offset: nil, length: totalOps,
                fault: "power-cut", rule: nil, outcome: summary))
        return summary
    }
}
