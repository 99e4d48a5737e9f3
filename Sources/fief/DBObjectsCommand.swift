import ArgumentParser
import Engine
import FiefObjects
import Foundation

/// Opens a file's object layer without model classes: dynamic access by class name, read-only.
/// Every node is checked as it is read (see `openForInspection`).
func openObjectStore(_ path: String, encryptionKey: [UInt8]?) throws -> ObjectStore {
    guard FileManager.default.fileExists(atPath: path) else { throw EngineError.fileNotFound(path: path) }
    let version =
        try ObjectStore.storedSchemaVersion(at: path, encryptionKey: encryptionKey, verifyChecksums: true) ?? 0
    var configuration = Configuration(path: path, types: [], schemaVersion: version, readOnly: true)
    configuration.encryptionKey = encryptionKey
    configuration.verifyChecksums = true
    return try ObjectStore(configuration)
}

struct DBSchema: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Show the object classes stored in a file, their properties and counts.")
    @OptionGroup var file: DatabaseFileArguments
    @OptionGroup var output: JSONOutput

    func run() throws {
        try reportingErrors {
            let ctx = try file.objectStore().context()
            let classes = try ctx.storedClasses()
            struct Out: Encodable {
                let schemaVersion: UInt64; let classes: [ClassSchema]; let counts: [String: Int]
            }
            let json = {
                let counts = Dictionary(
                    uniqueKeysWithValues: try classes.map { ($0.name, try ctx.count(ofClass: $0.name)) })
                return Out(schemaVersion: ctx.schemaVersion, classes: classes, counts: counts)
            }
            try output.print(json) {
                guard !classes.isEmpty else { print("\(file.path): no object schema (a plain table file)"); return }
                print("\(file.path): schema version \(ctx.schemaVersion), \(classes.count) classes")
                for c in classes {
                    print(
                        "class \(c.name)  (\(try ctx.count(ofClass: c.name)) objects, \(c.layouts.count) row layouts)")
                    for p in c.properties {
                        var flags: [String] = []
                        if p.primaryKey { flags.append("primary key") }
                        if p.indexed { flags.append("indexed") }
                        if p.onDelete == .cascade { flags.append("cascade") }
                        let marks = flags.isEmpty ? "" : "  [" + flags.joined(separator: ", ") + "]"
                        print("  \(p.name): \(p.typeName)\(marks)")
                    }
                }
            }
        }
    }
}

struct DBQuery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query", abstract: "Query the objects of a class with an NSPredicate-format predicate.",
        discussion:
            "Example: fief db query app.fief Person "
            + "\"age > 30 AND ANY dogs.name BEGINSWITH[c] 'r'\" --sort age --desc --limit 10"
    )
    @OptionGroup var file: DatabaseFileArguments
    @Argument(help: "Class name.") var className: String
    @Argument(help: "Predicate (default: every object).") var predicate: String?
    @Option(help: "Sort by this property (repeatable; a.b follows links).") var sort: [String] = []
    @Flag(help: "Sort descending.") var desc = false
    @Option(help: "At most this many objects.") var limit: Int?
    @Flag(help: "Print one JSON object per line.") var json = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        try reportingErrors {
            let ctx = try file.objectStore().context()
            guard let cls = try ctx.storedClasses().first(where: { $0.name == className }) else {
                throw ObjectError.unknownClass(className)
            }
            var r = try ctx.dynamicObjects(className)
            if let predicate { r = try r.filter(predicate) }
            if !sort.isEmpty { r = r.sorted(by: sort.map { SortDescriptor(keyPath: $0, ascending: !desc) }) }
            if let limit { r = r.limit(limit) }
            let props = cls.properties
            for o in try r.objects() {
                // Throwing reads: a damaged row ends the command with the file's error before
                // its line is printed, never with a trap or a line of placeholders.
                var fields: [(String, String)] = [("_key", String(o.key))]
                for p in props {
                    fields.append((p.name, render(try ctx.value(of: o, forProperty: p.name), json: json)))
                }
                if json {
                    print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
                } else {
                    print(fields.map { "\($0.0)=\($0.1)" }.joined(separator: "  "))
                }
            }
        }
    }

    func render(_ v: Any?, json: Bool) -> String {
        func quote(_ s: String) -> String {
            let d = try? JSONEncoder().encode(s)
            return d.map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        }
        switch v {
        case nil: return json ? "null" : "nil"
        case let o as DynamicObject:
            return json ? "{\"_class\": \(quote(o.className)), \"_key\": \(o.key)}" : "\(o.className)(\(o.key))"
        case let a as [Any?]: return "[" + a.map { render($0, json: json) }.joined(separator: json ? ", " : " ") + "]"
        case let s as String: return json ? quote(s) : s
        case let d as Date:
            return json ? quote(ISO8601DateFormatter().string(from: d)) : ISO8601DateFormatter().string(from: d)
        case let u as UUID: return json ? quote(u.uuidString) : u.uuidString
        case let d as Data: return quote(d.base64EncodedString())
        case let b as [UInt8]: return quote(Data(b).base64EncodedString())
        case let d as Double: return d.isFinite ? String(d) : (json ? quote(String(d)) : String(d))
        case let f as Float: return f.isFinite ? String(f) : (json ? quote(String(f)) : String(f))
        default: return "\(v!)"
        }
    }
}
