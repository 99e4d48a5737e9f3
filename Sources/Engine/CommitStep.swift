/// The steps of a commit around the writing of its version (docs/FORMAT.md, section 3), in
/// protocol order. Each is run through `WriteTransaction.step`, which passes its failpoint and
/// then its crash point: the protocol reads as its steps, and the broken engines that change
/// it live here, not between its lines (as realm-core's `SimulatedFailure::trigger`).
enum CommitStep {
    /// Before anything of this commit is written: sync the base's select-bit flip when its
    /// writer may have died before syncing it (I12).
    case syncBase
    /// The new top ref into the inactive slot (I6).
    case writeTop
    /// Nodes, free list, top node and slot durable before the flip (I8).
    case syncData
    /// The select byte names the new slot: from here a reader opening the file sees it (I10).
    case flipSelect
    /// The flip durable: the commit may be acknowledged (I9).
    case syncFlip
    /// Wake watchers in every process (the `.lock` file's doorbell).
    case ringDoorbell

    /// Where a process armed with `FIEF_CRASH_AT` can die once the step is done.
    var crashPoint: CrashPoint? {
        switch self {
        case .syncBase: nil
        case .writeTop: .afterTopWritten
        case .syncData: .afterDataSync
        case .flipSelect: .afterSelectFlip
        case .syncFlip: .afterSelectSync
        case .ringDoorbell: .afterPublish
        }
    }
}

/// What a broken engine (`BrokenVariant`) does at a commit step instead of the step. Release
/// builds compile no broken variants: every step runs as written.
enum CommitFailpoint {
    /// The step is left out.
    case skip
    /// The select bit is flipped before the step runs.
    case flipFirst

    @inline(__always)
    static func at(_ step: CommitStep) -> CommitFailpoint? {
        #if FIEF_BROKEN_VARIANTS
            switch (BrokenVariant.active, step) {
            case (.noBaseSync?, .syncBase), (.noDataSync?, .syncData), (.noDoorbell?, .ringDoorbell): return .skip
            case (.flipBeforeTop?, .writeTop): return .flipFirst
            default: return nil
            }
        #else
            return nil
        #endif
    }

    /// The slot a commit on a base that selects `select` writes its top ref into: the other
    /// one (I6), or with `top-in-active-slot` the one a reader and a power cut go by.
    @inline(__always)
    static func slot(after select: SelectBit) -> SelectBit {
        BrokenVariant.on(.topInActiveSlot) ? select : select.other
    }
}
