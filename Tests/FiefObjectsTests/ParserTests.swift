import XCTest
import Foundation
@testable import FiefObjects

final class ParserTests: XCTestCase {
    func kp(_ s: String, _ pos: Int) -> QueryExpression {
        .keyPath(KeyPathExpression(components: s.split(separator: ".").map(String.init), position: pos))
    }

    func testEveryProduction() throws {
        XCTAssertEqual(
            try PredicateParser.parse("age > 5", []), .compare(kp("age", 1), .greater, .value(.int(5)), [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("age => -5.5", []),
            .compare(kp("age", 1), .greaterOrEqual, .value(.double(-5.5)), [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("a = 1 AND b != 2 OR NOT c <> 3", []),
            .or([
                .and([
                    .compare(kp("a", 1), .equal, .value(.int(1)), [], .implicit),
                    .compare(kp("b", 11), .notEqual, .value(.int(2)), [], .implicit)
                ]),
                .not(.compare(kp("c", 25), .notEqual, .value(.int(3)), [], .implicit))
            ]))
        XCTAssertEqual(
            try PredicateParser.parse("(a < 1 || b <= 2) && !(c >= 3)", []),
            .and([
                .or([
                    .compare(kp("a", 2), .less, .value(.int(1)), [], .implicit),
                    .compare(kp("b", 11), .lessOrEqual, .value(.int(2)), [], .implicit)
                ]),
                .not(.compare(kp("c", 24), .greaterOrEqual, .value(.int(3)), [], .implicit))
            ]))
        XCTAssertEqual(
            try PredicateParser.parse("name BEGINSWITH[c] 'a'", []),
            .compare(kp("name", 1), .beginsWith, .value(.string("a")), .caseInsensitive, .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("name ENDSWITH[d] \"b\"", []),
            .compare(kp("name", 1), .endsWith, .value(.string("b")), .diacriticInsensitive, .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("name CONTAINS[cd] %@", ["x"]),
            .compare(
                kp("name", 1), .contains, .value(.string("x")), [.caseInsensitive, .diacriticInsensitive], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("name LIKE 'a*b?'", []),
            .compare(kp("name", 1), .like, .value(.string("a*b?")), [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("age BETWEEN {1, 9}", []),
            .between(kp("age", 1), .value(.int(1)), .value(.int(9)), .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("age BETWEEN %@", [[1, 9]]),
            .between(kp("age", 1), .value(.int(1)), .value(.int(9)), .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("age IN {1, 2}", []), .in(kp("age", 1), .values([.int(1), .int(2)]), .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("%K IN %@", ["age", [3]]), .in(kp("age", 1), .values([.int(3)]), .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("ANY dogs.age > 1", []),
            .compare(kp("dogs.age", 5), .greater, .value(.int(1)), [], .any))
        XCTAssertEqual(
            try PredicateParser.parse("SOME dogs.age > 1", []),
            .compare(kp("dogs.age", 6), .greater, .value(.int(1)), [], .any))
        XCTAssertEqual(
            try PredicateParser.parse("ALL dogs.age > 1", []),
            .compare(kp("dogs.age", 5), .greater, .value(.int(1)), [], .all))
        XCTAssertEqual(
            try PredicateParser.parse("NONE dogs.age > 1", []),
            .compare(kp("dogs.age", 6), .greater, .value(.int(1)), [], .none))
        XCTAssertEqual(
            try PredicateParser.parse("dogs.@count == 2", []),
            .compare(
                .aggregate(KeyPathExpression(components: ["dogs"], position: 1), .count, []), .equal, .value(.int(2)),
                [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("dogs.@avg.age < 2", []),
            .compare(
                .aggregate(KeyPathExpression(components: ["dogs"], position: 1), .avg, ["age"]), .less, .value(.int(2)),
                [], .implicit))
        for op in ["@min", "@max", "@sum"] {
            XCTAssertNoThrow(try PredicateParser.parse("dogs.\(op).age > 0", []))
        }
        XCTAssertEqual(
            try PredicateParser.parse("SUBQUERY(dogs, $d, $d.age > 1).@count > 0", []),
            .compare(
                .subqueryCount(
                    KeyPathExpression(components: ["dogs"], position: 1), variable: "d",
                    .compare(
                        .keyPath(KeyPathExpression(variable: "d", components: ["age"], position: 20)), .greater,
                        .value(.int(1)), [], .implicit)),
                .greater, .value(.int(0)), [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("owner == nil", []),
            .compare(kp("owner", 1), .equal, .value(.null), [], .implicit))
        XCTAssertEqual(
            try PredicateParser.parse("ok == true AND off == FALSE", []),
            .and([
                .compare(kp("ok", 1), .equal, .value(.bool(true)), [], .implicit),
                .compare(kp("off", 16), .equal, .value(.bool(false)), [], .implicit)
            ]))
        XCTAssertEqual(try PredicateParser.parse("TRUEPREDICATE", []), .constant(true))
        XCTAssertEqual(try PredicateParser.parse("falsepredicate", []), .constant(false))
        let d = Date(timeIntervalSince1970: 5), u = UUID()
        XCTAssertEqual(
            try PredicateParser.parse("a == %@ AND b == %@ AND c == %@", [d, u, Data([1])]),
            .and([
                .compare(kp("a", 1), .equal, .value(.date(d)), [], .implicit),
                .compare(kp("b", 13), .equal, .value(.uuid(u)), [], .implicit),
                .compare(kp("c", 25), .equal, .value(.data([1])), [], .implicit)
            ]))
    }

    func assertError(
        _ q: String, _ expected: QueryError, args: [Any] = [], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try PredicateParser.parse(q, args), file: file, line: line) { e in
            XCTAssertEqual(e as? QueryError, expected, file: file, line: line)
        }
    }

    func testErrorsAndPositions() {
        assertError("age >", .syntax(position: 6, detail: "the query ends where an expression should start"))
        assertError("age", .syntax(position: 4, detail: "expected an operator after the expression at position 1"))
        assertError("age # 3", .syntax(position: 5, detail: "unexpected character '#'"))
        assertError("name == 'abc", .syntax(position: 9, detail: "unterminated string"))
        assertError("age == %@", .argumentCount(position: 8, expected: 1, given: 0), args: [])
        assertError("age == 1", .argumentCount(position: 1, expected: 0, given: 1), args: [5])
        assertError(
            "age == %d", .syntax(position: 8, detail: "unknown format specifier (use %@ for values, %K for key paths)"))
        assertError(
            "name MATCHES 'x'",
            .unsupportedOperator(position: 6, detail: "MATCHES (regular expressions) is not supported"))
        assertError(
            "dogs.@size > 1", .unsupportedOperator(position: 6, detail: "@size (use @count, @min, @max, @sum or @avg)"))
        assertError("age BETWEEN 3", .syntax(position: 13, detail: "BETWEEN needs {low, high}"))
        assertError("name BEGINSWITH[x] 'a'", .syntax(position: 17, detail: "expected [c], [d] or [cd]"))
        assertError(
            "SUBQUERY(dogs, d, d.age > 1).@count > 0",
            .syntax(position: 16, detail: "SUBQUERY needs a $variable second"))
        assertError(
            "SUBQUERY(dogs, $d, $d.age > 1) > 0",
            .syntax(position: 32, detail: "SUBQUERY(...) must be followed by .@count"))
        assertError("age == 1 extra", .syntax(position: 10, detail: "unexpected 'extra'"))
        assertError("AND age == 1", .syntax(position: 1, detail: "expected a key path or a value, found keyword AND"))
        assertError("age == {1, age}", .syntax(position: 8, detail: "a {list} holds constants only"))
        assertError("%K == 1", .typeMismatch(position: 1, detail: "%K needs a String key path"), args: [3])
        assertError(
            "age == %@", .typeMismatch(position: 8, detail: "argument of type NSObject cannot be used in a query"),
            args: [NSObject()])
    }
}
