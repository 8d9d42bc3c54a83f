// iCalendar recurrence (RFC 5545) as chime reads it: the content lines DTSTART, RRULE, RDATE and
// EXDATE, separated by a newline or a space, e.g.
//
//     DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR
//
// This file reads and checks them (§3.3.10's rules for which parts go together, every value's
// range); each error points at the offending part of the text, as the calendar expressions' do.

/// A DATE or DATE-TIME value (§3.3.4, §3.3.5): a date alone, a floating local time, a time in UTC
/// (`Z`), or a local time in a zone of the tz database (`TZID=`).
public enum DateTimeValue: Hashable, Sendable {
    case date(year: Int, month: Int, day: Int)
    case floating(CivilTime)
    case utc(CivilTime)
    case zoned(CivilTime, zone: String)

    /// Whether it is a DATE (no time of day).
    public var isDate: Bool { if case .date = self { true } else { false } }

    /// The civil date and time it names (a DATE at 00:00:00).
    public var civil: CivilTime {
        switch self {
        case .date(let y, let m, let d): CivilTime(year: y, month: m, day: d)
        case .floating(let c), .utc(let c), .zoned(let c, _): c
        }
    }
}

/// One `RRULE` (§3.3.10). Weekdays are ISO numbers: 1 Monday ... 7 Sunday.
public struct RecurrenceRule: Hashable, Sendable {
    public enum Frequency: String, Hashable, Sendable, CaseIterable {
        case secondly = "SECONDLY", minutely = "MINUTELY", hourly = "HOURLY", daily = "DAILY"
        case weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// A `BYDAY` entry: a weekday, with an ordinal in the month or year (`-1FR`: the last Friday).
    public struct WeekdayNumber: Hashable, Sendable {
        public var ordinal: Int?
        public var weekday: Int
    }

    public var frequency: Frequency
    public var interval = 1
    public var count: Int?
    public var until: DateTimeValue?
    public var bySecond: [Int] = []
    public var byMinute: [Int] = []
    public var byHour: [Int] = []
    public var byDay: [WeekdayNumber] = []
    public var byMonthDay: [Int] = []
    public var byYearDay: [Int] = []
    public var byWeekNo: [Int] = []
    public var byMonth: [Int] = []
    public var bySetPos: [Int] = []
    /// The week's first day (`WKST`, default Monday).
    public var weekStart = 1

    static let weekdayCodes = ["MO": 1, "TU": 2, "WE": 3, "TH": 4, "FR": 5, "SA": 6, "SU": 7]
}

/// DTSTART with its RRULEs, RDATEs and EXDATEs (§3.8.5).
public struct Recurrence: Hashable, Sendable {
    public var start: DateTimeValue
    public var rules: [RecurrenceRule]
    public var dates: [DateTimeValue]
    public var exceptions: [DateTimeValue]
    /// The content lines as written, one space between them: what `chime list` shows, and what
    /// is stored and read back.
    public private(set) var text: String
    /// DTSTART's TZID zone, loaded once (finding a zone costs a `stat`).
    let startZone: Zone?
    /// Each RRULE, ready to expand from DTSTART.
    let expansions: [RuleExpansion]
    /// DTSTART as an instant, where it names its zone or UTC.
    let startInstant: UnixTime?

    /// Two recurrences are the same when their content lines are.
    public static func == (a: Recurrence, b: Recurrence) -> Bool { a.text == b.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// Whether `text` is written as iCalendar content lines (it starts with one of their names).
    public static func looksLikeContentLines(_ text: String) -> Bool {
        let head = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }.prefix(8).uppercased()
        return ["DTSTART", "RRULE", "RDATE", "EXDATE"].contains { head.hasPrefix($0) }
    }

    /// Reads the content lines in `text`; `knownZone` says whether a TZID names a zone (the tz
    /// database's, by default).
    public init(parsing text: String, knownZone: ((String) -> Bool)? = nil) throws(RuleError) {
        // Zones found while reading, so DTSTART's is looked up once (finding one costs a `stat`).
        var found: [String: Zone] = [:]
        let knownZone = knownZone ?? { name in
            if found[name] != nil { return true }
            guard let zone = try? Zone.named(name) else { return false }
            found[name] = zone
            return true
        }
        var start: DateTimeValue?
        var rules: [RecurrenceRule] = []
        var dates: [DateTimeValue] = []
        var exceptions: [DateTimeValue] = []
        let lines = ContentLine.split(text)
        for line in lines {
            let parsed = try ContentLine(line)
            switch parsed.name {
            case "DTSTART":
                guard start == nil else { throw RuleError("DTSTART is given twice", at: line.offset, length: line.text.count) }
                guard let value = try parsed.dateTimes(knownZone: knownZone).first, parsed.values.count == 1 else {
                    throw RuleError("DTSTART takes one date or date-time", at: parsed.valueOffset, length: parsed.value.count)
                }
                start = value
            case "RRULE":
                rules.append(try RecurrenceRule(parsing: parsed.value, offset: parsed.valueOffset))
            case "RDATE":
                dates += try parsed.dateTimes(knownZone: knownZone)
            case "EXDATE":
                exceptions += try parsed.dateTimes(knownZone: knownZone)
            default:
                throw RuleError("\(parsed.name) is not a recurrence property (DTSTART, RRULE, RDATE, EXDATE)",
                                at: line.offset, length: parsed.name.count)
            }
        }
        guard let start else { throw RuleError("a recurrence needs DTSTART, e.g. DTSTART;TZID=Europe/Berlin:20261127T163500") }
        // DTSTART alone is one occurrence (a calendar's one-off event).
        for (index, rule) in rules.enumerated() {
            // §3.3.10: UNTIL is of DTSTART's value type, and in UTC where DTSTART names a zone or UTC.
            guard let until = rule.until else { continue }
            if until.isDate != start.isDate {
                throw RuleError("RRULE \(index + 1): UNTIL must be a \(start.isDate ? "date" : "date-time"), as DTSTART is")
            }
            switch start {
            case .utc, .zoned:
                guard case .utc = until else { throw RuleError("RRULE \(index + 1): UNTIL must be in UTC (ending in Z), as DTSTART is not floating") }
            case .floating:
                if case .utc = until {} else if case .floating = until {} else {
                    throw RuleError("RRULE \(index + 1): UNTIL must be floating or in UTC")
                }
            case .date:
                break
            }
        }
        self.start = start
        self.rules = rules
        self.dates = dates
        self.exceptions = exceptions
        self.text = lines.map(\.text).joined(separator: " ")
        if case .zoned(_, let name) = start { startZone = found[name] ?? (try? Zone.named(name)) } else { startZone = nil }
        expansions = rules.map { RuleExpansion($0, start: start.civil) }
        switch start {
        case .utc(let civil): startInstant = civil.localSeconds
        case .zoned(let civil, _): startInstant = startZone.map { Self.instant(civil, in: $0) }
        case .date, .floating: startInstant = nil
        }
    }
}

/// One content line, `NAME;PARAM=VALUE:VALUE`, with where it lies in the rule text.
struct ContentLine {
    var name: String
    var parameters: [String: String]
    var value: String
    var valueOffset: Int

    /// The lines of `text`: separated by newlines, or by spaces between them.
    static func split(_ text: String) -> [(text: String, offset: Int)] {
        // ASCII (as content lines are): bytes are characters, and slicing them is cheap.
        let utf8 = text.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            var lines: [(text: String, offset: Int)] = []
            var start = 0
            var offset = 0
            for byte in utf8 {
                if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    if offset > start {
                        let from = utf8.index(utf8.startIndex, offsetBy: start), to = utf8.index(utf8.startIndex, offsetBy: offset)
                        lines.append((String(text[from..<to]), start))
                    }
                    start = offset + 1
                }
                offset += 1
            }
            if offset > start { lines.append((String(text[utf8.index(utf8.startIndex, offsetBy: start)...]), start)) }
            return lines
        }
        var lines: [(text: String, offset: Int)] = []
        var current = ""
        var start = 0
        for (index, character) in text.enumerated() {
            if character == " " || character == "\n" || character == "\r" || character == "\t" {
                if !current.isEmpty { lines.append((current, start)) }
                current = ""
                start = index + 1
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { lines.append((current, start)) }
        return lines
    }

    init(_ line: (text: String, offset: Int)) throws(RuleError) {
        guard let colon = line.text.firstIndex(of: ":") else {
            throw RuleError("\(line.text) is not a content line (NAME:VALUE)", at: line.offset, length: line.text.count)
        }
        let head = line.text[..<colon].split(separator: ";", omittingEmptySubsequences: false)
        name = String(head[0]).uppercased()
        var parameters: [String: String] = [:]
        for parameter in head.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, !pair[0].isEmpty else {
                throw RuleError("\(parameter) is not a parameter (NAME=VALUE)", at: line.offset, length: colon.utf16Offset(in: line.text))
            }
            parameters[pair[0].uppercased()] = String(pair[1])
        }
        self.parameters = parameters
        value = String(line.text[line.text.index(after: colon)...])
        valueOffset = line.offset + line.text.distance(from: line.text.startIndex, to: colon) + 1
    }

    /// The value's comma-separated parts.
    var values: [Substring] { value.split(separator: ",", omittingEmptySubsequences: false) }

    /// The value as dates or date-times (VALUE=DATE, TZID=, a trailing Z).
    func dateTimes(knownZone: (String) -> Bool) throws(RuleError) -> [DateTimeValue] {
        let kind = parameters["VALUE"]?.uppercased() ?? "DATE-TIME"
        guard kind == "DATE" || kind == "DATE-TIME" else {
            throw RuleError("VALUE=\(kind) is not read (DATE or DATE-TIME)", at: valueOffset, length: value.count)
        }
        let zone = parameters["TZID"]
        if let zone, !knownZone(zone) {
            throw RuleError("TZID=\(zone) is not a zone of the tz database (e.g. Europe/Berlin)", at: valueOffset, length: value.count)
        }
        var offset = valueOffset
        var out: [DateTimeValue] = []
        for part in values {
            defer { offset += part.count + 1 }
            guard let parsed = Self.dateTime(part, isDate: kind == "DATE", zone: zone) else {
                throw RuleError("\(part) is not a \(kind == "DATE" ? "date (YYYYMMDD)" : "date-time (YYYYMMDDTHHMMSS, Z for UTC)")",
                                at: offset, length: part.count)
            }
            out.append(parsed)
        }
        return out
    }

    /// `20261127`, `20261127T163500`, `20261127T153500Z`: checked as dates and times of day.
    static func dateTime(_ text: Substring, isDate: Bool, zone: String?) -> DateTimeValue? {
        let digits = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= digits.count else { return nil }
            var value = 0
            for byte in digits[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), (1...12).contains(month),
            (1...daysInMonth(year, month)).contains(day)
        else { return nil }
        if isDate { return digits.count == 8 ? .date(year: year, month: month, day: day) : nil }
        guard digits.count == 15 || digits.count == 16, digits[8] == UInt8(ascii: "T"), let hour = number(9..<11),
            let minute = number(11..<13), let second = number(13..<15), hour < 24, minute < 60, second < 61
        else { return nil }
        let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
        if digits.count == 16 {
            guard digits[15] == UInt8(ascii: "Z"), zone == nil else { return nil }
            return .utc(civil)
        }
        return zone.map { .zoned(civil, zone: $0) } ?? .floating(civil)
    }
}

extension RecurrenceRule {
    /// Reads a RRULE value (`FREQ=MONTHLY;BYDAY=-1FR`); `offset` is where it starts in the rule text.
    public init(parsing text: String, offset: Int = 0) throws(RuleError) {
        var frequency: Frequency?
        var rule = RecurrenceRule(frequency: .daily)
        var seen: Set<String> = []
        var position = offset
        for part in text.split(separator: ";", omittingEmptySubsequences: false) {
            defer { position += part.count + 1 }
            func fail(_ message: String) -> RuleError { RuleError(message, at: position, length: part.count) }
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, !pair[1].isEmpty else { throw fail("\(part) is not a rule part (NAME=VALUE)") }
            let name = pair[0].uppercased()
            let value = String(pair[1])
            guard seen.insert(name).inserted else { throw fail("\(name) is given twice") }
            func numbers(_ range: ClosedRange<Int>, signed: Bool) throws(RuleError) -> [Int] {
                var out: [Int] = []
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let n = Int(item), range.contains(abs(n)), signed || n >= 0 else {
                        throw fail("\(name): \(item) is not \(signed ? "±" : "")\(range.lowerBound)-\(range.upperBound)")
                    }
                    out.append(n)
                }
                return out
            }
            switch name {
            case "FREQ":
                guard let f = Frequency(rawValue: value.uppercased()) else {
                    throw fail("FREQ=\(value): give SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY")
                }
                frequency = f
            case "INTERVAL":
                guard let n = Int(value), n >= 1, n <= 1_000_000 else { throw fail("INTERVAL=\(value): give a whole number from 1") }
                rule.interval = n
            case "COUNT":
                guard let n = Int(value), n >= 1, n <= 1_000_000 else { throw fail("COUNT=\(value): give a whole number from 1") }
                rule.count = n
            case "UNTIL":
                let isDate = value.count == 8
                guard let until = ContentLine.dateTime(Substring(value), isDate: isDate, zone: nil) else {
                    throw fail("UNTIL=\(value) is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSSZ)")
                }
                rule.until = until
            case "BYSECOND": rule.bySecond = try numbers(0...60, signed: false)
            case "BYMINUTE": rule.byMinute = try numbers(0...59, signed: false)
            case "BYHOUR": rule.byHour = try numbers(0...23, signed: false)
            case "BYMONTHDAY": rule.byMonthDay = try numbers(1...31, signed: true)
            case "BYYEARDAY": rule.byYearDay = try numbers(1...366, signed: true)
            case "BYWEEKNO": rule.byWeekNo = try numbers(1...53, signed: true)
            case "BYMONTH": rule.byMonth = try numbers(1...12, signed: false)
            case "BYSETPOS": rule.bySetPos = try numbers(1...366, signed: true)
            case "BYDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    let code = String(item.suffix(2)).uppercased()
                    let prefix = item.dropLast(2)
                    guard let weekday = Self.weekdayCodes[code] else { throw fail("BYDAY: \(item) is not a weekday (MO, TU, ... or -1FR)") }
                    var ordinal: Int?
                    if !prefix.isEmpty {
                        guard let n = Int(prefix), n != 0, abs(n) <= 53 else { throw fail("BYDAY: \(item): the number is ±1-53") }
                        ordinal = n
                    }
                    rule.byDay.append(WeekdayNumber(ordinal: ordinal, weekday: weekday))
                }
            case "WKST":
                guard let weekday = Self.weekdayCodes[value.uppercased()] else { throw fail("WKST=\(value) is not a weekday (MO ... SU)") }
                rule.weekStart = weekday
            default:
                throw fail("\(name) is not a part of RRULE (FREQ, INTERVAL, COUNT, UNTIL, BYSECOND ... BYSETPOS, WKST)")
            }
        }
        guard let frequency else { throw RuleError("RRULE needs FREQ, e.g. FREQ=WEEKLY", at: offset, length: text.count) }
        rule.frequency = frequency
        func refuse(_ message: String) -> RuleError { RuleError(message, at: offset, length: text.count) }
        // §3.3.10: the parts that do not go together.
        if rule.count != nil, rule.until != nil { throw refuse("give COUNT or UNTIL, not both") }
        if !rule.byWeekNo.isEmpty, frequency != .yearly { throw refuse("BYWEEKNO goes with FREQ=YEARLY only") }
        if !rule.byYearDay.isEmpty, [.daily, .weekly, .monthly].contains(frequency) {
            throw refuse("BYYEARDAY does not go with FREQ=\(frequency.rawValue)")
        }
        if !rule.byMonthDay.isEmpty, frequency == .weekly { throw refuse("BYMONTHDAY does not go with FREQ=WEEKLY") }
        if rule.byDay.contains(where: { $0.ordinal != nil }) {
            if frequency != .monthly, frequency != .yearly { throw refuse("BYDAY with a number (-1FR) goes with FREQ=MONTHLY or YEARLY only") }
            if frequency == .yearly, !rule.byWeekNo.isEmpty { throw refuse("BYDAY with a number does not go with BYWEEKNO") }
        }
        if !rule.bySetPos.isEmpty, rule.bySecond.isEmpty, rule.byMinute.isEmpty, rule.byHour.isEmpty, rule.byDay.isEmpty,
            rule.byMonthDay.isEmpty, rule.byYearDay.isEmpty, rule.byWeekNo.isEmpty, rule.byMonth.isEmpty
        {
            throw refuse("BYSETPOS needs another BY part to choose from")
        }
        self = rule
    }
}
