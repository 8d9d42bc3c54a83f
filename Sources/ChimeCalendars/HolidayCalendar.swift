// A holiday calendar's days off: the all-day events of an .ics file (a public-holiday calendar a
// person subscribes to, kept in step by vdirsyncer, or one Thunderbird or Evolution wrote), one day
// or several (DTEND, DURATION), repeating or not (RRULE, RDATE, EXDATE, moved instances), read over
// a window of years around now. Someone else wrote it: a timed event, a broken line or an endless
// rule is said and left out, never a reason to refuse the rest.
import ChimeCenter
import ICalendar
import Posix
import Timekeeping

public struct HolidayCalendar: Sendable {
    /// Each day off in the window and what it is (its SUMMARY; several on one day joined).
    public var days: [Int64: String] = [:]
    /// What was left out, at its line.
    public var problems: [CalendarImport.Problem] = []
    /// Events with a time of day (not a day off): counted, and said once.
    public var timedEvents = 0

    /// How many years ahead of now, and one back, the days are read.
    public static let yearsAhead = 10
    /// The most days one event gives (a daily rule with no end is not a calendar of holidays).
    public static let maximumDaysPerEvent = 4000
    /// The most days one calendar gives.
    public static let maximumDays = 100_000
    /// The longest one event lasts, in days.
    public static let maximumLength = 366

    /// The window of days read around `now` (as a UTC day number).
    public static func window(around now: Instant) -> ClosedRange<Int64> {
        let today = utcDay(now.seconds)
        return (today - 366)...(today + Int64(yearsAhead) * 366)
    }

    /// The largest holiday file read.
    public static let maximumFileSize = 16 << 20
    /// The most .ics files of one directory read.
    public static let maximumFiles = 20_000

    /// The days off of an .ics file, or of a directory of them (vdirsyncer's vdir: one event a
    /// file), with what was left out as `PATH:LINE: why`; an error when there is nothing to read
    /// (no such file).
    public static func load(path: String, window: ClosedRange<Int64>) throws(SystemError) -> (days: [Int64: String], notes: [String]) {
        var paths = [path]
        var notes: [String] = []
        if Sys.isDirectory(path) {
            paths = Sys.directoryEntries(path).filter { $0.hasSuffix(".ics") && !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
            if paths.count > maximumFiles {
                notes.append("\(path): \(paths.count) files; the first \(maximumFiles) are read")
                paths = Array(paths.prefix(maximumFiles))
            }
        }
        var found: [[Int64: String]] = []
        for file in paths {
            let bytes: [UInt8]
            do throws(SystemError) { bytes = try Sys.readFile(file, limit: maximumFileSize + 1) } catch {
                if file == path { throw error }
                notes.append("\(file): cannot read it: \(error.reason)")
                continue
            }
            guard bytes.count <= maximumFileSize else {
                notes.append("\(file): larger than \(maximumFileSize >> 20) MiB; not read")
                continue
            }
            let calendar = HolidayCalendar(reading: bytes, window: window)
            found.append(calendar.days)
            notes += calendar.problems.map { $0.line > 0 ? "\(file):\($0.line): \($0.message)" : "\(file): \($0.message)" }
        }
        return (DaysOff.merging(found), notes)
    }

    /// Reads an .ics file's bytes; `window` is the days to read (`window(around:)`).
    public init(reading bytes: [UInt8], window: ClosedRange<Int64>) {
        let calendars: [Component]
        do throws(ParseError) { calendars = try Parser.parse(bytes: bytes) } catch {
            problems.append(.init(line: error.line, message: error.message))
            return
        }
        for calendar in calendars {
            guard calendar.name == "VCALENDAR" else {
                problems.append(.init(line: calendar.line, message: "BEGIN:\(calendar.name) at the top; an iCalendar file holds VCALENDAR"))
                continue
            }
            read(calendar, window: window)
        }
        if timedEvents > 0 {
            problems.append(.init(line: 0, message: "\(timedEvents) event\(timedEvents == 1 ? "" : "s") with a time of day left out: a day off is an all-day event"))
        }
    }

    private mutating func read(_ calendar: Component, window: ClosedRange<Int64>) {
        var names: [Int64: [String]] = [:]
        defer { days.merge(names.mapValues { $0.joined(separator: " · ") }) { $0 + " · " + $1 } }
        let events = calendar.children("VEVENT")
        // Instances moved or cancelled (RECURRENCE-ID) leave their series: the day they name.
        var moved: [String: Set<Int64>] = [:]
        for event in events {
            if let instance = event.first("RECURRENCE-ID"), let uid = event.first("UID")?.text, let day = Self.day(instance.value) {
                moved[uid, default: []].insert(day)
            }
        }
        for event in events {
            guard names.count < Self.maximumDays else {
                problems.append(.init(line: event.line, message: "left out, and every event after it: the calendar already gave \(Self.maximumDays) days off"))
                return
            }
            if event.first("STATUS")?.value.uppercased() == "CANCELLED" { continue }
            guard let start = event.first("DTSTART") else {
                problems.append(.init(line: event.line, message: "VEVENT without DTSTART: no day to take off"))
                continue
            }
            guard Self.isDate(start) else {
                timedEvents += 1
                continue
            }
            guard let first = Self.day(start.value) else {
                problems.append(.init(line: start.line, message: "DTSTART \(start.value): not a date (YYYYMMDD)"))
                continue
            }
            let name = event.first("SUMMARY").map { CalendarImport.line($0.text) }.flatMap { $0.isEmpty ? nil : $0 } ?? "a day off"
            // Its length in days: DTEND (not included), else DURATION, else one day.
            var length: Int64 = 1
            if let end = event.first("DTEND"), let last = Self.day(end.value) {
                length = last - first
            } else if let duration = event.first("DURATION").flatMap({ Values.duration($0.value) }) {
                length = duration > 0 ? (duration + 86_399) / 86_400 : 0
            }
            guard (1...Int64(Self.maximumLength)).contains(length) else {
                problems.append(.init(line: start.line, message: "'\(name)' lasts \(length) days; a day off lasts 1-\(Self.maximumLength)"))
                continue
            }
            var starts: [Int64] = []
            if event.first("RECURRENCE-ID") != nil || event.all("RRULE").isEmpty && event.all("RDATE").isEmpty {
                starts = [first]
            } else {
                var lines = [ContentLine(name: "DTSTART", value: start.value, line: start.line)]
                lines[0].parameters["VALUE"] = "DATE"
                for rule in event.all("RRULE") { lines.append(ContentLine(name: "RRULE", value: rule.value, line: rule.line)) }
                for name in ["RDATE", "EXDATE"] {
                    for dates in event.all(name) {
                        // Date lists only: a date-time in a day off's list names no day.
                        for value in dates.value.split(separator: ",") {
                            guard let day = Self.day(String(value)) else { continue }
                            var line = ContentLine(name: name, value: Self.dateValue(day), line: dates.line)
                            line.parameters["VALUE"] = "DATE"
                            lines.append(line)
                        }
                    }
                }
                let recurrence: Recurrence
                do throws(RuleError) { recurrence = try Recurrence(lines: lines) } catch {
                    problems.append(.init(line: start.line, message: "'\(name)': its recurrence: \(error.message)"))
                    continue
                }
                // From the window's start (less the event's length, for one that runs into it).
                var cursor = (window.lowerBound - length) * 86_400 - 1
                while starts.count < Self.maximumDaysPerEvent, let next = recurrence.next(after: cursor, floatingZone: .utc),
                      Self.utcDay(next) <= window.upperBound {
                    starts.append(Self.utcDay(next))
                    cursor = next
                }
                if starts.count == Self.maximumDaysPerEvent {
                    problems.append(.init(line: start.line, message: "'\(name)' repeats more than \(Self.maximumDaysPerEvent) times in \(Self.yearsAhead) years; the first \(Self.maximumDaysPerEvent) are taken"))
                }
                if let uid = event.first("UID")?.text, let gone = moved[uid] { starts.removeAll { gone.contains($0) } }
            }
            for begin in starts {
                for day in begin..<(begin + length) where window.contains(day) && !(names[day]?.contains(name) ?? false) {
                    names[day, default: []].append(name)
                }
            }
        }
    }

    /// Whether a DTSTART is a date: VALUE=DATE, or eight digits and nothing else (some programs
    /// leave VALUE out).
    static func isDate(_ property: Property) -> Bool {
        if property.parameters["VALUE"]?.uppercased() == "DATE" { return true }
        return property.value.utf8.count == 8 && property.value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// The UTC day holding `seconds` since 1970.
    static func utcDay(_ seconds: Int64) -> Int64 { seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400) }

    /// A day as an iCalendar DATE (`20261225`).
    static func dateValue(_ day: Int64) -> String {
        let date = civilFromDays(day)
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return pad(date.year, 4) + pad(date.month, 2) + pad(date.day, 2)
    }

    /// The day a value's date names (`20261225`, or the date of a date-time), as a day number.
    static func day(_ value: String) -> Int64? {
        let digits = Array(value.utf8.prefix(8))
        guard digits.count == 8, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        let (year, month, day) = (number(0..<4), number(4..<6), number(6..<8))
        guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day), (1900...2199).contains(year) else { return nil }
        return daysFromCivil(year, month, day)
    }
}
