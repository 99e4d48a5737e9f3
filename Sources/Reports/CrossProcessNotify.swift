import Engine
import FiefObjects
import Foundation
import TortureSchema

/// obj.notify.cross-process: how long after one process's durable commit is acknowledged
/// another process's observer is handed the change set. The observer is a child
/// (`fief bench notify-child`) holding an auto-refreshing context on an actor with every
/// person sorted by age observed (obj.notify's view); it prints CLOCK_MONOTONIC (one clock
/// for every process on the machine) when each change set reaches its callback. The parent
/// commits one age change at a time and waits for that line before the next, so no two
/// commits coalesce into one delivery.
public enum CrossProcessNotify {
    public struct Request: Codable, Sendable {
        /// The store the parent writes (the objects suite's Fief data set).
        public var path: String

    }

    /// The child's part: observe until standard input closes (the parent is done), printing
    /// "ready" after the initial delivery and a timestamp per change set.
    public static func observe(_ r: Request) throws {
        let store = try ObjectStore(Configuration(path: r.path, types: [BenchPerson.self, BenchDog.self]))
        let observer = SortedViewObserver()
        let started = LockedBox<Error?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await observer.start(store) } catch { started.mutate { $0 = error } }
            done.signal()
        }
        done.wait()
        if let e = started.value { throw e }
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        Task { await observer.stop() }
    }

    /// The parent's part: `rounds` commits through `setAge` (each changing one person's age to
    /// a value it never had, so each is a change the view sees), each latency from the
    /// commit's return to the child's delivery. A delivery stamped before `setAge` returned
    /// (the doorbell rings before the writer's own refresh ends) counts as zero.
    static func measure(
        path: String, rounds: Int, ids: [Int64], firstAge: Int, executable: String,
        setAge: (Int64, Int) throws -> Void
    ) throws -> Measurement {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = Request(path: path).arguments
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        do { try p.run() } catch { throw BenchError.child("cannot start \(executable): \(error.localizedDescription)") }
        defer {
            try? input.fileHandleForWriting.close()
            p.waitUntilExit()
        }
        var lines = ChildLines(fd: output.fileHandleForReading.fileDescriptor)
        let ready = try lines.next(timeoutMs: 60_000)
        guard ready == "ready" else { throw BenchError.child("notify observer did not start: \(ready)") }
        var m = Measurement(value: 0)
        // From the call that commits, durable syncs included: an upper bound that never
        // reads zero, for when the scheduler runs the observer before the writer's return.
        var fromCall = LatencyRecorder()
        var early = 0
        for i in 0..<rounds {
            let called = BenchClock.nanos()
            try setAge(ids[i % ids.count], firstAge + i)
            let acknowledged = BenchClock.nanos()
            let line = try lines.next(timeoutMs: 10_000)
            guard let delivered = UInt64(line) else { throw BenchError.child("notify observer: \(line)") }
            if delivered < acknowledged { early += 1 }
            m.latency.record(nanos: delivered > acknowledged ? delivered - acknowledged : 0)
            fromCall.record(nanos: delivered > called ? delivered - called : 0)
        }
        m.value = (m.latency.summary?.p99 ?? 0) / 1000
        m.extra["deliveredBeforeAcknowledged"] = Double(early)
        if let s = fromCall.summary {
            m.extra["fromCommitCallP50Ms"] = s.p50 / 1000
            m.extra["fromCommitCallP99Ms"] = s.p99 / 1000
        }
        return m
    }
}

/// The child's observer: an actor owning an auto-refreshing context, so the commit watcher,
/// the hop to the actor, the refresh and the change computation are all in the latency.
actor SortedViewObserver {
    private var ctx: ObjectContext?
    private var token: NotificationToken?

    func start(_ store: ObjectStore) throws {
        let ctx = try store.autoRefreshingContext()
        token = ctx.objects(BenchPerson.self).sorted(byKeyPath: "age").observe { change in
            switch change {
            case .initial: SortedViewObserver.emit("ready")
            case .update: SortedViewObserver.emit("\(BenchClock.nanos())")
            case .error(let e): SortedViewObserver.emit("error \(e)")
            }
        }
        self.ctx = ctx
    }

    func stop() {
        token?.invalidate()
        ctx = nil
    }

    /// One line straight to the pipe: no stdio buffer between the callback and the parent.
    static func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}

/// Lines from a child's standard output, each waited for at most a deadline, so a child
/// that hangs or dies fails the benchmark instead of blocking it.
struct ChildLines {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    mutating func next(timeoutMs: Int32) throws -> String {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, timeoutMs)
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { throw BenchError.child("no line from the child within \(timeoutMs) ms") }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BenchError.child("the child closed its output") }
            buffer += chunk[..<n]
        }
    }
}

extension CrossProcessNotify.Request: ProcessRequest {
    public static let subcommand = ["bench", "notify-child"]
}
