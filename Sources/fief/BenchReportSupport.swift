import ArgumentParser
import Engine
import Foundation
import Reports

/// Runs a bench or report command, printing any failure as one line on stderr (exit 1):
/// bad input never ends in a trap or a stack trace.
func runReports(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as BenchError {
        FileHandle.standardError.write(Data("fief: \(e.description)\n".utf8))
        throw ExitCode(1)
    } catch let e as EngineError {
        FileHandle.standardError.write(Data("fief: \(e.description)\n".utf8))
        throw ExitCode(1)
    }
}

/// This executable's path, so bench can start itself as a child process.
func ownExecutablePath() -> String? {
    var buf = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buf, buf.count - 1)
    return n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
}

func printFlushed(_ line: String) {
    print(line)
    fflush(stdout)
}
