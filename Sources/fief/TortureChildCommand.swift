import ArgumentParser
import Torture

/// Every process the torture suite starts: one request (`ChildRequest`) says what it does.
/// Not for direct use.
struct TortureChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "child", abstract: "(internal) Do the work of one process a torture scenario starts.",
        shouldDisplay: false)
    @Option(help: "The request: its JSON, a file holding it, or - for standard input.") var request: String

    func run() throws {
        try reportingErrors {
            let status = try ChildRequest(argument: request).run()
            if status != 0 { throw ExitCode(status) }
        }
    }
}
