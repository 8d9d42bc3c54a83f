// A command's result as one typed value, and the one printer that writes it as text or as JSON, for
// every command (`chime notify` too). A command builds a report of typed fields (text, counts,
// durations, instants, flags, lists, nested records, none); the printer renders each field for people
// (`10m`, `yes`, an omitted line for none) or for scripts (seconds as numbers, ISO 8601 with the
// offset, booleans, null). Both come from the same value, so the two forms cannot say different
// things. The JSON is a stable interface (docs/json.md, with a JSON Schema per command in docs/json/).
// It is written as it is made, in blocks of 64 KiB: a listing of 100,000 alarms is never held whole.
import Posix

/// One typed value of a report.
package enum Datum {
    case text(String)
    case count(Int64)
    /// A length of time in nanoseconds: whole seconds in JSON, its text (`10m`) for people.
    case length(nanoseconds: Int64, text: String)
    /// A moment, as ISO 8601 with its UTC offset, in both forms.
    case moment(String)
    /// true/false in JSON, yes/no in text.
    case flag(Bool)
    /// null in JSON; the line is left out in text.
    case none
    case list([Datum])
    case record([Field])

    @inlinable package static func optional<T>(_ value: T?, _ make: (T) -> Datum) -> Datum { value.map(make) ?? .none }

    /// A field of a record by its key (nil: not a record, or no such field).
    package subscript(key: String) -> Datum? {
        guard case .record(let fields) = self else { return nil }
        return fields.first { $0.key == key }?.value
    }

    /// The items of a list (empty: not a list).
    package var items: [Datum] {
        guard case .list(let items) = self else { return [] }
        return items
    }

    /// As people read it; nil: nothing to say (none, an empty list).
    package var text: String? {
        switch self {
        case .text(let text): text
        case .count(let number): String(number)
        case .length(_, let text): text
        case .moment(let text): text
        case .flag(let value): value ? "yes" : "no"
        case .none: nil
        case .list(let items):
            items.isEmpty ? nil : items.compactMap(\.text).joined(separator: ", ")
        case .record(let fields): fields.compactMap { field in field.text.map { "\(field.label) \($0)" } }.joined(separator: ", ")
        }
    }

    /// Writes the value as JSON: the one JSON writer of chime's output.
    package func writeJSON(to out: inout PrintedOutput) {
        switch self {
        case .text(let text), .moment(let text): out.writeJSONString(text)
        case .count(let number): out.write(String(number))
        case .length(let nanoseconds, _): out.write(String(nanoseconds / 1_000_000_000))
        case .flag(let value): out.write(value ? "true" : "false")
        case .none: out.write("null")
        case .list(let items):
            out.write(byte: UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.write(byte: UInt8(ascii: ",")) }
                item.writeJSON(to: &out)
            }
            out.write(byte: UInt8(ascii: "]"))
        case .record(let fields): Self.writeRecord(fields, to: &out)
        }
    }

    package static func writeRecord(_ fields: [Field], to out: inout PrintedOutput) {
        out.write(byte: UInt8(ascii: "{"))
        var first = true
        for field in fields {
            if !first { out.write(byte: UInt8(ascii: ",")) }
            first = false
            out.writeJSONString(field.key)
            out.write(byte: UInt8(ascii: ":"))
            field.value.writeJSON(to: &out)
        }
        out.write(byte: UInt8(ascii: "}"))
    }

    /// The value as one JSON text (for a test, or a line inside another output).
    package var jsonText: String {
        var out = PrintedOutput(collecting: true)
        writeJSON(to: &out)
        return String(decoding: out.collected, as: UTF8.self)
    }
}

/// One named field of a report: its JSON key, its label in text, its value, and how the value
/// reads in text when plain rendering would not do (a function of the same value).
package struct Field {
    package let key: String
    package let label: String
    package let value: Datum
    /// The value's text; nil: the field is left out of the text.
    package let render: (Datum) -> String?

    package init(_ key: String, _ label: String, _ value: Datum, render: @escaping (Datum) -> String? = { $0.text }) {
        self.key = key
        self.label = label
        self.value = value
        self.render = render
    }

    package var text: String? { render(value) }
}

/// Standard output, written in blocks as it fills (or, for `jsonText`, collected).
package struct PrintedOutput {
    static let block = 64 << 10
    private var buffer: [UInt8] = []
    private let collecting: Bool
    /// Whether standard output stopped taking what is written (closed, full disk): the rest is dropped.
    private var failed = false

    package init(collecting: Bool = false) {
        self.collecting = collecting
        buffer.reserveCapacity(collecting ? 256 : Self.block + 4096)
    }

    package var collected: [UInt8] { buffer }

    package mutating func write(byte: UInt8) {
        buffer.append(byte)
    }

    package mutating func write(_ text: String) {
        buffer += text.utf8
        if !collecting, buffer.count >= Self.block { flush() }
    }

    package mutating func writeJSONString(_ text: String) {
        appendJSONString(text, to: &buffer)
        if !collecting, buffer.count >= Self.block { flush() }
    }

    package mutating func flush() {
        guard !collecting, !buffer.isEmpty else { return }
        if !failed {
            do { try Sys.writeAll(1, buffer) } catch { failed = true }  // nowhere left to say anything
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// What every command prints: the same value as text lines or as one JSON document.
package protocol Report {
    var lines: [String] { get }
    /// Writes the JSON document.
    func writeJSON(to out: inout PrintedOutput)
    /// Writes the text, a line each (by default, `lines`).
    func writeText(to out: inout PrintedOutput)
}

extension Report {
    package func writeText(to out: inout PrintedOutput) {
        for line in lines {
            out.write(line)
            out.write(byte: UInt8(ascii: "\n"))
        }
    }

    /// Prints the report in the form asked for, as it is made (after anything print() buffered).
    package func print(json asJSON: Bool) {
        Sys.flushStandardOutput()
        var out = PrintedOutput()
        if asJSON {
            writeJSON(to: &out)
            out.write(byte: UInt8(ascii: "\n"))
        } else {
            writeText(to: &out)
        }
        out.flush()
    }

    /// The JSON document as one text.
    package var jsonText: String {
        var out = PrintedOutput(collecting: true)
        writeJSON(to: &out)
        return String(decoding: out.collected, as: UTF8.self)
    }
}

/// A report of named fields: `Label:  value` lines, one JSON object.
package struct RecordReport: Report {
    package var fields: [Field]
    /// The width labels are padded to.
    package var width = 14

    package init(fields: [Field], width: Int = 14) {
        self.fields = fields
        self.width = width
    }

    package func writeJSON(to out: inout PrintedOutput) { Datum.writeRecord(fields, to: &out) }

    package var lines: [String] {
        var lines: [String] = []
        for field in fields {
            guard let text = field.text, !text.isEmpty else { continue }
            let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
            // A value that starts on the next line (a list under its label) leaves the label alone.
            lines.append(field.label.isEmpty ? String(parts[0]) : parts[0].isEmpty ? field.label + ":" : (field.label + ":").padding(width) + parts[0])
            lines += parts.dropFirst().map(String.init)
        }
        return lines
    }

    package subscript(key: String) -> Datum? { fields.first { $0.key == key }?.value }
}

/// A report of rows: one line per row in text (made from the row's own fields), one JSON array
/// of objects.
package struct TableReport: Report {
    /// How many rows.
    package let count: Int
    /// Row `i`'s fields, made when the row is written (a listing of 100,000 alarms keeps no
    /// 100,000 arrays of fields alive at once).
    package let row: (Int) -> [Field]
    /// A row's line, from that row's fields (read by key: `row["id"]`).
    package var line: (Row) -> String
    /// The line printed when there are no rows (nil: nothing).
    package var empty: String?
    /// Lines before the rows in text (a header).
    package var header: [String] = []

    package init(count: Int, row: @escaping (Int) -> [Field], line: @escaping (Row) -> String, empty: String?) {
        self.count = count
        self.row = row
        self.line = line
        self.empty = empty
    }

    package init(rows: [[Field]], line: @escaping (Row) -> String, empty: String?) {
        self.init(count: rows.count, row: { rows[$0] }, line: line, empty: empty)
    }

    package struct Row {
        package let fields: [Field]
        package init(fields: [Field]) { self.fields = fields }
        /// The field's text ("" for none).
        package subscript(key: String) -> String { fields.first { $0.key == key }?.text ?? "" }
        package func value(_ key: String) -> Datum { fields.first { $0.key == key }?.value ?? .none }
    }

    package func writeJSON(to out: inout PrintedOutput) {
        out.write(byte: UInt8(ascii: "["))
        for i in 0..<count {
            if i > 0 { out.write(byte: UInt8(ascii: ",")) }
            Datum.writeRecord(row(i), to: &out)
        }
        out.write(byte: UInt8(ascii: "]"))
    }

    package var lines: [String] {
        if count == 0 { return empty.map { [$0] } ?? [] }
        return header + (0..<count).map { line(Row(fields: row($0))) }
    }

    /// The rows' lines written as each is made.
    package func writeText(to out: inout PrintedOutput) {
        if count == 0 {
            if let empty { out.write(empty + "\n") }
            return
        }
        for text in header { out.write(text + "\n") }
        for i in 0..<count {
            out.write(line(Row(fields: row(i))))
            out.write(byte: UInt8(ascii: "\n"))
        }
    }
}
