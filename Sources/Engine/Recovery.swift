#if canImport(Glibc)
    import Glibc
#endif

/// Open is recovery: read the header, take the slot the select bit names, and check that the
/// top node it points to is the one it describes. Nothing is replayed and nothing is written;
/// a file that fails any check is reported, never repaired behind the user's back.
public enum Recovery {
    /// What open learns from a sound file: its header, newest top node, size, and the cipher
    /// for its pages (nil when plain).
    struct Opened {
        let header: FileHeader
        let meta: Meta
        let size: UInt64
        let cipher: PageCipher?
    }

    static func validate(_ file: DatabaseFile, key: [UInt8]?) throws -> Opened {
        // Open takes no pin, so writers in other processes may commit twice while it reads and
        // reuse the page of the top it was about to check. A failure is believed only if the
        // header did not change meanwhile; a damaged file's header stays put.
        var attempt = 0
        while true {
            let (result, head) = try validateOnce(file, key: key)
            switch result {
            case .success(let r): return r
            case .failure(let error):
                attempt += 1
                var again = [UInt8](repeating: 0, count: Layout.pageSize)
                _ = try again.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
                guard attempt < 100, again != head else { throw error }
                sched_yield()
            }
        }
    }

    /// One try: the header as read, and what it led to. Errors before the top is read are thrown.
    private static func validateOnce(_ file: DatabaseFile, key: [UInt8]?) throws -> (Result<Opened, Error>, [UInt8]) {
        let path = file.path
        var head = [UInt8](repeating: 0, count: Layout.pageSize)
        let got = try head.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        // The size is read after the header: a writer grows the file before it publishes a
        // version, so a size read later covers the version the header names. Read before,
        // it could miss the growth of a commit that lands in between.
        let size = try file.size()
        guard size > 0 else { throw EngineError.emptyFile(path: path) }
        guard head.prefix(got).withUnsafeBytes(FileHeader.hasMagic) else {
            throw EngineError.notAFiefFile(path: path)
        }
        guard got == Layout.pageSize else {
            throw EngineError.truncated(
                path: path, detail: "only \(size) bytes, less than the \(Layout.pageSize)-byte header")
        }
        let header = try head.withUnsafeBytes { try FileHeader.decode($0, path: path) }
        let cipher = try FileCipher.resolve(header.encryption, key: key, path: path)
        let slot = header.current
        let which = header.select.index
        guard slot.isSelfConsistent else {
            throw EngineError.corrupt(
                path: path, detail: "top slot \(which), named by the select bit, is damaged (checksum mismatch)")
        }
        return (Result { try validateTop(file, header: header, size: size, cipher: cipher) }, head)
    }

    private static func validateTop(_ file: DatabaseFile, header: FileHeader, size: UInt64, cipher: PageCipher?) throws
        -> Opened
    {
        let path = file.path
        let slot = header.current
        let which = header.select.index
        let ps = UInt64(Layout.pageSize)
        guard slot.ref + ps <= size else {
            throw EngineError.truncated(
                path: path,
                detail: "top node of version \(slot.version) at offset \(slot.ref) lies past the end (\(size) bytes)")
        }
        var top = [UInt8](repeating: 0, count: Layout.pageSize)
        _ = try top.withUnsafeMutableBytes { try file.read(into: $0, at: slot.ref) }
        if let cipher {
            var logical = [UInt8](repeating: 0, count: PageGeometry.encrypted.pageBytes)
            let ok = top.withUnsafeBytes { physical in
                logical.withUnsafeMutableBytes { cipher.open(physical, offset: slot.ref, into: $0) }
            }
            guard ok else {
                throw EngineError.corrupt(
                    path: path, detail: "top node at offset \(slot.ref), named by slot \(which), failed authentication")
            }
            top = logical
        }
        let meta: Meta = try top.withUnsafeBytes { raw in
            do {
                return try slot.decodeTop(PageView(raw: raw, ref: slot.ref), index: which)
            } catch let c as CorruptNode {
                throw EngineError.corrupt(path: path, detail: "top node at offset \(slot.ref): \(c.detail)")
            }
        }
        guard meta.pageCount * ps <= size else {
            throw EngineError.truncated(
                path: path, detail: "version \(meta.version) needs \(meta.pageCount * ps) bytes, the file has \(size)")
        }
        return Opened(header: header, meta: meta, size: size, cipher: cipher)
    }
}

/// What the header of a file says, read without opening it as a database, so a damaged file
/// can still be described (both slots, the select byte) before it is rejected.
public struct HeaderReport: Sendable {
    public let fileSize: UInt64
    public let selectByte: UInt8
    public let slots: [SlotInfo]
}

extension Recovery {
    /// Reads the header of `path`; throws only when the file cannot be read or is not a Fief
    /// file at all. Never writes.
    public static func inspectHeader(path: String) throws -> HeaderReport {
        let file = try DatabaseFile.open(path: path, writable: false)
        defer { file.close() }
        guard try file.isRegularFile() else { throw EngineError.notARegularFile(path: path) }
        let size = try file.size()
        var head = [UInt8](repeating: 0, count: Layout.pageSize)
        let got = try head.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard got >= Layout.slotOffsets[1] + Layout.slotSize, head.withUnsafeBytes(FileHeader.hasMagic) else {
            throw size == 0 ? EngineError.emptyFile(path: path) : EngineError.notAFiefFile(path: path)
        }
        let select = head[Layout.selectOffset]
        // An encrypted top node cannot be read without the key: its slot is judged by itself.
        let encrypted = FileFormat(head.withUnsafeBytes { $0.u32(Layout.formatOffset) })?.isEncrypted ?? false
        var slots: [SlotInfo] = []
        for i in 0..<2 {
            let s = head.withUnsafeBytes { TopSlot(header: $0, index: i) }
            var valid = false
            if encrypted {
                valid = s.isSelfConsistent && s.ref + UInt64(Layout.pageSize) <= size
            } else if s.isSelfConsistent, s.ref + UInt64(Layout.pageSize) <= size {
                var top = [UInt8](repeating: 0, count: Layout.pageSize)
                if (try? top.withUnsafeMutableBytes { try file.read(into: $0, at: s.ref) }) == Layout.pageSize {
                    valid = top.withUnsafeBytes { s.names(topPage: $0) }
                }
            }
            slots.append(SlotInfo(index: i, selected: Int(select) == i, ref: s.ref, version: s.version, valid: valid))
        }
        return HeaderReport(fileSize: size, selectByte: select, slots: slots)
    }
}
