/// Titles and units of the benchmarks, by id.
enum BenchCatalog {
    struct Entry {
        let title: String
        let unit: String
        /// What one latency sample times; nil when the benchmark takes none.
        let latencyOf: String?

        init(_ title: String, unit: String = "ops/s", latencyOf: String? = nil) {
            self.title = title
            self.unit = unit
            self.latencyOf = latencyOf
        }

        /// Throughput is the one unit where more is better; times and sizes are better small.
        var higherIsBetter: Bool { unit == "ops/s" }
    }

    /// An id the catalog does not know is its own title, counted in ops/s.
    static func entry(_ id: String) -> Entry {
        let concurrent = "small-txns.concurrent."
        if id.hasPrefix(concurrent) {
            let n = id.dropFirst(concurrent.count)
            return Entry(
                "Small durable transactions from \(n) writer thread\(n == "1" ? "" : "s") (Fief: batch)",
                latencyOf: "one commit, as its thread waits for it")
        }
        return entries[id] ?? Entry(id)
    }

    private static let entries: [String: Entry] = [
        "bulk-insert": Entry("Bulk insert, one transaction"),
        "point-reads": Entry("Random point reads", latencyOf: "one get in its own read transaction"),
        "scan": Entry("Sequential scan", latencyOf: "one full scan"),
        "small-txns.full": Entry("Small durable transactions (full)", latencyOf: "one commit"),
        "small-txns.none": Entry("Small transactions (no sync)", latencyOf: "one commit"),
        "small-txns.faultfs": Entry("Small durable transactions on a FaultFS mount (full)", latencyOf: "one commit"),
        "readers-while-writing": Entry(
            "Reads while a writer commits",
            latencyOf: "one get in its own read transaction, under a committing writer"),
        "open": Entry("Open a large file and read a key", unit: "ms", latencyOf: "one open"),
        "churn": Entry("File size after insert/delete churn", unit: "bytes"),
        "obj.insert": Entry("Objects: insert persons and dogs, one write"),
        "obj.file-size": Entry("Objects: file size of the data set", unit: "bytes"),
        "obj.count": Entry("Objects: count with a non-indexed predicate (full scan)", latencyOf: "one count"),
        "obj.query": Entry("Objects: index prefix + filter, reading each name", latencyOf: "one query"),
        "obj.pk-get": Entry("Objects: get by primary key, read one property", latencyOf: "one get"),
        "obj.enumerate": Entry("Objects: read one property of every object"),
        "obj.sort-limit": Entry("Objects: top 100 by a non-indexed property", latencyOf: "one query"),
        "obj.links": Entry("Objects: person -> dogs -> owners", latencyOf: "one walk"),
        "obj.update": Entry("Objects: update one property of many, one write"),
        "obj.delete-cascade": Entry("Objects: delete persons, dogs cascade, one write"),
        "obj.encrypted.insert": Entry(
            "Objects, encrypted file: insert persons and dogs (Fief encrypted; SQLite plain)"),
        "obj.encrypted.pk-get": Entry(
            "Objects, encrypted file: get by primary key (Fief encrypted; SQLite plain)", latencyOf: "one get"),
        "obj.encrypted.count": Entry(
            "Objects, encrypted file: count, full scan (Fief encrypted; SQLite plain)", latencyOf: "one count"),
        "obj.small-txns": Entry("Objects: one object per durable write", latencyOf: "one write"),
        "obj.notify.cross-process": Entry(
            "Objects: a durable commit in one process to its change set in another "
                + "(auto-refreshing context on an actor); value: p99 of the repetition", unit: "ms",
            latencyOf: "commit acknowledged to change set delivered"),
        "obj.notify": Entry(
            "Objects: learn what one write changed in all persons sorted by age (change set vs the query again)",
            latencyOf: "one refresh")
    ]
}
