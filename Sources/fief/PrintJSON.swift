import ArgumentParser
import Foundation

/// A command's `--json` flag and the one way it prints: pretty, keys sorted, so output diffs
/// well and scripts see a stable order; without the flag, the command's own text.
struct JSONOutput: ParsableArguments {
    @Flag(help: "Print JSON.") var json = false

    func print<Value: Encodable>(_ value: () throws -> Value, orText text: () throws -> Void) throws {
        guard json else { return try text() }
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        Swift.print(String(decoding: try enc.encode(try value()), as: UTF8.self))
    }
}
