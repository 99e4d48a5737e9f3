import Engine

extension ObjectStore {
    /// A context bound to the calling actor that refreshes itself: after a commit from any
    /// thread or process, a refresh is scheduled on that actor, which moves the context to
    /// the newest version and delivers its results, object and list notifications there, so
    /// observers fire with no `refresh()` call. Deliveries never run inside `write {}` (the
    /// write holds the actor until it commits, and then delivers its own change). Commits that
    /// land before a scheduled refresh runs are coalesced into it. Only an actor can own such
    /// a context: `#isolation` must name one, so calling this outside an actor does not
    /// compile (use `context()` and `refresh()` there). The watch stops when the context goes.
    public func autoRefreshingContext(isolation actor: isolated any Actor = #isolation) throws -> ObjectContext {
        let ctx = ObjectContext(store: self)
        let refresher = ActorRefresher(ctx, on: actor)
        ctx.commitWatch = try observe { _ in refresher.commitSeen() }
        return ctx
    }
}

/// Hops from the commit watcher's thread to the context's actor. One refresh is scheduled at
/// a time: a commit seen while one waits to run is covered by it (it moves to the newest
/// version); one seen after it started schedules the next.
final class ActorRefresher: @unchecked Sendable {
    // Unchecked: `ctx` (not Sendable) is read and used only on `actor`, the isolation it was
    // created in; the watcher's thread touches only `scheduled`, behind its lock.
    private weak var ctx: ObjectContext?
    private let actor: any Actor
    private let scheduled = Locked(false)

    init(_ ctx: ObjectContext, on actor: any Actor) {
        self.ctx = ctx
        self.actor = actor
    }

    func commitSeen() {
        let first = scheduled.withLock { s in
            defer { s = true }
            return !s
        }
        guard first else { return }
        let actor = self.actor
        Task { await self.refresh(on: actor) }
    }

    private func refresh(on actor: isolated any Actor) {
        scheduled.withLock { $0 = false }
        ctx?.refreshForCommit()
    }
}

extension ObjectContext {
    /// An auto-refresh: nothing to throw to, so a failure ends every observation with
    /// `.error` (as a failed change computation does).
    func refreshForCommit() {
        // Its own write already moved it there (and delivered).
        if let latest = try? store.database.latestVersion(), !isInWriteTransaction, latest == version { return }
        do {
            try refresh()
        } catch {
            let failed = observations
            observations = [:]
            for id in failed.keys.sorted() { failed[id]?.fail(error) }
        }
    }
}
