import Engine
import Foundation
import SeededRandomness
import TortureSchema

/// A reader pins an old version while writers churn. The file may grow only by what the pin
/// holds plus growth of live data; the pinned snapshot stays readable and unchanged; once
/// released, the space is reused and the size levels off; compact brings the file back near
/// the live data. The size after every commit is kept for the report.
public struct GrowthScenario: Scenario {
    public var name: String { "growth" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { profile == .quick ? 1 : 2 * profile.scale / 5 + 1 }

    /// Slack for free-list and top-node pages, and for a commit in flight.
    static let slackBytes: UInt64 = 64 * 4096

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var rng = SeededRandom(seed: seed)
        var outcome = CycleOutcome()
        var curve = GrowthCurve()
        var violations: [Violation] = []
        let db = try Database(path: dir + "/growth.fief", options: TortureEncryption.options())
        let keys: Int64 = 3000
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<keys { try t.put(k, [UInt8](repeating: UInt8(k % 251), count: 100)) }
        }
        var commit = 0
        func churn(_ n: Int) throws {
            for _ in 0..<n {
                var local = rng
                try db.write { tx in
                    let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                    for _ in 0..<25 {
                        let k = Int64.random(in: 0..<keys, using: &local)
                        try t.put(
                            k,
                            [UInt8](
                                repeating: UInt8.random(in: 0...255, using: &local),
                                count: Int.random(in: 20...220, using: &local)))
                    }
                }
                rng = local
                commit += 1
                let s = try db.stats()
                curve.sizes.append(s.fileSize)
                curve.liveBytes.append(s.bytesInUse)
            }
        }
        let phase = 40 + 20 * (index % 3)
        try churn(phase)
        let pinned = try db.pin()
        curve.pinnedAtCommit = commit
        let atPin = try db.stats()
        let view = try db.read(pinned) { try Fingerprint.of($0) }
        // A reader thread keeps reading the pinned version while the writer churns.
        let readerFailures = FirstError()
        let stop = StopFlag()
        let reader = ThreadGroup()
        reader.spawn {
            while !stop.isSet {
                do {
                    let again = try db.read(pinned) { try Fingerprint.of($0) }
                    if again != view {
                        readerFailures.record(
                            TortureError.invalid("the pinned snapshot changed while writers churned"));
                        return
                    }
                } catch { readerFailures.record(error); return }
            }
        }
        var worst: UInt64 = 0
        for _ in 0..<(2 * phase) {
            try churn(1)
            let s = try db.stats()
            let bound =
                atPin.fileSize + s.bytesPinned + (s.bytesInUse > atPin.bytesInUse ? s.bytesInUse - atPin.bytesInUse : 0)
                + GrowthScenario.slackBytes
            worst = max(worst, bound)
            if s.fileSize > bound {
                violations.append(
                    .harness(
                        "commit \(commit): file is \(s.fileSize) bytes while pinned, above the bound \(bound) "
                            + "(size at pin \(atPin.fileSize) + held \(s.bytesPinned) + live growth + slack)"))
                break
            }
        }
        curve.boundBytes = worst
        stop.set()
        reader.join()
        if let e = readerFailures.error { violations.append(.harness("pinned reader: \(e)")) }
        if try db.stats().bytesPinned == 0 {
            violations.append(.harness("churn under a pin held no pages: the pin is not protecting anything"))
        }
        pinned.release()
        curve.releasedAtCommit = commit
        try churn(phase / 2)
        let afterRelease = try db.stats()
        if afterRelease.bytesPinned != 0 {
            violations.append(.harness("\(afterRelease.bytesPinned) bytes still held after the pin was released"))
        }
        try churn(phase)
        let final = try db.stats()
        if final.fileSize > afterRelease.fileSize + GrowthScenario.slackBytes {
            violations.append(
                .harness(
                    "after release the file kept growing: "
                        + "\(afterRelease.fileSize) -> \(final.fileSize) bytes over \(phase) commits"))
        }
        let report = try db.check()
        violations += report.problems.map { Violation(.integrity, "\($0)") }
        try db.compact()
        let compacted = try db.stats()
        curve.compactedSize = compacted.fileSize
        if compacted.fileSize > final.bytesInUse + 8 * 4096 {
            violations.append(.harness("compact left \(compacted.fileSize) bytes for \(final.bytesInUse) live"))
        }
        violations += try db.check().problems.map {
            Violation(kind: .integrity, text: "integrity after compact: \($0)")
        }
        outcome.events.append(CycleEvent("pinned-growth", violations, "growth cycle \(index)"))
        outcome.growth = curve
        outcome.notes.append(
            "growth: steady \(atPin.fileSize) B at pin, peak \(curve.sizes.max() ?? 0) B while pinned, "
                + "\(final.fileSize) B after release, \(compacted.fileSize) B after compact"
        )
        return outcome
    }
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
