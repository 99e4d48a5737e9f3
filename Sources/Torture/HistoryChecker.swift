/// Checks a list-append history for the anomalies Elle names: G0 (write cycle), G1a (aborted
/// read), G1b (intermediate read), G1c (cycle of write and read dependencies), G-single (a
/// cycle with exactly one anti-dependency: read skew), lost update, plus reads that disagree
/// on a key's order or observe elements nobody wrote. Each anomaly comes with the transactions
/// or the cycle that shows it.
public struct HistoryChecker {
    public struct Anomaly: Sendable, CustomStringConvertible {
        /// Elle's names, and the two read checks before them.
        public enum Kind: String, Sendable, CaseIterable {
            case writeCycle = "G0"
            case abortedRead = "G1a"
            case intermediateRead = "G1b"
            case dependencyCycle = "G1c"
            case readSkew = "G-single"
            case antiDependencyCycle = "G2"
            case lostUpdate = "lost-update"
            case incompatibleOrder = "incompatible-order"
            case garbageRead = "garbage-read"
        }
        public var kind: Kind
        public var detail: String
        public var description: String { "\(kind.rawValue): \(detail)" }
    }

    enum Edge: Int {
        case ww = 0, wr = 1, rw = 2
        var name: String { ["ww", "wr", "rw"][rawValue] }
    }

    let txns: [HistoryTxn]

    public init(_ txns: [HistoryTxn]) { self.txns = txns }

    public func check() -> [Anomaly] {
        var anomalies: [Anomaly] = []
        let ok = txns.indices.filter { txns[$0].committed }
        var writer: [UInt64: Int] = [:]  // element -> committed txn that appended it
        var aborted: [UInt64: Int] = [:]
        var lastAppend: [Int: [Int64: UInt64]] = [:]  // txn -> key -> its final append
        for i in txns.indices {
            for op in txns[i].ops {
                if case .append(let k, let e) = op {
                    if txns[i].committed { writer[e] = i; lastAppend[i, default: [:]][k] = e } else { aborted[e] = i }
                }
            }
        }
        // Version order per key: the longest list read; every read must be a prefix of it.
        var order: [Int64: [UInt64]] = [:]
        for i in ok {
            for op in txns[i].ops {
                guard case .read(let k, let l) = op else { continue }
                let cur = order[k] ?? []
                if l.count > cur.count {
                    if Array(l.prefix(cur.count)) != cur {
                        anomalies.append(
                            Anomaly(
                                kind: .incompatibleOrder,
                                detail: "key \(k): \(txns[i].id) read \(l), another read \(cur)"))
                    }
                    order[k] = l
                } else if Array(cur.prefix(l.count)) != l {
                    anomalies.append(
                        Anomaly(
                            kind: .incompatibleOrder, detail: "key \(k): \(txns[i].id) read \(l), another read \(cur)"
                        ))
                }
            }
        }
        for i in ok {
            for op in txns[i].ops {
                guard case .read(let k, let l) = op else { continue }
                for e in l {
                    if let a = aborted[e] {
                        anomalies.append(
                            Anomaly(
                                kind: .abortedRead,
                                detail: "\(txns[i].id) read element \(e) of key \(k), written by aborted \(txns[a].id)")
                        )
                    } else if writer[e] == nil {
                        anomalies.append(
                            Anomaly(
                                kind: .garbageRead,
                                detail: "\(txns[i].id) read element \(e) of key \(k), which no transaction appended"))
                    }
                }
                if let last = l.last, let w = writer[last], w != i, lastAppend[w]?[k] != last {
                    anomalies.append(
                        Anomaly(
                            kind: .intermediateRead,
                            detail:
                                "\(txns[i].id) read key \(k) ending in \(last), an intermediate append of \(txns[w].id)"
                        ))
                }
            }
        }
        // Dependency graph over committed transactions.
        var edges: [Int: [(to: Int, kind: Edge)]] = [:]
        func add(_ a: Int, _ b: Int, _ k: Edge) { if a != b { edges[a, default: []].append((b, k)) } }
        for (_, l) in order {
            for j in 1..<max(1, l.count) {
                if let a = writer[l[j - 1]], let b = writer[l[j]] { add(a, b, .ww) }
            }
        }
        var lostUpdate: [String: [Int]] = [:]
        for i in ok {
            let appended = Set(
                txns[i].ops.compactMap { op -> Int64? in
                    if case .append(let k, _) = op { return k }; return nil
                })
            for op in txns[i].ops {
                guard case .read(let k, let l) = op else { continue }
                if let last = l.last, let w = writer[last] { add(w, i, .wr) }
                if let full = order[k], l.count < full.count, let next = writer[full[l.count]], next != i {
                    add(i, next, .rw)
                }
                if appended.contains(k) { lostUpdate["\(k):\(l.count)", default: []].append(i) }
            }
        }
        for (key, group) in lostUpdate where group.count > 1 {
            anomalies.append(
                Anomaly(
                    kind: .lostUpdate,
                    detail:
                        "key \(key.split(separator: ":")[0]): \(group.map { txns[$0].id }.joined(separator: ", ")) "
                        + "each read the same version and appended to it"
                ))
        }
        anomalies += cycles(edges: edges, nodes: ok)
        return anomalies
    }

    /// Strongly connected components (Tarjan, iterative) of the graph restricted to `allowed`.
    func components(_ edges: [Int: [(to: Int, kind: Edge)]], nodes: [Int], allowed: Set<Edge>) -> [[Int]] {
        var index = [Int: Int](), low = [Int: Int](), onStack = Set<Int>(), stack: [Int] = []
        var next = 0
        var out: [[Int]] = []
        for root in nodes where index[root] == nil {
            var work: [(node: Int, edge: Int)] = [(root, 0)]
            index[root] = next; low[root] = next; next += 1
            stack.append(root); onStack.insert(root)
            while let (v, ei) = work.last {
                let out_ = (edges[v] ?? []).filter { allowed.contains($0.kind) }
                if ei < out_.count {
                    work[work.count - 1].edge += 1
                    let w = out_[ei].to
                    if index[w] == nil {
                        index[w] = next; low[w] = next; next += 1
                        stack.append(w); onStack.insert(w)
                        work.append((w, 0))
                    } else if onStack.contains(w) {
                        low[v] = min(low[v]!, index[w]!)
                    }
                } else {
                    work.removeLast()
                    if let (u, _) = work.last { low[u] = min(low[u]!, low[v]!) }
                    if low[v] == index[v] {
                        var comp: [Int] = []
                        while let w = stack.popLast() {
                            onStack.remove(w)
                            comp.append(w)
                            if w == v { break }
                        }
                        if comp.count > 1 { out.append(comp) }
                    }
                }
            }
        }
        return out
    }

    /// A path from `from` to `to` inside `within`, over `allowed` edges (breadth first).
    func path(_ edges: [Int: [(to: Int, kind: Edge)]], from: Int, to: Int, within: Set<Int>, allowed: Set<Edge>) -> [(
        Int, Edge
    )]? {
        var prev: [Int: (Int, Edge)] = [:]
        var queue = [from], head = 0
        var seen: Set<Int> = [from]
        while head < queue.count {
            let v = queue[head]; head += 1
            for e in edges[v] ?? [] where allowed.contains(e.kind) && within.contains(e.to) {
                if e.to == to {
                    var p: [(Int, Edge)] = [(to, e.kind)]
                    var cur = v
                    while cur != from, let (pv, pk) = prev[cur] { p.append((cur, pk)); cur = pv }
                    return p.reversed()
                }
                if !seen.contains(e.to) { seen.insert(e.to); prev[e.to] = (v, e.kind); queue.append(e.to) }
            }
        }
        return nil
    }

    func describe(_ start: Int, _ p: [(Int, Edge)]) -> String {
        var s = txns[start].id
        for (n, k) in p { s += " -\(k.name)-> \(txns[n].id)" }
        return s
    }

    func cycles(edges: [Int: [(to: Int, kind: Edge)]], nodes: [Int]) -> [Anomaly] {
        var found: [Anomaly] = []
        // Only nodes inside a cycle of the full graph can be in any anomaly's cycle.
        for comp in components(edges, nodes: nodes, allowed: [.ww, .wr, .rw]).prefix(5) {
            let inside = Set(comp)
            if let c = components(edges, nodes: comp, allowed: [.ww]).first,
                let p = path(edges, from: c[0], to: c[0], within: Set(c), allowed: [.ww])
            {
                found.append(Anomaly(kind: .writeCycle, detail: "write cycle " + describe(c[0], p)))
                continue
            }
            if let c = components(edges, nodes: comp, allowed: [.ww, .wr]).first,
                let p = path(edges, from: c[0], to: c[0], within: Set(c), allowed: [.ww, .wr])
            {
                found.append(Anomaly(kind: .dependencyCycle, detail: "cycle " + describe(c[0], p)))
                continue
            }
            var single: Anomaly?
            outer: for a in comp {
                for e in edges[a] ?? [] where e.kind == .rw && inside.contains(e.to) {
                    if let back = path(edges, from: e.to, to: a, within: inside, allowed: [.ww, .wr]) {
                        single = Anomaly(kind: .readSkew, detail: "cycle " + describe(a, [(e.to, .rw)] + back))
                        break outer
                    }
                }
            }
            if let single { found.append(single); continue }
            if let p = path(edges, from: comp[0], to: comp[0], within: inside, allowed: [.ww, .wr, .rw]) {
                found.append(
                    Anomaly(
                        kind: .antiDependencyCycle,
                        detail: "cycle with several anti-dependencies " + describe(comp[0], p)))
            }
        }
        return found
    }
}
