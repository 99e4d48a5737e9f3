import ArgumentParser
import Foundation
import TortureSchema

/// A command that one of fief's own processes starts to do the work of one `ProcessRequest`:
/// left out of help, handed its request with `--request`, and its errors reported as every
/// command's are.
protocol RequestCommand: ParsableCommand {
    associatedtype Request: ProcessRequest
    static var commandName: String { get }
    static var abstract: String { get }
    /// The value of `--request`, read by `ProcessRequest.init(argument:)`.
    var request: String { get }
    func perform(_ request: Request) throws
}

extension RequestCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: commandName, abstract: abstract, shouldDisplay: false)
    }

    func run() throws {
        try reportingErrors { try perform(try Request(argument: request)) }
    }
}

extension RequestCommand {
    /// A child's one line of output: its report as JSON, which the parent decodes.
    func printReport<Report: Encodable>(_ report: Report) throws {
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
    }
}
