import Foundation

/// The one message a child process of the suite gets: its role and the run's encryption key.
/// It travels as JSON in one argument, `fief torture child --request JSON`; this type builds
/// that command line and reads it back, so no other code spells a child's flags.
///
/// One argument, as `fief bench child` takes its request: the child stays a plain process of
/// ours (SIGKILL, exit status and output files as before) with nothing to write or clean up
/// first, and `ps` shows what it was told. A request is well under the kernel's 128 KiB limit
/// per argument: a replay's commits stay in their own file (`writer`'s `schedule`).
public struct ChildRequest: Codable, Sendable, Equatable {
    public var role: ChildRole
    /// The run's key (`TortureEncryption`), nil when its databases are plain. It is drawn from
    /// the run's printed seed, so seeing it in a command line gives nothing away.
    public var encryptionKey: [UInt8]?

    /// A request for `role` carrying the key in force in this process.
    public init(_ role: ChildRole, encryptionKey: [UInt8]? = TortureEncryption.key) {
        self.role = role
        self.encryptionKey = encryptionKey
    }

    /// The `fief` command line that performs this request.
    public var arguments: [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        let json = String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
        return ["torture", "child", "--request", json]
    }

    /// Reads the value of `--request`: the JSON itself, `-` for standard input, or a file's path
    /// (the last two for a person rerunning a child by hand).
    public init(argument: String) throws {
        let data: Data
        if argument.hasPrefix("{") {
            data = Data(argument.utf8)
        } else if argument == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: argument) else {
                throw TortureError.invalid("--request: cannot read \(argument)")
            }
            data = contents
        }
        do {
            self = try JSONDecoder().decode(ChildRequest.self, from: data)
        } catch {
            throw TortureError.invalid("--request is not a child request: \(error)")
        }
    }
}
