/// A store the torture suite can drive: Fief's engine, SQLite, LMDB, or any program behind
/// the `exec` line protocol. The scenarios, the oracle log and the checkers are written once
/// against this protocol; each target maps it onto its own API.
///
/// The model is one ordered map of UTF-8 text keys to UTF-8 text values, compared bytewise.
/// A transaction is scoped: `write` begins one, commits it when `body` returns (the commit is
/// acknowledged when `write` returns) and rolls it back when `body` throws; `read` runs `body`
/// in a read-only snapshot. What a target does not promise (snapshots, atomic commits) is
/// what the checkers find out.
public protocol TortureTarget: AnyObject {
    /// What the target promises, so a scenario can tell "not applicable" from "violated".
    var capabilities: TargetCapabilities { get }

    /// begin (write) … commit, or rollback when `body` throws.
    func write<T>(_ body: (TargetTransaction) throws -> T) throws -> T

    /// begin (read) … end, in one snapshot.
    func read<T>(_ body: (TargetTransaction) throws -> T) throws -> T

    /// A full integrity check of the store's files: the problems found, empty when sound; nil
    /// when the target has no such check.
    func integrityCheck() throws -> [String]?

    /// Releases the store (an ordinary, clean close).
    func close()
}

/// The operations inside one transaction.
public protocol TargetTransaction {
    func get(_ key: String) throws -> String?
    func put(_ key: String, _ value: String) throws
    func delete(_ key: String) throws
    /// The pairs with `from <= key < to`, in key order.
    func scan(from: String, to: String) throws -> [(key: String, value: String)]
}

public struct TargetCapabilities: Sendable, Equatable {
    /// Transactions isolated from each other across processes (the isolation scenario needs it).
    public var transactions: Bool
    /// Several processes may open the store at once.
    public var multiProcess: Bool

    public init(transactions: Bool = true, multiProcess: Bool = true) {
        self.transactions = transactions
        self.multiProcess = multiProcess
    }
}

/// A target's own failure: which target, what it was doing, what it said.
public struct TargetError: Error, CustomStringConvertible {
    public var target: String
    public var operation: String
    public var detail: String

    public init(_ target: String, _ operation: String, _ detail: String) {
        self.target = target
        self.operation = operation
        self.detail = detail
    }

    public var description: String { "\(target): \(operation): \(detail)" }
}
