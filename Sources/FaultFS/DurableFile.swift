import Foundation
import SystemPackage

/// One backing file as a disk would see it: what is durable (as of the file's last fsync or
/// fdatasync) apart from what was only written since. Writes go through to the backing file
/// at once; before a byte that was durable is first overwritten (or truncated away), its
/// sector is saved, so a power cut can put the durable contents back and replay any subset of
/// the pending writes over them.
///
/// Invariant: a sector below `durableSize` with no saved copy holds its durable bytes in the
/// backing file.
final class DurableFile {
    static let sector = 512

    enum Pending {
        case write(seq: UInt64, offset: Int64, bytes: [UInt8])
        case resize(seq: UInt64, size: Int64)
        var seq: UInt64 {
            switch self {
            case .write(let s, _, _), .resize(let s, _): return s
            }
        }
    }

    /// A descriptor of our own on the backing inode, so the file can be restored after a
    /// rename or an unlink, whatever flags the program opened it with.
    let fd: FileDescriptor
    let ino: UInt64
    var path: String
    /// Held across the save-then-write of each change, so concurrent writers to one file
    /// keep the saved sectors true.
    let lock = NSLock()
    // The state below is exempt from Swift's dynamic exclusivity checks (a runtime call per
    // access, on every write and sync): `lock` serialises its users and no access overlaps another.
    @exclusivity(unchecked) private(set) var durableSize: Int64
    @exclusivity(unchecked) private(set) var saved = SavedSectors()
    @exclusivity(unchecked) private(set) var pending: [Pending] = []
    /// Where `save` reads the durable bytes of a range; kept between saves for the same reason
    /// as the saved sectors' buffer, and freed when a save needed more than that.
    @exclusivity(unchecked) private var readBuffer: [UInt8] = []

    init(reopening other: Int32, ino: UInt64, path: String) throws {
        fd = try FileDescriptor.open(FilePath("/proc/self/fd/\(other)"), .readWrite, options: [.closeOnExec])
        self.ino = ino
        self.path = path
        durableSize = 0
        durableSize = try size()
    }

    deinit { try? fd.close() }

    /// The backing file's size, from a seek on our own descriptor rather than fstat: on a
    /// filesystem with fine-grained timestamps (ext4 since Linux 6.13) an fstat marks the ctime
    /// as seen, so the program's next write stamps a new mtime, and its next fdatasync pays a
    /// synchronous inode write that it does not pay on the native filesystem. This is called on
    /// every sync; the seek leaves the timestamps unseen. Our descriptor's offset is used by
    /// nothing else (all its reads and writes are positioned).
    func size() throws -> Int64 {
        try fd.seek(offset: 0, from: .end)
    }

    var unsyncedBytes: Int {
        pending.reduce(0) { n, p in
            if case .write(_, _, let b) = p { return n + b.count }; return n
        }
    }

    /// Merged byte ranges written since the last sync.
    var unsyncedRanges: [ClosedRange<Int64>] {
        var ranges: [ClosedRange<Int64>] = []
        for p in pending {
            guard case .write(_, let off, let b) = p, !b.isEmpty else { continue }
            ranges.append(off...(off + Int64(b.count) - 1))
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<Int64>] = []
        for r in ranges {
            if let last = merged.last, r.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        return merged
    }

    var isClean: Bool { pending.isEmpty && saved.isEmpty }

    /// Saves the durable bytes of every sector in `range` that has not been saved yet, with
    /// one read for the whole range.
    private func save(sectorsCovering range: Range<Int64>) throws {
        let s = Int64(DurableFile.sector)
        let first = range.lowerBound / s
        let end = min((range.upperBound + s - 1) / s, (durableSize + s - 1) / s)
        guard !range.isEmpty, first < end else { return }
        if (first..<end).allSatisfy({ saved.contains($0) }) { return }
        let length = Int(min(end * s, durableSize) - first * s)
        if readBuffer.count < length { readBuffer = [UInt8](repeating: 0, count: length) }
        defer { if readBuffer.count > SavedSectors.keptCapacity { readBuffer = [] } }
        try readBuffer.withUnsafeMutableBytes { buf in
            let got = try fd.read(
                fromAbsoluteOffset: first * s, into: UnsafeMutableRawBufferPointer(rebasing: buf[0..<length]))
            for i in first..<end where !saved.contains(i) {
                // Bytes past a short read (the file shrank under us) are saved as zeros.
                let from = Int((i - first) * s)
                let to = min(from + DurableFile.sector, length, max(from, got))
                saved.save(i, UnsafeRawBufferPointer(rebasing: buf[from..<to]))
            }
        }
    }

    /// Call before `bytes` are written at `offset` through the program's descriptor.
    func willWrite(offset: Int64, count: Int) throws {
        try save(sectorsCovering: offset..<(offset + Int64(count)))
    }

    func didWrite(seq: UInt64, offset: Int64, bytes: [UInt8]) {
        pending.append(.write(seq: seq, offset: offset, bytes: bytes))
    }

    /// Call before the file's size changes to `newSize`.
    func willResize(to newSize: Int64) throws {
        let current = try size()
        if newSize < current { try save(sectorsCovering: newSize..<current) }
    }

    func didResize(seq: UInt64, to newSize: Int64) {
        pending.append(.resize(seq: seq, size: newSize))
    }

    /// The file's sync returned: what it holds now is durable.
    func synced() throws {
        durableSize = try size()
        saved.removeAll()
        pending.removeAll(keepingCapacity: true)
    }

    /// A journal committed the file's grown size but none of its bytes (ext4 data=writeback):
    /// the grown part is durable as zeros. Only sectors the pending writes touch need a saved
    /// zero copy; the rest of the grown part is a hole in the backing file, zeros already.
    func sizeCommittedWithoutData() throws {
        let now = try size()
        guard now > durableSize else { return }
        let s = Int64(DurableFile.sector)
        for p in pending {
            guard case .write(_, let off, let b) = p, !b.isEmpty, off + Int64(b.count) > durableSize else { continue }
            for i in (max(off, durableSize) / s)...((off + Int64(b.count) - 1) / s) where !saved.contains(i) {
                saved.saveZeros(i)
            }
        }
        durableSize = now
    }

    // MARK: Power cut

    /// How the pending operations fare in a power cut.
    enum Fate {
        case dropAll
        /// Keep exactly the pending operations this returns true for (by sequence number);
        /// a write may also be kept only in part, sector by sector.
        case choose((Pending) -> PartialKeep)
        /// Each `sectorSize` block that changed ends up either all old or all new.
        case torn(sectorSize: Int, newSize: Bool, keepBlock: (Int64) -> Bool)
    }

    enum PartialKeep { case all, none, sectors((Int64) -> Bool) }

    /// Puts the file in a state a disk could hold after losing power, then treats that state
    /// as durable. Returns (operations kept, operations pending before).
    @discardableResult
    func powerCut(_ fate: Fate) throws -> (kept: Int, of: Int) {
        let s = Int64(DurableFile.sector)
        let current = try size()
        var dirty = Set(saved.sectors)
        for p in pending {
            if case .write(_, let off, let b) = p, !b.isEmpty {
                for i in (off / s)...((off + Int64(b.count) - 1) / s) { dirty.insert(i) }
            }
        }
        func durableSector(_ i: Int64) -> [UInt8] {
            saved[i].map(Array.init) ?? [UInt8](repeating: 0, count: DurableFile.sector)
        }
        var image: [Int64: [UInt8]] = [:]
        for i in dirty { image[i] = durableSector(i) }
        var size = durableSize
        var kept = 0
        switch fate {
        case .dropAll:
            break
        case .torn(let blockSize, let newSize, let keepBlock):
            let per = Int64(max(1, blockSize / DurableFile.sector))
            for block in Set(dirty.map { $0 / per }) where keepBlock(block) {
                kept += 1
                for i in (block * per)..<((block + 1) * per) where dirty.contains(i) {
                    var buf = [UInt8](repeating: 0, count: DurableFile.sector)
                    let got = try buf.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: i * s, into: $0) }
                    if got < buf.count { buf.replaceSubrange(got..., with: repeatElement(0, count: buf.count - got)) }
                    image[i] = buf
                }
            }
            if newSize { size = current }
        case .choose(let decide):
            for p in pending {
                let keep = decide(p)
                if case .none = keep { continue }
                kept += 1
                switch p {
                case .resize(_, let n):
                    size = n
                    for (i, var b) in image where (i + 1) * s > n {
                        let from = Int(max(0, n - i * s))
                        b.replaceSubrange(from..., with: repeatElement(0, count: b.count - from))
                        image[i] = b
                    }
                case .write(_, let off, let bytes):
                    var pos = off
                    let end = off + Int64(bytes.count)
                    while pos < end {
                        let i = pos / s
                        let pieceEnd = min(end, (i + 1) * s)
                        var take = true
                        if case .sectors(let f) = keep { take = f(i) }
                        if take {
                            let from = Int(pos - i * s), src = Int(pos - off)
                            image[i]!.replaceSubrange(
                                from..<(from + Int(pieceEnd - pos)),
                                with: bytes[src..<(src + Int(pieceEnd - pos))])
                            size = max(size, pieceEnd)
                        }
                        pos = pieceEnd
                    }
                }
            }
        }
        try fd.resize(to: size)
        for (i, b) in image.sorted(by: { $0.key < $1.key }) where i * s < size {
            let n = Int(min(s, size - i * s))
            _ = try b[0..<n].withUnsafeBytes { try fd.write(toAbsoluteOffset: i * s, $0) }
        }
        guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
        let total = pending.count
        try synced()
        return (kept, total)
    }
}
