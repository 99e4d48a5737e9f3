import Foundation

/// The typed query front end: `$0.age > 5 && $0.name.starts(with: "A", caseInsensitive: true)`.
/// Member lookups build key paths (names found by tracing one property read); operators build
/// the same `Predicate` the string parser does.
@dynamicMemberLookup
public struct Query<T> {
    let path: [String]
    let built: Predicate?
    /// Set when the query stands for `path.@op.rest` rather than the key path itself.
    var aggregateOp: (AggregateOperator, [String])?

    init(path: [String], predicate: Predicate? = nil) {
        self.path = path
        self.built = predicate
    }

    var keyPath: QueryExpression { .keyPath(KeyPathExpression(components: path)) }

    /// A Bool property used as a condition means `== true`.
    var predicate: Predicate { built ?? .compare(keyPath, .equal, .value(.bool(true)), [], .implicit) }

    fileprivate func step<V>(_ kp: AnyKeyPath, _ owner: Object.Type) -> Query<V> {
        guard let n = ModelInfo.of(owner).propertyName(reading: kp) else {
            preconditionFailure("key path of \(owner) names no @Persisted property")
        }
        return Query<V>(path: path + [n])
    }
}

extension Query where T: Object {
    public subscript<V>(dynamicMember kp: KeyPath<T, V>) -> Query<V> { step(kp, T.self) }
}

extension Query where T: _OptionalObject {
    public subscript<V>(dynamicMember kp: KeyPath<T.Wrapped, V>) -> Query<V> { step(kp, T.Wrapped.self) }
}

extension Query where T: _ObjectCollection {
    /// A property of the collection's objects: comparisons on it match when any object matches.
    public subscript<V>(dynamicMember kp: KeyPath<T.Element, V>) -> Query<V> { step(kp, T.Element.self) }
    public var count: Query<Int> { Query<Int>(path: [], predicate: nil).aggregate(path, .count, []) }
    public func sum<V>(_ kp: KeyPath<T.Element, V>) -> Query<V> { aggregateOf(kp, .sum) }
    public func min<V>(_ kp: KeyPath<T.Element, V>) -> Query<V> { aggregateOf(kp, .min) }
    public func max<V>(_ kp: KeyPath<T.Element, V>) -> Query<V> { aggregateOf(kp, .max) }
    public func avg<V>(_ kp: KeyPath<T.Element, V>) -> Query<Double> { aggregateOf(kp, .avg) }

    private func aggregateOf<V, R>(_ kp: KeyPath<T.Element, V>, _ op: AggregateOperator) -> Query<R> {
        guard let n = ModelInfo.of(T.Element.self).propertyName(reading: kp) else {
            preconditionFailure("key path names no @Persisted property")
        }
        return Query<R>(path: []).aggregate(path, op, [n])
    }
}

extension Query {
    /// An expression query (aggregate) as a Query whose "path" is a marker; comparisons read `expression`.
    func aggregate(_ collection: [String], _ op: AggregateOperator, _ rest: [String]) -> Query {
        var q = Query(path: collection)
        q.aggregateOp = (op, rest)
        return q
    }

    var expression: QueryExpression {
        if let (op, rest) = aggregateOp { return .aggregate(KeyPathExpression(components: path), op, rest) }
        return keyPath
    }
}

/// Marks `Optional<Object subclass>` so `$0.owner.name` reads through the link.
public protocol _OptionalObject { associatedtype Wrapped: Object }
extension Optional: _OptionalObject where Wrapped: Object {}

/// Marks lists of objects and linking objects so `$0.dogs.age` and `$0.owners.count` work.
public protocol _ObjectCollection { associatedtype Element: Object }
extension List: _ObjectCollection where Element: Object {}
extension LinkingObjects: _ObjectCollection {
    public typealias Element = Origin
}

// MARK: Operators

private func cmp<V>(_ q: Query<V>, _ op: CompareOperator, _ v: ObjectValue, _ o: StringOptions = []) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .compare(q.expression, op, .value(v), o, .implicit))
}

private func stored<V>(_ v: V) -> ObjectValue {
    if let s = v as? any _PersistableScalar { return s._stored }
    if let o = v as? Object { return o.objectKey.map { .link($0) } ?? .null }
    if let u = DynamicValue.unwrap(v) {
        if let s = u as? any _PersistableScalar { return s._stored }
        if let o = u as? Object { return o.objectKey.map { .link($0) } ?? .null }
    }
    return .null
}

public func == <V>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .equal, stored(r)) }
public func != <V>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .notEqual, stored(r)) }
public func < <V: Comparable>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .less, stored(r)) }
public func <= <V: Comparable>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .lessOrEqual, stored(r)) }
public func > <V: Comparable>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .greater, stored(r)) }
public func >= <V: Comparable>(l: Query<V>, r: V) -> Query<Bool> { cmp(l, .greaterOrEqual, stored(r)) }
public func < <V: Comparable>(l: Query<V?>, r: V) -> Query<Bool> { cmp(l, .less, stored(r)) }
public func <= <V: Comparable>(l: Query<V?>, r: V) -> Query<Bool> { cmp(l, .lessOrEqual, stored(r)) }
public func > <V: Comparable>(l: Query<V?>, r: V) -> Query<Bool> { cmp(l, .greater, stored(r)) }
public func >= <V: Comparable>(l: Query<V?>, r: V) -> Query<Bool> { cmp(l, .greaterOrEqual, stored(r)) }

/// Compares two properties of the same object.
public func == <V>(l: Query<V>, r: Query<V>) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .compare(l.expression, .equal, r.expression, [], .implicit))
}
public func < <V>(l: Query<V>, r: Query<V>) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .compare(l.expression, .less, r.expression, [], .implicit))
}
public func > <V>(l: Query<V>, r: Query<V>) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .compare(l.expression, .greater, r.expression, [], .implicit))
}

public func && (l: Query<Bool>, r: Query<Bool>) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .and([l.predicate, r.predicate]))
}
public func || (l: Query<Bool>, r: Query<Bool>) -> Query<Bool> {
    Query<Bool>(path: [], predicate: .or([l.predicate, r.predicate]))
}
public prefix func ! (q: Query<Bool>) -> Query<Bool> { Query<Bool>(path: [], predicate: .not(q.predicate)) }

extension Query {
    /// The value is one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(path: [], predicate: .in(expression, .values(values.map { stored($0) }), .implicit))
    }

    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        Query<Bool>(
            path: [],
            predicate: .between(
                expression, .value(stored(range.lowerBound)), .value(stored(range.upperBound)), .implicit))
    }
}

private func opts(_ ci: Bool, _ di: Bool) -> StringOptions {
    var o: StringOptions = []
    if ci { o.insert(.caseInsensitive) }
    if di { o.insert(.diacriticInsensitive) }
    return o
}

extension Query where T == String {
    public func starts(with s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Query<Bool>
    {
        cmp(self, .beginsWith, .string(s), opts(caseInsensitive, diacriticInsensitive))
    }
    public func ends(with s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Query<Bool> {
        cmp(self, .endsWith, .string(s), opts(caseInsensitive, diacriticInsensitive))
    }
    public func contains(_ s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Query<Bool>
    {
        cmp(self, .contains, .string(s), opts(caseInsensitive, diacriticInsensitive))
    }
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Query<Bool> {
        cmp(self, .like, .string(pattern), opts(caseInsensitive, false))
    }
    public func equals(_ s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Query<Bool> {
        cmp(self, .equal, .string(s), opts(caseInsensitive, diacriticInsensitive))
    }
}
