/// What a `List.observe` callback is told.
public enum ListChange<Element: _Persistable> {
    /// The list as of registration.
    case initial(List<Element>)
    /// As `ResultsChange.update`: remove `deletions` (old indices), insert `insertions` (new
    /// indices); `modifications` are old indices of kept elements that link to an object that
    /// changed. When the list's owner is deleted, every old index is deleted and nothing
    /// follows (the list is then unreadable, as its owner is).
    case update(List<Element>, deletions: [Int], insertions: [Int], modifications: [Int])
    case error(Error)
}

extension List {
    /// Calls `block` with `.initial` now (inside a write: when it commits), then with `.update`
    /// whenever this context's `refresh()` (or one of its writes) moves it to a version where
    /// the list changed. Lists may repeat elements, so the change set is a diff of the two
    /// arrays (Myers), not of key sets. Keep the token.
    public func observe(_ block: @escaping (ListChange<Element>) -> Void) -> NotificationToken {
        guard let ref, let property else {
            block(.error(ObjectError.unmanagedObject(className: "List<\(Element.self)>")))
            return NotificationToken(ctx: nil, id: 0)
        }
        guard ref.ctx.exists(ref) else {
            block(.error(ObjectError.objectDeleted(className: ref.className)))
            return NotificationToken(ctx: nil, id: 0)
        }
        var last: [ObjectValue] = []
        let o = Observation(
            initial: { ctx in
                last = ctx.readList(ref, property)
                block(.initial(self))
                return true
            },
            update: { ctx, d, base in
                guard ctx.exists(ref) else {
                    block(.update(self, deletions: Array(last.indices), insertions: [], modifications: []))
                    return false
                }
                let owner = try ctx.changedObjects(ref.className, d, since: base)
                let targets =
                    try property.isLink ? ctx.changedObjects(property.target ?? "", d, since: base).modified : []
                guard owner.modified.contains(ref.key) || !targets.isEmpty else { return true }
                let now = ctx.readList(ref, property)
                let change = CollectionChange(oldValues: last, newValues: now) { i in
                    if case .link(let k) = last[i] { return targets.contains(k) }
                    return false
                }
                last = now
                change.deliver { block(.update(self, deletions: $0, insertions: $1, modifications: $2)) }
                return true
            },
            fail: { block(.error($0)) })
        return ref.ctx.register(o)
    }
}

extension LinkingObjects {
    /// As `Results.observe`: these are the results of a backlinks query. The objects linking
    /// here come and go as insertions and deletions.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ResultsChange<Origin>) -> Void)
        -> NotificationToken
    {
        guard let results else {
            block(.error(ObjectError.unmanagedObject(className: "LinkingObjects<\(Origin.self)>")))
            return NotificationToken(ctx: nil, id: 0)
        }
        return results.observe(keyPaths: keyPaths, block)
    }
}
