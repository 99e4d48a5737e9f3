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

    /// ` name="value"` for each attribute, in the order given, the value escaped.
    static func attrs(_ attributes: [(String, String)]) -> String {
        attributes.map { " \($0.0)=\"\(esc($0.1))\"" }.joined()
    }

    /// An opening tag, its attribute values escaped.
    static func start(_ name: String, _ attributes: [(String, String)]) -> String { "<\(name)\(attrs(attributes))>" }

    /// One element, its attribute values escaped: `body` (markup, its text escaped already)
    /// between the tags, or `/>` when there is no body.
    static func tag(_ name: String, _ attributes: [(String, String)] = [], _ body: String? = nil) -> String {
        guard let body else { return "<\(name)\(attrs(attributes))/>" }
        return start(name, attributes) + body + "</\(name)>"
    }

    /// A `<text>` at (x, y), `content` escaped.
    static func text(
        _ x: String, _ y: String, anchor: String? = nil, class cls: String? = nil, _ content: String
    ) -> String {
        var attributes = [("x", x), ("y", y)]
        if let anchor { attributes.append(("text-anchor", anchor)) }
        if let cls { attributes.append(("class", cls)) }
        return tag("text", attributes, esc(content))
    }

    static func line(_ x1: String, _ y1: String, _ x2: String, _ y2: String, class cls: String) -> String {
        tag("line", [("x1", x1), ("y1", y1), ("x2", x2), ("y2", y2), ("class", cls)])
    }

    /// The `<svg>` opening tag, the chart's title (for screen readers and as a tooltip) and the
    /// title drawn in its corner; the caller closes it with `</svg>`.
    static func open(_ kind: String, _ title: String, width: Int, height: Int) -> String {
        let svg = [
            ("class", "chart"), ("data-chart", kind), ("xmlns", "http://www.w3.org/2000/svg"),
            ("width", "\(width)"), ("height", "\(height)"), ("viewBox", "0 0 \(width) \(height)"), ("role", "img"),
            ("aria-label", title)
        ]
        return start("svg", svg) + tag("title", [], esc(title)) + text("8", "18", class: "ct", title)
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
            s += text("\(left - 6)", "\(y + 16)", anchor: "end", class: "cl", b.label)
            let bar = [
                ("class", "bar"), ("x", "\(left)"), ("y", "\(y + 4)"), ("width", n(w)), ("height", "16"),
                ("fill", b.color)
            ]
            s += tag("rect", bar, tag("title", [], esc("\(b.label): \(b.text)")))
            if let lo = b.low, let hi = b.high, hi > lo {
                let x1 = Double(left) + lo * scale, x2 = Double(left) + hi * scale
                let whisker = "M\(n(x1)) \(y + 12)H\(n(x2))M\(n(x1)) \(y + 7)V\(y + 17)M\(n(x2)) \(y + 7)V\(y + 17)"
                s += tag("path", [("d", whisker), ("stroke", "#111"), ("stroke-width", "1.2"), ("fill", "none")])
            }
            // The value goes right of the bar and of its whisker, so neither covers it.
            let end = max(w, (b.high ?? 0) * scale)
            s += text(n(Double(left) + end + 6), "\(y + 16)", class: "cv", b.text)
        }
        return s + "</svg>"
    }

    /// Lines over a numeric or categorical x axis; y optionally logarithmic.
    public static func lines(
        kind: String, title: String, series: [Series], xLabels: [String]? = nil, xTitle: String,
        yFormat: (Double) -> String,
        logY: Bool = false, markers: [(x: Double, label: String)] = [], hlines: [(y: Double, label: String)] = [],
        width: Int = 560, height: Int = 300
    ) -> String {
        let left = 78.0, right = 16.0, top = 34.0, bottom = 46.0
        let pts = series.flatMap(\.points)
        guard !pts.isEmpty else {
            return open(kind, title, width: width, height: 60) + text("8", "44", "no data") + "</svg>"
        }
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
        let ticks: [Double] =
            logY
            ? stride(from: y0, through: y1, by: 1).map { pow(10, $0) }
            : (0...4).map { (y0 + (y1 - y0) * Double($0) / 4) }
        for t in ticks {
            let y = py(t)
            s += line(n(left), n(y), n(left + pw), n(y), class: "grid")
            s += text(n(left - 6), n(y + 4), anchor: "end", class: "ax", yFormat(t))
        }
        if let xLabels {
            for (i, l) in xLabels.enumerated() {
                s += text(n(px(Double(i))), n(top + ph + 16), anchor: "middle", class: "ax", l)
            }
        } else {
            for i in 0...4 {
                let x = x0 + (x1 - x0) * Double(i) / 4
                s += text(n(px(x)), n(top + ph + 16), anchor: "middle", class: "ax", Format.si(x.rounded()))
            }
        }
        s += text(n(left + pw / 2), n(top + ph + 36), anchor: "middle", class: "ax", xTitle)
        s += tag("path", [("d", "M\(n(left)) \(n(top))V\(n(top + ph))H\(n(left + pw))"), ("class", "axis")])
        for m in markers {
            s += line(n(px(m.x)), n(top), n(px(m.x)), n(top + ph), class: "marker")
            s += text(n(px(m.x) + 3), n(top + 10), class: "ax", m.label)
        }
        for h in hlines {
            s += line(n(left), n(py(h.y)), n(left + pw), n(py(h.y)), class: "bound")
            s += text(n(left + pw - 4), n(py(h.y) - 4), anchor: "end", class: "ax", h.label)
        }
        for se in series where !se.points.isEmpty {
            let d = se.points.enumerated().map {
                "\($0.offset == 0 ? "M" : "L")\(n(px($0.element.x))) \(n(py($0.element.y)))"
            }.joined()
            var path = [("class", "series"), ("d", d), ("stroke", se.color), ("stroke-width", "2"), ("fill", "none")]
            if se.dashed { path.append(("stroke-dasharray", "5 4")) }
            s += tag("path", path, tag("title", [], esc(se.name)))
            if se.points.count <= 12 {
                for p in se.points {
                    s += tag("circle", [("cx", n(px(p.x))), ("cy", n(py(p.y))), ("r", "3"), ("fill", se.color)])
                }
            }
        }
        // Legend.
        var lx = left
        for se in series {
            let y = Double(height)
            s += tag("rect", [("x", n(lx)), ("y", n(y - 12)), ("width", "12"), ("height", "4"), ("fill", se.color)])
            s += text(n(lx + 16), n(y - 7), class: "ax", se.name)
            lx += 24 + Double(se.name.count) * 7
        }
        return s + "</svg>"
    }

    /// A pass/fail grid: one row per scenario, one cell per mode, green or red with its counts.
    public static func matrix(
        title: String, rows: [(name: String, cells: [(label: String, passed: Bool, detail: String)])], width: Int = 760
    ) -> String {
        let cellW = 150, cellH = 40, left = 120, top = 30
        let cols = max(1, rows.map(\.cells.count).max() ?? 1)
        let perRow = max(1, min(cols, (width - left) / cellW))
        let heights = rows.map { max(1, ($0.cells.count + perRow - 1) / perRow) * cellH }
        let height = top + heights.reduce(0, +) + 10
        var s = open("torture-matrix", title, width: width, height: height)
        var y = top
        for (ri, r) in rows.enumerated() {
            s += text("\(left - 8)", "\(y + 24)", anchor: "end", class: "cl", r.name)
            for (i, c) in r.cells.enumerated() {
                let x = left + (i % perRow) * cellW, cy = y + (i / perRow) * cellH
                let (fill, stroke) = c.passed ? ("#dcfce7", "#16a34a") : ("#fee2e2", "#dc2626")
                let cell = [
                    ("class", "cell \(c.passed ? "pass" : "fail")"), ("x", "\(x)"), ("y", "\(cy + 2)"),
                    ("width", "\(cellW - 4)"), ("height", "\(cellH - 4)"), ("rx", "4"), ("fill", fill),
                    ("stroke", stroke)
                ]
                s += tag("rect", cell, tag("title", [], esc("\(r.name) / \(c.label): \(c.detail)")))
                let label = c.label.count > 20 ? String(c.label.prefix(19)) + "…" : c.label
                s += text("\(x + 6)", "\(cy + 17)", class: "cl", label)
                s += text("\(x + 6)", "\(cy + 31)", class: "ax", "\(c.passed ? "pass" : "FAIL") · \(c.detail)")
            }
            y += heights[ri]
        }
        return s + "</svg>"
    }

    /// Changes between two results: a bar per row around zero, its confidence interval in grey.
    public static func changes(
        title: String, rows: [(label: String, change: Double, low: Double, high: Double, bad: Bool)], width: Int = 640
    ) -> String {
        let rowH = 22, top = 30, left = 250, right = 70
        let height = top + rows.count * rowH + 24
        let span = min(1, max(0.05, rows.map { max(abs($0.change), abs($0.low), abs($0.high)) }.max() ?? 0.05)) * 1.1
        func clamp(_ v: Double) -> Double { Swift.min(span, Swift.max(-span, v)) }
        let pw = Double(width - left - right)
        func px(_ v: Double) -> Double { Double(left) + (v + span) / (2 * span) * pw }
        var s = open("comparison", title, width: width, height: height)
        s += line(n(px(0)), "\(top)", n(px(0)), "\(top + rows.count * rowH)", class: "axis")
        for (i, r) in rows.enumerated() {
            let y = top + i * rowH
            s += text("\(left - 6)", "\(y + 15)", anchor: "end", class: "cl", r.label)
            let low = px(clamp(r.low)), high = px(clamp(r.high))
            let interval = [
                ("x", n(low)), ("y", "\(y + 3)"), ("width", n(max(1, high - low))), ("height", "16"),
                ("fill", "#e5e7eb")
            ]
            s += tag("rect", interval)
            let x0 = min(px(0), px(clamp(r.change))), w = max(1, abs(px(clamp(r.change)) - px(0)))
            let straddles = r.low <= 0 && r.high >= 0
            let color = r.bad ? "#dc2626" : straddles ? "#9ca3af" : r.change < 0 ? "#f59e0b" : "#16a34a"
            let bar = [
                ("class", "bar"), ("x", n(x0)), ("y", "\(y + 6)"), ("width", n(w)), ("height", "10"), ("fill", color)
            ]
            s += tag("rect", bar)
            s += text(n(px(span) + 4), "\(y + 15)", class: "cv", Format.percent(r.change, signed: true))
        }
        let worst = Format.percent(-span, signed: true), best = Format.percent(span, signed: true)
        s += text(n(px(-span)), "\(height - 6)", class: "ax", "\(worst) worse")
        s += text(n(px(span)), "\(height - 6)", anchor: "end", class: "ax", "better \(best)")
        return s + "</svg>"
    }
}
