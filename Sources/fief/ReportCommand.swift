import ArgumentParser
import Foundation
import Reports

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Compare, render and combine benchmark and torture results.",
        subcommands: []
    )
}
