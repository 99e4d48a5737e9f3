/// Which store a torture run drives, parsed from `--target KIND[:CONFIGURATION]`:
///
///     fief                                    Fief's engine with its own scenarios (crash points, growth)
///     fief:generic                            Fief's engine through the TortureTarget protocol
///     sqlite[:journal=wal|delete,synchronous=full|normal|off|extra]   (default wal, full)
///     lmdb[:default|nosync|nometasync|writemap, ...]                  (flags combine)
///     exec:COMMAND                            a program speaking the JSON-lines adapter protocol
///
/// `description` is the canonical form and parses back to the same spec, so it can go into
/// result files and reproduce commands.
public enum TargetSpec: Sendable, Equatable, CustomStringConvertible {
    case fief(generic: Bool)
    case sqlite(SQLiteTarget.Configuration)
    case lmdb(LMDBTarget.Configuration)
    case exec(command: String)

    public static let `default` = TargetSpec.fief(generic: false)
    public static let kinds = ["fief", "sqlite", "lmdb", "exec"]

    public init(parsing text: String) throws {
        let trimmed = text.trimmingWhitespace()
        let kind: String, rest: String
        if let colon = trimmed.firstIndex(of: ":") {
            kind = String(trimmed[..<colon])
            rest = String(trimmed[trimmed.index(after: colon)...])
        } else {
            kind = trimmed
            rest = ""
        }
        switch kind {
        case "fief":
            switch rest {
            case "": self = .fief(generic: false)
            case "generic": self = .fief(generic: true)
            default: throw TargetSpec.bad(text, "fief takes no configuration but 'generic', got '\(rest)'")
            }
        case "sqlite": self = .sqlite(try SQLiteTarget.Configuration(parsing: rest, spec: text))
        case "lmdb": self = .lmdb(try LMDBTarget.Configuration(parsing: rest, spec: text))
        case "exec":
            let command = rest.trimmingWhitespace()
            guard !command.isEmpty else {
                throw TargetSpec.bad(
                    text, "exec needs a command, as in exec:\"python3 examples/adapters/sqlite_adapter.py\"")
            }
            self = .exec(command: command)
        default:
            throw TargetSpec.bad(text, "unknown kind '\(kind)'; known: \(TargetSpec.kinds.joined(separator: ", "))")
        }
    }

    static func bad(_ text: String, _ why: String) -> TortureError {
        .invalid("bad --target '\(text)': \(why)")
    }

    public var kind: String {
        switch self {
        case .fief: return "fief"
        case .sqlite: return "sqlite"
        case .lmdb: return "lmdb"
        case .exec: return "exec"
        }
    }

    /// The configuration part, canonical ("journal=wal,synchronous=full", "nosync", the command).
    public var configuration: String {
        switch self {
        case .fief(let generic): return generic ? "generic" : ""
        case .sqlite(let c): return c.description
        case .lmdb(let c): return c.description
        case .exec(let command): return command
        }
    }

    public var description: String { configuration.isEmpty ? kind : "\(kind):\(configuration)" }

    /// Fief's engine with its own scenarios: named crash points, version numbers, `check()`,
    /// growth under pins. Every other target runs the generic scenarios.
    public var usesFiefScenarios: Bool { self == .fief(generic: false) }

    /// Opens (creating when missing) the store kept in `directory`.
    public func open(directory: String) throws -> TortureTarget {
        switch self {
        case .fief: return try FiefTarget(directory: directory)
        case .sqlite(let c): return try SQLiteTarget(directory: directory, configuration: c)
        case .lmdb(let c): return try LMDBTarget(directory: directory, configuration: c)
        case .exec(let command): return try ExecTarget(directory: directory, command: command)
        }
    }
}

/// `key=value` pairs separated by commas, or bare words; order kept.
func configurationWords(_ text: String) -> [(key: String, value: String?)] {
    text.split(separator: ",").map { word in
        let w = String(word).trimmingWhitespace()
        guard let eq = w.firstIndex(of: "=") else { return (w, nil) }
        return (String(w[..<eq]).trimmingWhitespace(), String(w[w.index(after: eq)...]).trimmingWhitespace())
    }.filter { !$0.key.isEmpty }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" { s = s.dropLast() }
        return String(s)
    }
}
