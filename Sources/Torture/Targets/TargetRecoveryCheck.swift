import Foundation
import TortureSchema

/// What a crash left in a target's store, judged against the oracle: the store opens, its
/// integrity check passes, it holds every acknowledged commit (durability), and its state is
/// exactly the state after one commit k with k <= last attempted (atomicity). The same checks
/// for every target; Fief's own scenarios add version numbers and the select bit.
public struct TargetVerdict: Codable, Sendable {
    public var recoveredCommit: UInt64 = 0
    public var lastAck: UInt64 = 0
    public var lastIntent: UInt64 = 0
    public var violations: [Violation] = []
    public var passed: Bool { violations.isEmpty }
    public init() {}
}

public enum TargetRecoveryCheck {
    /// Verifies in this process. A target whose library crashes on a damaged file would take
    /// the caller with it: scenarios use `verifyInChild`.
    public static func verify(spec: TargetSpec, directory: String, oraclePath: String, seed: UInt64) -> TargetVerdict {
        var v = TargetVerdict()
        func add(_ violation: Violation) { v.violations.append(violation) }
        let oracle: OracleLog.Summary
        do {
            oracle = try OracleLog.read(oraclePath)
        } catch {
            add(Violation(.harness, "oracle log unreadable: \(error)"))
            return v
        }
        v.lastAck = oracle.lastAck
        v.lastIntent = oracle.lastIntent
        let target: TortureTarget
        do {
            target = try spec.open(directory: directory)
        } catch {
            add(Violation(.integrity, "the store does not open after the crash: \(error)"))
            return v
        }
        defer { target.close() }
        do {
            if let problems = try target.integrityCheck() {
                for p in problems.prefix(10) { add(Violation(.integrity, "the target's integrity check: \(p)")) }
            }
        } catch {
            add(Violation(.integrity, "the target's integrity check failed to run: \(error)"))
        }
        do {
            let workload = TargetWorkload(seed: seed)
            try target.read { tx in
                let k = try TargetWorkload.committed(in: tx)
                v.recoveredCommit = k
                if k < oracle.lastAck {
                    add(
                        Violation(
                            .durability,
                            "commit \(oracle.lastAck) was acknowledged but the store holds only commit \(k) "
                                + "(\(oracle.lastAck - k) acknowledged commit(s) lost)"
                        ))
                }
                if k > oracle.lastIntent {
                    add(
                        Violation(
                            .atomicity, "the store holds commit \(k), but only \(oracle.lastIntent) were attempted"))
                }
                for x in try workload.atomicityViolations(in: tx, afterCommit: k) { add(x) }
            }
        } catch {
            add(Violation(.integrity, "reading the recovered store failed: \(error)"))
        }
        return v
    }

    /// Verifies in a child process (`ChildRole.targetVerify`), so a target that crashes or
    /// hangs on what it finds is a finding, not the end of the run.
    public static func verifyInChild(
        spec: TargetSpec, directory: String, oraclePath: String, seed: UInt64, scratch: String
    ) throws -> TargetVerdict {
        let out = scratch + ".verdict.json"
        try? FileManager.default.removeItem(atPath: out)
        let child = try ChildProcess(
            .targetVerify(target: spec, dir: directory, oracle: oraclePath, seed: seed, out: out),
            output: scratch + ".verify.out", label: "verifier")
        let ending = child.wait(timeoutSeconds: 180)
        var v = TargetVerdict()
        if let data = FileManager.default.contents(atPath: out),
            let decoded = try? JSONDecoder().decode(TargetVerdict.self, from: data)
        {
            v = decoded
        }
        switch ending {
        case .some(.exited(0)):
            if FileManager.default.contents(atPath: out) == nil {
                v.violations.append(Violation(.harness, "the verifier wrote no verdict"))
            }
        case .some(.signaled(let s)):
            v.violations.append(
                Violation(.integrity, "the verifier crashed (signal \(s)) reading the store; see \(scratch).verify.out")
            )
        case .some(let e):
            let text = (try? String(contentsOfFile: scratch + ".verify.out", encoding: .utf8)) ?? ""
            v.violations.append(
                Violation(.harness, "the verifier \(e): \(text.split(separator: "\n").last ?? "")"))
        case .none:
            v.violations.append(
                Violation(.integrity, "the verifier hung for 180 s opening or reading the store"))
        }
        return v
    }
}
