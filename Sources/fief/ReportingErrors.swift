import ArgumentParser
import FaultFS
import Foundation

/// Every command runs inside this: a typed error from one of Fief's libraries is a user
/// mistake or a problem of the machine, so it becomes one line on stderr and a non-zero exit
/// (2 for a key or value that does not parse, 1 otherwise), never a trap or a stack trace.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as CodecError {
        try fail(e.message, exitCode: 2)
    } catch let e as FaultFSError {
        try fail("faultfs: \(e.description)")
    } catch let e as ExitCode {
        throw e
    } catch let e as CleanExit {
        throw e
    } catch {
        // The libraries' errors (EngineError, EncryptionError, BenchError, TortureError,
        // SchemaError, ObjectError, QueryError, TargetError) say what went wrong in their
        // one-line `description`, which is what this prints; an error of any other kind still
        // ends as one line, not a dump.
        try fail(String(describing: error))
    }
}

private func fail(_ message: String, exitCode: Int32 = 1) throws -> Never {
    FileHandle.standardError.write(Data("fief: \(message)\n".utf8))
    throw ExitCode(exitCode)
}
