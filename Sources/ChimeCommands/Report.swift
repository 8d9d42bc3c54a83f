// A command's result as one typed value, and the one printer that writes it as text or as JSON.
// A command builds a report of typed fields (text, counts, durations, instants, flags, lists,
// nested records, none); the printer renders each field for people (`10m`, `yes`, an omitted
// line for none) or for scripts (seconds as numbers, ISO 8601 with the offset, booleans, null).
// Both come from the same value, so the two forms cannot say different things. The JSON is a
// stable interface (docs/json.md, with a JSON Schema per command in docs/json/).
import NotifyTool
import ChimeCenter
import Posix
import Timekeeping

/// One typed value of a report.
enum Datum {
    case text(String)
    case count(Int64)
    /// A length of time: seconds in JSON, `10m` in text.
    case duration(TimeSpan)
    /// A moment: ISO 8601 with its UTC offset in the given zone, in both forms.
    case instant(Instant, Zone)
    /// true/false in JSON, yes/no in text.
    case flag(Bool)
    /// null in JSON; the line is left out in text.
    case none
    case list([Datum])
    case record([Field])

    static func optional<T>(_ value: T?, _ make: (T) -> Datum) -> Datum { value.map(make) ?? .none }

    /// A field of a record by its key (nil: not a record, or no such field).
    subscript(key: String) -> Datum? {
        guard case .record(let fields) = self else { return nil }
        return fields.first { $0.key == key }?.value
    }

    /// The items of a list (empty: not a list).
    var items: [Datum] {
        guard case .list(let items) = self else { return [] }
        return items
    }

    var json: JSON {
        switch self {
        case .text(let text): .string(text)
        case .count(let number): .number(number)
        case .duration(let span): .number(span.nanoseconds / 1_000_000_000)
        case .instant(let instant, let zone): .string(zone.iso8601(instant))
        case .flag(let value): .bool(value)
        case .none: .null
        case .list(let items): .array(items.map(\.json))
        case .record(let fields): .object(fields.map { ($0.key, $0.value.json) })
        }
    }

    /// Appends the JSON straight as bytes (what `json` would write, without building it first: a
    /// listing of 100,000 alarms is written this way).
    func writeJSON(to out: inout [UInt8]) {
        switch self {
        case .text(let text): JSON.quote(text, to: &out)
        case .count(let number): out += String(number).utf8
        case .duration(let span): out += String(span.nanoseconds / 1_000_000_000).utf8
        case .instant(let instant, let zone): JSON.quote(zone.iso8601(instant), to: &out)
        case .flag(let value): out += (value ? "true" : "false").utf8
        case .none: out += "null".utf8
        case .list(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.writeJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .record(let fields): Self.writeRecord(fields, to: &out)
        }
    }

    static func writeRecord(_ fields: [Field], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var first = true
        for field in fields {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSON.quote(field.key, to: &out)
            out.append(UInt8(ascii: ":"))
            field.value.writeJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// As people read it; nil: nothing to say (none, an empty list).
    var text: String? {
        switch self {
        case .text(let text): text
        case .count(let number): String(number)
        case .duration(let span): span.description
        case .instant(let instant, let zone): zone.iso8601(instant)
        case .flag(let value): value ? "yes" : "no"
        case .none: nil
        case .list(let items):
            items.isEmpty ? nil : items.compactMap(\.text).joined(separator: ", ")
        case .record(let fields): fields.compactMap { field in field.text.map { "\(field.label) \($0)" } }.joined(separator: ", ")
        }
    }
}

/// One named field of a report: its JSON key, its label in text, its value, and how the value
/// reads in text when plain rendering would not do (a function of the same value).
struct Field {
    let key: String
    let label: String
    let value: Datum
    /// The value's text; nil: the field is left out of the text.
    let render: (Datum) -> String?

    init(_ key: String, _ label: String, _ value: Datum, render: @escaping (Datum) -> String? = { $0.text }) {
        self.key = key
        self.label = label
        self.value = value
        self.render = render
    }

    var text: String? { render(value) }
}

/// What every command prints: the same value as text lines or as one JSON document.
protocol Report {
    var json: JSON { get }
    var lines: [String] { get }
    /// The JSON document as bytes (by default, `json` written out).
    func writeJSON(to out: inout [UInt8])
}

extension Report {
    func writeJSON(to out: inout [UInt8]) { json.write(to: &out) }

    /// Prints the report in the form asked for.
    func print(json asJSON: Bool) {
        var out: [UInt8] = []
        if asJSON {
            writeJSON(to: &out)
            out.append(UInt8(ascii: "\n"))
        } else {
            for line in lines {
                out += line.utf8
                out.append(UInt8(ascii: "\n"))
            }
        }
        // One write for the whole report, after anything print() buffered.
        Sys.flushStandardOutput()
        try? Sys.writeAll(1, out)  // standard output closed or full: nowhere left to say anything
    }
}

/// A report of named fields: `Label:  value` lines, one JSON object.
struct RecordReport: Report {
    var fields: [Field]
    /// The width labels are padded to.
    var width = 14

    var json: JSON { Datum.record(fields).json }

    func writeJSON(to out: inout [UInt8]) { Datum.writeRecord(fields, to: &out) }

    var lines: [String] {
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

    subscript(key: String) -> Datum? { fields.first { $0.key == key }?.value }
}

/// A report of rows: one line per row in text (made from the row's own fields), one JSON array
/// of objects.
struct TableReport: Report {
    /// How many rows.
    let count: Int
    /// Row `i`'s fields, made when the row is written (a listing of 100,000 alarms keeps no
    /// 100,000 arrays of fields alive at once).
    let row: (Int) -> [Field]
    /// A row's line, from that row's fields (read by key: `row["id"]`).
    var line: (Row) -> String
    /// The line printed when there are no rows (nil: nothing).
    var empty: String?
    /// Lines before the rows in text (a header).
    var header: [String] = []

    init(count: Int, row: @escaping (Int) -> [Field], line: @escaping (Row) -> String, empty: String?) {
        self.count = count
        self.row = row
        self.line = line
        self.empty = empty
    }

    init(rows: [[Field]], line: @escaping (Row) -> String, empty: String?) {
        self.init(count: rows.count, row: { rows[$0] }, line: line, empty: empty)
    }

    struct Row {
        let fields: [Field]
        /// The field's text ("" for none).
        subscript(key: String) -> String { fields.first { $0.key == key }?.text ?? "" }
        func value(_ key: String) -> Datum { fields.first { $0.key == key }?.value ?? .none }
    }

    var json: JSON { .array((0..<count).map { Datum.record(row($0)).json }) }

    func writeJSON(to out: inout [UInt8]) {
        out.reserveCapacity(count * 256)
        out.append(UInt8(ascii: "["))
        for i in 0..<count {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            Datum.writeRecord(row(i), to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    var lines: [String] {
        if count == 0 { return empty.map { [$0] } ?? [] }
        return header + (0..<count).map { line(Row(fields: row($0))) }
    }
}
