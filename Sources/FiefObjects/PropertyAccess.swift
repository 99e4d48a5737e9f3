/// One property as a context's current version stores it: the schema's `Property`, its class's
/// plan, and where the property sits in a row of the layout read last. Made once per key path
/// and context version (`ObjectContext.property(_:storage:)`), so a managed read costs no
/// copy of a `Property`, no class lookup by name and no slot search: an integer is the row's
/// layout id compared with the one remembered, a presence bit and one load; a string is
/// decoded from the row's bytes without an `ObjectValue` between.
public final class PropertyAccess {
    let property: Property
    /// Nil when the property could not be resolved (a damaged file): reads then take the slow
    /// path, which reports the failure.
    let plan: ObjectTables.ClassPlan?

    private var layoutID = -1
    private var fixedEnd = Int.max
    private var place = RowLayout.Place(offset: 0, presenceByte: 0, presenceMask: 0)
    /// How a row of the remembered layout keeps the property, for the reads here.
    private enum Mode { case other, int, string }
    private var mode = Mode.other

    init(_ property: Property, plan: ObjectTables.ClassPlan?) {
        self.property = property
        self.plan = plan
    }

    /// The property's integer in `row`, when the row's layout keeps it as 8 bytes and it is
    /// present; nil sends the caller down the general read (a null, another layout's answer, a
    /// damaged row, which the general read reports).
    @inline(__always)
    func storedInt(_ row: UnsafeRawBufferPointer) -> Int64? {
        guard holds(row, as: .int) else { return nil }
        return row.loadUnaligned(fromByteOffset: place.offset, as: Int64.self).littleEndian
    }

    /// The property's string in `row`, when the row keeps it in its var area; nil as above
    /// (and for a string kept out of the row).
    @inline(__always)
    func storedString(_ row: UnsafeRawBufferPointer) -> String? {
        guard holds(row, as: .string) else { return nil }
        let off = Int(row.loadUnaligned(fromByteOffset: place.offset, as: UInt32.self).littleEndian)
        let len = Int(row.loadUnaligned(fromByteOffset: place.offset + 4, as: UInt32.self).littleEndian)
        guard off != Int(RowLayout.outOfRow), off >= fixedEnd, off + len <= row.count else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: row[off..<(off + len)]), as: UTF8.self)
    }

    /// Whether `row` keeps the property present, as `wanted`, in a whole fixed area (the
    /// row's layout placed first when it is not the one remembered).
    @inline(__always)
    private func holds(_ row: UnsafeRawBufferPointer, as wanted: Mode) -> Bool {
        guard row.count >= RowLayout.headerSize, row[0] == RowLayout.tag else { return false }
        let id = Int(row.loadUnaligned(fromByteOffset: 1, as: UInt32.self).littleEndian)
        if id != layoutID { place(id) }
        return mode == wanted && row.count >= fixedEnd && place.isPresent(row.baseAddress!)
    }

    private func place(_ id: Int) {
        layoutID = id
        mode = .other
        guard let layouts = plan?.codec.layouts, id < layouts.count else { return }
        let l = layouts[id]
        guard let s = l.slot(of: property.pid), !l.lists[s] else { return }
        mode = l.kinds[s].isInteger ? .int : l.kinds[s] == .string ? .string : .other
        fixedEnd = l.fixedEnd
        place = l.place(ofSlot: s)
    }
}
