import Foundation

/// Parses NSPredicate-format strings into `Predicate`:
///
///     predicate  := or
///     or         := and (("OR" | "||") and)*
///     and        := not (("AND" | "&&") not)*
///     not        := ("NOT" | "!") not | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
///     comparison := ["ANY" | "SOME" | "ALL" | "NONE"] expr
///                   ( op ["[" "c" | "d" | "cd" "]"] expr | "BETWEEN" expr | "IN" expr )
///     op         := "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
///                   | "BEGINSWITH" | "ENDSWITH" | "CONTAINS" | "LIKE"
///     expr       := keypath ["." "@count" | "@min" | "@max" | "@sum" | "@avg" [keypath]]
///                   | "SUBQUERY" "(" keypath "," "$" name "," predicate ")" "." "@count"
///                   | number | string | "true" | "false" | "nil" | "{" expr ("," expr)* "}"
///                   | "%@" | "%K"
///
/// Keywords are case-insensitive. Every error carries its 1-based character position.
struct PredicateParser {
    typealias Token = PredicateTokens.Token
    private let tokens: [PredicateTokens.Lexeme]
    private var i = 0
    private let args: [Any]
    private var argIndex = 0

    static func parse(_ s: String, _ args: [Any]) throws -> Predicate {
        var p = PredicateParser(tokens: try PredicateTokens.lexemes(of: s), args: args)
        let pred = try p.parseOr()
        guard case .end = p.peek else {
            throw QueryError.syntax(position: p.pos, detail: "unexpected \(p.describe(p.peek))")
        }
        guard p.argIndex == args.count else {
            throw QueryError.argumentCount(position: 1, expected: p.argIndex, given: args.count)
        }
        return pred
    }

    private init(tokens: [PredicateTokens.Lexeme], args: [Any]) {
        self.tokens = tokens
        self.args = args
    }

    private var peek: Token { tokens[i].token }
    /// The keyword the current token spells, in upper case (nil: not a keyword).
    private var peekKeyword: String? { tokens[i].keyword }
    private var pos: Int { tokens[i].position }
    private mutating func advance() { if i < tokens.count - 1 { i += 1 } }

    private func describe(_ t: Token) -> String {
        switch t {
        case .ident(let s): return "'\(s)'"
        case .variable(let s): return "'$\(s)'"
        case .string(let s): return "string \"\(s)\""
        case .number(let s): return "number \(s)"
        case .op(let s): return "'\(s)'"
        case .punct(let c): return "'\(c)'"
        case .arg(let c): return "'%\(c)'"
        case .aggregate(let s): return "'\(s)'"
        case .end: return "end of query"
        }
    }

    private func isKeyword(_ w: String) -> Bool {
        peekKeyword == w
    }

    private mutating func expect(_ c: Character) throws {
        guard peek == .punct(c) else {
            throw QueryError.syntax(position: pos, detail: "expected '\(c)', found \(describe(peek))")
        }
        advance()
    }

    // MARK: Grammar

    /// Takes the current token when it is `keyword` or its symbol (`AND` or `&&`).
    private mutating func take(_ keyword: String, or symbol: String) -> Bool {
        guard isKeyword(keyword) || peek == .op(symbol) else { return false }
        advance()
        return true
    }

    /// Operands joined by one operator (`a OR b || c`); an operand alone stands for itself.
    private mutating func parseJoined(
        by keyword: String, or symbol: String, operand: (inout PredicateParser) throws -> Predicate,
        joined: ([Predicate]) -> Predicate
    ) throws -> Predicate {
        var parts = [try operand(&self)]
        while take(keyword, or: symbol) { parts.append(try operand(&self)) }
        return parts.count == 1 ? parts[0] : joined(parts)
    }

    private mutating func parseOr() throws -> Predicate {
        try parseJoined(by: "OR", or: "||", operand: { try $0.parseAnd() }, joined: Predicate.or)
    }

    private mutating func parseAnd() throws -> Predicate {
        try parseJoined(by: "AND", or: "&&", operand: { try $0.parseNot() }, joined: Predicate.and)
    }

    private mutating func parseNot() throws -> Predicate {
        if take("NOT", or: "!") { return .not(try parseNot()) }
        if peek == .punct("(") {
            let save = i
            advance()
            if let inner = try? parseOr(), peek == .punct(")") {
                advance()
                return inner
            }
            i = save
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        return try parseComparison()
    }

    private mutating func parseComparison() throws -> Predicate {
        var quant = Quantifier.implicit
        if isKeyword("ANY") || isKeyword("SOME") {
            quant = .any; advance()
        } else if isKeyword("ALL") {
            quant = .all; advance()
        } else if isKeyword("NONE") {
            quant = .none; advance()
        }
        let startPos = pos
        let lhs = try parseExpression()
        if isKeyword("BETWEEN") {
            advance()
            let at = pos
            let range = try parseExpression()
            guard case .values(let vs) = range, vs.count == 2 else {
                throw QueryError.syntax(position: at, detail: "BETWEEN needs {low, high}")
            }
            return .between(lhs, .value(vs[0]), .value(vs[1]), quant)
        }
        if isKeyword("IN") {
            advance()
            return .in(lhs, try parseExpression(), quant)
        }
        let opPos = pos
        let op: CompareOperator
        switch peek {
        case .op("=="), .op("="): op = .equal
        case .op("!="), .op("<>"): op = .notEqual
        case .op("<"): op = .less
        case .op("<="), .op("=<"): op = .lessOrEqual
        case .op(">"): op = .greater
        case .op(">="), .op("=>"): op = .greaterOrEqual
        case .ident where peekKeyword == "BEGINSWITH": op = .beginsWith
        case .ident where peekKeyword == "ENDSWITH": op = .endsWith
        case .ident where peekKeyword == "CONTAINS": op = .contains
        case .ident where peekKeyword == "LIKE": op = .like
        case .ident where tokens[i].upper == "MATCHES":
            throw QueryError.unsupportedOperator(
                position: opPos, detail: "MATCHES (regular expressions) is not supported")
        case .end:
            throw QueryError.syntax(
                position: opPos, detail: "expected an operator after the expression at position \(startPos)")
        default: throw QueryError.syntax(position: opPos, detail: "expected an operator, found \(describe(peek))")
        }
        advance()
        var opts: StringOptions = []
        if peek == .punct("[") {
            advance()
            guard case .ident(let flags) = peek, flags.allSatisfy({ "cdCD".contains($0) }) else {
                throw QueryError.syntax(position: pos, detail: "expected [c], [d] or [cd]")
            }
            if flags.lowercased().contains("c") { opts.insert(.caseInsensitive) }
            if flags.lowercased().contains("d") { opts.insert(.diacriticInsensitive) }
            advance()
            try expect("]")
        }
        let rhs = try parseExpression()
        return .compare(lhs, op, rhs, opts, quant)
    }

    private mutating func parseExpression() throws -> QueryExpression {
        let at = pos
        switch peek {
        case .string(let s): advance(); return .value(.string(s))
        case .number(let s):
            advance()
            if let i = Int64(s) { return .value(.int(i)) }
            if let d = Double(s) { return .value(.double(d)) }
            throw QueryError.syntax(position: at, detail: "bad number \(s)")
        case .arg("@"):
            advance()
            return try nextArgument(at)
        case .arg("K"):
            advance()
            guard argIndex < args.count else {
                throw QueryError.argumentCount(position: at, expected: argIndex + 1, given: args.count)
            }
            guard let name = args[argIndex] as? String else {
                throw QueryError.typeMismatch(position: at, detail: "%K needs a String key path")
            }
            argIndex += 1
            return try keyPathTail(
                KeyPathExpression(components: name.split(separator: ".").map(String.init), position: at))
        case .punct("{"):
            advance()
            var vs: [ObjectValue] = []
            if peek != .punct("}") {
                while true {
                    let e = try parseExpression()
                    switch e {
                    case .value(let v): vs.append(v)
                    case .values(let more): vs.append(contentsOf: more)
                    default: throw QueryError.syntax(position: at, detail: "a {list} holds constants only")
                    }
                    if peek == .punct(",") { advance(); continue }
                    break
                }
            }
            try expect("}")
            return .values(vs)
        case .variable(let v):
            advance()
            var comps: [String] = []
            while peek == .punct(".") {
                advance()
                guard case .ident(let s) = peek else { break }
                comps.append(s)
                advance()
            }
            return .keyPath(KeyPathExpression(variable: v, components: comps, position: at))
        case .ident(let s):
            switch tokens[i].upper {
            case "TRUE", "YES": advance(); return .value(.bool(true))
            case "FALSE", "NO": advance(); return .value(.bool(false))
            case "NIL", "NULL": advance(); return .value(.null)
            default: break
            }
            if peekKeyword == "SUBQUERY" { return try parseSubquery() }
            if tokens[i].upper == "SELF" {
                advance()
                return .keyPath(KeyPathExpression(components: [], position: at))
            }
            if let k = peekKeyword, k != "ANY", k != "ALL", k != "NONE", k != "SOME" {
                throw QueryError.syntax(position: at, detail: "expected a key path or a value, found keyword \(k)")
            }
            var comps = [s]
            advance()
            while peek == .punct("."), case .ident(let n) = tokens[i + 1].token {
                advance(); advance()
                comps.append(n)
            }
            return try keyPathTail(KeyPathExpression(components: comps, position: at))
        case .end: throw QueryError.syntax(position: at, detail: "the query ends where an expression should start")
        default:
            throw QueryError.syntax(position: at, detail: "expected a key path or a value, found \(describe(peek))")
        }
    }

    /// `.@count`, `.@sum.age` after a key path.
    private mutating func keyPathTail(_ k: KeyPathExpression) throws -> QueryExpression {
        guard peek == .punct("."), case .aggregate(let a) = tokens[i + 1].token else { return .keyPath(k) }
        advance()
        let at = pos
        advance()
        guard let op = AggregateOperator(rawValue: a) else {
            throw QueryError.unsupportedOperator(position: at, detail: "\(a) (use @count, @min, @max, @sum or @avg)")
        }
        var rest: [String] = []
        while peek == .punct("."), case .ident(let n) = tokens[i + 1].token {
            advance(); advance()
            rest.append(n)
        }
        return .aggregate(k, op, rest)
    }

    private mutating func parseSubquery() throws -> QueryExpression {
        let at = pos
        advance()
        try expect("(")
        guard case .ident(let first) = peek else {
            throw QueryError.syntax(position: pos, detail: "SUBQUERY needs a collection key path first")
        }
        var comps = [first]
        advance()
        while peek == .punct("."), case .ident(let n) = tokens[i + 1].token { advance(); advance(); comps.append(n) }
        try expect(",")
        guard case .variable(let v) = peek else {
            throw QueryError.syntax(position: pos, detail: "SUBQUERY needs a $variable second")
        }
        advance()
        try expect(",")
        let pred = try parseOr()
        try expect(")")
        guard peek == .punct("."), case .aggregate("@count") = tokens[i + 1].token else {
            throw QueryError.syntax(position: pos, detail: "SUBQUERY(...) must be followed by .@count")
        }
        advance(); advance()
        return .subqueryCount(KeyPathExpression(components: comps, position: at), variable: v, pred)
    }

    /// A `%@` argument: a value, or a list of values for an array.
    private mutating func nextArgument(_ at: Int) throws -> QueryExpression {
        guard argIndex < args.count else {
            throw QueryError.argumentCount(position: at, expected: argIndex + 1, given: args.count)
        }
        let a = args[argIndex]
        argIndex += 1
        // The common arguments first: each cast below costs a search of the conformance tables.
        switch a {
        case let v as String: return .value(.string(v))
        case let v as Bool: return .value(.bool(v))
        case let v as Int: return .value(.int(Int64(v)))
        case let v as Int64: return .value(.int(v))
        case let v as Double: return .value(.double(v))
        default: break
        }
        if let arr = DynamicValue.unwrap(a) as? [Any], !(DynamicValue.unwrap(a) is [UInt8]) {
            return .values(try arr.map { try PredicateParser.value(of: $0, at) })
        }
        return .value(try PredicateParser.value(of: a, at))
    }

    /// A Swift argument as a query value.
    static func value(of a: Any, _ at: Int) throws -> ObjectValue {
        guard let a = DynamicValue.unwrap(a) else { return .null }
        switch a {
        case let v as ObjectValue: return v
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Int32: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Double: return .double(v)
        case let v as Float: return .float(v)
        case let v as String: return .string(v)
        case let v as Date: return .date(v)
        case let v as UUID: return .uuid(v)
        case let v as Data: return .data([UInt8](v))
        case let v as [UInt8]: return .data(v)
        case let o as Object:
            guard let k = o.objectKey else {
                throw QueryError.typeMismatch(position: at, detail: "an unmanaged object cannot be a query argument")
            }
            return .link(k)
        default:
            throw QueryError.typeMismatch(
                position: at, detail: "argument of type \(type(of: a)) cannot be used in a query")
        }
    }
}
