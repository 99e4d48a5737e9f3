/// Property getters, list and results indexing, and `for … in` cannot throw: Swift gives them
/// no way to. On a damaged file (a node that fails its checksum, a row shorter than its layout,
/// a wrong encryption key found late) they trap, as Realm's accessors throw a C++ exception
/// that ends the process. Code that must not trap, such as a tool reading files it did not
/// write or a verifier after a crash, runs its reads inside `throwingReads { }`: there a failed
/// read is recorded, returns a placeholder (zero, empty, nil) so the body can run on, and the
/// first failure is thrown when the scope ends, so no placeholder is ever taken for data.
extension ObjectContext {
    /// Runs `body`, in which every read of this context's objects (getters, lists, linking
    /// objects, `obj[name]`, results, aggregates) throws instead of trapping: the first read
    /// that failed is thrown when `body` returns or throws, ahead of `body`'s own error (which
    /// may only be a consequence of the placeholder values).
    public func throwingReads<T>(_ body: () throws -> T) throws -> T {
        let outer = failedRead
        failedRead = nil
        throwingReadDepth += 1
        defer {
            throwingReadDepth -= 1
            failedRead = outer
        }
        let result: T
        do {
            result = try body()
        } catch {
            throw failedRead ?? error
        }
        if let failed = failedRead { throw failed }
        return result
    }

    /// The value of property `name` of `object` (as `object[name]`), throwing on a damaged file
    /// or a deleted object instead of trapping.
    public func value(of object: Object, forProperty name: String) throws -> Any? {
        guard let r = object._ref else { return object[name] }
        return try dynamicValue(r, name)
    }

    /// What a non-throwing read returns when it failed: inside `throwingReads` the failure is
    /// kept and `placeholder` returned; outside, the process traps with what was being read.
    func unreadable<T>(_ placeholder: @autoclosure () -> T, _ what: @autoclosure () -> String, _ error: Error) -> T {
        guard throwingReadDepth > 0 else { fatalError("\(what()): \(error)") }
        if failedRead == nil { failedRead = error }
        return placeholder()
    }
}
