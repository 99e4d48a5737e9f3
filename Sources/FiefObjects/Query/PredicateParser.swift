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
    enum Token: Equatable {
        case ident(String)
        case variable(String)
        case string(String)
        case number(String)
        case op(String)
        case punct(Character)
        case arg(Character)
        case aggregate(String)
        case end
    }

    private var tokens: [(Token, Int)] = []
    private var i = 0
    private let args: [Any]
    private var argIndex = 0
    private let source: String

    static func parse(_ s: String, _ args: [Any]) throws -> Predicate {
        var p = PredicateParser(source: s, args: args)
        try p.tokenize()
        let pred = try p.parseOr()
        guard case .end = p.peek else {
            throw QueryError.syntax(position: p.pos, detail: "unexpected \(p.describe(p.peek))")
        }
        guard p.argIndex == args.count else {
            throw QueryError.argumentCount(position: 1, expected: p.argIndex, given: args.count)
        }
        return pred
    }

    private init(source: String, args: [Any]) {
        self.source = source
        self.args = args
    }

    // MARK: Tokens

    private mutating func tokenize() throws {
        let cs = Array(source)
        var k = 0
        func isIdentStart(_ c: Character) -> Bool { c.isLetter || c == "_" }
        func isIdent(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }
        while k < cs.count {
            let c = cs[k]
            let pos = k + 1
            if c.isWhitespace { k += 1; continue }
            if c == "\"" || c == "'" {
                var s = ""
                k += 1
                var closed = false
                while k < cs.count {
                    if cs[k] == "\\", k + 1 < cs.count {
                        let n = cs[k + 1]
                        s.append(n == "n" ? "\n" : n == "t" ? "\t" : n)
                        k += 2
                        continue
                    }
                    if cs[k] == c { closed = true; k += 1; break }
                    s.append(cs[k]); k += 1
                }
                guard closed else { throw QueryError.syntax(position: pos, detail: "unterminated string") }
                tokens.append((.string(s), pos))
            } else if c.isNumber || (c == "-" && k + 1 < cs.count && cs[k + 1].isNumber && lastAllowsNumber) {
                var s = String(c)
                k += 1
                while k < cs.count,
                    cs[k].isNumber || cs[k] == "." || cs[k] == "e" || cs[k] == "E"
                        || ((cs[k] == "-" || cs[k] == "+") && (cs[k - 1] == "e" || cs[k - 1] == "E"))
                {
                    if cs[k] == ".", k + 1 < cs.count, !cs[k + 1].isNumber { break }
                    s.append(cs[k]); k += 1
                }
                tokens.append((.number(s), pos))
            } else if isIdentStart(c) {
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                tokens.append((.ident(s), pos))
            } else if c == "$" {
                k += 1
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                guard !s.isEmpty else {
                    throw QueryError.syntax(position: pos, detail: "'$' must start a variable name")
                }
                tokens.append((.variable(s), pos))
            } else if c == "@" {
                k += 1
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                tokens.append((.aggregate("@" + s.lowercased()), pos))
            } else if c == "%" {
                guard k + 1 < cs.count, "@K".contains(cs[k + 1]) else {
                    throw QueryError.syntax(
                        position: pos, detail: "unknown format specifier (use %@ for values, %K for key paths)")
                }
                tokens.append((.arg(cs[k + 1]), pos))
                k += 2
            } else {
                let two = k + 1 < cs.count ? String([c, cs[k + 1]]) : ""
                if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                    tokens.append((.op(two), pos)); k += 2
                } else if "=<>!".contains(c) {
                    tokens.append((.op(String(c)), pos)); k += 1
                } else if "(),{}[].".contains(c) {
                    tokens.append((.punct(c), pos)); k += 1
                } else {
                    throw QueryError.syntax(position: pos, detail: "unexpected character '\(c)'")
                }
            }
        }
        tokens.append((.end, cs.count + 1))
    }

    /// A leading '-' is a sign only where a value may start (not after a key path or value).
    private var lastAllowsNumber: Bool {
        guard let last = tokens.last?.0 else { return true }
        switch last {
        case .op, .punct("("), .punct("{"), .punct(","): return true
        case .ident(let s): return keyword(s) != nil
        default: return false
        }
    }

    /// Made once: built inside `keyword`, the set was a quarter of a query's parse.
    private static let keywords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH",
        "CONTAINS", "LIKE", "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY"
    ]

    private func keyword(_ s: String) -> String? {
        let u = s.uppercased()
        return PredicateParser.keywords.contains(u) ? u : nil
    }

    private var peek: Token { tokens[i].0 }
    private var pos: Int { tokens[i].1 }
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
        if case .ident(let s) = peek, keyword(s) == w { return true }
        return false
    }

    private mutating func expect(_ c: Character) throws {
        guard peek == .punct(c) else {
            throw QueryError.syntax(position: pos, detail: "expected '\(c)', found \(describe(peek))")
        }
        advance()
    }

    // MARK: Grammar

    private mutating func parseOr() throws -> Predicate {
        var parts = [try parseAnd()]
        while isKeyword("OR") || peek == .op("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws -> Predicate {
        var parts = [try parseNot()]
        while isKeyword("AND") || peek == .op("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws -> Predicate {
        if isKeyword("NOT") || peek == .op("!") {
            advance()
            return .not(try parseNot())
        }
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
        case .ident(let s) where keyword(s) == "BEGINSWITH": op = .beginsWith
        case .ident(let s) where keyword(s) == "ENDSWITH": op = .endsWith
        case .ident(let s) where keyword(s) == "CONTAINS": op = .contains
        case .ident(let s) where keyword(s) == "LIKE": op = .like
        case .ident(let s) where ["MATCHES"].contains(s.uppercased()):
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
            switch s.lowercased() {
            case "true", "yes": advance(); return .value(.bool(true))
            case "false", "no": advance(); return .value(.bool(false))
            case "nil", "null": advance(); return .value(.null)
            default: break
            }
            if keyword(s) == "SUBQUERY" { return try parseSubquery() }
            if s.uppercased() == "SELF" {
                advance()
                return .keyPath(KeyPathExpression(components: [], position: at))
            }
            if let k = keyword(s), k != "ANY", k != "ALL", k != "NONE", k != "SOME" {
                throw QueryError.syntax(position: at, detail: "expected a key path or a value, found keyword \(k)")
            }
            var comps = [s]
            advance()
            while peek == .punct("."), case .ident(let n) = tokens[i + 1].0 {
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
        guard peek == .punct("."), case .aggregate(let a) = tokens[i + 1].0 else { return .keyPath(k) }
        advance()
        let at = pos
        advance()
        guard let op = AggregateOperator(rawValue: a) else {
            throw QueryError.unsupportedOperator(position: at, detail: "\(a) (use @count, @min, @max, @sum or @avg)")
        }
        var rest: [String] = []
        while peek == .punct("."), case .ident(let n) = tokens[i + 1].0 {
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
        while peek == .punct("."), case .ident(let n) = tokens[i + 1].0 { advance(); advance(); comps.append(n) }
        try expect(",")
        guard case .variable(let v) = peek else {
            throw QueryError.syntax(position: pos, detail: "SUBQUERY needs a $variable second")
        }
        advance()
        try expect(",")
        let pred = try parseOr()
        try expect(")")
        guard peek == .punct("."), case .aggregate("@count") = tokens[i + 1].0 else {
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
