import ProcFS

/// What a measurement in a child process took of memory: the resident bytes before it, and
/// their peak during it (`ResidentMemory`: the window's own peak, not start-up's).
public struct PeakMemory: Codable, Sendable, Equatable {
    public var baselineBytes: UInt64
    public var peakBytes: UInt64
    public var aboveBaseline: UInt64 { peakBytes > baselineBytes ? peakBytes - baselineBytes : 0 }

    /// Runs `body` in a window of its own and says what it took.
    static func of<T>(_ body: () throws -> T) rethrows -> (result: T, memory: PeakMemory) {
        let window = ResidentMemory.startWindow()
        let result = try body()
        return (result, PeakMemory(baselineBytes: window.baselineBytes, peakBytes: window.peakBytes))
    }

    /// The benchmark's peak memory (above the baseline) and the peak itself, as extras of `m`.
    func record(into m: inout Measurement) {
        m.extra["peakMemory"] = Double(aboveBaseline)
        m.extra["peakRSS"] = Double(peakBytes)
    }
}
