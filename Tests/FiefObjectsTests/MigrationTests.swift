import XCTest
import Foundation
import Engine
@testable import FiefObjects

enum V1 {
    final class User: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var firstname = ""
        @Persisted var lastname = ""
        @Persisted var yearsSinceBirth = 0
        @Persisted var email = ""
    }
}

enum V2 {
    final class User: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var fullname = ""
        @Persisted var age = 0
        @Persisted(indexed: true) var email = ""
        @Persisted var nickname: String?
    }
}

enum V3 {
    /// The email becomes the primary key.
    final class User: Object {
        @Persisted var id = ""
        @Persisted var fullname = ""
        @Persisted var age = 0
        @Persisted(primaryKey: true) var email = ""
        @Persisted var nickname: String?
    }
}

final class MigrationTests: XCTestCase {
    func seedV1(_ path: String, _ n: Int = 3) throws {
        let store = try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 1))
        let ctx = store.context()
        try ctx.write {
            for i in 0..<n {
                try ctx.create(
                    V1.User.self,
                    value: [
                        "id": "u\(i)", "firstname": "First\(i)", "lastname": "Last\(i)",
                        "yearsSinceBirth": 20 + i, "email": "u\(i)@x"
                    ])
            }
        }
    }

    /// The seeds' example: merge first and last name, rename yearsSinceBirth to age.
    func testMergeNamesAndRename() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        let store = try ObjectStore(
            Configuration(
                path: path, types: [V2.User.self], schemaVersion: 2,
                migrationBlock: { migration, oldSchemaVersion in
                    if oldSchemaVersion < 2 {
                        try migration.renameProperty(onType: "User", from: "yearsSinceBirth", to: "age")
                        try migration.enumerateObjects(ofType: "User") { oldObject, newObject in
                            let firstname = oldObject!["firstname"] as! String
                            let lastname = oldObject!["lastname"] as! String
                            newObject!["fullname"] = "\(firstname) \(lastname)"
                        }
                    }
                }))
        let ctx = store.context()
        let users = ctx.objects(V2.User.self).sorted(byKeyPath: "id")
        XCTAssertEqual(users.map(\.fullname), ["First0 Last0", "First1 Last1", "First2 Last2"])
        XCTAssertEqual(users.map(\.age), [20, 21, 22])
        XCTAssertEqual(users.map(\.email), ["u0@x", "u1@x", "u2@x"])
        XCTAssertEqual(try users.filter("email == 'u1@x'").first?.id, "u1", "the new index is built from existing rows")
        XCTAssertNil(users[0].nickname)
        XCTAssertTrue(try store.check().isSound)
        // Opening again with the same code needs nothing.
        _ = try ObjectStore(Configuration(path: path, types: [V2.User.self], schemaVersion: 2))
    }

    func testSameVersionDifferentSchemaListsEveryChange() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        XCTAssertThrowsError(try ObjectStore(Configuration(path: path, types: [V2.User.self], schemaVersion: 1))) { e in
            guard case .migrationRequired(_, let changes)? = e as? SchemaError else { return XCTFail("\(e)") }
            XCTAssertEqual(
                Set(changes),
                [
                    "User.fullname added (string)", "User.age added (int)", "User.email index added",
                    "User.nickname added (string?)",
                    "User.firstname removed", "User.lastname removed", "User.yearsSinceBirth removed"
                ])
        }
    }

    func testDowngradeIsRefused() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        XCTAssertThrowsError(try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 0))) { e in
            XCTAssertEqual(e as? SchemaError, .schemaVersionDowngrade(path: path, stored: 1, code: 0))
        }
    }

    func testPrimaryKeyOverDuplicatesFailsAndLeavesTheFileAsItWas() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        _ = try ObjectStore(
            Configuration(
                path: path, types: [V2.User.self], schemaVersion: 2,
                migrationBlock: { m, _ in
                    try m.enumerateObjects(ofType: "User") { _, new in new!["email"] = "same@x" }
                }))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try ObjectStore(Configuration(path: path, types: [V3.User.self], schemaVersion: 3))) { e in
            guard case .migrationFailed(_, let d)? = e as? SchemaError else { return XCTFail("\(e)") }
            XCTAssertTrue(d.contains("appears more than once"), d)
        }
        // Untouched: same stored schema, still opens with V2 at version 2.
        let store = try ObjectStore(Configuration(path: path, types: [V2.User.self], schemaVersion: 2))
        XCTAssertEqual(store.context().objects(V2.User.self).count, 3)
        _ = before
        // With unique emails the same migration goes through.
        let fixed = try ObjectStore(
            Configuration(
                path: path, types: [V3.User.self], schemaVersion: 3,
                migrationBlock: { m, _ in
                    try m.enumerateObjects(ofType: "User") { old, new in new!["email"] = "\(old!["id"] as! String)@y" }
                }))
        XCTAssertEqual(try fixed.context().object(ofType: V3.User.self, forPrimaryKey: "u2@y")?.id, "u2")
        XCTAssertTrue(try fixed.check().isSound)
    }

    func testBlockThatThrowsLeavesTheFileAsItWas() throws {
        struct Boom: Error {}
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        XCTAssertThrowsError(
            try ObjectStore(
                Configuration(
                    path: path, types: [V2.User.self], schemaVersion: 2,
                    migrationBlock: { m, _ in
                        try m.enumerateObjects(ofType: "User") { _, new in new!["fullname"] = "changed" }
                        throw Boom()
                    })))
        let store = try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 1))
        XCTAssertEqual(store.context().objects(V1.User.self).map(\.firstname).sorted(), ["First0", "First1", "First2"])
    }

    func testTypeMismatchInsideTheBlockFailsTheMigration() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        XCTAssertThrowsError(
            try ObjectStore(
                Configuration(
                    path: path, types: [V2.User.self], schemaVersion: 2,
                    migrationBlock: { m, _ in
                        try m.enumerateObjects(ofType: "User") { _, new in new!["age"] = "not a number" }
                    }))
        ) { e in
            guard case .typeMismatch(className: "User", property: "age", _, _)? = e as? ObjectError else {
                return XCTFail("\(e)")
            }
        }
        _ = try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 1))
    }

    func testDeleteIfMigrationNeededStartsEmpty() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        let store = try ObjectStore(
            Configuration(path: path, types: [V2.User.self], schemaVersion: 1, deleteIfMigrationNeeded: true))
        XCTAssertEqual(store.context().objects(V2.User.self).count, 0)
    }

    func testDeleteDataAndCreateInsideMigration() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        try seedV1(path)
        let store = try ObjectStore(
            Configuration(
                path: path, types: [V2.User.self], schemaVersion: 2,
                migrationBlock: { m, _ in
                    XCTAssertTrue(try m.deleteData(forType: "User"))
                    try m.create("User", value: ["id": "new", "fullname": "N N", "email": "n@x"])
                }))
        XCTAssertEqual(store.context().objects(V2.User.self).map(\.id), ["new"])
        XCTAssertTrue(try store.check().isSound)
    }
}

enum V4 {
    /// `age` becomes a String: a new property id; the block converts the old values.
    final class User: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var fullname = ""
        @Persisted var age = ""
        @Persisted(indexed: true) var email = ""
        @Persisted var nickname: String?
    }
}

final class MigrationTypeChangeTests: XCTestCase {
    func testTypeChangeGetsANewPropertyAndTheBlockConverts() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        let v2 = try ObjectStore(Configuration(path: path, types: [V2.User.self], schemaVersion: 2))
        let ctx = v2.context()
        try ctx.write {
            for i in 0..<3 { try ctx.create(V2.User.self, value: ["id": "u\(i)", "age": 20 + i, "email": "u\(i)@x"]) }
        }
        XCTAssertThrowsError(try ObjectStore(Configuration(path: path, types: [V4.User.self], schemaVersion: 2))) { e in
            guard case .migrationRequired(_, let changes)? = e as? SchemaError else { return XCTFail("\(e)") }
            XCTAssertEqual(changes, ["User.age changed type from int to string"])
        }
        let v4 = try ObjectStore(
            Configuration(
                path: path, types: [V4.User.self], schemaVersion: 4,
                migrationBlock: { m, _ in
                    try m.enumerateObjects(ofType: "User") { old, new in new!["age"] = "\(old!["age"] as! Int) years" }
                }))
        XCTAssertEqual(
            v4.context().objects(V4.User.self).sorted(byKeyPath: "id").map(\.age), ["20 years", "21 years", "22 years"])
        XCTAssertTrue(try v4.check().isSound)
    }
}

enum RenamedV2 {
    /// V1's `User`, renamed.
    final class Member: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var firstname = ""
        @Persisted var lastname = ""
        @Persisted var yearsSinceBirth = 0
        @Persisted var email = ""
    }
}

final class RenameClassTests: XCTestCase {
    /// After `renameClass`, the objects are enumerated under the new name (old values from
    /// the old class), and can be changed and deleted there.
    func testARenamedClassIsEnumeratedUnderItsNewName() throws {
        let dir = TempDir()
        let path = dir.file("r.fief")
        do {
            let ctx = try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 1)).context()
            try ctx.write {
                for i in 0..<4 {
                    try ctx.create(V1.User.self, value: ["id": "u\(i)", "firstname": "F\(i)", "yearsSinceBirth": i])
                }
            }
        }
        let seen = Locked<[String]>([])
        let ctx = try ObjectStore(
            Configuration(
                path: path, types: [RenamedV2.Member.self], schemaVersion: 2,
                migrationBlock: { m, _ in
                    try m.renameClass(from: "User", to: "Member")
                    var young: [MigrationObject] = []
                    try m.enumerateObjects(ofType: "Member") { old, new in
                        seen.withLock { $0.append("\(old!.className):\(old!["id"] as! String)") }
                        new!["lastname"] = "L-" + (old!["firstname"] as! String)
                        if (old!["yearsSinceBirth"] as! Int) < 2 { young.append(new!) }
                    }
                    for y in young { try m.delete(y) }
                })
        ).context()
        XCTAssertEqual(seen.withLock { $0 }.sorted(), ["User:u0", "User:u1", "User:u2", "User:u3"])
        XCTAssertEqual(
            ctx.objects(RenamedV2.Member.self).map { "\($0.id) \($0.lastname)" }.sorted(), ["u2 L-F2", "u3 L-F3"])
        XCTAssertTrue(try ctx.store.check().isSound)
    }
}

enum DroppedListV1 {
    final class Box: Object {
        @Persisted(primaryKey: true) var id: Int64
        @Persisted var items: List<Int>
    }
}

enum DroppedListV2 {
    final class Box: Object {
        @Persisted(primaryKey: true) var id: Int64
    }
}

extension RenameClassTests {
    /// A list property a migration drops keeps its chunks, as rows keep retired values; the
    /// check counts them sound, before and after their objects are deleted.
    func testChunksOfARetiredListAreSound() throws {
        let dir = TempDir()
        let path = dir.file("l.fief")
        do {
            let ctx = try ObjectStore(Configuration(path: path, types: [DroppedListV1.Box.self], schemaVersion: 1))
                .context()
            try ctx.write {
                for i in 0..<3 { try ctx.create(DroppedListV1.Box.self, value: ["id": Int64(i), "items": [1, 2, 3]]) }
            }
        }
        let store = try ObjectStore(Configuration(path: path, types: [DroppedListV2.Box.self], schemaVersion: 2))
        XCTAssertEqual(try store.check().problems, [])
        let ctx = store.context()
        try ctx.write { try ctx.delete(ctx.objects(DroppedListV2.Box.self)[0]) }
        XCTAssertEqual(try store.check().problems, [])
    }
}

enum V1Plus {
    /// V1 with two properties added: rows written before keep V1's layout.
    final class User: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var firstname = ""
        @Persisted var lastname = ""
        @Persisted var yearsSinceBirth = 0
        @Persisted var email = ""
        @Persisted var score = 0
        @Persisted var tag = ""
    }
}

final class OldLayoutQueryTests: XCTestCase {
    /// A query's terms are placed once per row layout: rows of the layout before a property
    /// existed answer with its default, rows of the new one with their values, in counts and
    /// in filtered keys alike.
    func testQueriesOverRowsOfTwoLayouts() throws {
        let dir = TempDir()
        let path = dir.file("users.fief")
        let v1 = try ObjectStore(Configuration(path: path, types: [V1.User.self], schemaVersion: 1))
        let c1 = v1.context()
        try c1.write {
            for i in 0..<300 {
                try c1.create(V1.User.self, value: ["id": "u\(i)", "yearsSinceBirth": i % 40, "email": "u\(i)@x"])
            }
        }
        let store = try ObjectStore(Configuration(path: path, types: [V1Plus.User.self], schemaVersion: 2))
        let ctx = store.context()
        try ctx.write {
            for i in 300..<400 {
                try ctx.create(
                    V1Plus.User.self,
                    value: ["id": "u\(i)", "yearsSinceBirth": i % 50, "score": i % 7, "tag": i % 2 == 0 ? "even" : ""])
            }
            for u in ctx.objects(V1Plus.User.self) where u.yearsSinceBirth % 10 == 3 { u.score = 5 }
        }
        let all = Array(ctx.objects(V1Plus.User.self))
        let cases: [(String, (V1Plus.User) -> Bool)] = [
            ("score == 0", { $0.score == 0 }),
            ("score > 3", { $0.score > 3 }),
            ("tag == ''", { $0.tag == "" }),
            ("tag == 'even' AND yearsSinceBirth >= 20", { $0.tag == "even" && $0.yearsSinceBirth >= 20 }),
            ("tag != 'even' AND score == 5", { $0.tag != "even" && $0.score == 5 }),
            ("email BEGINSWITH 'u1' AND score < 5", { $0.email.hasPrefix("u1") && $0.score < 5 })
        ]
        for (query, expected) in cases {
            let want = all.filter(expected).map(\.id)
            XCTAssertFalse(want.isEmpty || want.count == all.count, "\(query) tells the layouts apart")
            let r = try ctx.objects(V1Plus.User.self).filter(query)
            XCTAssertEqual(r.count, want.count, query)
            XCTAssertEqual(r.map(\.id), want, query)
        }
    }
}
