// iCalendar (RFC 5545) as text: content lines unfolded (§3.1) and read by the one content-line
// reader (`ContentLine`, under recurrence rules too), grouped into components by BEGIN and END.
// Every line keeps its number in the file, so whatever uses it can say `FILE:LINE: why`.
import Posix
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
        try bytes.withUnsafeBufferPointer { (buffer) throws(ParseError) -> [Component] in
            let lines = ContentLine.logicalLines(buffer)
            if lines.count >= 8192, let components = inTwoHalves(lines, buffer) { return components }
            return try inOrder(lines[...], buffer)
        }
    }

    /// One line read (its length, UTF-8 and syntax checked).
    static func read(_ line: ContentLine.LogicalLine, in bytes: UnsafeBufferPointer<UInt8>) -> Result<Property, ParseError> {
        let number = line.line
        return line.withBytes(in: bytes) { buffer in
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

    /// The lines read and grouped one after another: the reference, and what says where a file
    /// is wrong (the first error by line).
    static func inOrder(_ lines: ArraySlice<ContentLine.LogicalLine>, _ bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) -> [Component] {
        var top: [Component] = []
        var stack: [Component] = []
        for line in lines {
            let number = line.line
            let property = try read(line, in: bytes).get()
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

    /// What a run of lines makes when read from inside components begun before it: what it adds
    /// to the innermost of those (properties, whole components) and which it ends, in order, and the
    /// components it begins and leaves open.
    struct Segment: Sendable {
        enum Event: Sendable {
            case property(Property)
            case component(Component)
            case end(String)
        }
        var events: [Event] = []
        var open: [Component] = []
        /// The most components open inside it at once.
        var depth = 0
        var failed = false
    }

    static func segment(_ lines: ArraySlice<ContentLine.LogicalLine>, _ bytes: UnsafeBufferPointer<UInt8>) -> Segment {
        var segment = Segment()
        for line in lines {
            guard case .success(let property) = read(line, in: bytes) else {
                segment.failed = true
                return segment
            }
            switch property.name {
            case "BEGIN":
                let name = property.value.uppercased()
                guard !name.isEmpty, segment.open.count < maximumDepth else {
                    segment.failed = true
                    return segment
                }
                segment.open.append(Component(name: name, line: line.line))
                segment.depth = max(segment.depth, segment.open.count)
            case "END":
                guard let open = segment.open.popLast() else {
                    segment.events.append(.end(property.value.uppercased()))
                    continue
                }
                guard open.name == property.value.uppercased() else {
                    segment.failed = true
                    return segment
                }
                if segment.open.isEmpty { segment.events.append(.component(open)) } else { segment.open[segment.open.count - 1].components.append(open) }
            default:
                if segment.open.isEmpty { segment.events.append(.property(property)) } else { segment.open[segment.open.count - 1].properties.append(property) }
            }
        }
        return segment
    }

    /// A big file read as two halves, one on each of two threads, the second then put where the
    /// first left off. Nil when either half or their joining finds anything wrong: the caller
    /// reads it in order, which says exactly what and where.
    static func inTwoHalves(_ lines: [ContentLine.LogicalLine], _ bytes: UnsafeBufferPointer<UInt8>) -> [Component]? {
        nonisolated(unsafe) let file = bytes  // (read, never written, by both threads)
        var (first, second) = onTwoThreads(lines.indices) { segment(lines[$0], file) }
        // The first half begins at the top: nothing may come before a component begins there.
        guard !first.failed, !second.failed, first.events.allSatisfy({ if case .component = $0 { true } else { false } }) else { return nil }
        var top: [Component] = first.events.compactMap { if case .component(let c) = $0 { c } else { nil } }
        var stack = first.open
        first = Segment()
        guard stack.count + second.depth <= maximumDepth else { return nil }
        for event in second.events {
            switch event {
            case .property(let property):
                guard !stack.isEmpty else { return nil }
                stack[stack.count - 1].properties.append(property)
            case .component(let component):
                if stack.isEmpty { top.append(component) } else { stack[stack.count - 1].components.append(component) }
            case .end(let name):
                guard let open = stack.popLast(), open.name == name else { return nil }
                if stack.isEmpty { top.append(open) } else { stack[stack.count - 1].components.append(open) }
            }
        }
        second.events = []
        guard second.open.isEmpty, stack.isEmpty, !top.isEmpty else { return nil }
        return top
    }
}
