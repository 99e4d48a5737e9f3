import SeededRandomness
import FiefObjects

/// The objects suite's data set: persons with an indexed name, a city, an age and a
/// cascading list of dogs; dogs know their owners through backlinks.
final class BenchPerson: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var city = ""
    @Persisted(onDelete: .cascade) var dogs: List<BenchDog>
}

final class BenchDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<BenchPerson>
}

/// The same data for both systems, from the run's seed.
struct ObjectDataSet {
    struct PersonRow { let id: Int64; let name: String; let age: Int; let city: String }
    struct DogRow { let owner: Int; let name: String; let age: Int }
    let persons: [PersonRow]
    let dogs: [DogRow]

    init(persons n: Int, dogs d: Int, seed: UInt64) {
        var rng = BenchRandom.stream(seed: seed, .objects)
        persons = (0..<n).map { i in
            PersonRow(
                id: Int64(i), name: "p\(Int.random(in: 0..<n, using: &rng))", age: Int.random(in: 0..<90, using: &rng),
                city: "c\(Int.random(in: 0..<50, using: &rng))")
        }
        dogs = (0..<d).map { _ in
            DogRow(
                owner: Int.random(in: 0..<n, using: &rng), name: "d\(Int.random(in: 0..<1000, using: &rng))",
                age: Int.random(in: 0..<15, using: &rng))
        }
    }
}
