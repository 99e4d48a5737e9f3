import FiefObjects
import Foundation

/// An observer process of the `notify` scenario's object cycles: a context observes the
/// persons of the object graph (a predicate and a sort), refreshed whenever the store says
/// another process committed. Each delivery is checked on the spot: the previous keys with
/// the change set applied are the new results, which are the query run afresh at the same
/// version; modifications name kept objects, and every object kept in place whose name, age or
/// dogs changed is among them. At the end, the results as last delivered must be the results
/// at the final version: a change never delivered is caught there (commits that leave the
/// results alone rightly deliver nothing). Log lines: `start V`, `delivery V` per delivery,
/// `violation TEXT`, and at the end `reached V MS` or `missed V`.
public struct ResultsLogObserver: ObserverProcess {
    public let files: ObserverFiles

    public init(_ files: ObserverFiles) { self.files = files }

    static func query(_ ctx: ObjectContext) throws -> Results<GraphPerson> {
        try ctx.objects(GraphPerson.self).filter("age >= 30").sorted(byKeyPath: "age").sorted(byKeyPath: "name")
    }

    /// What a delivery must report a change of: an object's stored values, dogs by key.
    static func states(_ r: Results<GraphPerson>) -> [Int64: String] {
        var out: [Int64: String] = [:]
        for p in r { out[p.id] = "\(p.name)|\(p.age)|\(p.dogs.map { $0.objectKey ?? -1 })" }
        return out
    }

    public func run() throws -> Bool {
        let store = try ObjectStore(
            TortureEncryption.configure(Configuration(path: dbPath, types: ObjectGraphWorkload.types, schemaVersion: 1))
        )
        let ctx = store.context()
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let log = FileHandle(forWritingAtPath: logPath) else {
            throw TortureError.invalid("cannot write \(logPath)")
        }
        func line(_ s: String) { log.write(Data((s + "\n").utf8)) }
        let rung = UnsafeAtomicFlag()
        let observation = try store.observe { _ in rung.set() }
        defer { observation.cancel() }
        let results = try ResultsLogObserver.query(ctx)
        var previous: [Int64] = []
        var previousStates: [Int64: String] = [:]
        var violations = 0
        let token = results.observe { change in
            switch change {
            case .initial(let r):
                previous = (try? r.keys()) ?? []
                previousStates = ResultsLogObserver.states(r)
            case .update(let r, let deletions, let insertions, let modifications):
                let now = (try? r.keys()) ?? []
                var found: [String] = []
                func ascendingWithin(_ xs: [Int], _ n: Int) -> Bool {
                    zip(xs, xs.dropFirst()).allSatisfy { $0 < $1 } && xs.allSatisfy { $0 >= 0 && $0 < n }
                }
                if !ascendingWithin(deletions, previous.count) || !ascendingWithin(insertions, now.count)
                    || !ascendingWithin(modifications, previous.count)
                {
                    found.append(
                        "indices out of order or out of range: deletions \(deletions), insertions \(insertions), "
                            + "modifications \(modifications) for \(previous.count) -> \(now.count) keys"
                    )
                } else {
                    var replay = previous
                    for i in deletions.reversed() { replay.remove(at: i) }
                    for i in insertions where i <= replay.count { replay.insert(now[i], at: i) }
                    if replay != now {
                        found.append(
                            "the change set does not turn the previous \(previous.count) keys into the new \(now.count)"
                        )
                    }
                }
                if let fresh = try? ResultsLogObserver.query(ctx).keys(), fresh != now {
                    found.append(
                        "the delivered results (\(now.count) keys) differ from the query run afresh "
                            + "(\(fresh.count)) at version \(ctx.version)"
                    )
                }
                let deleted = Set(deletions)
                if modifications.contains(where: { $0 >= previous.count || deleted.contains($0) }) {
                    found.append("modifications \(modifications) name objects that were not kept")
                }
                let states = ResultsLogObserver.states(r)
                let unreported = previous.indices.filter { i in
                    guard !deleted.contains(i), !modifications.contains(i), let now = states[previous[i]] else {
                        return false
                    }
                    return now != previousStates[previous[i]]
                }
                if !unreported.isEmpty {
                    let before = unreported.prefix(3).map { previousStates[previous[$0]] ?? "" }
                    let after = unreported.prefix(3).map { states[previous[$0]] ?? "" }
                    found.append(
                        "objects kept in place at \(unreported) changed (\(before) -> \(after)) "
                            + "but are not among the modifications \(modifications)"
                    )
                }
                previousStates = states
                for f in found { line("violation \(f)"); violations += 1 }
                line("delivery \(ctx.version)")
                previous = now
            case .error(let e):
                line("violation the observation failed: \(e)")
                violations += 1
            }
        }
        defer { token.invalidate() }
        line("start \(ctx.version)")
        var final: UInt64?
        var asked: Date?
        while true {
            if rung.take() { try ctx.refresh() }
            if final == nil, let v = files.finalVersion() {
                final = v
                asked = Date()
            }
            if let final, let asked {
                if ctx.version >= final {
                    let fresh = try ResultsLogObserver.query(ctx)
                    let freshKeys = try fresh.keys()
                    if freshKeys != previous || ResultsLogObserver.states(fresh) != previousStates {
                        line(
                            "violation the results changed after the last delivery, which was never reported: "
                                + "\(previous.count) keys delivered, \(freshKeys.count) at version \(ctx.version)"
                        )
                        violations += 1
                    }
                    line("reached \(final) \(Int(Date().timeIntervalSince(asked) * 1000))")
                    break
                }
                if Date().timeIntervalSince(asked) > graceSeconds { line("missed \(final)"); return false }
            }
            usleep(1_000)
        }
        return violations == 0
    }
}

/// A flag set by the commit watcher's thread and taken by the observer's own.
final class UnsafeAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    func take() -> Bool { lock.lock(); defer { value = false; lock.unlock() }; return value }
}
