import Foundation
import TortureSchema

/// A measurement run in a process of its own (`fief bench child`, `fief bench object-child`):
/// the one way the bench starts such a child and reads the one-line JSON report it prints.
enum BenchChild {
    /// Starts `executable` with `request`'s arguments and decodes its standard output as a
    /// `Report`. `what` names the measurement in errors ("sqlite bulk insert").
    static func run<Request: ProcessRequest, Report: Decodable>(
        _ request: Request, executable: String, what: String, as _: Report.Type = Report.self
    ) throws -> Report {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = request.arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        do { try p.run() } catch { throw BenchError.child("cannot start \(executable): \(error.localizedDescription)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let msg = String(decoding: errData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw BenchError.child("\(what) exited with status \(p.terminationStatus): \(msg)")
        }
        do {
            return try JSONDecoder().decode(Report.self, from: data)
        } catch {
            throw BenchError.child("\(what) printed no report: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }
}
