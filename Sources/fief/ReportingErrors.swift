import ArgumentParser
import Engine
import FaultFS
import FiefObjects
import Foundation
import Reports
import Torture

/// Every command runs inside this: a typed error from one of Fief's libraries is a user
/// mistake or a problem of the machine, so it becomes one line on stderr and a non-zero exit
/// (2 for a key or value that does not parse, 1 otherwise), never a trap or a stack trace.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let e as CodecError {
        try fail(e.message, exitCode: 2)
    } catch let e as EngineError {
        try fail(e.description)
    } catch let e as EncryptionError {
        try fail(e.description)
    } catch let e as FaultFSError {
        try fail("faultfs: \(e.description)")
    } catch let e as BenchError {
        try fail(e.description)
    } catch let e as TortureError {
        try fail(e.description)
    } catch let e as SchemaError {
        try fail(e.description)
    } catch let e as ObjectError {
        try fail(e.description)
    } catch let e as QueryError {
        try fail(e.description)
    } catch let e as TargetError {
        try fail(e.description)
    } catch let e as ExitCode {
        throw e
    } catch let e as CleanExit {
        throw e
    } catch {
        // An error of a kind not listed above still ends as one line, not a dump.
        try fail(String(describing: error))
    }
}

private func fail(_ message: String, exitCode: Int32 = 1) throws -> Never {
    FileHandle.standardError.write(Data("fief: \(message)\n".utf8))
    throw ExitCode(exitCode)
}
