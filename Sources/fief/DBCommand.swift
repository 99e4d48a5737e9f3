import ArgumentParser
import Engine

struct DBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Inspect and edit Fief database files."
    )
}
