/// Every way `fief bench` and `fief report` refuse input or fail, each a one-line message.
public enum BenchError: Error, Equatable, CustomStringConvertible {
    case fileNotFound(String)
    case unreadable(path: String, detail: String)
    case malformed(path: String, detail: String)
    case badThreshold(String)
    case badArgument(String)
    case peer(system: String, operation: String, detail: String)
    case child(String)
    case io(String)
    /// Two systems answered one of a workload's questions differently on the same data.
    case answersDiffer(question: String, answers: String)

    public var description: String {
        switch self {
        case .fileNotFound(let p): return "\(p): no such file"
        case .unreadable(let p, let d): return "\(p): cannot read: \(d)"
        case .malformed(let p, let d): return "\(p): not a results file fief can read: \(d)"
        case .badThreshold(let t): return "bad threshold '\(t)': give a percentage such as 5% or 2.5"
        case .badArgument(let d): return d
        case .peer(let s, let op, let d): return "\(s): \(op) failed: \(d)"
        case .child(let d): return "benchmark child process: \(d)"
        case .io(let d): return d
        case .answersDiffer(let q, let a):
            return "the systems disagree on \(q): \(a) (no timing of a wrong answer is kept)"
        }
    }
}
