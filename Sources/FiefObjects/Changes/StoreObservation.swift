import Engine

extension ObjectStore {
    /// Calls `body` with the newest version after commits from any thread or process (each
    /// call covers every commit since the last; none is skipped or repeated), on a thread of
    /// the store's own. Contexts are not thread-safe, so the usual body tells the owner of a
    /// context to `refresh()` it, which delivers its results and object notifications. Keep
    /// the returned observation; `cancel()` or releasing it stops the calls.
    public func observe(_ body: @escaping @Sendable (UInt64) -> Void) throws -> CommitObservation {
        try database.observeCommits { body($0.to) }
    }

    /// The newest version after each batch of commits from any thread or process, as an async
    /// sequence; `for await _ in try store.commits() { try context.refresh() }` in the
    /// context's actor keeps it (and everything observed through it) live.
    public func commits() throws -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream<UInt64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = try observe { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
