/// One query AST for both front ends: the NSPredicate-format parser and typed `where { }`.
public indirect enum Predicate: Sendable, Equatable {
    case constant(Bool)
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)
    case compare(QueryExpression, CompareOperator, QueryExpression, StringOptions, Quantifier)
    case between(QueryExpression, QueryExpression, QueryExpression, Quantifier)
    /// `lhs IN rhs`: rhs a list of values or a collection key path.
    case `in`(QueryExpression, QueryExpression, Quantifier)
}

public enum CompareOperator: String, Sendable, Equatable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE"

    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like: return true
        default: return false
        }
    }
    var isOrdering: Bool {
        switch self {
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return true
        default: return false
        }
    }
}

public struct StringOptions: OptionSet, Sendable, Equatable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let caseInsensitive = StringOptions(rawValue: 1)
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// How a comparison treats a key path that yields several values (through a list or linking
/// objects). `implicit` behaves as `any`.
public enum Quantifier: String, Sendable, Equatable { case implicit, any, all, none }

public enum AggregateOperator: String, Sendable, Equatable {
    case count = "@count", min = "@min", max = "@max", sum = "@sum", avg = "@avg"
}

public struct KeyPathExpression: Sendable, Equatable {
    /// `$x` inside a SUBQUERY, nil for the queried object.
    public var variable: String?
    public var components: [String]
    /// 1-based character position in the query string (0 for typed queries).
    public var position: Int

    public init(variable: String? = nil, components: [String], position: Int = 0) {
        self.variable = variable
        self.components = components
        self.position = position
    }
}

public indirect enum QueryExpression: Sendable, Equatable {
    case keyPath(KeyPathExpression)
    /// `dogs.@count`, `dogs.@sum.age`, `scores.@max`.
    case aggregate(KeyPathExpression, AggregateOperator, [String])
    /// `SUBQUERY(dogs, $d, $d.age > 5).@count`.
    case subqueryCount(KeyPathExpression, variable: String, Predicate)
    case value(ObjectValue)
    case values([ObjectValue])
}

/// One key of a sort: a property path (through to-one links) and a direction.
public struct SortDescriptor: Sendable, Equatable {
    public var keyPath: String
    public var ascending: Bool
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
