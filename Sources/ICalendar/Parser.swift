// iCalendar (RFC 5545) as text: content lines unfolded (§3.1) and read by the one content-line
// reader (`ContentLine`, under recurrence rules too), grouped into components by BEGIN and END.
// Every line keeps its number in the file, so whatever uses it can say `FILE:LINE: why`.
import Dispatch
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
        let (lines, reads) = bytes.withUnsafeBufferPointer { buffer in
            let lines = ContentLine.logicalLines(buffer)
            return (lines, readAll(lines, in: buffer))
        }
        // Taken from the end of the reversed list: each property moved into its component, not copied.
        var rest = reads
        rest.reverse()
        var index = -1
        while let read = rest.popLast() {
            index += 1
            let number = lines[index].line
            let property: Property
            switch consume read {
            case .success(let line): property = line
            case .failure(let error): throw error
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

    /// Each logical line read (its length, UTF-8 and syntax checked): a line is read alone, so a
    /// big file's are read on two threads, half each. The errors stay at their lines: the caller
    /// walks the lines in order and stops at the first, as it would reading one at a time.
    static func readAll(_ lines: [ContentLine.LogicalLine], in bytes: UnsafeBufferPointer<UInt8>) -> [Result<Property, ParseError>] {
        nonisolated(unsafe) let file = bytes  // (read, never written, by both threads)
        @Sendable func read(_ line: ContentLine.LogicalLine) -> Result<Property, ParseError> {
            let number = line.line
            return line.withBytes(in: file) { buffer in
                guard buffer.count <= maximumLineBytes else {
                    return .failure(ParseError(line: number, "the line is longer than \(maximumLineBytes) bytes"))
                }
                guard String(validating: buffer, as: UTF8.self) != nil else {
                    return .failure(ParseError(line: number, "not UTF-8 text (an iCalendar file is UTF-8)"))
                }
                return Result { () throws(ContentLine.ReadError) in try ContentLine.read(buffer, 0..<buffer.count, line: number) }
                    .mapError { ParseError(line: number, $0.message) }
            }
        }
        guard lines.count >= 8192 else { return lines.map(read) }
        let middle = lines.count / 2
        let halves = [0..<middle, middle..<lines.count]
        let parts = UnsafeMutableBufferPointer<[Result<Property, ParseError>]>.allocate(capacity: 2)
        parts.initialize(repeating: [])
        defer {
            _ = parts.deinitialize()
            parts.deallocate()
        }
        nonisolated(unsafe) let out = parts
        DispatchQueue.concurrentPerform(iterations: 2) { half in out[half] = lines[halves[half]].map(read) }
        return parts[0] + parts[1]
    }
}
