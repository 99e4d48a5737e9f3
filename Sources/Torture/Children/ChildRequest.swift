import Foundation
import TortureSchema

/// The one message a child process of the suite gets: its role and the run's encryption key,
/// as `fief torture child --request JSON` (a `ProcessRequest`: this type builds that command
/// line and reads it back, so no other code spells a child's flags). It stays well under the
/// kernel's 128 KiB per argument: a replay's commits stay in their own file (`writer`'s
/// `schedule`).
public struct ChildRequest: Codable, Sendable, Equatable {
    public var role: ChildRole
    /// The run's key (`TortureEncryption`), nil when its databases are plain. It is drawn from
    /// the run's printed seed, so seeing it in a command line gives nothing away.
    public var encryptionKey: [UInt8]?

    /// A request for `role` carrying the key in force in this process.
    public init(_ role: ChildRole, encryptionKey: [UInt8]? = TortureEncryption.key) {
        self.role = role
        self.encryptionKey = encryptionKey
    }
}

extension ChildRequest: ProcessRequest {
    public static let subcommand = ["torture", "child"]
}
