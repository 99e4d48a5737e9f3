/// `for try await change in results.changes`: the same events `observe` delivers, as an async
/// sequence. `next` runs in the caller's isolation (where the context lives), and when
/// nothing is waiting it sleeps until a commit from any thread or process, then refreshes
/// the context itself, so a plain context needs no `refresh()` calls to keep the loop going.
/// Ending the loop, dropping the iterator or cancelling the task releases the observation.
/// An `.error` change is thrown, and the sequence ends after it.
public struct ResultsChanges<T: Object>: AsyncSequence {
    public typealias Element = ResultsChange<T>
    public typealias Failure = any Error

    let results: Results<T>

    public func makeAsyncIterator() -> Iterator { Iterator(feed: ResultsChangeFeed(results)) }

    public struct Iterator: AsyncIteratorProtocol {
        let feed: ResultsChangeFeed<T>

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> ResultsChange<T>?
        {
            try await feed.next(actor)
        }

        public mutating func next() async throws -> ResultsChange<T>? { try await feed.next(nil) }
    }
}

extension Results {
    /// This query's changes as an async sequence: `.initial` first, then an `.update` per
    /// version in which these results changed (see `observe`; `changeSet.modificationsNew`
    /// gives the modified objects' new indices).
    public var changes: ResultsChanges<T> { ResultsChanges(results: self) }
}

/// What one iterator holds: the observation, the events it delivered and not yet handed out,
/// and the commit stream that wakes the iterator. A class, so dropping the iterator releases
/// the token (and with it the registration) and the stream (and with it the commit watcher's
/// observer).
final class ResultsChangeFeed<T: Object> {
    private let results: Results<T>
    private var pending: [ResultsChange<T>] = []
    private var token: NotificationToken?
    private var commits: AsyncStream<UInt64>.Iterator?
    private var finished = false

    init(_ results: Results<T>) { self.results = results }

    func next(_ actor: isolated (any Actor)?) async throws -> ResultsChange<T>? {
        if finished { return nil }
        if token == nil {
            // The stream first, so no commit between the initial delivery and the first wait is
            // missed: it is then seen as a wake-up and the refresh delivers it.
            do {
                commits = try results.ctx.store.commits().makeAsyncIterator()
            } catch {
                finish()
                throw error
            }
            token = results.observe { [unowned self] change in self.pending.append(change) }
        }
        while pending.isEmpty {
            var wake = commits
            // nil: the task was cancelled (or the store closed).
            guard !Task.isCancelled, await wake?.next(isolation: actor) != nil else {
                finish()
                return nil
            }
            commits = wake
            do {
                try results.ctx.refresh()
            } catch {
                finish()
                throw error
            }
        }
        let change = pending.removeFirst()
        if case .error(let e) = change {
            finish()
            throw e
        }
        return change
    }

    private func finish() {
        finished = true
        token?.invalidate()
        token = nil
        commits = nil
        pending = []
    }

    deinit { token?.invalidate() }
}
