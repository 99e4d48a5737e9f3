import Foundation

/// How a `--json` flag prints: pretty, keys sorted, so output diffs well and scripts see a
/// stable order.
func printJSON(_ value: some Encodable) throws {
    let enc = JSONEncoder()
    enc.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try enc.encode(value), as: UTF8.self))
}
