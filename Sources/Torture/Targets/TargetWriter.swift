/// The writer process of the generic scenarios (the `targetWriter` child role): one
/// connection commits `TargetWorkload` transactions up to `maxCommit`, logging each intent
/// before it starts and each acknowledgement after `commit` returned, to the oracle.
/// `maxCommit` 0 only creates the store (set-up, before the scenario syncs its directory).
public struct TargetWriter {
    public let spec: TargetSpec
    public let directory: String
    public let oraclePath: String
    public let workload: TargetWorkload
    public let maxCommit: UInt64

    public init(spec: TargetSpec, directory: String, oraclePath: String, seed: UInt64, maxCommit: UInt64) {
        self.spec = spec
        self.directory = directory
        self.oraclePath = oraclePath
        workload = TargetWorkload(seed: seed)
        self.maxCommit = maxCommit
    }

    struct Finished: Error {}

    public func run() throws {
        let target = try spec.open(directory: directory)
        defer { target.close() }
        let oracle = try OracleLog(path: oraclePath)
        while true {
            var attempted: UInt64 = 0
            do {
                try target.write { tx in
                    let i = try TargetWorkload.committed(in: tx) + 1
                    guard i <= maxCommit else { throw Finished() }
                    attempted = i
                    try oracle.intent(i)
                    try workload.apply(commit: i, in: tx)
                }
            } catch is Finished {
                return
            }
            try oracle.ack(attempted)
        }
    }
}
