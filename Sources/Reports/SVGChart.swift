import Foundation

/// Inline SVG charts with no script and no external file: the report stays one page that
/// opens anywhere, offline, and in a CI artifact viewer.
public enum SVGChart {
    public struct Bar {
        public var label: String
        public var color: String
        public var value: Double
        /// Whiskers (min and max over repetitions), when known.
        public var low: Double?
        public var high: Double?
        public var text: String
    }

    public struct Series {
        public var name: String
        public var color: String
        public var points: [(x: Double, y: Double)]
        public var dashed = false
    }

    public static func color(_ s: SystemName) -> String {
        switch s {
        case .fief: return "#2563eb"
        case .sqlite: return "#ea580c"
        case .lmdb: return "#16a34a"
        }
    }

    static func esc(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func n(_ v: Double) -> String { String(format: "%.1f", v) }

    static func open(_ kind: String, _ title: String, width: Int, height: Int) -> String {
        "<svg class=\"chart\" data-chart=\"\(kind)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(esc(title))\"><title>\(esc(title))</title>"
            + "<text x=\"8\" y=\"18\" class=\"ct\">\(esc(title))</text>"
    }

    /// Horizontal bars, one per system, with min–max whiskers.
    public static func bars(kind: String, title: String, bars: [Bar], width: Int = 520) -> String {
        let rowH = 26, top = 30, left = 70, right = 190
        let height = top + bars.count * rowH + 10
        let maxV = max(bars.map { $0.high ?? $0.value }.max() ?? 1, 1e-12)
        let scale = Double(width - left - right) / maxV
        var s = open(kind, title, width: width, height: height)
        for (i, b) in bars.enumerated() {
            let y = top + i * rowH
            let w = max(1, b.value * scale)
            s += "<text x=\"\(left - 6)\" y=\"\(y + 16)\" text-anchor=\"end\" class=\"cl\">\(esc(b.label))</text>"
            s += "<rect class=\"bar\" x=\"\(left)\" y=\"\(y + 4)\" width=\"\(n(w))\" height=\"16\" fill=\"\(b.color)\"><title>\(esc(b.label)): \(esc(b.text))</title></rect>"
            if let lo = b.low, let hi = b.high, hi > lo {
                let x1 = Double(left) + lo * scale, x2 = Double(left) + hi * scale
                s += "<path d=\"M\(n(x1)) \(y + 12)H\(n(x2))M\(n(x1)) \(y + 7)V\(y + 17)M\(n(x2)) \(y + 7)V\(y + 17)\" stroke=\"#111\" stroke-width=\"1.2\" fill=\"none\"/>"
            }
            // The value goes right of the bar and of its whisker, so neither covers it.
            let end = max(w, (b.high ?? 0) * scale)
            s += "<text x=\"\(n(Double(left) + end + 6))\" y=\"\(y + 16)\" class=\"cv\">\(esc(b.text))</text>"
        }
        return s + "</svg>"
    }

    /// Lines over a numeric or categorical x axis; y optionally logarithmic.
    public static func lines(
        kind: String, title: String, series: [Series], xLabels: [String]? = nil, xTitle: String, yFormat: (Double) -> String,
        logY: Bool = false, markers: [(x: Double, label: String)] = [], hlines: [(y: Double, label: String)] = [], width: Int = 560, height: Int = 300
    ) -> String {
        let left = 78.0, right = 16.0, top = 34.0, bottom = 46.0
        let pts = series.flatMap(\.points)
        guard !pts.isEmpty else { return open(kind, title, width: width, height: 60) + "<text x=\"8\" y=\"44\">no data</text></svg>" }
        let xs = pts.map(\.x) + markers.map(\.x)
        let ys = pts.map(\.y) + hlines.map(\.y)
        let (x0, x1) = (xs.min()!, max(xs.max()!, xs.min()! + 1))
        func ty(_ v: Double) -> Double { logY ? log10(max(v, 1e-9)) : v }
        var (y0, y1) = (ty(ys.min()!), ty(ys.max()!))
        if !logY { y0 = min(0, y0) }
        if y1 - y0 < 1e-9 { y1 = y0 + 1 }
        if logY { y0 = floor(y0); y1 = ceil(y1) } else { y1 += (y1 - y0) * 0.05 }
        let pw = Double(width) - left - right, ph = Double(height) - top - bottom
        func px(_ x: Double) -> Double { left + (x - x0) / (x1 - x0) * pw }
        func py(_ y: Double) -> Double { top + ph - (ty(y) - y0) / (y1 - y0) * ph }
        var s = open(kind, title, width: width, height: height)
        // Axes and gridlines.
        let ticks: [Double] = logY ? stride(from: y0, through: y1, by: 1).map { pow(10, $0) } : (0...4).map { (y0 + (y1 - y0) * Double($0) / 4) }
        for t in ticks {
            let y = py(t)
            s += "<line x1=\"\(n(left))\" y1=\"\(n(y))\" x2=\"\(n(left + pw))\" y2=\"\(n(y))\" class=\"grid\"/>"
            s += "<text x=\"\(n(left - 6))\" y=\"\(n(y + 4))\" text-anchor=\"end\" class=\"ax\">\(esc(yFormat(t)))</text>"
        }
        if let xLabels {
            for (i, l) in xLabels.enumerated() {
                s += "<text x=\"\(n(px(Double(i))))\" y=\"\(n(top + ph + 16))\" text-anchor=\"middle\" class=\"ax\">\(esc(l))</text>"
            }
        } else {
            for i in 0...4 {
                let x = x0 + (x1 - x0) * Double(i) / 4
                s += "<text x=\"\(n(px(x)))\" y=\"\(n(top + ph + 16))\" text-anchor=\"middle\" class=\"ax\">\(esc(Format.si(x.rounded())))</text>"
            }
        }
        s += "<text x=\"\(n(left + pw / 2))\" y=\"\(n(top + ph + 36))\" text-anchor=\"middle\" class=\"ax\">\(esc(xTitle))</text>"
        s += "<path d=\"M\(n(left)) \(n(top))V\(n(top + ph))H\(n(left + pw))\" class=\"axis\"/>"
        for m in markers {
            s += "<line x1=\"\(n(px(m.x)))\" y1=\"\(n(top))\" x2=\"\(n(px(m.x)))\" y2=\"\(n(top + ph))\" class=\"marker\"/>"
            s += "<text x=\"\(n(px(m.x) + 3))\" y=\"\(n(top + 10))\" class=\"ax\">\(esc(m.label))</text>"
        }
        for h in hlines {
            s += "<line x1=\"\(n(left))\" y1=\"\(n(py(h.y)))\" x2=\"\(n(left + pw))\" y2=\"\(n(py(h.y)))\" class=\"bound\"/>"
            s += "<text x=\"\(n(left + pw - 4))\" y=\"\(n(py(h.y) - 4))\" text-anchor=\"end\" class=\"ax\">\(esc(h.label))</text>"
        }
        for se in series where !se.points.isEmpty {
            let d = se.points.enumerated().map { "\($0.offset == 0 ? "M" : "L")\(n(px($0.element.x))) \(n(py($0.element.y)))" }.joined()
            s += "<path class=\"series\" d=\"\(d)\" stroke=\"\(se.color)\" stroke-width=\"2\" fill=\"none\"\(se.dashed ? " stroke-dasharray=\"5 4\"" : "")><title>\(esc(se.name))</title></path>"
            if se.points.count <= 12 {
                for p in se.points { s += "<circle cx=\"\(n(px(p.x)))\" cy=\"\(n(py(p.y)))\" r=\"3\" fill=\"\(se.color)\"/>" }
            }
        }
        // Legend.
        var lx = left
        for se in series {
            s += "<rect x=\"\(n(lx))\" y=\"\(n(Double(height) - 12))\" width=\"12\" height=\"4\" fill=\"\(se.color)\"/><text x=\"\(n(lx + 16))\" y=\"\(n(Double(height) - 7))\" class=\"ax\">\(esc(se.name))</text>"
            lx += 24 + Double(se.name.count) * 7
        }
        return s + "</svg>"
    }

    /// A pass/fail grid: one row per scenario, one cell per mode, green or red with its counts.
    public static func matrix(title: String, rows: [(name: String, cells: [(label: String, passed: Bool, detail: String)])], width: Int = 760) -> String {
        let cellW = 150, cellH = 40, left = 120, top = 30
        let cols = max(1, rows.map(\.cells.count).max() ?? 1)
        let perRow = max(1, min(cols, (width - left) / cellW))
        let heights = rows.map { max(1, ($0.cells.count + perRow - 1) / perRow) * cellH }
        let height = top + heights.reduce(0, +) + 10
        var s = open("torture-matrix", title, width: width, height: height)
        var y = top
        for (ri, r) in rows.enumerated() {
            s += "<text x=\"\(left - 8)\" y=\"\(y + 24)\" text-anchor=\"end\" class=\"cl\">\(esc(r.name))</text>"
            for (i, c) in r.cells.enumerated() {
                let x = left + (i % perRow) * cellW, cy = y + (i / perRow) * cellH
                s += "<rect class=\"cell \(c.passed ? "pass" : "fail")\" x=\"\(x)\" y=\"\(cy + 2)\" width=\"\(cellW - 4)\" height=\"\(cellH - 4)\" rx=\"4\" fill=\"\(c.passed ? "#dcfce7" : "#fee2e2")\" stroke=\"\(c.passed ? "#16a34a" : "#dc2626")\"><title>\(esc(r.name)) / \(esc(c.label)): \(esc(c.detail))</title></rect>"
                let label = c.label.count > 20 ? String(c.label.prefix(19)) + "…" : c.label
                s += "<text x=\"\(x + 6)\" y=\"\(cy + 17)\" class=\"cl\">\(esc(label))</text>"
                s += "<text x=\"\(x + 6)\" y=\"\(cy + 31)\" class=\"ax\">\(c.passed ? "pass" : "FAIL") · \(esc(c.detail))</text>"
            }
            y += heights[ri]
        }
        return s + "</svg>"
    }

    /// Changes between two results: a bar per row around zero, its confidence interval in grey.
    public static func changes(title: String, rows: [(label: String, change: Double, low: Double, high: Double, bad: Bool)], width: Int = 640) -> String {
        let rowH = 22, top = 30, left = 250, right = 70
        let height = top + rows.count * rowH + 24
        let span = min(1, max(0.05, rows.map { max(abs($0.change), abs($0.low), abs($0.high)) }.max() ?? 0.05)) * 1.1
        func clamp(_ v: Double) -> Double { Swift.min(span, Swift.max(-span, v)) }
        let pw = Double(width - left - right)
        func px(_ v: Double) -> Double { Double(left) + (v + span) / (2 * span) * pw }
        var s = open("comparison", title, width: width, height: height)
        s += "<line x1=\"\(n(px(0)))\" y1=\"\(top)\" x2=\"\(n(px(0)))\" y2=\"\(top + rows.count * rowH)\" class=\"axis\"/>"
        for (i, r) in rows.enumerated() {
            let y = top + i * rowH
            s += "<text x=\"\(left - 6)\" y=\"\(y + 15)\" text-anchor=\"end\" class=\"cl\">\(esc(r.label))</text>"
            s += "<rect x=\"\(n(px(clamp(r.low))))\" y=\"\(y + 3)\" width=\"\(n(max(1, px(clamp(r.high)) - px(clamp(r.low)))))\" height=\"16\" fill=\"#e5e7eb\"/>"
            let x0 = min(px(0), px(clamp(r.change))), w = max(1, abs(px(clamp(r.change)) - px(0)))
            let straddles = r.low <= 0 && r.high >= 0
            let color = r.bad ? "#dc2626" : straddles ? "#9ca3af" : r.change < 0 ? "#f59e0b" : "#16a34a"
            s += "<rect class=\"bar\" x=\"\(n(x0))\" y=\"\(y + 6)\" width=\"\(n(w))\" height=\"10\" fill=\"\(color)\"/>"
            s += "<text x=\"\(n(px(span) + 4))\" y=\"\(y + 15)\" class=\"cv\">\(esc(Format.percent(r.change, signed: true)))</text>"
        }
        s += "<text x=\"\(n(px(-span)))\" y=\"\(height - 6)\" class=\"ax\">\(esc(Format.percent(-span, signed: true))) worse</text>"
        s += "<text x=\"\(n(px(span)))\" y=\"\(height - 6)\" text-anchor=\"end\" class=\"ax\">better \(esc(Format.percent(span, signed: true)))</text>"
        return s + "</svg>"
    }
}
