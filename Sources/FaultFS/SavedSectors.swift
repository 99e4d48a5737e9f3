/// The durable bytes of the sectors a file has overwritten since its last sync, each padded
/// with zeros to a whole sector, all in one buffer. A sync empties it but keeps the buffer:
/// a database's write + fdatasync loop saves and forgets the same few sectors over and over,
/// and a dictionary of one array per sector cost a dozen allocations and frees a sync.
struct SavedSectors {
    static let size = DurableFile.sector
    /// A buffer bigger than this is freed at a sync rather than kept for the next one, so one
    /// large overwrite or truncation does not hold its memory for the life of the file.
    static let keptCapacity = 1 << 20

    /// Sector number to where its bytes start in `bytes`.
    private var slots: [Int64: Int] = [:]
    private var bytes: [UInt8] = []

    var isEmpty: Bool { slots.isEmpty }
    var sectors: Dictionary<Int64, Int>.Keys { slots.keys }

    func contains(_ sector: Int64) -> Bool { slots[sector] != nil }

    /// The saved bytes of `sector`, a whole sector long.
    subscript(sector: Int64) -> ArraySlice<UInt8>? {
        slots[sector].map { bytes[$0..<($0 + SavedSectors.size)] }
    }

    /// Saves `durable` (at most a sector; zeros make up the rest) as the bytes of `sector`.
    mutating func save(_ sector: Int64, _ durable: UnsafeRawBufferPointer) {
        slots[sector] = bytes.count
        bytes.append(contentsOf: durable.prefix(SavedSectors.size))
        bytes.append(contentsOf: repeatElement(0, count: SavedSectors.size - min(durable.count, SavedSectors.size)))
    }

    mutating func saveZeros(_ sector: Int64) {
        slots[sector] = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: SavedSectors.size))
    }

    mutating func removeAll() {
        let keep = bytes.capacity <= SavedSectors.keptCapacity
        slots.removeAll(keepingCapacity: keep)
        bytes.removeAll(keepingCapacity: keep)
    }
}
