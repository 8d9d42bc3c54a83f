// iCalendar (RFC 5545) as text: content lines unfolded (§3.1), each read as a name, parameters
// and a value, and grouped into components by BEGIN and END. Every line keeps its number in the
// file, so whatever uses it can say `FILE:LINE: why`.

/// A property: `DTSTART;TZID=Europe/Berlin:20261127T163500`.
public struct Property: Hashable, Sendable {
    /// Upper-cased (`DTSTART`).
    public var name: String
    /// Parameter names upper-cased; a value given in quotes without them (`TZID`, `VALUE`, `RELATED`).
    public var parameters: [String: String]
    /// The value as written (escapes kept: `text` reads a TEXT value).
    public var value: String
    /// Where the (unfolded) line starts in the file, from 1.
    public var line: Int

    public init(name: String, parameters: [String: String] = [:], value: String, line: Int = 0) {
        self.name = name
        self.parameters = parameters
        self.value = value
        self.line = line
    }

    /// The value read as TEXT (§3.3.11): `\n` a new line, `\,` `\;` `\\` themselves.
    public var text: String { Self.unescaped(value) }

    public static func unescaped(_ value: String) -> String {
        guard value.contains("\\") else { return value }
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

/// A component (`VCALENDAR`, `VEVENT`, `VALARM`, `VTIMEZONE`, ...) with its properties and the
/// components inside it.
public struct Component: Hashable, Sendable {
    public var name: String
    public var properties: [Property]
    public var components: [Component]
    /// The line of its BEGIN.
    public var line: Int

    public init(name: String, properties: [Property] = [], components: [Component] = [], line: Int = 0) {
        self.name = name
        self.properties = properties
        self.components = components
        self.line = line
    }

    public func first(_ name: String) -> Property? { properties.first { $0.name == name } }
    public func all(_ name: String) -> [Property] { properties.filter { $0.name == name } }
    public func children(_ name: String) -> [Component] { components.filter { $0.name == name } }
}

/// Why a file is not iCalendar, and where.
public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }
    public var description: String { "\(line): \(message)" }
}

public enum Parser {
    /// The most components inside one another a file may have (a VALARM in a VEVENT in a VCALENDAR is 3).
    public static let maximumDepth = 16
    /// The longest unfolded line read.
    public static let maximumLineBytes = 1 << 20

    /// The top-level components of `text` (normally one `VCALENDAR`).
    public static func parse(_ text: String) throws(ParseError) -> [Component] {
        try parse(bytes: Array(text.utf8))
    }

    /// The top-level components of a file's bytes: lines are unfolded before they are read as
    /// UTF-8, since a fold may fall inside a character; a line that is not UTF-8 is an error.
    public static func parse(bytes: [UInt8]) throws(ParseError) -> [Component] {
        var top: [Component] = []
        var stack: [Component] = []
        for (bytes, number) in unfolded(bytes) {
            guard let line = String(validating: bytes, as: UTF8.self) else {
                throw ParseError(line: number, "not UTF-8 text (an iCalendar file is UTF-8)")
            }
            guard line.utf8.count <= maximumLineBytes else {
                throw ParseError(line: number, "the line is longer than \(maximumLineBytes) bytes")
            }
            let property = try contentLine(line, number: number)
            switch property.name {
            case "BEGIN":
                guard stack.count < maximumDepth else { throw ParseError(line: number, "components nest deeper than \(maximumDepth)") }
                let name = property.value.uppercased()
                guard !name.isEmpty else { throw ParseError(line: number, "BEGIN without a component name") }
                stack.append(Component(name: name, line: number))
            case "END":
                guard let open = stack.popLast() else { throw ParseError(line: number, "END:\(property.value) without a BEGIN") }
                guard open.name == property.value.uppercased() else {
                    throw ParseError(line: number, "END:\(property.value) closes BEGIN:\(open.name) of line \(open.line)")
                }
                if stack.isEmpty { top.append(open) } else { stack[stack.count - 1].components.append(open) }
            default:
                guard !stack.isEmpty else { throw ParseError(line: number, "\(property.name) outside any component (a file starts with BEGIN:VCALENDAR)") }
                stack[stack.count - 1].properties.append(property)
            }
        }
        if let open = stack.last { throw ParseError(line: open.line, "BEGIN:\(open.name) is never ended") }
        guard !top.isEmpty else { throw ParseError(line: 1, "no BEGIN:VCALENDAR: not an iCalendar file") }
        return top
    }

    /// The logical lines with the number of the physical line each starts on: a line that begins
    /// with a space or a tab continues the one before (§3.1); empty lines are skipped.
    static func unfolded(_ text: [UInt8]) -> [([UInt8], Int)] {
        // Bytes until every fold is joined: a fold may fall inside a character's UTF-8 (§3.1).
        var out: [([UInt8], Int)] = []
        var number = 0
        for raw in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let physical = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw[...]
            if let first = physical.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t"), !out.isEmpty {
                out[out.count - 1].0 += physical.dropFirst()
            } else if !physical.isEmpty {
                out.append((Array(physical), number))
            }
        }
        return out
    }

    /// `NAME;PARAM=VALUE;PARAM="QUOTED":VALUE`.
    static func contentLine(_ line: String, number: Int) throws(ParseError) -> Property {
        var name = ""
        var parameters: [String: String] = [:]
        var index = line.startIndex
        func isNameCharacter(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "-") }
        while index < line.endIndex, isNameCharacter(line[index]) {
            name.append(line[index])
            index = line.index(after: index)
        }
        guard !name.isEmpty else { throw ParseError(line: number, "not a content line (NAME:VALUE): \(line.prefix(40))") }
        while index < line.endIndex, line[index] == ";" {
            index = line.index(after: index)
            var parameter = ""
            while index < line.endIndex, isNameCharacter(line[index]) {
                parameter.append(line[index])
                index = line.index(after: index)
            }
            guard index < line.endIndex, line[index] == "=", !parameter.isEmpty else {
                throw ParseError(line: number, "\(name): a parameter must be NAME=VALUE")
            }
            index = line.index(after: index)
            var value = ""
            var first = true
            // A parameter may have several values, separated by commas: the first is kept.
            while index < line.endIndex, line[index] != ";", line[index] != ":" {
                if line[index] == "\"" {
                    index = line.index(after: index)
                    var quoted = ""
                    while index < line.endIndex, line[index] != "\"" {
                        quoted.append(line[index])
                        index = line.index(after: index)
                    }
                    guard index < line.endIndex else { throw ParseError(line: number, "\(name): a quoted parameter is never closed") }
                    index = line.index(after: index)
                    if first { value = quoted }
                } else if line[index] == "," {
                    first = false
                    index = line.index(after: index)
                } else {
                    if first { value.append(line[index]) }
                    index = line.index(after: index)
                }
            }
            parameters[parameter.uppercased()] = value
        }
        guard index < line.endIndex, line[index] == ":" else { throw ParseError(line: number, "\(name): no ':' before the value") }
        return Property(name: name.uppercased(), parameters: parameters, value: String(line[line.index(after: index)...]), line: number)
    }
}
