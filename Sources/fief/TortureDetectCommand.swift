import ArgumentParser
import Torture

/// Runs every broken variant under the scenario meant to catch it and writes the table.
struct TortureDetect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Run every broken variant under its scenario; write detection.json and detection.md (debug builds).")
    @Option(help: "Seed for every random choice.") var seed: UInt64 = 1
    @Option(help: "At most this many cycles per variant.") var cycles: Int = 12
    @Option(help: "Folder for detection.json, detection.md and each run.") var out: String = "fief-out/detection"
    @Option(help: "Only these variants, comma-separated (default: every one).") var variants: String?

    func validate() throws {
        guard let variants else { return }
        let known = Set(Detection.plan.map(\.variant))
        for v in variants.split(separator: ",").map(String.init) where !known.contains(v) {
            throw ValidationError("unknown variant '\(v)'; known: \(known.sorted().joined(separator: ", "))")
        }
    }

    func run() throws {
        try reportingErrors {
            var detection = Detection(seed: seed, cycles: cycles, out: out)
            detection.only = variants.map { Set($0.split(separator: ",").map(String.init)) }
            let rows = try detection.run { print($0) }
            print(
                "fief torture detect: \(rows.filter(\.caught).count) of \(rows.count) caught; "
                    + "wrote \(out)/detection.md and detection.json"
            )
            if rows.contains(where: { !$0.caught }) { throw ExitCode(1) }
        }
    }
}
