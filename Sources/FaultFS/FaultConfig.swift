import Foundation

/// A mount's configuration file, JSON or TOML:
///
/// ```toml
/// seed = 42                  # the --seed flag wins
/// trace = "faults.jsonl"     # the --trace flag wins
/// trace_operations = false   # trace every operation, not only faults
/// model = "ext4-ordered"     # persistence model (posix, ext4-ordered, ext4-writeback); the --model flag wins
///
/// [[fault]]
/// kind = "eio"
/// op = "write"
/// path = "*.db"
/// nth = 3
/// once = true
/// ```
///
/// JSON has the same keys, with the rules in a list under `"faults"`. The TOML reader takes
/// the subset above: `key = value` lines (strings, integers, floats, booleans) and
/// `[[fault]]` tables. No TOML package in reach builds without network access, and this
/// subset is all a fault list needs.
public struct FaultConfig: Equatable, Sendable {
    public var seed: UInt64?
    public var trace: String?
    public var traceOperations = false
    public var model: PersistenceModel?
    public var faults: [FaultRule] = []

    public init() {}

    public static func load(path: String) throws -> FaultConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FaultFSError.badConfig(path: path, detail: "cannot read it (missing, or not a file)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FaultFSError.badConfig(path: path, detail: "not UTF-8 text")
        }
        do {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.hasPrefix("{") ? try parseJSON(data) : try parseTOML(text)
        } catch let e as FaultSpecError {
            throw FaultFSError.badConfig(path: path, detail: e.description)
        }
    }

    typealias Fields = [(String, String)]

    static func parseJSON(_ data: Data) throws -> FaultConfig {
        guard let parsed = try? JSONSerialization.jsonObject(with: data), let object = parsed as? [String: Any] else {
            throw FaultSpecError("malformed JSON: expected an object such as {\"faults\": [{\"kind\": \"eio\"}]}")
        }
        var top: Fields = []
        var tables: [Fields] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            if key == "faults" || key == "fault" {
                guard let list = value as? [[String: Any]] else {
                    throw FaultSpecError("\"\(key)\" must be a list of objects")
                }
                tables = try list.map {
                    try $0.sorted { $0.key < $1.key }.map { ($0.key, try text(of: $0.value, key: $0.key)) }
                }
            } else {
                top.append((key, try text(of: value, key: key)))
            }
        }
        return try build(top: top, tables: tables)
    }

    private static func text(of value: Any, key: String) throws -> String {
        switch value {
        case let s as String: return s
        case let n as NSNumber:
            if String(cString: n.objCType) == "c" { return n.boolValue ? "true" : "false" }
            return n.stringValue
        default: throw FaultSpecError("\(key): expected a string, number or boolean")
        }
    }

    static func parseTOML(_ text: String) throws -> FaultConfig {
        var top: Fields = []
        var tables: [Fields] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = stripComment(String(raw)).trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line == "[[fault]]" || line == "[[faults]]" { tables.append([]); continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw FaultSpecError("line \(n + 1): expected key = value or [[fault]], found '\(line)'")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\"") {
                guard value.count >= 2, value.hasSuffix("\"") else {
                    throw FaultSpecError("line \(n + 1): unterminated string")
                }
                value = String(value.dropFirst().dropLast())
            } else if value.isEmpty || (Double(value) == nil && value != "true" && value != "false") {
                throw FaultSpecError(
                    "line \(n + 1): \(key) = \(value): expected a quoted string, a number, true or false")
            }
            if tables.isEmpty { top.append((key, value)) } else { tables[tables.count - 1].append((key, value)) }
        }
        return try build(top: top, tables: tables)
    }

    private static func stripComment(_ line: String) -> String {
        var inString = false
        for (i, c) in line.enumerated() {
            if c == "\"" { inString.toggle() }
            if c == "#" && !inString { return String(line.prefix(i)) }
        }
        return line
    }

    private static func build(top: Fields, tables: [Fields]) throws -> FaultConfig {
        var config = FaultConfig()
        for (key, value) in top {
            switch key {
            case "seed":
                guard let s = UInt64(value) else {
                    throw FaultSpecError("seed = \(value): expected a non-negative integer")
                }
                config.seed = s
            case "trace": config.trace = value
            case "trace_operations", "trace-operations": config.traceOperations = try FaultRule.flag(key, value)
            case "model":
                guard let m = PersistenceModel(rawValue: value) else {
                    throw FaultSpecError(
                        "model = \(value): "
                            + "expected one of \(PersistenceModel.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                config.model = m
            default:
                throw FaultSpecError(
                    "unknown setting '\(key)' (settings: seed, trace, trace_operations, model, and [[fault]] tables)")
            }
        }
        for (i, fields) in tables.enumerated() {
            guard let kind = fields.first(where: { $0.0 == "kind" })?.1 else {
                throw FaultSpecError(
                    "fault \(i + 1) has no kind (kinds: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            do {
                config.faults.append(try FaultRule(kindName: kind, fields: fields.filter { $0.0 != "kind" }))
            } catch let e as FaultSpecError {
                throw FaultSpecError("fault \(i + 1): \(e.description)")
            }
        }
        return config
    }
}
