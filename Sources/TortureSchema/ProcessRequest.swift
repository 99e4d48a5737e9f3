import Foundation

/// What a `fief` process started by another one is told: one JSON value, passed as the value
/// of `--request`, built and read back by the same type, so no code spells a child's flags
/// by hand. The torture suite's children, the bench's child processes and the fuzzer's
/// workers all take one.
public protocol ProcessRequest: Codable {
    /// The subcommand that performs the request (`["torture", "child"]`).
    static var subcommand: [String] { get }
}

/// A `--request` value that cannot be read, or is not a request of the kind expected.
public struct ProcessRequestError: Error, CustomStringConvertible {
    public let description: String
}

extension ProcessRequest {
    /// The request as JSON in one argument: the child stays a plain process (SIGKILL, exit
    /// status and output files as before) with nothing to write or clean up first, and `ps`
    /// shows what it was told. Keep what a request carries well under the kernel's 128 KiB
    /// per argument; a large one goes through a file (`arguments(writingTo:)`).
    public var arguments: [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        let json = String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
        return Self.subcommand + ["--request", json]
    }

    /// The request written to the file at `path`, and the command line that reads it there.
    public func arguments(writingTo path: String) throws -> [String] {
        try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: path))
        return Self.subcommand + ["--request", path]
    }

    /// Reads the value of `--request`: the JSON itself, `-` for standard input, or a file's
    /// path (the last two also for a person rerunning a child by hand).
    public init(argument: String) throws {
        let data: Data
        if argument.hasPrefix("{") {
            data = Data(argument.utf8)
        } else if argument == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: argument) else {
                throw ProcessRequestError(
                    description: "\(Self.subcommand.joined(separator: " ")) --request: cannot read \(argument)")
            }
            data = contents
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: data)
        } catch {
            throw ProcessRequestError(
                description:
                    "\(Self.subcommand.joined(separator: " ")) --request is not a request of this command: \(error)"
            )
        }
    }
}
