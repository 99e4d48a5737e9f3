import XCTest
@testable import FiefObjects

/// `List`'s wrapper read as a word (`PersistedListWord`) must say what the generic read says,
/// in each state a wrapper can be in, for lists of objects and of values.
final class PersistedListWordTests: XCTestCase {
    private func describe(_ u: _UnmanagedValue) -> String {
        switch u {
        case .list(let items):
            return "list[" + items.map(describe).joined(separator: ",") + "]"
        case .objects(let objects):
            return "list[" + objects.map { describe(.object($0)) }.joined(separator: ",") + "]"
        case .object(let o): return o.map { "object \(ObjectIdentifier($0).hashValue)" } ?? "nil object"
        case .value(let v): return "value \(v)"
        case .computed: return "computed"
        }
    }

    private func readBoth<E: _Persistable>(_ w: inout Persisted<List<E>>) -> (word: String, generic: String) {
        let word = withUnsafeBytes(of: &w) { List<E>._unmanaged(inWrapperAt: $0.baseAddress!) }
        return (describe(word), describe(w.unmanagedValue))
    }

    func testAListWrapperReadAsAWordAgreesWithTheGenericReadInEveryState() {
        XCTAssertNotNil(PersistedListWord.content(at: withUnsafeBytes(of: Persisted<List<Int>>()) { $0.baseAddress! }))

        var dogs = Persisted<List<Dog>>()
        var states: [(word: String, generic: String)] = [readBoth(&dogs)]
        dogs.storage = .unmanaged(List())
        states.append(readBoth(&dogs))
        dogs.storage = .unmanaged(List([Dog(), Dog(), Dog()]))
        states.append(readBoth(&dogs))
        dogs.storage = .probe
        states.append(readBoth(&dogs))

        var numbers = Persisted<List<Int>>()
        states.append(readBoth(&numbers))
        numbers.storage = .unmanaged(List([1, 2, 3]))
        states.append(readBoth(&numbers))

        for s in states { XCTAssertEqual(s.word, s.generic) }
        XCTAssertEqual(states.map(\.generic).filter { $0.hasPrefix("list[object") }.count, 1)
        XCTAssertEqual(states[3].generic, "computed")
        XCTAssertEqual(states[5].generic, "list[value 1,value 2,value 3]")
    }
}

/// Every object carries one wrapper per property, accessors included: a wrapper is its value
/// and a byte of options (with a struct of options, 24 bytes more), and a `LinkingObjects`
/// wrapper keeps its origin property too, where `ModelInfo` reads it.
final class PersistedLayoutTests: XCTestCase {
    func testAWrapperIsItsValueAndAByte() {
        XCTAssertLessThanOrEqual(MemoryLayout<Persisted<Int>>.size, 16)
        XCTAssertLessThanOrEqual(MemoryLayout<Persisted<Bool>>.size, 2)
        XCTAssertLessThanOrEqual(MemoryLayout<Persisted<String>>.size, 24)
        XCTAssertLessThanOrEqual(MemoryLayout<Persisted<List<Dog>>>.size, 16)
        // The origin property (16 bytes) beside the class reference and the byte.
        XCTAssertLessThanOrEqual(MemoryLayout<Persisted<LinkingObjects<Person>>>.size, 32)
    }

    func testTheDeclarationsOptionsSurviveThePacking() throws {
        let person = ModelInfo.of(Person.self).properties
        let dog = ModelInfo.of(Dog.self).properties
        func p(_ props: [Property], _ name: String) throws -> Property {
            try XCTUnwrap(props.first { $0.name == name }, name)
        }
        XCTAssertEqual(try p(dog, "owners").originProperty, "dogs")
        XCTAssertEqual(try p(dog, "owners").kind, .linkingObjects)
        XCTAssertNil(try p(dog, "name").originProperty)
        XCTAssertNil(try p(person, "dogs").originProperty)
        XCTAssertEqual(try p(person, "ownedCars").originProperty, "owner")
        XCTAssertTrue(try p(person, "id").primaryKey)
        XCTAssertFalse(try p(person, "id").indexed)
        XCTAssertTrue(try p(person, "name").indexed)
        XCTAssertFalse(try p(person, "name").primaryKey)
        XCTAssertEqual(try p(person, "dogs").onDelete, .cascade)
        XCTAssertEqual(try p(person, "car").onDelete, .nullify)
    }
}
