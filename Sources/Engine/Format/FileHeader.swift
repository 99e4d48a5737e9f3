#if canImport(Glibc)
    import Glibc
#endif

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

    /// Whether `raw` starts with the magic bytes (the one check every reader of a header makes
    /// first).
    static func hasMagic(_ raw: UnsafeRawBufferPointer) -> Bool {
        raw.count >= Layout.magic.count && raw.prefix(Layout.magic.count).elementsEqual(Layout.magic)
    }

    /// Decodes and validates the fixed part. Slots are returned as found; whether the
    /// selected one is sound is for the caller to judge against the node it names.
    static func decode(_ raw: UnsafeRawBufferPointer, path: String) throws -> FileHeader {
        guard raw.count >= Layout.pageSize else {
            throw EngineError.truncated(
                path: path, detail: "header needs \(Layout.pageSize) bytes, file has \(raw.count)")
        }
        guard FileHeader.hasMagic(raw) else { throw EngineError.notAFiefFile(path: path) }
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
        guard let select = SelectBit(header: raw) else {
            throw EngineError.corrupt(path: path, detail: "select byte is \(raw.u8(Layout.selectOffset)), not 0 or 1")
        }
        let slots = [TopSlot(header: raw, index: 0), TopSlot(header: raw, index: 1)]
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
            firstSlot.encode(into: p, at: Layout.slotOffsets[0])
        }
        return page
    }
}
