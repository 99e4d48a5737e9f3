import Foundation

/// Any program as a target: it is started with `/bin/sh -c "exec COMMAND"` and speaks JSON
/// lines, one request on its stdin, one answer on its stdout (its stderr is passed through):
///
///     {"op":"open","dir":"/mnt/x"}                 {"ok":true,"transactions":true}
///     {"op":"begin","mode":"write"}                {"ok":true}          (mode: write or read)
///     {"op":"put","key":"k","value":"v"}           {"ok":true}
///     {"op":"delete","key":"k"}                    {"ok":true}
///     {"op":"get","key":"k"}                       {"value":"v"}        or {"value":null}
///     {"op":"scan","from":"a","to":"b"}            {"pairs":[["a1","v"],["a2","w"]]}   (from <= key < to, in order)
///     {"op":"commit"}                              {"ok":true}          the acknowledgement: durable from here on
///     {"op":"rollback"}                            {"ok":true}
///     {"op":"check"}                               {"problems":[]}      or {"problems":null}: no check
///     {"op":"close"}                               {"ok":true}
///
/// Any request may be answered `{"error":"message"}`. `open` may say `"transactions":false`
/// (no isolation between processes), which takes the target out of the isolation scenario.
public final class ExecTarget: TortureTarget {
    public private(set) var capabilities = TargetCapabilities()
    let command: String
    private(set) var process: Process
    private(set) var input: FileHandle
    private(set) var outputHandle: FileHandle
    var output: Int32 { outputHandle.fileDescriptor }
    private var buffer: [UInt8] = []
    private var closed = false
    /// The adapter stopped reading or closed its output: it exited.
    private var adapterGone = false

    public init(directory: String, command: String) throws {
        self.command = command
        // A dead adapter must give an error on the next request, not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        (process, input, outputHandle) = try ExecTarget.start(command)
        do {
            try open(directory)
        } catch  where adapterGone {
            // An adapter that died before answering `open`, with nothing on its stderr, was seen
            // once in a full test run on a loaded machine and never alone: it gets one more
            // start, and says so. Before `open` it holds no data, so nothing is hidden; a second
            // death, or any answer, stands.
            let first = "\(error); it \(exitDescription())"
            FileHandle.standardError.write(Data("fief torture: \(first); starting it once more\n".utf8))
            (process, input, outputHandle) = try ExecTarget.start(command)
            buffer = []
            adapterGone = false
            do { try open(directory) } catch  where adapterGone {
                throw TargetError(
                    name, "open", "died twice before answering: \(first); then \(error); it \(exitDescription())")
            }
        }
    }

    /// Starts the adapter with pipes to its stdin and stdout.
    private static func start(_ command: String) throws -> (Process, FileHandle, FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec " + command]
        let toChild = Pipe(), fromChild = Pipe()
        process.standardInput = toChild
        process.standardOutput = fromChild
        do { try process.run() } catch { throw TargetError("exec:\(command)", "start", "\(error)") }
        // Our copies of the child's ends would keep the pipes open after it dies (FileHandle
        // knows when Process closed them already).
        try? toChild.fileHandleForReading.close()
        try? fromChild.fileHandleForWriting.close()
        return (process, toChild.fileHandleForWriting, fromChild.fileHandleForReading)
    }

    private func open(_ directory: String) throws {
        let answer = try request(["op": "open", "dir": directory])
        capabilities = TargetCapabilities(
            transactions: (answer["transactions"] as? Bool) ?? true,
            multiProcess: (answer["multiProcess"] as? Bool) ?? true)
    }

    /// How the adapter ended (after `adapterGone`): its exit status or signal.
    private func exitDescription() -> String {
        try? input.close()
        try? outputHandle.close()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? "was killed by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
    }

    deinit { close() }

    var name: String { "exec:\(command)" }

    /// Sends one request and returns the answer, or throws the adapter's error.
    @discardableResult
    func request(_ message: [String: Any]) throws -> [String: Any] {
        let op = message["op"] as? String ?? "?"
        var line = try JSONSerialization.data(withJSONObject: message)
        line.append(UInt8(ascii: "\n"))
        let sent = line.withUnsafeBytes { p -> Bool in
            var off = 0
            while off < p.count {
                let n = Glibc.write(input.fileDescriptor, p.baseAddress! + off, p.count - off)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                off += n
            }
            return true
        }
        guard sent else {
            adapterGone = true
            throw TargetError(name, op, "the adapter stopped reading its input (it exited?)")
        }
        guard let reply = readLine() else {
            adapterGone = true
            throw TargetError(name, op, "the adapter closed its output without answering (it exited?)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(reply))) as? [String: Any] else {
            throw TargetError(
                name, op,
                "the adapter answered with something that is not a JSON object: "
                    + "\(String(decoding: reply.prefix(200), as: UTF8.self))"
            )
        }
        if let e = object["error"] { throw TargetError(name, op, "\(e)") }
        return object
    }

    func readLine() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return line
            }
            let n = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer += chunk[..<n]
        }
    }

    struct Transaction: TargetTransaction {
        let target: ExecTarget
        func get(_ key: String) throws -> String? {
            try target.request(["op": "get", "key": key])["value"] as? String
        }
        func put(_ key: String, _ value: String) throws {
            try target.request(["op": "put", "key": key, "value": value])
        }
        func delete(_ key: String) throws { try target.request(["op": "delete", "key": key]) }
        func scan(from: String, to: String) throws -> [(key: String, value: String)] {
            let answer = try target.request(["op": "scan", "from": from, "to": to])
            guard let pairs = answer["pairs"] as? [[Any]] else {
                throw TargetError(target.name, "scan", "the answer has no \"pairs\" list")
            }
            return try pairs.map { p in
                guard p.count == 2, let k = p[0] as? String, let v = p[1] as? String else {
                    throw TargetError(target.name, "scan", "a pair is not [key, value] of strings: \(p)")
                }
                return (k, v)
            }
        }
    }

    func transaction<T>(_ mode: String, _ body: (TargetTransaction) throws -> T) throws -> T {
        try request(["op": "begin", "mode": mode])
        let result: T
        do {
            result = try body(Transaction(target: self))
        } catch {
            _ = try? request(["op": "rollback"])
            throw error
        }
        try request(["op": "commit"])
        return result
    }

    public func write<T>(_ body: (TargetTransaction) throws -> T) throws -> T { try transaction("write", body) }
    public func read<T>(_ body: (TargetTransaction) throws -> T) throws -> T { try transaction("read", body) }

    public func integrityCheck() throws -> [String]? {
        let answer = try request(["op": "check"])
        guard let problems = answer["problems"], !(problems is NSNull) else { return nil }
        return (problems as? [Any])?.map { "\($0)" } ?? ["the adapter's check answered \(problems)"]
    }

    public func close() {
        guard !closed else { return }
        closed = true
        _ = try? request(["op": "close"])
        try? input.close()
        try? outputHandle.close()
        process.waitUntilExit()
    }
}
