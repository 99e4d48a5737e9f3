import Engine
import Foundation
import Torture
import TortureSchema

/// What the parent hands a worker: the base files, the seed, and the files to damage.
struct FuzzWorkerRequest: Codable {
    let corpus: FuzzCorpus
    let seed: UInt64
    /// The indices of the damaged files to make and try (each file's damage comes from the
    /// seed and its index, so a new worker resumes where a dead one stopped).
    let files: Range<Int>
    /// The worker appends `begin I`, `run COMMAND` (before each) and `end VERDICT-JSON` lines here.
    let results: String
    /// Where the damaged file and the commands' output are written (one file at a time).
    let scratch: String
}

extension FuzzWorkerRequest: ProcessRequest {
    /// Always given as a file (`arguments(writingTo:)`): a corpus can outgrow the kernel's limit
    /// on one argument.
    static let subcommand = ["db", "fuzz-worker"]
}

/// How one damaged file went: what was done to it and what each command did.
struct FuzzVerdict: Codable {
    enum Outcome: String, Codable {
        /// Every command answered as on the undamaged file.
        case sameAnswers = "same-answers"
        /// Every command answered as on the previous version (a damaged header selected it).
        case previousVersion = "previous-version"
        /// At least one command refused the file with a typed error, or check found problems.
        case refused
    }

    let damage: FileDamage
    var outcome: Outcome
    /// Findings this worker saw (the parent adds signals and hangs).
    var findings: [FuzzFinding] = []
}

struct FuzzWorkerRun {
    let request: FuzzWorkerRequest
    /// Every this many files, each command also runs as its own `fief` process.
    static let shellEvery = 50

    init(_ r: FuzzWorkerRequest) { request = r }

    func run() throws {
        let set = FuzzCommandSet(corpus: request.corpus)
        let damaged = request.scratch + "/damaged.fief"
        try FileManager.default.createDirectory(atPath: request.scratch, withIntermediateDirectories: true)
        let final = reference(set, request.corpus.final), previous = reference(set, request.corpus.previous)
        let base = [UInt8](try Data(contentsOf: URL(fileURLWithPath: request.corpus.final)))
        guard let results = FileHandle(forWritingAtPath: request.results) else {
            throw TortureError.invalid("cannot write \(request.results)")
        }
        results.seekToEndOfFile()
        func line(_ s: String) { results.write(Data((s + "\n").utf8)) }
        for i in request.files {
            line("begin \(i)")
            var bytes = base
            let damage = FileDamage.apply(seed: request.seed, index: i, to: &bytes)
            unlink(damaged + ".lock")
            try Data(bytes).write(to: URL(fileURLWithPath: damaged))
            var verdict = FuzzVerdict(damage: damage, outcome: .sameAnswers)
            var sawPrevious = false, sawFinal = false, refused = false
            for (n, command) in set.commands(on: damaged).enumerated() {
                line("run " + command.name)
                // Damage no longer makes any command trap, so the harness's own test names a
                // file whose first command traps on purpose (debug builds only): it must
                // become a `signal` finding, and the files after it must still run.
                if n == 0, BrokenVariant.available,
                    ProcessInfo.processInfo.environment["FIEF_FUZZ_TRAP_AT"] == String(i)
                {
                    fatalError("FIEF_FUZZ_TRAP_AT=\(i): a trap on purpose")
                }
                let e = InProcessCommand.run(command.arguments, scratch: request.scratch + "/command")
                func finding(_ kind: FuzzFinding.Kind, _ detail: String) {
                    verdict.findings.append(
                        FuzzFinding(
                            index: i, kind: kind, damage: damage.description,
                            command: "fief " + command.arguments.joined(separator: " "), detail: detail))
                }
                // Now and then the same command from the shell, as a process of its own: it
                // must end exactly as it did in here (the in-process run is the CLI's).
                if i % FuzzWorkerRun.shellEvery == 0 {
                    let shell = InProcessCommand.runAsProcess(command.arguments, scratch: request.scratch + "/shell")
                    if shell != e {
                        let inProcess = "\(e.status) \(e.output.prefix(120))\(e.errors.prefix(120))"
                        let asProcess = "\(shell.status) \(shell.output.prefix(120))\(shell.errors.prefix(120))"
                        finding(.shellDisagrees, "in-process exit \(inProcess); as a process exit \(asProcess)")
                    }
                }
                // Answers that tell the versions apart must all come from one of them.
                if command.compared, e == final[n] { sawFinal = sawFinal || final[n] != previous[n]; continue }
                if command.compared, e == previous[n] { sawPrevious = true; continue }
                if e.status == 0 {
                    if command.compared {
                        finding(
                            .wrongAnswer,
                            "answered \(e.output.prefix(300)) where the "
                                + "undamaged file answers \(final[n].output.prefix(300))"
                        )
                    }
                    continue
                }
                if command.reportsProblems && e.errors.isEmpty { refused = true; continue }
                let message = e.errors.trimmingCharacters(in: .newlines)
                if !message.hasPrefix("fief: ") || message.contains("\n") {
                    finding(.untypedError, "exit \(e.status) with \(message.prefix(400))")
                } else if !message.contains(damaged) {
                    finding(
                        .unnamedError,
                        "exit \(e.status) with an error that does not name the file: \(message.prefix(300))")
                }
                refused = true
            }
            if [UInt8](try Data(contentsOf: URL(fileURLWithPath: damaged))) != bytes {
                verdict.findings.append(
                    FuzzFinding(
                        index: i, kind: .wroteFile, damage: damage.description, command: "",
                        detail: "the damaged file changed under read commands"))
            }
            if sawFinal && sawPrevious {
                verdict.findings.append(
                    FuzzFinding(
                        index: i, kind: .wrongAnswer, damage: damage.description, command: "",
                        detail:
                            "some commands answered as the last version, "
                            + "others as the one before: no version is read whole"
                    ))
            }
            verdict.outcome = refused ? .refused : sawPrevious ? .previousVersion : .sameAnswers
            line("end " + String(decoding: try JSONEncoder().encode(verdict), as: UTF8.self))
        }
    }

    /// The commands' endings on an undamaged file; paths in them are the damaged file's, so
    /// the outputs compare as they are.
    private func reference(_ set: FuzzCommandSet, _ path: String) -> [InProcessCommand.Ending] {
        let copy = request.scratch + "/reference.fief"
        unlink(copy + ".lock")
        try? FileManager.default.removeItem(atPath: copy)
        try? FileManager.default.copyItem(atPath: path, toPath: copy)
        let damagedPath = request.scratch + "/damaged.fief"
        return set.commands(on: copy).map { c in
            let e = InProcessCommand.run(c.arguments, scratch: request.scratch + "/command")
            return InProcessCommand.Ending(
                status: e.status, output: e.output.replacingOccurrences(of: copy, with: damagedPath),
                errors: e.errors.replacingOccurrences(of: copy, with: damagedPath))
        }
    }
}
