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
