import Foundation
import SeededRandomness

/// One way of damaging a database file's bytes, as storage and people damage them: bits
/// flipped by a failing disk or RAM, a run of zeroes from a lost write, a file cut short, a
/// page written over with another page of the same file (a misdirected write), and damage
/// aimed at the header page, where the select byte and the two top slots live.
public enum DamageKind: String, CaseIterable, Codable, Sendable {
    case bitFlip = "bit-flip"
    case bitFlips = "bit-flips"
    case zeroRun = "zero-run"
    case truncate
    case splicePage = "splice-page"
    case header
}

/// The damage done to one file of a fuzz run, drawn from (seed, index) alone, so one file
/// of a run of 20,000 is made again from those two numbers and the run's base file (`--only`
/// reuses it: an encrypted base file built again gets a new salt).
public struct FileDamage: Codable, Equatable, Sendable {
    public let index: Int
    public let kind: DamageKind
    /// What was done, byte offsets included, for the report of a failing file.
    public let description: String

    static let pageSize = 4096

    /// Damages `bytes` (a copy of the base file) in place.
    public static func apply(seed: UInt64, index: Int, to bytes: inout [UInt8]) -> FileDamage {
        var rng = SeededRandom.derive(seed ^ 0xDA_3A6E, UInt64(index))
        let kind = DamageKind.allCases[index % DamageKind.allCases.count]
        let n = bytes.count
        guard n > 0 else { return FileDamage(index: index, kind: kind, description: "empty base file") }
        func flip(_ at: Int, _ bit: Int) { bytes[at] ^= UInt8(1 << bit) }
        var what: String
        switch kind {
        case .bitFlip:
            let at = Int.random(in: 0..<n, using: &rng), bit = Int.random(in: 0..<8, using: &rng)
            flip(at, bit)
            what = "bit \(bit) of byte \(at) flipped"
        case .bitFlips:
            let count = Int.random(in: 2...16, using: &rng)
            // Half the time clustered in one page, as a failing sector does; else anywhere.
            let clustered = Bool.random(using: &rng)
            let base = Int.random(in: 0..<n, using: &rng) / pageSize * pageSize
            var offsets: [Int] = []
            for _ in 0..<count {
                let at =
                    clustered
                    ? min(n - 1, base + Int.random(in: 0..<pageSize, using: &rng)) : Int.random(in: 0..<n, using: &rng)
                flip(at, Int.random(in: 0..<8, using: &rng))
                offsets.append(at)
            }
            what = "\(count) bits flipped\(clustered ? " in page \(base / pageSize)" : ""): bytes \(offsets.sorted())"
        case .zeroRun:
            let length = [1, 8, 64, 512, 4096].randomElement(using: &rng)! * Int.random(in: 1...2, using: &rng)
            let at = Int.random(in: 0..<n, using: &rng)
            let end = min(n, at + length)
            for i in at..<end { bytes[i] = 0 }
            what = "bytes \(at)..<\(end) zeroed"
        case .truncate:
            // A page boundary (a file that lost its tail) or anywhere (a short last write).
            let keep =
                Bool.random(using: &rng)
                ? Int.random(in: 0..<max(1, n / pageSize), using: &rng) * pageSize : Int.random(in: 0..<n, using: &rng)
            bytes.removeSubrange(keep...)
            what = "cut to \(keep) of \(n) bytes"
        case .splicePage:
            let pages = n / pageSize
            guard pages >= 2 else { return FileDamage(index: index, kind: kind, description: "too short to splice") }
            let from = Int.random(in: 0..<pages, using: &rng)
            var to = Int.random(in: 0..<pages, using: &rng)
            if to == from { to = (to + 1) % pages }
            let page = Array(bytes[(from * pageSize)..<((from + 1) * pageSize)])
            bytes.replaceSubrange((to * pageSize)..<((to + 1) * pageSize), with: page)
            what = "page \(from) copied over page \(to)"
        case .header:
            // The header's fields: magic, versions and select byte (sector 0), and the two top
            // slots (sectors 1 and 2, see FORMAT.md): flip a bit, or zero or set a byte.
            let fields = [0..<72, 512..<544, 1024..<1056]
            let at = min(n - 1, Int.random(in: fields.randomElement(using: &rng)!, using: &rng))
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                let bit = Int.random(in: 0..<8, using: &rng)
                flip(at, bit)
                what = "header: bit \(bit) of byte \(at) flipped"
            case 1:
                bytes[at] = 0
                what = "header: byte \(at) zeroed"
            default:
                let v = UInt8.random(in: 0...255, using: &rng)
                bytes[at] = v
                what = "header: byte \(at) set to \(v)"
            }
        }
        return FileDamage(index: index, kind: kind, description: what)
    }
}
