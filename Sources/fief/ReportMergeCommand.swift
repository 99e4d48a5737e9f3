import ArgumentParser
import Foundation
import Torture
import TortureSchema

struct ReportMerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge the results.json of torture shards (--shard K/N of one seed) into one result.",
        discussion:
            "Writes the merged results.json, and junit.xml and summary.md beside it. "
            + "Exit status: 0 when no shard found a violation, 1 when any did."
    )
    @OptionGroup var files: PooledResultsArguments<ReportMerge>

    func run() throws {
        var merged: TortureResults?
        try reportingErrors {
            let m = try TortureResults.merge(try files.load())
            merged = m
            let out = files.out
            let dir = (out as NSString).deletingLastPathComponent
            try ResultFiles.write(m, to: dir.isEmpty ? "." : dir)
            if (out as NSString).lastPathComponent != "results.json" {
                let written = (dir.isEmpty ? "." : dir) + "/results.json"
                _ = try? FileManager.default.removeItem(atPath: out)
                try FileManager.default.moveItem(atPath: written, toPath: out)
            }
        }
        guard let merged else { return }
        let cycles = merged.scenarios.reduce(0) { $0 + $1.cycles }
        print(
            "merged \(files.inputs.count) shards (\(merged.shard)): \(cycles) cycles, "
                + "\(merged.passed ? "passed" : "FAILED"); wrote \(files.out), junit.xml and summary.md"
        )
        if !merged.passed { throw ExitCode(1) }
    }
}

extension ReportMerge: PoolingCommand {
    static let inputsHelp = "The shards' results.json files."
    static let outHelp = "The merged results.json to write."

    static func load(_ path: String) throws -> TortureResults {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TortureError.invalid("\(path): cannot read it")
        }
        do { return try JSONDecoder().decode(TortureResults.self, from: data) } catch {
            throw TortureError.invalid("\(path): not a torture results.json (\(error))")
        }
    }
}
