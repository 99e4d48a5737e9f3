import FaultFS
import Foundation
import SeededRandomness

/// Every crash state the pending operations allow: any subset of the writes and resizes (a
/// file's unsynced data reaches the disk in any order, in every model FaultFS knows), the
/// name changes as a prefix (a journal never reorders them; FaultFS has already dropped those
/// a sync made durable), and at most one write torn at one of its sector boundaries (its first
/// sectors kept: `OperationState.Tear`). States are numbered, so "every state" is `0..<count` and a sample is a seeded
/// draw of numbers; the number names the state in a finding.
struct OperationStateSpace: Sendable {
    let operations: [PendingOperations.Operation]
    /// Writes and resizes (by index into `operations`): any subset.
    let data: [Int]
    /// Name changes: any prefix.
    let names: [Int]
    /// Writes over two sectors or more, with their tears (one per inner sector boundary).
    let tearable: [(operation: Int, tears: Int)]

    init(_ operations: [PendingOperations.Operation]) {
        self.operations = operations
        data = operations.indices.filter { !operations[$0].isNameChange }
        names = operations.indices.filter { operations[$0].isNameChange }
        tearable = data.compactMap { i in
            let n = operations[i].sectors
            return n > 1 ? (i, n - 1) : nil
        }
    }

    /// Tears over every tearable write.
    var tears: Int { tearable.reduce(0) { $0 + $1.tears } }

    /// How many states there are: (prefixes) × (subsets + subsets of the others × tears).
    /// As a Double, since it can pass what an Int holds.
    var possible: Double {
        let subsets = pow(2, Double(data.count))
        return Double(names.count + 1) * (subsets + subsets / 2 * Double(tears))
    }

    /// `possible` when an Int holds it exactly.
    var count: Int? { possible < Double(1 << 52) ? Int(possible) : nil }

    /// The state numbered `index` (`0..<count`): the name prefix varies fastest, then the
    /// untorn subsets (as binary numbers over `data`), then each tearable write's tears.
    func state(_ index: Int) -> OperationState {
        var persisted = Array(repeating: false, count: operations.count)
        let prefix = index % (names.count + 1)
        for i in names.prefix(prefix) { persisted[i] = true }
        var rest = index / (names.count + 1)
        func set(_ bits: Int, over ops: [Int]) {
            for (k, i) in ops.enumerated() where bits & (1 << k) != 0 { persisted[i] = true }
        }
        let subsets = 1 << data.count
        if rest < subsets {
            set(rest, over: data)
            return OperationState(persisted: persisted, torn: nil)
        }
        rest -= subsets
        for (op, tears) in tearable {
            let block = (subsets / 2) * tears
            guard rest >= block else {
                let t = rest % tears
                set(rest / tears, over: data.filter { $0 != op })
                return OperationState(persisted: persisted, torn: .init(operation: op, boundary: t + 1))
            }
            rest -= block
        }
        preconditionFailure("crash state \(index) is past the \(possible) states")
    }

    /// A state drawn from `rng`, for spaces too big to number: half the time one write torn.
    func randomState(using rng: inout SeededRandom) -> OperationState {
        var persisted = Array(repeating: false, count: operations.count)
        for i in data { persisted[i] = Bool.random(using: &rng) }
        for i in names.prefix(Int.random(in: 0...names.count, using: &rng)) { persisted[i] = true }
        guard !tearable.isEmpty, Bool.random(using: &rng) else { return OperationState(persisted: persisted) }
        let (op, tears) = tearable[Int.random(in: 0..<tearable.count, using: &rng)]
        let t = Int.random(in: 0..<tears, using: &rng)
        persisted[op] = false
        return OperationState(persisted: persisted, torn: .init(operation: op, boundary: t + 1))
    }

    /// Every state when there are at most `bound`; else nothing persisted, everything
    /// persisted, and a seeded sample, `bound` in all.
    func states(bound: Int, using rng: inout SeededRandom) -> (states: [OperationState], exhaustive: Bool) {
        if let count, count <= bound { return ((0..<count).map(state), true) }
        let none = OperationState(persisted: Array(repeating: false, count: operations.count))
        var all = none
        for i in data + names { all.persisted[i] = true }
        func key(_ s: OperationState) -> String { "\(s.persisted) \(String(describing: s.torn))" }
        var drawn = [none, all]
        var seen = Set(drawn.map(key))
        var misses = 0
        while drawn.count < bound && misses < 4 * bound {
            let s =
                count.map { state(Int.random(in: 0..<$0, using: &rng)) } ?? randomState(using: &rng)
            if seen.insert(key(s)).inserted {
                drawn.append(s)
            } else {
                misses += 1
            }
        }
        return (drawn, false)
    }
}

extension OperationState {
    init(persisted: [Bool]) { self.init(persisted: persisted, torn: nil) }
}
