import Foundation

/// What `ctl status --json` prints.
public struct FaultFSStatus: Codable, Sendable {
    public struct File: Codable, Sendable {
        public var path: String
        public var durableSize: Int64
        public var size: Int64
        public var unsyncedBytes: Int
        public var unsyncedRanges: [[Int64]]
        public var pendingWrites: Int
    }
    public struct Rule: Codable, Sendable {
        public var number: Int
        public var rule: String
        public var matched: Int
        public var fired: Int
    }
    public var pid: Int32
    public var seed: UInt64
    /// The persistence model's name (`PersistenceModel`).
    public var model: String
    public var backing: String
    public var powerCuts: Int
    public var files: [File]
    public var unsyncedDirectoryChanges: Int
    public var faultsInjected: [String: Int]
    public var rules: [Rule]
}

/// `fief faultfs ctl` writes a request (a JSON array of words) to the mount's control file
/// and reads back the answer: "ok" or "error" on the first line, then the text.
extension FaultFileSystem {
    public static let controlCommands = [
        "status [--json]", "power-cut --mode MODE [--sector 512|4096]",
        "inject KIND [key=value ...] [once]", "clear [RULE]", "trace-ops on|off", "pending"
    ]

    func writeControl(_ h: Handle, _ data: UnsafeRawBufferPointer) -> Int {
        let answer: String
        do {
            guard let words = try JSONSerialization.jsonObject(with: Data(data)) as? [String] else {
                throw FaultFSError.control("the request is not a list of words")
            }
            answer = "ok\n" + (try control(words))
        } catch {
            answer = "error\n\(error)"
        }
        h.response = Array(answer.utf8)
        return data.count
    }

    func readControl(_ h: Handle, into buffer: UnsafeMutableRawBufferPointer, offset: Int64) -> Int {
        guard offset < h.response.count else { return 0 }
        let n = min(buffer.count, h.response.count - Int(offset))
        h.response.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
        return n
    }

    /// Runs one control command and returns its text.
    public func control(_ words: [String]) throws -> String {
        guard let verb = words.first else {
            throw FaultFSError.control(
                "no command (commands: \(FaultFileSystem.controlCommands.joined(separator: "; ")))")
        }
        let args = Array(words.dropFirst())
        switch verb {
        case "status":
            let s = status()
            if args.contains("--json") {
                let e = JSONEncoder()
                e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                return String(decoding: try e.encode(s), as: UTF8.self) + "\n"
            }
            return FaultFileSystem.render(s)
        case "pending":
            // JSON only: the operations carry their bytes, which no one reads as text.
            let e = JSONEncoder()
            e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try e.encode(pendingOperations()), as: UTF8.self) + "\n"
        case "power-cut":
            var mode: String?, sector: Int?
            var i = 0
            while i < args.count {
                switch args[i] {
                case "--mode" where i + 1 < args.count: mode = args[i + 1]; i += 2
                case "--sector" where i + 1 < args.count:
                    guard let n = Int(args[i + 1]) else {
                        throw FaultFSError.badSpec("--sector \(args[i + 1]): not a number")
                    }
                    sector = n; i += 2
                default:
                    throw FaultFSError.badSpec(
                        "power-cut: unexpected '\(args[i])' (usage: power-cut --mode MODE [--sector 512|4096])")
                }
            }
            return try powerCut(PowerCutMode(name: mode ?? "drop-all", sectorSize: sector)) + "\n"
        case "inject":
            let rule: FaultRule
            do { rule = try FaultRule(words: args) } catch let e as FaultSpecError {
                throw FaultFSError.badSpec(e.description)
            }
            lock.lock(); defer { lock.unlock() }
            let n = plan.add(rule)
            return "rule \(n): \(rule)\n"
        case "clear":
            lock.lock(); defer { lock.unlock() }
            if let n = args.first {
                guard let number = Int(n), plan.remove(number) else {
                    throw FaultFSError.control("clear: no rule \(n)")
                }
                return "cleared rule \(number)\n"
            }
            plan.clear()
            return "cleared every rule\n"
        case "trace-ops":
            guard let v = args.first, v == "on" || v == "off" else { throw FaultFSError.control("trace-ops on|off") }
            lock.lock(); traceOperations = v == "on"; lock.unlock()
            return "tracing every operation: \(v)\n"
        default:
            throw FaultFSError.control(
                "unknown command '\(verb)' (commands: \(FaultFileSystem.controlCommands.joined(separator: "; ")))")
        }
    }

    public func status() -> FaultFSStatus {
        lock.lock(); defer { lock.unlock() }
        let tracked = files.values.filter { !$0.isClean }.sorted { $0.path < $1.path }
        return FaultFSStatus(
            pid: getpid(), seed: seed, model: model.rawValue, backing: backing, powerCuts: powerCuts,
            files: tracked.map { f in
                FaultFSStatus.File(
                    path: f.path, durableSize: f.durableSize, size: (try? f.size()) ?? -1,
                    unsyncedBytes: f.unsyncedBytes,
                    unsyncedRanges: f.unsyncedRanges.map { [$0.lowerBound, $0.upperBound + 1] },
                    pendingWrites: f.pending.count)
            },
            unsyncedDirectoryChanges: namespace.pending.count,
            faultsInjected: plan.counters,
            rules: plan.rules.map {
                FaultFSStatus.Rule(number: $0.number, rule: $0.rule.description, matched: $0.matched, fired: $0.fired)
            })
    }

    static func render(_ s: FaultFSStatus) -> String {
        var out = "faultfs pid \(s.pid), seed \(s.seed), backing \(s.backing), power cuts \(s.powerCuts)\n"
        if s.files.isEmpty { out += "no unsynced data\n" }
        for f in s.files {
            let ranges = f.unsyncedRanges.prefix(8).map { "[\($0[0]), \($0[1]))" }.joined(separator: " ")
            let more = f.unsyncedRanges.count > 8 ? " ..." : ""
            out +=
                "  \(f.path): \(f.unsyncedBytes) unsynced bytes in \(f.pendingWrites) operations; "
                + "durable size \(f.durableSize), size \(f.size); \(ranges)\(more)\n"
        }
        out += "unsynced directory changes: \(s.unsyncedDirectoryChanges)\n"
        out +=
            "faults injected: "
            + (s.faultsInjected.isEmpty
                ? "none"
                : s.faultsInjected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            + "\n"
        for r in s.rules { out += "  rule \(r.number): \(r.rule) (matched \(r.matched), fired \(r.fired))\n" }
        return out
    }
}
