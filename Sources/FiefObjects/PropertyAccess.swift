/// One property as a context's current version stores it: the schema's `Property`, its class's
/// plan, and where the property sits in a row of the layout read last. Made once per key path
/// and context version (`ObjectContext.property(_:storage:)`), so a managed read costs no
/// copy of a `Property`, no class lookup by name and no slot search: an integer is the row's
/// layout id compared with the one remembered, a walk over the serials before it and a load;
/// a string is decoded from the row's bytes without an `ObjectValue` between.
public final class PropertyAccess {
    let property: Property
    /// Nil when the property could not be resolved (a damaged file): reads then take the slow
    /// path, which reports the failure.
    let plan: ObjectTables.ClassPlan?

    private var layoutID = -1
    private var slot = 0
    /// The remembered layout's slot widths (kept alive by `plan`'s codec).
    private var widths: UnsafePointer<RowLayout.Width>?
    /// How a row of the remembered layout keeps the property, for the reads here.
    private enum Mode { case other, int, string }
    private var mode = Mode.other
    /// `CompactRow.steps`, held here: a static's lazy initialiser was checked at every read.
    private let steps = CompactRow.steps

    init(_ property: Property, plan: ObjectTables.ClassPlan?) {
        self.property = property
        self.plan = plan
    }

    /// The property's integer in `row` (of the object `key`), when it is a compact row that
    /// holds one; nil sends the caller down the general read (a null, another layout's answer,
    /// a fixed row, a damaged row, which the general read reports).
    @inline(__always)
    func storedInt(_ row: UnsafeRawBufferPointer, key: Int64) -> Int64? {
        guard let (id, start) = CompactRow.header(row) else { return nil }
        if id != layoutID { place(id) }
        guard mode == .int, let widths else { return nil }
        return CompactRow.int(row, from: start, widths: widths, slot: slot, key: key, steps: steps)
    }

    /// The property's string in `row`, when the row keeps it in itself; nil as above (and for
    /// a string kept out of the row).
    @inline(__always)
    func storedString(_ row: UnsafeRawBufferPointer) -> String? {
        guard let f = field(row, as: .string), f.serial & 1 == 1 else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: row[f.offset..<(f.offset + f.count)]), as: UTF8.self)
    }

    /// Where `row` keeps the property, when it keeps it as `wanted` (the row's layout placed
    /// first when it is not the one remembered).
    @inline(__always)
    private func field(_ row: UnsafeRawBufferPointer, as wanted: Mode) -> CompactRow.Field? {
        guard let (id, start) = CompactRow.header(row) else { return nil }
        if id != layoutID { place(id) }
        guard mode == wanted, let widths else { return nil }
        return CompactRow.locate(row, from: start, widths: widths, slot: slot, steps: steps)
    }

    private func place(_ id: Int) {
        layoutID = id
        mode = .other
        guard let layouts = plan?.codec.layouts, id < layouts.count else { return }
        let l = layouts[id]
        guard let s = l.slot(of: property.pid), !l.lists[s] else { return }
        mode = l.kinds[s].isInteger ? .int : l.kinds[s] == .string ? .string : .other
        slot = s
        widths = UnsafePointer(l.widths.baseAddress!)
    }
}
