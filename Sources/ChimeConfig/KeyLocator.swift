// Where each key of a TOML document is, for diagnostics a person can act on.
// TOMLKit parses the document (and reports syntax errors with positions) but
// does not say where a value came from; this scanner, run on a document TOMLKit
// accepted, finds each `key = value` line under its table header.

/// A 1-based line and column (columns count characters).
public struct SourcePosition: Hashable, Sendable, Comparable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool { (a.line, a.column) < (b.line, b.column) }
}

/// The positions of keys and values, by path: `defaults.sound`, `alarm[2].when`, `timer[0]` (the header).
/// It scans UTF-8 bytes; columns still count characters. Loading a valid file needs only the
/// table headers (an alarm's line), so the key positions, which only diagnostics need, are
/// found on the first question about them: a 10,000-alarm file does not build 60,000 paths.
final class KeyLocator {
    private let text: [UInt8]
    /// Shapes that crash the TOML parser's own assertions, found before it sees them.
    private(set) var problems: [(SourcePosition, String)] = []
    /// Where each `[[name]]` header is, in order.
    private var arrayHeaders: [String: [SourcePosition]] = [:]
    private var located: (keys: [String: SourcePosition], values: [String: SourcePosition])?

    convenience init(_ text: String) { self.init(bytes: Array(text.utf8)) }

    init(bytes: [UInt8]) {
        text = bytes
        scan(recordKeys: false)
    }

    /// Where the key at `path` is (or the header, for a table path such as `alarm[2]`).
    func key(_ path: String) -> SourcePosition? { locate().keys[path] }
    /// Where the value of the key at `path` starts.
    func value(_ path: String) -> SourcePosition? { locate().values[path] }
    /// Where the `index`th `[[name]]` header is.
    func header(_ name: String, _ index: Int) -> SourcePosition? {
        guard let headers = arrayHeaders[name], index < headers.count else { return nil }
        return headers[index]
    }

    private func locate() -> (keys: [String: SourcePosition], values: [String: SourcePosition]) {
        if let located { return located }
        let found = scan(recordKeys: true)
        located = found
        return found
    }

    @discardableResult
    private func scan(recordKeys: Bool) -> (keys: [String: SourcePosition], values: [String: SourcePosition]) {
        var keys: [String: SourcePosition] = [:]
        var values: [String: SourcePosition] = [:]
        var problems: [(SourcePosition, String)] = []
        var arrayHeaders: [String: [SourcePosition]] = [:]
        var table = ""  // the current table's path prefix
        var depth = 0  // brackets and braces open across lines (inside a value)
        var inMultiline: UInt8? = nil  // the quote of the multi-line string we are in
        var lineNumber = 0
        var lineStart = 0
        text.withUnsafeBufferPointer { all in
        while lineStart <= all.count {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < all.count, all[lineEnd] != Self.newline { lineEnd += 1 }
            let next = lineEnd + 1
            if lineEnd > lineStart, all[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            defer { lineStart = next }
            let line = UnsafeBufferPointer(rebasing: all[lineStart..<lineEnd])
            func position(_ index: Int) -> SourcePosition {
                SourcePosition(line: lineNumber, column: Self.column(line, index))
            }
            var i = 0
            // Skip the rest of a multi-line string.
            if let quote = inMultiline {
                guard let end = Self.findTriple(quote, in: line, from: 0) else { continue }
                inMultiline = nil
                i = end + 3
            } else if depth == 0 {
                while i < line.count, line[i] == Self.space || line[i] == Self.tab { i += 1 }
                guard i < line.count, line[i] != Self.hash else { continue }
                if line[i] == Self.openBracket {
                    let isArray = i + 1 < line.count && line[i + 1] == Self.openBracket
                    let start = i + (isArray ? 2 : 1)
                    var close = start
                    while close < line.count, line[close] != Self.closeBracket { close += 1 }
                    guard close < line.count else {
                        problems.append((position(i), "a table header must end with \(isArray ? "]]" : "]") on the same line"))
                        continue
                    }
                    let inside = UnsafeBufferPointer(rebasing: line[start..<close])
                    if let problem = Self.badKey(inside) {
                        problems.append((position(i), "table header: \(problem)"))
                        continue
                    }
                    let name = Self.unquoted(Self.trimmed(inside))
                    if isArray {
                        let index = arrayHeaders[name]?.count ?? 0
                        arrayHeaders[name, default: []].append(position(i))
                        if recordKeys { table = name + "[" + String(index) + "]" }
                    } else {
                        table = name
                    }
                    if recordKeys, keys[table] == nil { keys[table] = position(i) }
                    continue
                }
                // key = value
                let keyStart = i
                guard let equals = Self.keyEnd(line, from: i) else { continue }
                i = equals + 1
                while i < line.count, line[i] == Self.space || line[i] == Self.tab { i += 1 }
                if recordKeys {
                    let key = Self.dottedKey(UnsafeBufferPointer(rebasing: line[keyStart..<equals]))
                    let path = table.isEmpty ? key : table + "." + key
                    if keys[path] == nil {
                        keys[path] = position(keyStart)
                        values[path] = position(i)
                    }
                }
            }
            // Follow the value to the end of the line: strings, brackets, comments.
            while i < line.count {
                let c = line[i]
                if c == Self.hash { break }
                if c == Self.doubleQuote || c == Self.singleQuote {
                    if Self.isTriple(c, in: line, at: i) {
                        if let end = Self.findTriple(c, in: line, from: i + 3) {
                            i = end + 3
                        } else {
                            inMultiline = c
                            break
                        }
                        continue
                    }
                    i += 1
                    while i < line.count, line[i] != c {
                        if c == Self.doubleQuote, line[i] == Self.backslash { i += 1 }
                        i += 1
                    }
                    i += 1
                    continue
                }
                if c == Self.openBracket || c == Self.openBrace { depth += 1 }
                if c == Self.closeBracket || c == Self.closeBrace { depth = max(0, depth - 1) }
                i += 1
            }
        }
        }
        if !recordKeys {
            self.problems = problems
            self.arrayHeaders = arrayHeaders
        }
        return (keys, values)
    }

    static let newline = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), hash = UInt8(ascii: "#")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]"), openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}"), doubleQuote = UInt8(ascii: "\""), singleQuote = UInt8(ascii: "'")
    static let backslash = UInt8(ascii: "\\"), equals = UInt8(ascii: "="), dot = UInt8(ascii: ".")

    /// The 1-based column of byte `index`: characters before it, plus one.
    static func column(_ line: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        let prefix = UnsafeBufferPointer(rebasing: line[..<min(index, line.count)])
        if !prefix.contains(where: { $0 >= 0x80 }) { return prefix.count + 1 }
        return String(decoding: prefix, as: UTF8.self).count + 1
    }

    static func isBare(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z") || c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")
            || c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    /// What is wrong with a dotted key (`a."b c".d`), or nil: each part a bare key
    /// (letters, digits, `_`, `-`) or a quoted one, parts joined by dots.
    static func badKey(_ key: UnsafeBufferPointer<UInt8>) -> String? {
        var i = 0
        func skipBlanks() { while i < key.count, key[i] == space || key[i] == tab { i += 1 } }
        func character(at index: Int) -> Character {
            String(decoding: UnsafeBufferPointer(rebasing: key[index...]), as: UTF8.self).first ?? " "
        }
        while true {
            skipBlanks()
            guard i < key.count else { return "a name is missing" }
            let c = key[i]
            if c == doubleQuote || c == singleQuote {
                i += 1
                while i < key.count, key[i] != c { i += 1 }
                guard i < key.count else { return "a quote is not closed" }
                i += 1
            } else {
                let start = i
                while i < key.count, isBare(key[i]) { i += 1 }
                guard i > start else { return "'\(character(at: i))' cannot start a name; use letters, digits, _ and -, or quotes" }
            }
            skipBlanks()
            if i == key.count { return nil }
            guard key[i] == dot else { return "'\(character(at: i))' cannot appear in a name; use letters, digits, _ and -, or quotes" }
            i += 1
        }
    }

    /// The index of the `=` ending a key that starts at `start`, skipping quoted parts; nil when the line is no key.
    private static func keyEnd(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < line.count {
            let c = line[i]
            if c == equals { return i }
            if c == doubleQuote || c == singleQuote {
                i += 1
                while i < line.count, line[i] != c { i += 1 }
            } else if !(isBare(c) || c >= 0x80 || c == dot || c == space || c == tab) {
                return nil
            }
            i += 1
        }
        return nil
    }

    /// `a . "b.c" . d` as the path `a.b.c.d`: parts trimmed and unquoted.
    private static func dottedKey(_ key: UnsafeBufferPointer<UInt8>) -> String {
        var parts: [String] = []
        var i = 0
        var partStart = 0
        while i <= key.count {
            if i == key.count || key[i] == dot {
                parts.append(unquoted(trimmed(UnsafeBufferPointer(rebasing: key[partStart..<i]))))
                partStart = i + 1
            } else if key[i] == doubleQuote || key[i] == singleQuote {
                let quote = key[i]
                i += 1
                while i < key.count, key[i] != quote { i += 1 }
            }
            i += 1
        }
        return parts.count == 1 ? parts[0] : parts.joined(separator: ".")
    }

    private static func isTriple(_ quote: UInt8, in line: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        i + 2 < line.count && line[i] == quote && line[i + 1] == quote && line[i + 2] == quote
    }

    private static func findTriple(_ quote: UInt8, in line: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + 2 < line.count {
            if isTriple(quote, in: line, at: i) { return i }
            i += 1
        }
        return nil
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var start = 0, end = bytes.count
        while start < end, bytes[start] == space || bytes[start] == tab { start += 1 }
        while end > start, bytes[end - 1] == space || bytes[end - 1] == tab { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    private static func unquoted(_ text: String) -> String {
        let utf8 = text.utf8
        if utf8.count >= 2, let first = utf8.first, first == utf8.last, first == doubleQuote || first == singleQuote {
            return String(text.dropFirst().dropLast())
        }
        return text
    }
}
