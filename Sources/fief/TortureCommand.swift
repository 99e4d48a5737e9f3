import ArgumentParser
import Engine
import Foundation
import Torture

struct TortureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "Kill writers mid-commit, cut power, and verify recovery.",
        subcommands: [TortureWriter.self, TortureHoldSnapshot.self]
    )
}

/// The process crash cycles kill. Not for direct use.
struct TortureWriter: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "writer", abstract: "(internal) Commit the seeded workload, logging to an oracle.", shouldDisplay: false)
    @Option var db: String
    @Option var oracle: String
    @Option var seed: UInt64
    @Option var threads: Int = 1
    @Option var maxCommit: UInt64
    @Option var durability: String = "full"

    func run() throws {
        guard let d = Durability(rawValue: durability) else { throw ValidationError("--durability must be full or none") }
        do {
            try CommitWriter(dbPath: db, oraclePath: oracle, seed: seed, durability: d, threads: threads, maxCommit: maxCommit).run()
        } catch {
            FileHandle.standardError.write(Data("fief torture writer: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// A reader process that holds one snapshot and checks it never changes. Not for direct use.
struct TortureHoldSnapshot: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hold-snapshot", abstract: "(internal) Pin a snapshot and verify it stays the same.", shouldDisplay: false)
    @Option var db: String
    @Option var ready: String
    @Option var seconds: Double = 2

    func run() throws {
        do {
            if try !SnapshotHolder(dbPath: db, readyPath: ready, seconds: seconds).run() {
                FileHandle.standardError.write(Data("fief: snapshot changed under a reader\n".utf8))
                throw ExitCode(3)
            }
        } catch let e as ExitCode {
            throw e
        } catch {
            FileHandle.standardError.write(Data("fief torture hold-snapshot: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
