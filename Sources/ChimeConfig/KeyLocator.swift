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
struct KeyLocator {
    private(set) var keys: [String: SourcePosition] = [:]
    private(set) var values: [String: SourcePosition] = [:]
    /// Shapes that crash the TOML parser's own assertions, found before it sees them.
    private(set) var problems: [(SourcePosition, String)] = []

    init(_ text: String) {
        var arrayCounts: [String: Int] = [:]
        var table = ""  // the current table's path prefix
        var depth = 0  // brackets and braces open across lines (inside a value)
        var inMultiline: String? = nil  // the closing delimiter of a multi-line string
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = Array(rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine)
            var i = 0
            // Skip the rest of a multi-line string.
            if let closing = inMultiline {
                guard let end = Self.find(closing, in: line, from: 0) else { continue }
                inMultiline = nil
                i = end + closing.count
            } else if depth == 0 {
                while i < line.count, line[i] == " " || line[i] == "\t" { i += 1 }
                guard i < line.count, line[i] != "#" else { continue }
                if line[i] == "[" {
                    let isArray = i + 1 < line.count && line[i + 1] == "["
                    let start = i + (isArray ? 2 : 1)
                    guard let close = line[start...].firstIndex(of: "]") else {
                        problems.append((SourcePosition(line: lineNumber, column: i + 1),
                                         "a table header must end with \(isArray ? "]]" : "]") on the same line"))
                        continue
                    }
                    if let problem = Self.badKey(Array(line[start..<close])) {
                        problems.append((SourcePosition(line: lineNumber, column: i + 1), "table header: \(problem)"))
                        continue
                    }
                    let name = Self.unquoted(String(line[start..<close]).trimmingWhitespace())
                    let position = SourcePosition(line: lineNumber, column: i + 1)
                    if isArray {
                        let index = arrayCounts[name, default: 0]
                        arrayCounts[name] = index + 1
                        table = "\(name)[\(index)]"
                    } else {
                        table = name
                    }
                    if keys[table] == nil { keys[table] = position }
                    continue
                }
                // key = value
                let keyStart = i
                guard let equals = Self.keyEnd(line, from: i) else { continue }
                let key = String(line[keyStart..<equals]).trimmingWhitespace()
                    .split(separator: ".").map { Self.unquoted(String($0).trimmingWhitespace()) }.joined(separator: ".")
                let path = table.isEmpty ? key : table + "." + key
                i = equals + 1
                while i < line.count, line[i] == " " || line[i] == "\t" { i += 1 }
                if keys[path] == nil {
                    keys[path] = SourcePosition(line: lineNumber, column: keyStart + 1)
                    values[path] = SourcePosition(line: lineNumber, column: i + 1)
                }
            }
            // Follow the value to the end of the line: strings, brackets, comments.
            while i < line.count {
                let c = line[i]
                if c == "#" { break }
                if c == "\"" || c == "'" {
                    let triple = String(repeating: String(c), count: 3)
                    if Self.find(triple, in: line, from: i) == i {
                        if let end = Self.find(triple, in: line, from: i + 3) {
                            i = end + 3
                        } else {
                            inMultiline = triple
                            break
                        }
                        continue
                    }
                    i += 1
                    while i < line.count, line[i] != c {
                        if c == "\"", line[i] == "\\" { i += 1 }
                        i += 1
                    }
                    i += 1
                    continue
                }
                if c == "[" || c == "{" { depth += 1 }
                if c == "]" || c == "}" { depth = max(0, depth - 1) }
                i += 1
            }
        }
    }

    /// What is wrong with a dotted key (`a."b c".d`), or nil: each part a bare key
    /// (letters, digits, `_`, `-`) or a quoted one, parts joined by dots.
    static func badKey(_ key: [Character]) -> String? {
        var i = 0
        func skipBlanks() { while i < key.count, key[i] == " " || key[i] == "\t" { i += 1 } }
        while true {
            skipBlanks()
            guard i < key.count else { return "a name is missing" }
            let c = key[i]
            if c == "\"" || c == "'" {
                i += 1
                while i < key.count, key[i] != c { i += 1 }
                guard i < key.count else { return "a quote is not closed" }
                i += 1
            } else {
                let start = i
                while i < key.count, key[i].isASCII, key[i].isLetter || key[i].isNumber || key[i] == "_" || key[i] == "-" { i += 1 }
                guard i > start else { return "'\(c)' cannot start a name; use letters, digits, _ and -, or quotes" }
            }
            skipBlanks()
            if i == key.count { return nil }
            guard key[i] == "." else { return "'\(key[i])' cannot appear in a name; use letters, digits, _ and -, or quotes" }
            i += 1
        }
    }

    /// The index of the `=` ending a key that starts at `start`, skipping quoted parts; nil when the line is no key.
    private static func keyEnd(_ line: [Character], from start: Int) -> Int? {
        var i = start
        while i < line.count {
            let c = line[i]
            if c == "=" { return i }
            if c == "\"" || c == "'" {
                i += 1
                while i < line.count, line[i] != c { i += 1 }
            } else if !(c.isLetter || c.isNumber || c == "_" || c == "-" || c == "." || c == " " || c == "\t") {
                return nil
            }
            i += 1
        }
        return nil
    }

    private static func find(_ needle: String, in line: [Character], from start: Int) -> Int? {
        let n = Array(needle)
        guard n.count <= line.count else { return nil }
        var i = start
        while i + n.count <= line.count {
            if line[i..<i + n.count].elementsEqual(n) { return i }
            i += 1
        }
        return nil
    }

    private static func unquoted(_ text: String) -> String {
        if text.count >= 2, let first = text.first, first == text.last, first == "\"" || first == "'" {
            return String(text.dropFirst().dropLast())
        }
        return text
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
