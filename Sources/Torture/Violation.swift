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

    /// The kind of a violation from its text, for violations that travel as text: the checkers
    /// start each with its kind ("durability: …", "integrity: …"), the scenarios may prefix the
    /// event that found it ("after eio-write, through the mount: durability: …").
    public static func of(_ text: String) -> ViolationKind {
        let markers: [(String, ViolationKind)] = [
            ("durability:", .durability), ("atomicity:", .atomicity), ("bank:", .atomicity), ("version:", .atomicity),
            ("integrity:", .integrity), ("does not open", .integrity), ("verifier crashed", .integrity),
            ("G0:", .isolation), ("G1a:", .isolation), ("G1b:", .isolation), ("G1c:", .isolation),
            ("G-single:", .isolation),
            ("lost-update:", .isolation), ("incompatible-order:", .isolation), ("garbage-read:", .isolation),
            ("lists differ", .isolation)
        ]
        var best: (offset: Int, kind: ViolationKind)?
        for (marker, kind) in markers {
            if let r = text.range(of: marker) {
                let offset = text.distance(from: text.startIndex, to: r.lowerBound)
                if best == nil || offset < best!.offset { best = (offset, kind) }
            }
        }
        // A commit whose select-bit sync returned, yet missing after a cut, is a lost commit.
        if best == nil, text.contains("was synced, yet the file recovered") { return .durability }
        return best?.kind ?? .harness
    }
}

public enum VerdictClass: String, Codable, Sendable {
    case durability
    case atomicityIntegrity = "atomicity-integrity"
    case isolation
    case harness
}

/// One thing a checker found wrong.
public struct Violation: Sendable, CustomStringConvertible {
    public var kind: ViolationKind
    public var detail: String

    public init(_ kind: ViolationKind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}
