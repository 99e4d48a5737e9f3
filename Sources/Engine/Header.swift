#if canImport(Glibc)
    import Glibc
#endif

/// One of the two top-pointer slots in the header: where a committed version's top (meta)
/// node is, which version it is, and the checksum of that node. The slot checksums itself,
/// so a half-written slot is recognised as garbage rather than followed.
public struct TopSlot: Equatable, Sendable {
    public var ref: UInt64
    public var version: UInt64
    public var topChecksum: UInt64
    public var slotChecksum: UInt64

    init(ref: UInt64, version: UInt64, topChecksum: UInt64) {
        self.ref = ref
        self.version = version
        self.topChecksum = topChecksum
        self.slotChecksum = TopSlot.checksum(ref: ref, version: version, topChecksum: topChecksum)
    }

    init(raw: UnsafeRawBufferPointer) {
        ref = raw.u64(0)
        version = raw.u64(8)
        topChecksum = raw.u64(16)
        slotChecksum = raw.u64(24)
    }

    static func checksum(ref: UInt64, version: UInt64, topChecksum: UInt64) -> UInt64 {
        var b = [UInt8](repeating: 0, count: 24)
        b.withUnsafeMutableBytes { p in
            p.setU64(ref, at: 0); p.setU64(version, at: 8); p.setU64(topChecksum, at: 16)
        }
        return Checksum.of(b)
    }

    /// The slot's own bytes agree with its checksum and it names a plausible node.
    public var isSelfConsistent: Bool {
        ref != 0 && ref % UInt64(Layout.pageSize) == 0 && version != 0
            && slotChecksum == TopSlot.checksum(ref: ref, version: version, topChecksum: topChecksum)
    }

    public var isBlank: Bool { ref == 0 && version == 0 && topChecksum == 0 && slotChecksum == 0 }

    func encoded() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: Layout.slotSize)
        b.withUnsafeMutableBytes { p in
            p.setU64(ref, at: 0); p.setU64(version, at: 8)
            p.setU64(topChecksum, at: 16); p.setU64(slotChecksum, at: 24)
        }
        return b
    }
}

/// Which top slot is current. One byte, flipped by a single one-byte write.
public enum SelectBit: UInt8, Sendable {
    case slot0 = 0
    case slot1 = 1

    var index: Int { Int(rawValue) }
    var other: SelectBit { self == .slot0 ? .slot1 : .slot0 }
}

/// What an encrypted file's header holds besides a plain one's: the salt bound into every
/// page's tag, and a check value that tells a wrong key before any page is read.
struct EncryptionRecord: Equatable {
    var fileSalt: [UInt8]
    var keyCheck: [UInt8]

    static func checksum(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        Checksum.of(UnsafeRawBufferPointer(rebasing: raw[Layout.fileSaltOffset..<Layout.encryptionChecksumOffset]))
    }
}

/// The decoded header page: fixed identity fields, the select bit, and both slots.
struct FileHeader {
    var select: SelectBit
    var slots: [TopSlot]
    var format: FileFormat
    /// nil in a plain file.
    var encryption: EncryptionRecord?

    var current: TopSlot { slots[select.index] }

    /// Decodes and validates the fixed part. Slots are returned as found; whether the
    /// selected one is sound is for the caller to judge against the node it names.
    static func decode(_ raw: UnsafeRawBufferPointer, path: String) throws -> FileHeader {
        guard raw.count >= Layout.pageSize else {
            throw EngineError.truncated(
                path: path, detail: "header needs \(Layout.pageSize) bytes, file has \(raw.count)")
        }
        guard Array(raw[0..<8]) == Layout.magic else { throw EngineError.notAFiefFile(path: path) }
        let stored = raw.u64(Layout.headerChecksumOffset)
        let computed = Checksum.of(UnsafeRawBufferPointer(rebasing: raw[0..<16]))
        guard stored == computed else {
            throw EngineError.corrupt(path: path, detail: "header checksum mismatch")
        }
        let number = raw.u32(Layout.formatOffset)
        guard let format = FileFormat(number) else {
            throw EngineError.unsupportedFormat(path: path, found: number, supported: FileFormat.known)
        }
        var encryption: EncryptionRecord?
        if format.isEncrypted {
            guard raw.u64(Layout.encryptionChecksumOffset) == EncryptionRecord.checksum(raw) else {
                throw EngineError.corrupt(path: path, detail: "the header's encryption record fails its checksum")
            }
            encryption = EncryptionRecord(
                fileSalt: Array(raw[Layout.fileSaltOffset..<Layout.keyCheckOffset]),
                keyCheck: Array(raw[Layout.keyCheckOffset..<Layout.encryptionChecksumOffset]))
        }
        let pageSize = raw.u32(Layout.pageSizeOffset)
        guard pageSize == UInt32(Layout.pageSize) else {
            throw EngineError.corrupt(path: path, detail: "page size \(pageSize) is not \(Layout.pageSize)")
        }
        guard let select = SelectBit(rawValue: raw.u8(Layout.selectOffset)) else {
            throw EngineError.corrupt(path: path, detail: "select byte is \(raw.u8(Layout.selectOffset)), not 0 or 1")
        }
        let slots = Layout.slotOffsets.map {
            TopSlot(raw: UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + Layout.slotSize)]))
        }
        return FileHeader(select: select, slots: slots, format: format, encryption: encryption)
    }

    /// A fresh header page whose slot 0 names the first version, in the current format (plain,
    /// or encrypted with `encryption`).
    static func initialPage(firstSlot: TopSlot, encryption: EncryptionRecord? = nil) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { p in
            for (i, b) in Layout.magic.enumerated() { p.setU8(b, at: i) }
            p.setU32(FileFormat.new(encrypted: encryption != nil).number, at: Layout.formatOffset)
            if let encryption {
                encryption.fileSalt.withUnsafeBytes { p.copy($0, at: Layout.fileSaltOffset) }
                encryption.keyCheck.withUnsafeBytes { p.copy($0, at: Layout.keyCheckOffset) }
                p.setU64(EncryptionRecord.checksum(UnsafeRawBufferPointer(p)), at: Layout.encryptionChecksumOffset)
            }
            p.setU32(UInt32(Layout.pageSize), at: Layout.pageSizeOffset)
            let sum = Checksum.of(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<16]))
            p.setU64(sum, at: Layout.headerChecksumOffset)
            p.setU8(SelectBit.slot0.rawValue, at: Layout.selectOffset)
            let slot = firstSlot.encoded()
            slot.withUnsafeBytes { p.copy($0, at: Layout.slotOffsets[0]) }
        }
        return page
    }
}
