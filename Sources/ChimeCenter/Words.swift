// Small text helpers shared by every door: a likely-typo guess and identifiers made from labels.

/// The closest of `candidates` to `word`, when close enough to be a likely typo.
public func closestWord(to word: String, in candidates: [String]) -> String? {
    let best = candidates.map { ($0, editDistance(word.lowercased(), $0)) }.min { $0.1 < $1.1 }
    guard let (candidate, distance) = best, distance <= max(1, min(3, word.count / 3)) else { return nil }
    return candidate
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...max(1, b.count) where j <= b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// An identifier from a label: lowercase letters, digits and dashes ("Homeroom ends!" → "homeroom-ends").
public func slug(_ label: String) -> String {
    if label.utf8.allSatisfy({ $0 < 0x80 }) {
        // The common case, without Unicode's character classes.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(label.utf8.count)
        for b in label.utf8 {
            let lower = b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b + 32 : b
            if lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") || lower >= UInt8(ascii: "0") && lower <= UInt8(ascii: "9") {
                bytes.append(lower)
            } else if !bytes.isEmpty, bytes.last != UInt8(ascii: "-") {
                bytes.append(UInt8(ascii: "-"))
            }
        }
        while bytes.last == UInt8(ascii: "-") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
    var out = ""
    for c in label.lowercased() {
        if c.isLetter || c.isNumber { out.append(c) } else if !out.isEmpty, out.last != "-" { out.append("-") }
    }
    while out.last == "-" { out.removeLast() }
    return out
}

/// Text as a one-line message may show it: control characters escaped (`\u{a}`), at most
/// 60 characters (then `…`). Identifiers and keys from other processes pass through here
/// before they reach an error message.
public func escapedForMessage(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars.prefix(60) {
        let v = scalar.value
        out += v < 0x20 || (0x7F...0x9F).contains(v) ? "\\u{\(String(v, radix: 16))}" : String(scalar)
    }
    return text.unicodeScalars.count > 60 ? out + "…" : out
}

/// `escapedForMessage(text)` in double quotes.
public func quotedForMessage(_ text: String) -> String { "\"" + escapedForMessage(text) + "\"" }
