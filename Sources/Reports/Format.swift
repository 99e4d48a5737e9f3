import Foundation

/// Number formatting shared by the terminal table, Markdown and HTML.
public enum Format {
    public static func ratio(_ r: Double) -> String { String(format: r >= 10 ? "%.0fx" : "%.2fx", r) }

    public static func percent(_ f: Double, signed: Bool = false) -> String {
        String(format: signed ? "%+.1f%%" : "%.1f%%", f * 100)
    }

    /// A value in its unit, short: "1.23M ops/s", "45.6 MiB", "0.84 ms".
    public static func value(_ v: Double, unit: String) -> String {
        switch unit {
        case "bytes": return bytes(v)
        case "ms": return v >= 100 ? String(format: "%.0f ms", v) : String(format: "%.3g ms", v)
        default: return "\(si(v)) \(unit)"
        }
    }

    public static func si(_ v: Double) -> String {
        let a = abs(v)
        if a >= 1e9 { return String(format: "%.2fG", v / 1e9) }
        if a >= 1e6 { return String(format: "%.2fM", v / 1e6) }
        if a >= 1e4 { return String(format: "%.1fk", v / 1e3) }
        if a >= 100 { return String(format: "%.0f", v) }
        return String(format: "%.3g", v)
    }

    public static func bytes(_ v: Double) -> String {
        let a = abs(v)
        let k = 1024.0
        if a >= k * k * k { return String(format: "%.2f GiB", v / (k * k * k)) }
        if a >= k * k { return String(format: "%.1f MiB", v / (k * k)) }
        if a >= k { return String(format: "%.1f KiB", v / k) }
        return String(format: "%.0f B", v)
    }

    public static func micros(_ us: Double) -> String {
        if us >= 1_000_000 { return String(format: "%.3g s", us / 1_000_000) }
        if us >= 1000 { return String(format: "%.3g ms", us / 1000) }
        return String(format: us >= 100 ? "%.0f µs" : "%.2g µs", us)
    }
}
