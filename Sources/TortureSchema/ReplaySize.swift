/// The size of a case: writer deaths, the most threads any writer ran, commits attempted, and
/// the puts and deletes in them.
public struct ReplaySize: Codable, Sendable, Equatable, CustomStringConvertible {
    public var deaths: Int
    public var threads: Int
    public var commits: Int
    public var changes: Int
    /// crash-states: the unsynced sectors the failing state lost, of how many.
    public var lostSectors: Int?
    public var unsyncedSectors: Int?
    /// What a commit is when it is not `CommitWorkload`'s puts and deletes: "one object write
    /// each" (the objects scenario's graph), "list-append transactions" (isolation).
    public var commitsAre: String?

    public init(deaths: Int, threads: Int, commits: Int, changes: Int) {
        self.deaths = deaths
        self.threads = threads
        self.commits = commits
        self.changes = changes
    }

    public var description: String {
        let sectors = lostSectors.map { ", \($0) of \(unsyncedSectors ?? 0) unsynced sectors lost" } ?? ""
        let what = commitsAre ?? "\(changes) puts and deletes"
        return
            "\(deaths) writer death\(deaths == 1 ? "" : "s"), \(threads) thread\(threads == 1 ? "" : "s"), "
            + "\(commits) commit\(commits == 1 ? "" : "s") (\(what))"
            + sectors
    }
}
