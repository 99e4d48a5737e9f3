import ArgumentParser

/// A `report` command that pools several results.json files of one kind into one: the runs of
/// one build (`combine`), the shards of one torture run (`merge`).
protocol PoolingCommand {
    associatedtype Results
    /// The help of the files pooled and of `--out`, in the command's words.
    static var inputsHelp: String { get }
    static var outHelp: String { get }
    /// One of the files, read as the command reads it (its errors name the file).
    static func load(_ path: String) throws -> Results
}

/// The files a pooling command reads, in order, and the one it writes.
struct PooledResultsArguments<Command: PoolingCommand>: ParsableArguments {
    @Argument(help: ArgumentHelp(Command.inputsHelp)) var inputs: [String]
    @Option(help: ArgumentHelp(Command.outHelp)) var out: String

    func load() throws -> [Command.Results] { try inputs.map(Command.load) }
}
