import Foundation

/// Plain threads that can be joined: workloads want real OS threads, not a task pool.
final class ThreadGroup {
    private var threads: [Thread] = []
    private let done = DispatchGroup()

    func spawn(_ body: @escaping () -> Void) {
        done.enter()
        let t = Thread { [done] in
            body()
            done.leave()
        }
        t.stackSize = 8 << 20
        threads.append(t)
        t.start()
    }

    func join() { done.wait() }
}

/// The first error any thread hit.
final class FirstError: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var error: Error?

    func record(_ e: Error) {
        lock.lock()
        if error == nil { error = e }
        lock.unlock()
    }
}
