/// What a sync makes durable beyond the file or directory it names: the persistence models of
/// ALICE (Pillai et al., OSDI '14) and CrashMonkey, cut down to the three choices that change
/// what real programs see after a power cut.
///
/// | | posix | ext4-ordered | ext4-writeback |
/// |---|---|---|---|
/// | create, rename, unlink, link, mkdir | its directory's fsync | any fsync (the journal commits) | any fsync |
/// | a file's written bytes | its own fsync/fdatasync | its own fsync/fdatasync | its own fsync/fdatasync |
/// | a file's new size | its own fsync | its own fsync | any fsync, without the bytes (zeros) |
/// | rename over an existing file | — | carries the renamed file's bytes | — |
///
/// Name changes survive a cut as a prefix in every model (a journal never reorders them).
public enum PersistenceModel: String, CaseIterable, Sendable, Codable, CustomStringConvertible {
    /// Strict POSIX: nothing is durable but what was synced itself. The default, and the
    /// model under which a program that is correct is correct everywhere.
    case posix
    /// ext4 with data=ordered (Linux's default): metadata goes through one journal, committed
    /// by any fsync; delayed allocation keeps new bytes (and so the size they make) out of it
    /// until their own sync, except that a rename over an existing file carries the renamed
    /// file's bytes with it (`auto_da_alloc`).
    case ext4Ordered = "ext4-ordered"
    /// ext4 with data=writeback: as ordered, but a journal commit can make a file's new size
    /// durable before its bytes, which then read as zeros; no `auto_da_alloc` ordering.
    case ext4Writeback = "ext4-writeback"

    public var description: String { rawValue }

    public init(name: String) throws {
        guard let m = PersistenceModel(rawValue: name) else {
            throw FaultFSError.badSpec(
                "unknown persistence model '\(name)' (models: "
                    + "\(PersistenceModel.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        self = m
    }

    /// Whether a sync of one file or directory commits the journal, and with it every name
    /// change made so far anywhere on the mount. An fdatasync commits it only when the file's
    /// size changed, since then the size is metadata the sync must write.
    func syncCommitsJournal(dataOnly: Bool, sizeChanged: Bool) -> Bool {
        switch self {
        case .posix: return false
        case .ext4Ordered, .ext4Writeback: return !dataOnly || sizeChanged
        }
    }

    /// Whether a directory sync commits every name change, not only its own.
    var directorySyncCommitsJournal: Bool { self != .posix }

    /// Whether a rename over an existing file makes the renamed file's bytes durable first.
    var renameOverCarriesData: Bool { self == .ext4Ordered }

    /// Whether a journal commit makes other files' new sizes durable without their bytes.
    var journalCarriesSizeWithoutData: Bool { self == .ext4Writeback }
}
