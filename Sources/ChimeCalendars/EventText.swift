// One event of an .ics file changed in place: the file as content lines that keep their bytes
// (folds, line ends, characters a fold splits), the event's lines handed to an edit, and the file
// written back with every line the edit did not touch as it was. What chime changes in the events
// of the person's own calendars (answers, switching an alarm off, skipping one occurrence) is
// changed this way, so what other programs wrote there (Thunderbird's, a phone's) stays.
import ChimeCenter
import ICalendar
import Notifications
import Timekeeping

struct EventText {
    /// One content line as the file has it: its bytes (all its physical lines, with their ends),
    /// and its name (upper case) and, for BEGIN and END, the component's name, read unfolded.
    struct Line {
        var raw: Range<Int>
        var unfolded: String
        var name: String
        var value: String
        /// The line read as a property (nil: it is not one).
        var read: ContentLine? { try? ContentLine.read(unfolded) }
    }

    /// A piece of the file written back: bytes as they were, or a line chime adds.
    enum Piece {
        case kept(Range<Int>)
        case added(String)
    }

    let bytes: [UInt8]
    let lines: [Line]
    /// How the file ends its lines (CRLF, as RFC 5545 says, unless it uses LF alone).
    let newline: String

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        lines = Self.logicalLines(bytes)
        let crlf = bytes.firstIndex(of: 0x0A).map { $0 > 0 && bytes[$0 - 1] == 0x0D } ?? true
        newline = crlf ? "\r\n" : "\n"
    }

    /// A line chime adds, folded at 75 octets, ending as the file's lines do.
    func added(_ line: String) -> Piece {
        let folded = CalendarExport.folded(line)
        return .added((newline == "\r\n" ? folded : folded.split(separator: "\r\n", omittingEmptySubsequences: false).joined(separator: "\n")) + newline)
    }

    /// The events and to-dos whose UID is `uid` (a repeating one and its moved instances): the
    /// ranges of their lines, BEGIN to END.
    func items(uid: String) -> [ClosedRange<Int>] {
        var items: [ClosedRange<Int>] = []
        var depth = 0
        var begin = 0
        var matches = false
        for (index, line) in lines.enumerated() {
            if line.name == "BEGIN" {
                depth += 1
                if depth == 2, line.value == "VEVENT" || line.value == "VTODO" { (begin, matches) = (index, false) }
            } else if line.name == "END" {
                if depth == 2, line.value == "VEVENT" || line.value == "VTODO", matches { items.append(begin...index) }
                depth -= 1
            } else if depth == 2, line.name == "UID", let read = line.read, read.text == uid || read.value == uid {
                matches = true
            }
        }
        return items
    }

    /// The file with each of `items` as `edit` makes it; everything else as it was.
    func rewriting(_ items: [ClosedRange<Int>], _ edit: (ArraySlice<Line>) -> [Piece]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 512)
        var next = 0
        for item in items {
            for line in lines[next..<item.lowerBound] { out += bytes[line.raw] }
            for piece in edit(lines[item]) {
                switch piece {
                case .kept(let range): out += bytes[range]
                case .added(let text): out += text.utf8
                }
            }
            next = item.upperBound + 1
        }
        for line in lines[next...] { out += bytes[line.raw] }
        return out
    }

    static func logicalLines(_ bytes: [UInt8]) -> [Line] {
        var out: [Line] = []
        var unfolded: [UInt8] = []
        var start = 0
        func finish() {
            guard !out.isEmpty else { return }
            out[out.count - 1].unfolded = String(decoding: unfolded, as: UTF8.self)
        }
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.count
            var bodyEnd = end
            while bodyEnd > start, bytes[bodyEnd - 1] == 0x0A || bytes[bodyEnd - 1] == 0x0D { bodyEnd -= 1 }
            if bodyEnd > start, bytes[start] == 0x20 || bytes[start] == 0x09, !out.isEmpty {
                // A fold may fall inside a character: the line is read once joined.
                out[out.count - 1].raw = out[out.count - 1].raw.lowerBound..<end
                unfolded += bytes[(start + 1)..<bodyEnd]
            } else {
                finish()
                out.append(Line(raw: start..<end, unfolded: "", name: "", value: ""))
                unfolded = Array(bytes[start..<bodyEnd])
            }
            start = end
        }
        finish()
        for index in out.indices {
            let line = out[index].unfolded
            let nameEnd = line.firstIndex { $0 == ":" || $0 == ";" } ?? line.endIndex
            out[index].name = String(line[..<nameEnd]).uppercased()
            if out[index].name == "BEGIN" || out[index].name == "END", let colon = line.firstIndex(of: ":") {
                out[index].value = String(line[line.index(after: colon)...]).trimmingCharacters(" ").uppercased()
            }
        }
        return out
    }
}

/// What chime changes in an event of a calendar it writes to, besides answers: whether its alarm is
/// on (`X-CHIME-DISABLED`, read back by chime on every machine), and an occurrence skipped (an
/// `EXDATE`, which every calendar program reads: the occurrence is gone everywhere).
public enum CalendarEdit {
    /// The property that switches a calendar alarm off, on every machine that follows the calendar.
    public static let disabled = "X-CHIME-DISABLED"

    /// `bytes` with the event `uid`'s alarm switched off (or on). nil: no event has that UID.
    public static func settingDisabled(_ bytes: [UInt8], uid: String, _ off: Bool) -> [UInt8]? {
        let text = EventText(bytes)
        let items = text.items(uid: uid)
        guard !items.isEmpty else { return nil }
        return text.rewriting(items) { lines in
            var out: [EventText.Piece] = []
            var depth = 0
            for line in lines {
                if line.name == "BEGIN" { depth += 1 }
                if line.name == "END" { depth -= 1 }
                if depth == 1, line.name == disabled { continue }
                if depth == 0, line.name == "END", off { out.append(text.added(disabled + ":TRUE")) }
                out.append(.kept(line.raw))
            }
            return out
        }
    }

    /// `bytes` with the occurrence of event `uid` that starts at `start` excluded (an EXDATE in
    /// its DTSTART's form: a zone's wall clock, floating, UTC or a date), or, with `undo`, that
    /// exclusion taken away again. nil: no repeating event has that UID.
    public static func skipping(_ bytes: [UInt8], uid: String, start: Instant, undo: Bool) -> [UInt8]? {
        let text = EventText(bytes)
        // The repeating event itself: its moved instances keep theirs.
        let items = text.items(uid: uid).filter { item in !text.lines[item].contains { $0.name == "RECURRENCE-ID" } }
        guard let item = items.first, let dtstart = text.lines[item].first(where: { $0.name == "DTSTART" })?.read else { return nil }
        let value = exclusion(of: start, like: dtstart)
        return text.rewriting([item]) { lines in
            var out: [EventText.Piece] = []
            var depth = 0
            for line in lines {
                if line.name == "BEGIN" { depth += 1 }
                if line.name == "END" { depth -= 1 }
                // The exclusion already there (one date a line, as chime writes it) goes on undo, and
                // is not written twice.
                if depth == 1, line.name == "EXDATE", let read = line.read, read.value == value.value, read.parameters["TZID"] == value.parameters["TZID"] {
                    continue
                }
                out.append(.kept(line.raw))
                if line.name == "DTSTART", depth == 1, !undo { out.append(text.added(value.text)) }
            }
            return out
        }
    }

    /// An EXDATE for `start` in the form of `dtstart`.
    static func exclusion(of start: Instant, like dtstart: ContentLine) -> (value: String, parameters: [String: String], text: String) {
        if dtstart.parameters["VALUE"]?.uppercased() == "DATE" {
            let civil = Zone.system().civil(at: start.seconds)
            let date = String(CalendarExport.localText(civil).prefix(8))
            return (date, ["VALUE": "DATE"], "EXDATE;VALUE=DATE:" + date)
        }
        if let tzid = dtstart.parameters["TZID"], let zone = try? Zone.named(tzid) {
            let local = CalendarExport.localText(zone.civil(at: start.seconds))
            return (local, ["TZID": tzid], "EXDATE;TZID=\(tzid):" + local)
        }
        if dtstart.value.hasSuffix("Z") {
            let utc = CalendarExport.utcText(start.seconds)
            return (utc, [:], "EXDATE:" + utc)
        }
        let floating = CalendarExport.localText(Zone.system().civil(at: start.seconds))
        return (floating, [:], "EXDATE:" + floating)
    }
}
