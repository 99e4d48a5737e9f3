import Foundation

/// What a violation says about the store, in the two classes a verdict separates:
/// **durability** (an acknowledged commit is gone) and **atomicity/integrity** (the store holds
/// a state that is no committed version, or fails its own integrity check, or does not open).
/// Isolation anomalies and harness failures are kept apart from both.
public enum ViolationKind: String, Codable, Sendable, CaseIterable {
    case durability
    case atomicity
    case integrity
    case isolation
    case harness

    /// The verdict class: durability, or atomicity and integrity together.
    public var verdictClass: VerdictClass {
        switch self {
        case .durability: return .durability
        case .atomicity, .integrity: return .atomicityIntegrity
        case .isolation: return .isolation
        case .harness: return .harness
        }
    }
}

public enum VerdictClass: String, Codable, Sendable {
    case durability
    case atomicityIntegrity = "atomicity-integrity"
    case isolation
    case harness
}

/// One thing a checker or a scenario found wrong: its kind, decided where it was found, and
/// the text a person reads in summaries, JUnit and reports.
public struct Violation: Codable, Sendable, Equatable, CustomStringConvertible {
    public var kind: ViolationKind
    public var text: String

    /// A violation whose text is exactly `text` (which need not name its kind).
    public init(kind: ViolationKind, text: String) {
        self.kind = kind
        self.text = text
    }

    /// A violation whose text starts with its kind: "durability: commit 3 …".
    public init(_ kind: ViolationKind, _ detail: String) {
        self.init(kind: kind, text: "\(kind.rawValue): \(detail)")
    }

    /// A failure of the harness, not of the store (a process that would not start, a fault
    /// that did not fire): kept apart from the verdict classes.
    public static func harness(_ text: String) -> Violation { Violation(kind: .harness, text: text) }

    /// The same violation, its text led by the event or place that found it
    /// ("after eio-write, through the mount: durability: …").
    public func prefixed(_ context: String) -> Violation {
        Violation(kind: kind, text: "\(context): \(text)")
    }

    public var description: String { text }

    enum CodingKeys: String, CodingKey { case kind, text }

    /// Files written before violations were typed hold only the text; its kind is read back
    /// from the markers the checkers started each text with.
    public init(from decoder: Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self.init(kind: ViolationKind(olderText: text), text: text)
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(kind: try c.decode(ViolationKind.self, forKey: .kind), text: try c.decode(String.self, forKey: .text))
    }
}

extension ViolationKind {
    /// The kind of a violation in a file written before violations were typed: the checkers
    /// started each text with its kind ("durability: …", "G1c: …"), perhaps after the event
    /// that found it; the earliest marker wins.
    init(olderText text: String) {
        let markers: [(String, ViolationKind)] = [
            ("durability:", .durability), ("atomicity:", .atomicity), ("bank:", .atomicity), ("version:", .atomicity),
            ("integrity:", .integrity), ("does not open", .integrity), ("verifier crashed", .integrity),
            ("G0:", .isolation), ("G1a:", .isolation), ("G1b:", .isolation), ("G1c:", .isolation),
            ("G-single:", .isolation), ("lost-update:", .isolation), ("incompatible-order:", .isolation),
            ("garbage-read:", .isolation), ("lists differ", .isolation)
        ]
        let found = markers.compactMap { marker, kind in
            text.range(of: marker).map { (offset: text.distance(from: text.startIndex, to: $0.lowerBound), kind: kind) }
        }
        if let first = found.min(by: { $0.offset < $1.offset }) {
            self = first.kind
        } else if text.contains("was synced, yet the file recovered") {
            self = .durability
        } else {
            self = .harness
        }
    }
}
