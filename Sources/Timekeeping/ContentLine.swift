// iCalendar content lines (RFC 5545 §3.1): the one reader under everything of iCalendar chime
// reads and writes. A recurrence rule's text (`DTSTART;TZID=Europe/Berlin:20261127T163500
// RRULE:FREQ=MONTHLY;BYDAY=-1FR`), an imported file, a followed calendar's events and what the
// export writes back all go through `ContentLine.read`, on bytes: a line is ASCII up to its value,
// so its name and parameters are read without building a `Character`, and a fold (§3.1), which may
// fall inside a character, is joined before anything is decoded.
//
//     contentline = name *(";" param) ":" value CRLF
//     param       = param-name "=" param-value *("," param-value)
//     param-value = paramtext / DQUOTE *QSAFE-CHAR DQUOTE
#if canImport(Glibc)
import Glibc
#endif

/// One content line: `NAME;PARAM=VALUE,VALUE;PARAM="QUOTED":VALUE`.
public struct ContentLine: Hashable, Sendable {
    /// A parameter: its name upper-cased, its values as written (quotes taken off).
    public struct Parameter: Hashable, Sendable {
        public var name: String
        /// The first value, and any after it (most parameters have one: kept without an array).
        public var value: String
        public var more: [String]
        public var values: [String] { [value] + more }

        public init(name: String, values: [String]) {
            self.name = name
            value = values.first ?? ""
            more = Array(values.dropFirst())
        }

        init(name: String, value: String, more: [String]) {
            self.name = name
            self.value = value
            self.more = more
        }
    }

    /// A line's parameters in their order; `parameters["TZID"]` is a parameter's first value.
    public struct Parameters: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
        /// The first parameter, and those after it (most lines have none or one: kept without an array).
        private var first: Parameter?
        private var rest: [Parameter] = []

        public var list: [Parameter] {
            get { first.map { [$0] + rest } ?? [] }
            set {
                first = newValue.first
                rest = Array(newValue.dropFirst())
            }
        }

        public init(_ list: [Parameter] = []) { self.list = list }
        public init(dictionaryLiteral elements: (String, String)...) {
            list = elements.map { Parameter(name: $0.0.uppercased(), values: [$0.1]) }
        }

        mutating func append(_ parameter: Parameter) {
            if first == nil { first = parameter } else { rest.append(parameter) }
        }

        /// The first value of the parameter `name` (upper-case); setting replaces all its values.
        public subscript(name: String) -> String? {
            get {
                if let first, first.name == name { return first.value }
                return rest.first { $0.name == name }?.value
            }
            set {
                list.removeAll { $0.name == name }
                if let newValue { list.append(Parameter(name: name, values: [newValue])) }
            }
        }

        /// Every value of the parameter `name` (several: `MEMBER="a","b"`, or the parameter given twice).
        public func values(_ name: String) -> [String] { list.filter { $0.name == name }.flatMap(\.values) }

        public var isEmpty: Bool { first == nil }
        public func makeIterator() -> IndexingIterator<[Parameter]> { list.makeIterator() }
    }

    /// Upper-cased (`DTSTART`).
    public var name: String
    public var parameters: Parameters
    /// The value as written (escapes kept: `text` reads a TEXT value).
    public var value: String
    /// The number of the (physical) line it starts on, from 1; 0 where the text has no lines.
    public var line: Int
    /// Where the line starts in the text it was read from, in bytes (what errors point at).
    public var offset: Int
    /// Where its value starts, in bytes from the start of that text.
    public var valueOffset: Int

    public init(name: String, parameters: Parameters = [:], value: String, line: Int = 0, offset: Int = 0, valueOffset: Int = 0) {
        self.name = name
        self.parameters = parameters
        self.value = value
        self.line = line
        self.offset = offset
        self.valueOffset = valueOffset
    }

    /// Why a line is not a content line, and where (`offset`, `length` in bytes of the text read).
    public struct ReadError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var line: Int
        public var offset: Int
        public var length: Int
        public var description: String { message }
    }

    // MARK: - Reading

    /// The longest line read (unfolded), in bytes.
    public static let maximumBytes = 1 << 20

    @inline(__always) static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
    }

    /// A name or parameter name, upper-cased (ASCII).
    @inline(__always) static func upperName(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var lowerCase = false
        for i in range where bytes[i] >= 0x61 { lowerCase = true }
        if !lowerCase { return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        return String(unsafeUninitializedCapacity: range.count) { buffer in
            for (k, i) in range.enumerated() { buffer[k] = bytes[i] >= 0x61 && bytes[i] <= 0x7A ? bytes[i] - 0x20 : bytes[i] }
            return range.count
        }
    }

    /// Reads one unfolded line: `bytes[range]`, valid UTF-8 (a caller that has bytes of unknown
    /// origin checks that first), starting on physical line `line` of the text.
    public static func read(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, line: Int = 0) throws(ReadError) -> ContentLine {
        func fail(_ message: String, _ from: Int, _ to: Int) -> ReadError {
            ReadError(message: message, line: line, offset: from, length: max(0, to - from))
        }
        guard range.count <= maximumBytes else { throw fail("the line is longer than \(maximumBytes) bytes", range.lowerBound, range.upperBound) }
        var i = range.lowerBound
        let end = range.upperBound
        while i < end, isNameByte(bytes[i]) { i += 1 }
        guard i > range.lowerBound else {
            let shown = String(decoding: UnsafeBufferPointer(rebasing: bytes[range.lowerBound..<min(end, range.lowerBound + 40)]), as: UTF8.self)
            throw fail("not a content line (NAME:VALUE): \(shown)", range.lowerBound, end)
        }
        let nameRange = range.lowerBound..<i
        let name = upperName(bytes, nameRange)
        /// The name as written, for a message.
        func written(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        var parameters = Parameters()
        while i < end, bytes[i] == UInt8(ascii: ";") {
            let parameterStart = i + 1
            i = parameterStart
            while i < end, isNameByte(bytes[i]) { i += 1 }
            guard i > parameterStart, i < end, bytes[i] == UInt8(ascii: "=") else {
                throw fail("\(written(nameRange)): a parameter must be NAME=VALUE", parameterStart, i)
            }
            let parameterName = upperName(bytes, parameterStart..<i)
            i += 1
            var value: String?
            var more: [String] = []
            func add(_ text: String) { if value == nil { value = text } else { more.append(text) } }
            while true {
                if i < end, bytes[i] == UInt8(ascii: "\"") {
                    let from = i + 1
                    i = from
                    while i < end, bytes[i] != UInt8(ascii: "\"") { i += 1 }
                    guard i < end else { throw fail("\(written(nameRange)): a quoted parameter is never closed", from - 1, end) }
                    add(String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<i]), as: UTF8.self))
                    i += 1
                } else {
                    // RFC 5545's paramtext has no DQUOTE; one inside a value is kept as written
                    // rather than costing the whole calendar (other programs write such lines).
                    let from = i
                    while i < end, bytes[i] != UInt8(ascii: ";"), bytes[i] != UInt8(ascii: ":"), bytes[i] != UInt8(ascii: ",") {
                        i += 1
                    }
                    add(String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<i]), as: UTF8.self))
                }
                guard i < end, bytes[i] == UInt8(ascii: ",") else { break }
                i += 1
            }
            parameters.append(Parameter(name: parameterName, value: value ?? "", more: more))
        }
        guard i < end, bytes[i] == UInt8(ascii: ":") else { throw fail("\(written(nameRange)): no ':' before the value", range.lowerBound, i) }
        let value = String(decoding: UnsafeBufferPointer(rebasing: bytes[(i + 1)..<end]), as: UTF8.self)
        return ContentLine(name: name, parameters: parameters, value: value, line: line, offset: range.lowerBound,
                           valueOffset: i + 1)
    }

    /// Reads the one line of `text`.
    public static func read(_ text: String) throws(ReadError) -> ContentLine {
        var text = text
        return try text.withUTF8 { bytes in Result { () throws(ReadError) in try read(bytes, 0..<bytes.count) } }.get()
    }

    /// The logical lines of a file's bytes, each with the number of the physical line it starts
    /// on: a line that begins with a space or a tab continues the one before (§3.1), joined as
    /// bytes, since a fold may fall inside a character's UTF-8; CRLF or LF ends a line; empty
    /// lines are skipped.
    public static func unfolded(_ bytes: [UInt8]) -> [(bytes: [UInt8], line: Int)] {
        bytes.withUnsafeBufferPointer { buffer in
            logicalLines(buffer).map { line in (line.joined ?? Array(buffer[line.range]), line.line) }
        }
    }

    /// A logical line of a file: where it is in the file's bytes, the number of the physical line
    /// it starts on, and, for a folded line, its bytes joined (most lines are not folded, and are
    /// read where they are).
    public struct LogicalLine: Sendable {
        public var range: Range<Int>
        public var line: Int
        public var joined: [UInt8]?

        /// The line's bytes: `bytes` is the file the line was found in.
        public func withBytes<T>(in bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
            if let joined { return joined.withUnsafeBufferPointer(body) }
            return body(UnsafeBufferPointer(rebasing: bytes[range]))
        }
    }

    /// `unfolded` without a copy of each line: the lines of a 16 MiB calendar are found in one pass.
    public static func logicalLines(_ bytes: UnsafeBufferPointer<UInt8>) -> [LogicalLine] {
        var out: [LogicalLine] = []
        var number = 0
        var start = 0
        while start <= bytes.count {
            number += 1
            var end = bytes.count
            if start < bytes.count, let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start) {
                end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            var physicalEnd = end
            if physicalEnd > start, bytes[physicalEnd - 1] == UInt8(ascii: "\r") { physicalEnd -= 1 }
            if physicalEnd > start {
                let first = bytes[start]
                if (first == UInt8(ascii: " ") || first == UInt8(ascii: "\t")), !out.isEmpty {
                    var joined = out[out.count - 1].joined ?? Array(bytes[out[out.count - 1].range])
                    joined += bytes[(start + 1)..<physicalEnd]
                    out[out.count - 1].joined = joined
                } else {
                    out.append(LogicalLine(range: start..<physicalEnd, line: number))
                }
            }
            start = end + 1
        }
        return out
    }

    /// The lines of a recurrence's text: separated by newlines, or by spaces or tabs between them
    /// (a rule's text is written on one line). Ranges of bytes of `bytes`.
    public static func segments(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        for i in 0..<bytes.count {
            let byte = bytes[i]
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                if i > start { out.append(start..<i) }
                start = i + 1
            }
        }
        if bytes.count > start { out.append(start..<bytes.count) }
        return out
    }

    // MARK: - Writing

    /// The line as written (unfolded): `NAME;PARAM=VALUE:VALUE`, a parameter value quoted where it
    /// holds `;`, `:` or `,`.
    public var written: String {
        var out = name
        for parameter in parameters.list {
            out += ";" + parameter.name + "="
            out += parameter.values.map { value in
                value.utf8.contains { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ",") }
                    ? "\"" + value + "\"" : value
            }.joined(separator: ",")
        }
        return out + ":" + value
    }

    /// The value read as TEXT (§3.3.11): `\n` a new line, `\,` `\;` `\\` themselves.
    public var text: String { Self.unescaped(value) }

    public static func unescaped(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "\\")) else { return value }
        var out = ""
        var escaping = false
        for character in value {
            if escaping {
                out.append(character == "n" || character == "N" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// `text` as a TEXT value is written (§3.3.11).
    public static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": break
            default: out.append(character)
            }
        }
        return out
    }
}

extension String {
    /// The number of characters in the first `bytes` bytes of the text (an error's byte offset as
    /// the caret under the text counts).
    func characterOffset(ofByte bytes: Int) -> Int {
        let utf8 = self.utf8
        guard bytes > 0 else { return 0 }
        let index = utf8.index(utf8.startIndex, offsetBy: min(bytes, utf8.count))
        return distance(from: startIndex, to: index)
    }
}
