/// Open is recovery: read the header, take the slot the select bit names, and check that the
/// top node it points to is the one it describes. Nothing is replayed and nothing is written;
/// a file that fails any check is reported, never repaired behind the user's back.
enum Recovery {
    static func validate(_ file: DatabaseFile) throws -> (FileHeader, Meta, UInt64) {
        let path = file.path
        let size = try file.size()
        guard size > 0 else { throw EngineError.emptyFile(path: path) }
        var head = [UInt8](repeating: 0, count: Layout.pageSize)
        let got = try head.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard got >= Layout.magic.count, Array(head[0..<Layout.magic.count]) == Layout.magic else {
            throw EngineError.notAFiefFile(path: path)
        }
        guard got == Layout.pageSize else {
            throw EngineError.truncated(path: path, detail: "only \(size) bytes, less than the \(Layout.pageSize)-byte header")
        }
        let header = try head.withUnsafeBytes { try FileHeader.decode($0, path: path) }
        let slot = header.current
        let which = header.select.index
        guard slot.isSelfConsistent else {
            throw EngineError.corrupt(path: path, detail: "top slot \(which), named by the select bit, is damaged (checksum mismatch)")
        }
        let ps = UInt64(Layout.pageSize)
        guard slot.ref + ps <= size else {
            throw EngineError.truncated(path: path, detail: "top node of version \(slot.version) at offset \(slot.ref) lies past the end (\(size) bytes)")
        }
        var top = [UInt8](repeating: 0, count: Layout.pageSize)
        _ = try top.withUnsafeMutableBytes { try file.read(into: $0, at: slot.ref) }
        let meta: Meta = try top.withUnsafeBytes { raw in
            let page = PageView(raw: raw, ref: slot.ref)
            guard page.storedChecksum == slot.topChecksum else {
                throw EngineError.corrupt(path: path, detail: "top node at offset \(slot.ref) does not match the checksum in slot \(which)")
            }
            do {
                return try Meta.decode(page)
            } catch let c as CorruptNode {
                throw EngineError.corrupt(path: path, detail: "top node at offset \(slot.ref): \(c.detail)")
            }
        }
        guard meta.version == slot.version else {
            throw EngineError.corrupt(path: path, detail: "top node is version \(meta.version) but slot \(which) says \(slot.version)")
        }
        guard meta.pageCount * ps <= size else {
            throw EngineError.truncated(path: path, detail: "version \(meta.version) needs \(meta.pageCount * ps) bytes, the file has \(size)")
        }
        return (header, meta, size)
    }
}
