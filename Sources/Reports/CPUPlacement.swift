import CFiefSys

/// Where a timed concurrent workload puts its threads: the same CPUs for every system of a run.
/// Left to the scheduler, a reader that lands on the CPU taking the disk's interrupts reads
/// about 25 % slower than one that does not (perf, `readers-while-writing` on 2 cores, the
/// same for Fief and LMDB), and each repetition drew its own placement, so the ratio between
/// two systems moved from 0.68x to 0.93x between runs of one build.
struct CPUPlacement {
    /// The CPUs this process may run on, in order.
    let cpus: [Int32]

    /// The calling thread's allowed CPUs; nil when the kernel does not say.
    static func current() -> CPUPlacement? {
        var mask = [UInt8](repeating: 0, count: 128)
        guard fief_thread_cpus(&mask, mask.count) == 0 else { return nil }
        let cpus = (0..<Int32(mask.count * 8)).filter { cpu in
            mask[Int(cpu) / 8] & UInt8(1 << (cpu % 8)) != 0
        }
        return cpus.isEmpty ? nil : CPUPlacement(cpus: cpus)
    }

    /// The CPU of the `index`-th worker: workers fill the CPUs from the first one up.
    func worker(_ index: Int) -> Int32 { cpus[index % cpus.count] }

    /// The CPU of the `index`-th companion thread (a writer beside readers): from the last
    /// CPU down, away from the first workers.
    func companion(_ index: Int) -> Int32 { cpus[cpus.count - 1 - index % cpus.count] }

    /// Binds the calling thread to `cpu`; false when the kernel refuses (the thread then runs
    /// where the scheduler puts it).
    @discardableResult
    static func pinCallingThread(to cpu: Int32) -> Bool { fief_pin_thread(cpu) == 0 }
}
