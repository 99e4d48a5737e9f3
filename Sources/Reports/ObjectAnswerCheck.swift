/// Before anything of the objects suite is timed, every system answers a sample of each read
/// workload's questions on the same data, and the answers must be equal: a benchmark that
/// returns the wrong count is not faster.
enum ObjectAnswerCheck {
    /// Throws `answersDiffer` at the first question two systems answer differently; returns
    /// how many questions were asked.
    static func run(_ systems: [any ObjectBenchSystem], cities: [String], prefixes: [String], ids: [Int64]) throws
        -> Int
    {
        guard systems.count >= 2 else { return 0 }
        var questions: [(String, (any ObjectBenchSystem) throws -> String)] = []
        // Samples, not every input: at 1M objects each count is a full scan on both systems.
        for c in cities.prefix(20) {
            questions.append(("obj.count (age > 40 AND city == \(c))", { "\(try $0.count(ageAbove: 40, city: c))" }))
        }
        for p in prefixes.prefix(50) {
            questions.append(
                ("obj.query (name BEGINSWITH \(p) AND age > 30)", { "\(try $0.prefixQuery(p, ageAbove: 30))" }))
        }
        for id in ids.prefix(100) {
            questions.append(("obj.pk-get (person \(id))", { "\(try $0.nameLength(ofPerson: id))" }))
            questions.append(("obj.links (person \(id))", { "\(try $0.walkLinks(ofPerson: id))" }))
        }
        questions.append(("obj.enumerate (the sum of ages)", { "\(try $0.sumOfAges())" }))
        questions.append(("obj.sort-limit (the 100 oldest)", { "\(try $0.oldest(100))" }))
        for (question, ask) in questions {
            let answers = try systems.map { ($0.system.rawValue, try ask($0)) }
            if Set(answers.map(\.1)).count > 1 {
                throw BenchError.answersDiffer(
                    question: question, answers: answers.map { "\($0.0) \($0.1.prefix(200))" }.joined(separator: ", "))
            }
        }
        return questions.count
    }
}
