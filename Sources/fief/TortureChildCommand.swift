import ArgumentParser
import Torture

/// Every process the torture suite starts: one request (`ChildRequest`) says what it does.
/// Not for direct use.
struct TortureChild: RequestCommand {
    static let commandName = "child"
    static let abstract = "(internal) Do the work of one process a torture scenario starts."
    @Option(help: "The request: its JSON, a file holding it, or - for standard input.") var request: String

    func perform(_ r: ChildRequest) throws {
        let status = r.run()
        if status != 0 { throw ExitCode(status) }
    }
}
