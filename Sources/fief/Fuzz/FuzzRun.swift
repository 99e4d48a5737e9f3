import Foundation
import Torture

/// Something a damaged file must never cause.
struct FuzzFinding: Codable {
    enum Kind: String, Codable, CaseIterable {
        case signal, hang
        /// The worker exited (not by a signal) in the middle of a file: its own error.
        case workerExit = "worker-exit"
        case wrongAnswer = "wrong-answer"
        case untypedError = "untyped-error"
        case unnamedError = "unnamed-error"
        case wroteFile = "wrote-file"
        /// The command ended otherwise as a process of its own than inside the worker.
        case shellDisagrees = "shell-disagrees"
    }

    let index: Int
    let kind: Kind
    let damage: String
    let command: String
    let detail: String
}

/// One kind's files: how they went, and every finding.
struct FuzzSummary: Codable {
    let kind: FuzzKind
    var files = 0
    var sameAnswers = 0
    var previousVersion = 0
    var refused = 0
    var byDamage: [String: Int] = [:]
    var findings: [FuzzFinding] = []
    var seconds = 0.0

    mutating func add(_ v: FuzzVerdict) {
        files += 1
        byDamage[v.damage.kind.rawValue, default: 0] += 1
        switch v.outcome {
        case .sameAnswers: sameAnswers += 1
        case .previousVersion: previousVersion += 1
        case .refused: refused += 1
        }
        findings += v.findings
    }

    var line: String {
        let counts = FuzzFinding.Kind.allCases.map { k in "\(findings.filter { $0.kind == k }.count) \(k.rawValue)" }
        return
            "\(kind.rawValue): \(files) damaged files in \(Int(seconds)) s: "
            + "\(sameAnswers) answered as undamaged, \(previousVersion) as the previous version, "
            + "\(refused) refused with a typed error; findings: " + counts.joined(separator: ", ")
    }
}

struct FuzzReport: Codable {
    let seed: UInt64
    let kinds: [FuzzSummary]
}

/// The parent side: runs workers over the files of one kind, restarting one past the file a
/// worker died or hung on, and keeps each finding's damaged file with a reproduce line.
struct FuzzRun {
    let corpus: FuzzCorpus
    let seed: UInt64
    let range: Range<Int>
    let out: String
    let timeout: Double
    let quiet: Bool

    func run() throws -> FuzzSummary {
        let start = Date()
        var summary = FuzzSummary(kind: corpus.kind)
        let work = "\(out)/work/\(corpus.kind.rawValue)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let progress = Progress()
        progress.quiet = quiet
        var next = range.lowerBound
        while next < range.upperBound {
            let results = work + "/results.txt", requestPath = work + "/request.json"
            guard FileManager.default.createFile(atPath: results, contents: nil) else {
                throw TortureError.io("create \(results)", errno)
            }
            let request = FuzzWorkerRequest(
                corpus: corpus, seed: seed, files: next..<range.upperBound, results: results, scratch: work)
            let child = try ChildProcess(
                arguments: try request.arguments(writingTo: requestPath), output: work + "/worker.out",
                label: "fuzz worker")
            var lines = LineFollower(path: results)
            var current: (index: Int, since: Date)?
            var command = ""
            var lastLine = Date()
            var progressed = false
            func drain() throws {
                for l in lines.newLines() {
                    lastLine = Date()
                    if l.hasPrefix("begin "), let i = Int(l.dropFirst(6)) {
                        current = (i, Date())
                        command = "(before its first command)"
                    } else if l.hasPrefix("run ") {
                        command = String(l.dropFirst(4))
                    } else if l.hasPrefix("end ") {
                        let v = try JSONDecoder().decode(FuzzVerdict.self, from: Data(l.dropFirst(4).utf8))
                        summary.add(v)
                        next = v.damage.index + 1
                        current = nil
                        progressed = true
                        progress.update(
                            scenario: "fuzz \(corpus.kind.rawValue)", cycles: summary.files, total: range.count,
                            faults: summary.files - summary.sameAnswers, violations: summary.findings.count)
                    }
                }
            }
            while true {
                try drain()
                if !child.isRunning {
                    let ending = child.wait()
                    try drain()
                    if let c = current {
                        summary.files += 1
                        // The dying command's standard error went to its scratch file: the trap's message.
                        let said = ((try? String(contentsOfFile: work + "/command.stderr", encoding: .utf8)) ?? "")
                            .split(separator: "\n").prefix(2)
                        let kind: FuzzFinding.Kind
                        if case .signaled = ending { kind = .signal } else { kind = .workerExit }
                        summary.findings.append(
                            finding(
                                c.index, kind, command,
                                "the worker \(ending); it said: "
                                    + "\(said.joined(separator: " / ")) (see \(work)/worker.out)"
                            ))
                        next = c.index + 1
                    } else if ending != .exited(0) && !progressed {
                        let said = (try? String(contentsOfFile: work + "/worker.out", encoding: .utf8)) ?? ""
                        throw TortureError.invalid("fuzz worker \(ending) before any damaged file: \(said.suffix(600))")
                    }
                    break
                }
                if current == nil, Date().timeIntervalSince(lastLine) > 4 * timeout {
                    // Between files (the base files' reference answers, after a restart).
                    child.kill9Tree()
                    _ = child.wait()
                    throw TortureError.invalid(
                        "fuzz worker made no progress in \(Int(4 * timeout)) s outside any damaged file; "
                            + "see \(work)/worker.out"
                    )
                }
                if let c = current, Date().timeIntervalSince(c.since) > timeout {
                    child.kill9Tree()
                    _ = child.wait()
                    try drain()
                    summary.files += 1
                    summary.findings.append(finding(c.index, .hang, command, "no answer within \(Int(timeout)) s"))
                    next = c.index + 1
                    break
                }
                usleep(10_000)
            }
        }
        progress.endLine()
        summary.seconds = Date().timeIntervalSince(start)
        for f in summary.findings { try keep(f) }
        return summary
    }

    private func finding(_ index: Int, _ kind: FuzzFinding.Kind, _ command: String, _ detail: String) -> FuzzFinding {
        var bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: corpus.final))) ?? Data())
        let damage = FileDamage.apply(seed: seed, index: index, to: &bytes)
        return FuzzFinding(
            index: index, kind: kind, damage: damage.description, command: "db " + command, detail: detail)
    }

    /// The damaged file of a finding, made again from (seed, index), with what happened.
    private func keep(_ f: FuzzFinding) throws {
        let dir = "\(out)/findings"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: corpus.final)))
        let damage = FileDamage.apply(seed: seed, index: f.index, to: &bytes)
        let name = "\(dir)/\(corpus.kind.rawValue)-\(f.index)"
        try Data(bytes).write(to: URL(fileURLWithPath: name + ".fief"))
        let broken = ProcessInfo.processInfo.environment["FIEF_BROKEN"].map { "FIEF_BROKEN=\($0) " } ?? ""
        let text = """
            \(f.kind.rawValue): \(f.detail)
            damage: \(damage.description)
            command: \(f.command)
            reproduce: \(broken)fief db fuzz --kind \(corpus.kind.rawValue) --seed \(seed) \
            --only \(f.index) --out \(out)
            \(corpus.keyFile.map { "key file: \($0)\n" } ?? "")
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: name + ".txt"))
    }
}

/// The lines appended to a file since the last call (a partial last line waits).
struct LineFollower {
    let path: String
    private var offset: UInt64 = 0
    private var partial = ""

    init(path: String) { self.path = path }

    mutating func newLines() -> [String] {
        guard let h = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? h.close() }
        h.seek(toFileOffset: offset)
        let data = h.readDataToEndOfFile()
        offset += UInt64(data.count)
        let text = partial + String(decoding: data, as: UTF8.self)
        var parts = text.components(separatedBy: "\n")
        partial = parts.removeLast()
        return parts
    }
}
