// iCalendar (RFC 5545) as text: content lines unfolded (§3.1) and read by the one content-line
// reader (`ContentLine`, under recurrence rules too), grouped into components by BEGIN and END.
// Every line keeps its number in the file, so whatever uses it can say `FILE:LINE: why`.
import Timekeeping

/// A property: `DTSTART;TZID=Europe/Berlin:20261127T163500`, one content line as Timekeeping's
/// one reader reads it (its name, parameters, value and line number).
public typealias Property = ContentLine

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
        for (bytes, number) in ContentLine.unfolded(bytes) {
            guard bytes.count <= maximumLineBytes else {
                throw ParseError(line: number, "the line is longer than \(maximumLineBytes) bytes")
            }
            guard String(validating: bytes, as: UTF8.self) != nil else {
                throw ParseError(line: number, "not UTF-8 text (an iCalendar file is UTF-8)")
            }
            let read = bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(ContentLine.ReadError) in try ContentLine.read(buffer, 0..<buffer.count, line: number) }
            }
            let property: Property
            switch read {
            case .success(let line): property = line
            case .failure(let error): throw ParseError(line: number, error.message)
            }
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
}
