/// Builds the code's schema from the configured model classes and refuses what cannot work,
/// naming the class and property.
enum SchemaValidation {
    static func models(_ types: [Object.Type]) throws -> [String: ModelInfo] {
        var out: [String: ModelInfo] = [:]
        for t in types {
            let m = ModelInfo.of(t)
            if out[m.name] != nil { throw SchemaError.duplicateClass(m.name) }
            out[m.name] = m
        }
        for m in out.values { try validate(m, all: out) }
        return out
    }

    static func validName(_ n: String) -> String? {
        if n.isEmpty { return "empty" }
        if n.utf8.count > 100 { return "longer than 100 bytes" }
        if n.hasPrefix("__") { return "names starting with __ are reserved" }
        return nil
    }

    static func validate(_ m: ModelInfo, all: [String: ModelInfo]) throws {
        if let why = validName(m.name) { throw SchemaError.invalidName(className: m.name, property: nil, detail: why) }
        let pks = m.properties.filter(\.primaryKey)
        if pks.count > 1 { throw SchemaError.multiplePrimaryKeys(className: m.name, properties: pks.map(\.name)) }
        for p in m.properties {
            let f = m.fieldTypes[p.name]!
            if let why = validName(p.name) {
                throw SchemaError.invalidName(className: m.name, property: p.name, detail: why)
            }
            if p.primaryKey && (!p.kind.canBePrimaryKey || p.list) {
                throw SchemaError.primaryKeyType(className: m.name, property: p.name, type: f.typeName)
            }
            if p.indexed && (!p.kind.canBeIndexed || p.list) {
                throw SchemaError.badOption(
                    className: m.name, property: p.name, detail: "type \(f.typeName) cannot be indexed")
            }
            if p.onDelete == .cascade && p.kind != .object {
                throw SchemaError.badOption(
                    className: m.name, property: p.name, detail: "onDelete: .cascade needs a link or a list of links")
            }
            if p.kind == .object && !p.optional && !p.list {
                throw SchemaError.badOption(
                    className: m.name, property: p.name, detail: "a to-one link must be optional (\(f.typeName)?)")
            }
            if p.kind == .object, p.list, p.optional {
                throw SchemaError.badOption(
                    className: m.name, property: p.name, detail: "a list of links cannot hold nil")
            }
            if p.kind == .object || p.kind == .linkingObjects, let t = p.target, all[t] == nil {
                throw SchemaError.linkTargetNotInTypes(className: m.name, property: p.name, target: t)
            }
            if p.kind == .linkingObjects {
                guard let origin = p.originProperty, !origin.isEmpty else {
                    throw SchemaError.badOriginProperty(
                        className: m.name, property: p.name, detail: "missing (use @Persisted(originProperty: \"...\"))"
                    )
                }
                guard let t = p.target, let om = all[t], let op = om.properties.first(where: { $0.name == origin })
                else {
                    throw SchemaError.badOriginProperty(
                        className: m.name, property: p.name, detail: "\(p.target ?? "?") has no property '\(origin)'")
                }
                guard op.kind == .object, op.target == m.name else {
                    throw SchemaError.badOriginProperty(
                        className: m.name, property: p.name, detail: "\(t).\(origin) does not link to \(m.name)")
                }
            } else if p.originProperty != nil {
                throw SchemaError.badOption(
                    className: m.name, property: p.name, detail: "originProperty is only for LinkingObjects")
            }
        }
    }

    /// A code class as it would first be stored (pids from 1, one layout).
    static func fresh(_ m: ModelInfo, cid: UInt32) -> ClassSchema {
        var c = ClassSchema(name: m.name, cid: cid, properties: m.properties, layouts: [], nextPid: 1)
        c.assignPids()
        return c
    }

    /// The stored class brought to the code's properties: same-named, same-shaped properties
    /// keep their pid (and data); new or reshaped ones get new pids; dropped ones retire.
    static func merge(stored: ClassSchema, code: ModelInfo) -> ClassSchema {
        var c = stored
        var props: [Property] = []
        for cp in code.properties {
            var p = cp
            p.pid = 0
            if let sp = stored.property(cp.name), sp.sameShape(cp) { p.pid = sp.pid }
            props.append(p)
        }
        let kept = Set(props.map(\.pid))
        c.retired += stored.properties.filter { !kept.contains($0.pid) && $0.isStored }
        c.properties = props
        c.assignPids()
        return c
    }

    /// Every difference between a stored class and the code's, one line each.
    static func changes(stored: ClassSchema, code: ModelInfo) -> [String] {
        var out: [String] = []
        let n = code.name
        for cp in code.properties {
            guard let sp = stored.property(cp.name) else {
                out.append("\(n).\(cp.name) added (\(cp.typeName))"); continue
            }
            if !sp.sameShape(cp) { out.append("\(n).\(cp.name) changed type from \(sp.typeName) to \(cp.typeName)") }
            if sp.primaryKey != cp.primaryKey {
                out.append("\(n).\(cp.name) \(cp.primaryKey ? "became" : "is no longer") the primary key")
            }
            if sp.indexed != cp.indexed { out.append("\(n).\(cp.name) index \(cp.indexed ? "added" : "removed")") }
            if sp.onDelete != cp.onDelete {
                out.append("\(n).\(cp.name) delete rule changed to \(cp.onDelete.rawValue)")
            }
        }
        for sp in stored.properties where code.properties.first(where: { $0.name == sp.name }) == nil {
            out.append("\(n).\(sp.name) removed")
        }
        return out
    }
}
