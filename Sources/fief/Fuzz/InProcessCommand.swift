import ArgumentParser
import Engine
import Foundation
import ProcFS

/// Runs a `fief` command line inside this process, as the shell would run it (the same
/// parsing, `run()`, error reporting and exit status), with its standard output and error
/// going to files: the fuzz worker runs thousands of commands without paying a process start
/// for each, while a trap in one still ends a real process that the parent sees die.
enum InProcessCommand {
    struct Ending: Equatable {
        let status: Int32
        let output: String
        let errors: String
    }

    static func run(_ arguments: [String], scratch: String) -> Ending {
        let outPath = scratch + ".stdout", errPath = scratch + ".stderr"
        // Damaged copies of one encrypted file share its salt: a page decrypted from an earlier
        // copy must not stand in for this copy's bytes, as it never could in a fresh process.
        DecryptedPageCache.shared.removeAll()
        fflush(stdout)
        let savedOut = dup(STDOUT_FILENO), savedErr = dup(STDERR_FILENO)
        redirect(STDOUT_FILENO, to: outPath)
        redirect(STDERR_FILENO, to: errPath)
        let status: Int32
        do {
            var command = try Fief.parseAsRoot(arguments)
            try command.run()
            status = 0
        } catch let e as ExitCode {
            status = e.rawValue
        } catch {
            // What ArgumentParser would print for an error no command caught: not one of ours.
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            status = 1
        }
        fflush(stdout)
        dup2(savedOut, STDOUT_FILENO)
        dup2(savedErr, STDERR_FILENO)
        close(savedOut)
        close(savedErr)
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Ending(status: status, output: output, errors: errors)
    }

    /// The same command as a process of its own (this executable), for comparison; a signal
    /// is status 128 + its number, as a shell reports it.
    static func runAsProcess(_ arguments: [String], scratch: String) -> Ending {
        let outPath = scratch + ".stdout", errPath = scratch + ".stderr"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ownExecutablePath() ?? CommandLine.arguments[0])
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        p.environment = env
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: errPath)
        do { try p.run() } catch { return Ending(status: -1, output: "", errors: "cannot start: \(error)") }
        p.waitUntilExit()
        let status = p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus
        return Ending(
            status: status, output: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    private static func redirect(_ fd: Int32, to path: String) {
        let f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard f >= 0 else { return }
        dup2(f, fd)
        close(f)
    }
}
