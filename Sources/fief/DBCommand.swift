import ArgumentParser
import Engine
import Foundation

struct DBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Inspect and edit Fief database files.",
        discussion: """
            Keys and values are text by default. Give integers with --key-format int / \
            --value-format int (tables created that way have int64 keys or values, and are read \
            back as integers automatically), and raw bytes as hex with --key-format hex / \
            --value-format hex (e.g. 00ff10). `put` creates the file and the table when missing; \
            every other command on a missing file is an error.
            """,
        subcommands: [
            DBStat.self, DBCheck.self, DBPut.self, DBGet.self, DBDelete.self, DBScan.self, DBCompact.self, DBCopy.self,
            DBSchema.self, DBQuery.self,
            DBFuzz.self, DBFuzzWorker.self
        ]
    )
}

/// How a key or value is written on the command line.
enum Encoding: String, ExpressibleByArgument, CaseIterable {
    case auto, text, int, hex
}

struct CodecError: Error { let message: String }

/// Opens a file the user names, as every `fief db` command but `put` does: it must exist, and
/// every node is checked as it is read, so a damaged file gives `EngineError.corrupt` rather
/// than wrong keys or values (a tool is handed files no one vouches for; the cost of hashing
/// each page read does not matter here).
func openForInspection(_ path: String, encryptionKey: [UInt8]?) throws -> Database {
    var options = DatabaseOptions(create: false, encryptionKey: encryptionKey)
    options.verifyChecksums = true
    return try Database(path: path, options: options)
}

enum Codec {
    static func encode(_ text: String, as enc: Encoding, kind: KeyKind?, what: String) throws -> [UInt8] {
        let effective: Encoding = enc == .auto ? (kind == .int64 ? .int : .text) : enc
        if kind == .int64 && effective != .int {
            throw CodecError(message: "this table has int64 \(what)s; give the \(what) as an integer")
        }
        switch effective {
        case .int:
            guard let n = Int64(text) else { throw CodecError(message: "\(what) '\(text)' is not a 64-bit integer") }
            return kind == .bytes ? Array(text.utf8) : (what == "key" ? n.keyBytes : n.valueBytes)
        case .hex:
            var out: [UInt8] = []
            var chars = Array(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text)
            guard chars.count % 2 == 0 else {
                throw CodecError(message: "hex \(what) '\(text)' has an odd number of digits")
            }
            while !chars.isEmpty {
                guard let b = UInt8(String(chars[0..<2]), radix: 16) else {
                    throw CodecError(message: "'\(text)' is not hex")
                }
                out.append(b)
                chars.removeFirst(2)
            }
            return out
        case .text, .auto:
            return Array(text.utf8)
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, kind: KeyKind, isKey: Bool, as enc: Encoding) -> String {
        if kind == .int64 && bytes.count == 8 {
            if let n = try? (isKey ? Int64(keyBytes: bytes) : Int64(valueBytes: bytes)) { return String(n) }
        }
        let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7f || $0 >= 0x80 }
        if enc != .hex, printable, let s = String(validating: Array(bytes), as: UTF8.self) { return s }
        return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
    }
}

struct DBStat: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat", abstract: "Show both top slots, the select bit, space and tables.",
        discussion:
            "A file that does not open still gets its header described (size, select byte, both slots) "
            + "before the error; --json prints the opened file's statistics.")
    @OptionGroup var file: DatabaseFileArguments
    @OptionGroup var output: JSONOutput

    func run() throws {
        try reportingErrors {
            let db: Database
            do {
                db = try file.inspect()
            } catch let e as EngineError {
                // Describe what the header says before refusing the file.
                if let h = try? Recovery.inspectHeader(path: file.path) {
                    print("file        \(file.path) (\(h.fileSize) bytes), does not open")
                    print("select byte \(h.selectByte)")
                    printSlots(h.slots)
                }
                throw e
            }
            let s = try db.stats(space: true)
            try output.print({ s }) {
                print("file        \(file.path)")
                print("version     \(s.version)")
                print("select bit  \(s.select)")
                printSlots(s.slots)
                print("file size   \(s.fileSize) bytes (\(s.pageCount) pages of \(s.pageSize) in use by the file)")
                print("in use      \(s.bytesInUse) bytes")
                print("free        \(s.bytesFree) bytes")
                print("pinned      \(s.bytesPinned) bytes held for older versions")
                print(
                    "versions    \(s.liveVersions) live\(s.oldestPinnedVersion.map { ", oldest pinned \($0)" } ?? "")")
                print("tables      \(s.tables.count)")
                let space = Dictionary(s.space.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
                for t in s.tables {
                    print("  \(t.name)  \(t.count) entries  (\(t.keyKind) keys, \(t.valueKind) values)")
                    guard let p = space[t.name], p.pages > 0 else { continue }
                    let perEntry = t.count > 0 ? "  \(p.pages * s.pageSize / t.count) B/entry" : ""
                    let leafFill = Int((p.leafFill * 100).rounded())
                    print(
                        "      \(p.pages) pages (\(p.branchPages) branch, \(p.leafPages) leaf, "
                            + "\(p.overflowPages) overflow), depth \(p.depth), leaves \(leafFill)% full\(perEntry)"
                    )
                }
            }
        }
    }

    /// One line a top slot, as the header and the opened file both describe it.
    func printSlots(_ slots: [SlotInfo]) {
        for slot in slots {
            print(
                "slot \(slot.index)      ref \(slot.ref)  version \(slot.version)  "
                    + "\(slot.valid ? "valid" : "INVALID")\(slot.selected ? "  (selected)" : "")"
            )
        }
    }
}

struct DBCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Full integrity check; exit 0 when sound, 1 with a report when not.")
    @OptionGroup var file: DatabaseFileArguments
    @Flag(
        help: """
            Also check the object graph: links resolve, backlinks are the inverse of links, \
            indexes match rows, primary keys unique.
            """
    )
    var objects = false

    func run() throws {
        var sound = true
        try reportingErrors {
            let db = try file.inspect()
            let r = try db.check()
            for n in r.notes { print("note: \(n)") }
            if r.isSound {
                print(
                    "\(file.path): sound. version \(r.version), \(r.pageCount) pages: "
                        + "\(r.reachablePages) reachable, \(r.freePages) free; \(r.tables.count) tables"
                )
            } else {
                sound = false
                print("\(file.path): \(r.problems.count) problem(s) in version \(r.version):")
                for p in r.problems { print("  - \(p)") }
            }
            if objects && sound {
                let o = try file.objectStore().check()
                print("\(file.path): \(o)")
                if !o.isSound { sound = false }
            }
        }
        if !sound { throw ExitCode(1) }
    }
}

struct KeyValueOptions: ParsableArguments {
    @Option(help: "How keys are given: auto (the table's kind), text, int, hex.") var keyFormat: Encoding = .auto
    @Option(help: "How values are given: auto, text, int, hex.") var valueFormat: Encoding = .auto
}

struct DBPut: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Store a value (creating the file and table when missing).")
    @OptionGroup var file: DatabaseFileArguments
    @Argument var table: String
    @Argument var key: String
    @Argument var value: String
    @OptionGroup var formats: KeyValueOptions

    func run() throws {
        try reportingErrors {
            let db = try Database(path: file.path, options: .init(encryptionKey: try file.encryption.key()))
            try db.write { tx in
                if try tx.tableInfo(table) == nil {
                    try tx.createTable(
                        table, keyKind: formats.keyFormat == .int ? .int64 : .bytes,
                        valueKind: formats.valueFormat == .int ? .int64 : .bytes)
                }
                let info = try tx.tableInfo(table)!
                let k = try Codec.encode(key, as: formats.keyFormat, kind: info.keyKind, what: "key")
                let v = try Codec.encode(value, as: formats.valueFormat, kind: info.valueKind, what: "value")
                try tx.put(table: table, key: k, value: v)
            }
        }
    }
}

struct DBGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print a value; exit 1 when the key is absent.")
    @OptionGroup var entry: TableKeyArguments

    func run() throws {
        try entry.run { db in
            try db.read { tx in
                let (info, k) = try entry.encodedKey(in: tx)
                guard let v = try tx.get(table: entry.table, key: k) else { return false }
                print(
                    v.withUnsafeBytes {
                        Codec.decode($0, kind: info.valueKind, isKey: false, as: entry.formats.valueFormat)
                    })
                return true
            }
        }
    }
}

struct DBDelete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "del", abstract: "Delete a key; exit 1 when it was absent.")
    @OptionGroup var entry: TableKeyArguments

    func run() throws {
        try entry.run { db in
            try db.write { tx in try tx.delete(table: entry.table, key: try entry.encodedKey(in: tx).key) }
        }
    }
}

struct DBScan: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "Print entries with keys in [--from, --to), one 'key<TAB>value' per line.")
    @OptionGroup var file: DatabaseFileArguments
    @Argument var table: String
    @Option(help: "First key (inclusive).") var from: String?
    @Option(help: "End key (exclusive).") var to: String?
    @Flag(help: "Newest key first.") var reverse = false
    @Option(help: "Print at most this many entries.") var limit: Int?
    @OptionGroup var formats: KeyValueOptions

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() throws {
        try reportingErrors {
            let db = try file.inspect()
            try db.read { tx in
                guard let info = try tx.tableInfo(table) else { throw EngineError.tableNotFound(table) }
                let f = try from.map { try Codec.encode($0, as: formats.keyFormat, kind: info.keyKind, what: "key") }
                let t = try to.map { try Codec.encode($0, as: formats.keyFormat, kind: info.keyKind, what: "key") }
                var n = 0
                let max = limit ?? Int.max
                if max == 0 { return }
                try tx.scan(table: table, from: f, to: t, reverse: reverse) { k, v in
                    let key = Codec.decode(k, kind: info.keyKind, isKey: true, as: formats.keyFormat)
                    let value = Codec.decode(v, kind: info.valueKind, isKey: false, as: formats.valueFormat)
                    print("\(key)\t\(value)")
                    n += 1
                    return n < max
                }
            }
        }
    }
}

struct DBCompact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Rewrite the file without free space (refused while others have it open).")
    @OptionGroup var file: DatabaseFileArguments

    func run() throws {
        try reportingErrors {
            let db = try file.inspect()
            let before = try db.stats().fileSize
            try db.compact()
            let after = try db.stats().fileSize
            print("\(file.path): \(before) -> \(after) bytes")
        }
    }
}
