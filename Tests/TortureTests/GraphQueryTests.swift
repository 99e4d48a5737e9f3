import XCTest
import Foundation
import FiefObjects
import SeededRandomness
@testable import Torture

/// The queries the `objects` scenario checks after every recovery: on a store written by the
/// workload they agree with the model, string and typed, from indexes and from scans; and
/// they are not trivial (many match some persons, many not all).
final class GraphQueryTests: XCTestCase {
    func store(_ dir: TempDir, commits: UInt64) throws -> (ObjectContext, ObjectGraphWorkload.Graph) {
        let workload = ObjectGraphWorkload(seed: 77)
        let ctx = try ObjectStore(
            Configuration(
                path: dir.file("g.fief"), types: ObjectGraphWorkload.types, schemaVersion: 1, durability: .none)
        ).context()
        var graph = ObjectGraphWorkload.Graph()
        for i in 1...commits {
            try ctx.write { try workload.write(commit: i, graph: graph, in: ctx) }
            for op in workload.ops(forCommit: i, on: graph) { workload.apply(op, to: &graph) }
        }
        XCTAssertEqual(try ObjectGraphWorkload.differences(ctx, graph, v2: false), [])
        return (ctx, graph)
    }

    func testQueriesAgreeWithTheModelAndAreNotTrivial() throws {
        let dir = TempDir()
        let (ctx, graph) = try store(dir, commits: 150)
        XCTAssertGreaterThan(graph.persons.count, 15)
        XCTAssertFalse(graph.tags.isEmpty)
        XCTAssertFalse(graph.toys.isEmpty)
        XCTAssertTrue(
            graph.persons.values.contains { $0.born == nil } && graph.persons.values.contains { ($0.balance ?? 0) < 0 })
        XCTAssertTrue(
            graph.persons.values.contains { Set($0.walks).count < $0.walks.count }, "no list holds a dog twice")
        XCTAssertTrue(graph.persons.values.contains { $0.favorite != nil })
        XCTAssertEqual(try GraphQuery.check(ctx, graph, v2: false, seed: 5, count: 400), [])
        var rng = SeededRandom(seed: 5)
        var some = 0, all = 0
        for _ in 0..<400 {
            let n = GraphQuery.random(&rng).answer(graph).count
            if n > 0 { some += 1 }
            if n == graph.persons.count { all += 1 }
        }
        XCTAssertGreaterThan(some, 200, "most queries should match someone")
        XCTAssertLessThan(all, 150, "most queries should not match everyone")
    }

    func testAfterTheMigrationTheQueriesStillAgree() throws {
        let dir = TempDir()
        var (_, graph) = try store(dir, commits: 120)
        let ctx = try ObjectStore(
            Configuration(
                path: dir.file("g.fief"), types: ObjectGraphWorkload.typesV2, schemaVersion: 2,
                migrationBlock: GraphV2.migrate)
        ).context()
        graph = ObjectGraphWorkload.migrated(graph)
        XCTAssertEqual(try ObjectGraphWorkload.differences(ctx, graph, v2: true), [])
        XCTAssertEqual(try GraphQuery.check(ctx, graph, v2: true, seed: 6, count: 300), [])
    }
}
