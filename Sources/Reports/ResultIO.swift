import Foundation
import TortureSchema

/// Reading and writing JSON files with one-line errors: a missing file, an unreadable one or
/// malformed JSON is reported by path and cause, never as a trap.
public enum ResultIO {
    public static func load<T: Decodable>(_ type: T.Type, from path: String) throws -> T {
        guard FileManager.default.fileExists(atPath: path) else { throw BenchError.fileNotFound(path) }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw BenchError.unreadable(path: path, detail: error.localizedDescription)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let e as DecodingError {
            throw BenchError.malformed(path: path, detail: describe(e))
        } catch {
            throw BenchError.malformed(path: path, detail: "\(error)")
        }
    }

    public static func loadBench(_ path: String) throws -> BenchResults {
        let r = try load(BenchResults.self, from: path)
        guard r.tool == "fief bench" else {
            throw BenchError.malformed(path: path, detail: "written by '\(r.tool)', not fief bench")
        }
        return r
    }

    public static func save<T: Encodable>(_ value: T, to path: String) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { try enc.encode(value).write(to: URL(fileURLWithPath: path)) } catch {
            throw BenchError.io("cannot write \(path): \(error.localizedDescription)")
        }
    }

    public static func saveText(_ text: String, to path: String) throws {
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) } catch {
            throw BenchError.io("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// One line for a decoding failure: what was wrong and where in the document.
    static func describe(_ e: DecodingError) -> String {
        func at(_ path: [CodingKey]) -> String {
            path.isEmpty
                ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch e {
        case .dataCorrupted(let c):
            if c.codingPath.isEmpty {
                let why = (c.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "invalid JSON" + (why.map { " (\($0))" } ?? "")
            }
            return "invalid value at \(at(c.codingPath)): \(c.debugDescription)"
        case .keyNotFound(let k, let c): return "missing '\(k.stringValue)' at \(at(c.codingPath))"
        case .typeMismatch(let t, let c): return "expected \(t) at \(at(c.codingPath))"
        case .valueNotFound(let t, let c): return "missing \(t) value at \(at(c.codingPath))"
        @unknown default: return "\(e)"
        }
    }

    /// Writes results.json, report.md and report.html into `directory`.
    public static func writeBench(_ r: BenchResults, to directory: String, torture: TortureResults? = nil) throws
        -> [String]
    {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw BenchError.io("cannot create \(directory): \(error.localizedDescription)")
        }
        let json = directory + "/results.json", md = directory + "/report.md", html = directory + "/report.html"
        try save(r, to: json)
        try saveText(MarkdownReport.bench(r), to: md)
        try saveText(HTMLReport.page(bench: r, torture: torture), to: html)
        return [json, md, html]
    }
}
