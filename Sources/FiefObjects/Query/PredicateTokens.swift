/// The tokens of an NSPredicate-format string, each with its 1-based position; identifiers
/// carry their keyword. A string is split once: apps run the same few formats with new
/// arguments, and splitting was as costly as the parse itself.
enum PredicateTokens {
    enum Token: Equatable, Sendable {
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

    struct Lexeme: Sendable {
        let token: Token
        let position: Int
        /// For an identifier that is a keyword (any case): the keyword in upper case.
        let keyword: String?
        /// For an identifier: its upper-case spelling, for words such as `true` and `SELF`.
        let upper: String?

        init(_ token: Token, _ position: Int) {
            self.token = token
            self.position = position
            if case .ident(let s) = token {
                let u = s.uppercased()
                upper = u
                keyword = PredicateTokens.keywords.contains(u) ? u : nil
            } else {
                upper = nil
                keyword = nil
            }
        }
    }

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH",
        "CONTAINS", "LIKE", "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY"
    ]

    /// Formats split before, up to `cacheLimit` of them (a program that builds its formats
    /// with the values inside would otherwise grow it without end).
    private static let cache = Locked<[String: [Lexeme]]>([:])
    private static let cacheLimit = 256

    static func lexemes(of source: String) throws -> [Lexeme] {
        if let known = cache.withLock({ $0[source] }) { return known }
        let tokens = try split(source)
        cache.withLock {
            if $0.count >= cacheLimit { $0.removeAll(keepingCapacity: true) }
            $0[source] = tokens
        }
        return tokens
    }

    private static func split(_ source: String) throws -> [Lexeme] {
        var tokens: [Lexeme] = []
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
                tokens.append(Lexeme(.string(s), pos))
            } else if c.isNumber || (c == "-" && k + 1 < cs.count && cs[k + 1].isNumber && lastAllowsNumber(tokens)) {
                var s = String(c)
                k += 1
                while k < cs.count,
                    cs[k].isNumber || cs[k] == "." || cs[k] == "e" || cs[k] == "E"
                        || ((cs[k] == "-" || cs[k] == "+") && (cs[k - 1] == "e" || cs[k - 1] == "E"))
                {
                    if cs[k] == ".", k + 1 < cs.count, !cs[k + 1].isNumber { break }
                    s.append(cs[k]); k += 1
                }
                tokens.append(Lexeme(.number(s), pos))
            } else if isIdentStart(c) {
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                tokens.append(Lexeme(.ident(s), pos))
            } else if c == "$" {
                k += 1
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                guard !s.isEmpty else {
                    throw QueryError.syntax(position: pos, detail: "'$' must start a variable name")
                }
                tokens.append(Lexeme(.variable(s), pos))
            } else if c == "@" {
                k += 1
                var s = ""
                while k < cs.count, isIdent(cs[k]) { s.append(cs[k]); k += 1 }
                tokens.append(Lexeme(.aggregate("@" + s.lowercased()), pos))
            } else if c == "%" {
                guard k + 1 < cs.count, "@K".contains(cs[k + 1]) else {
                    throw QueryError.syntax(
                        position: pos, detail: "unknown format specifier (use %@ for values, %K for key paths)")
                }
                tokens.append(Lexeme(.arg(cs[k + 1]), pos))
                k += 2
            } else {
                let two = k + 1 < cs.count ? String([c, cs[k + 1]]) : ""
                if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                    tokens.append(Lexeme(.op(two), pos)); k += 2
                } else if "=<>!".contains(c) {
                    tokens.append(Lexeme(.op(String(c)), pos)); k += 1
                } else if "(),{}[].".contains(c) {
                    tokens.append(Lexeme(.punct(c), pos)); k += 1
                } else {
                    throw QueryError.syntax(position: pos, detail: "unexpected character '\(c)'")
                }
            }
        }
        tokens.append(Lexeme(.end, cs.count + 1))
        return tokens
    }

    /// A leading '-' is a sign only where a value may start (not after a key path or value).
    private static func lastAllowsNumber(_ tokens: [Lexeme]) -> Bool {
        guard let last = tokens.last else { return true }
        switch last.token {
        case .op, .punct("("), .punct("{"), .punct(","): return true
        case .ident: return last.keyword != nil
        default: return false
        }
    }
}
