import ArgumentParser

@main
struct Fief: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fief",
        abstract: "Fief: a crash-safe embedded database and the suite that tortures it.",
        subcommands: [DBCommand.self, FaultFSCommand.self, TortureCommand.self, BenchCommand.self, ReportCommand.self]
    )
}
