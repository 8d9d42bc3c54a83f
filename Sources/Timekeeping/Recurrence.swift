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

        /// The name as bytes (what the reader compares, without building a string).
        var bytes: [UInt8] { Self.names[Self.allCases.firstIndex(of: self)!] }
        private static let names = allCases.map { Array($0.rawValue.utf8) }
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
    /// database's, by default). Errors point at the text, in characters.
    public init(parsing text: String, knownZone: ((String) -> Bool)? = nil) throws(RuleError) {
        try Rule.checkSize(text)
        var source = text
        var reading = Reading(knownZone: knownZone)
        var written = text
        do throws(RuleError) {
            var failure: RuleError?
            source.withUTF8 { bytes in
                // The lines: separated by newlines, or by spaces or tabs between them. As written
                // means one space between them (the text itself, when it is so already).
                var asWritten = true
                var start = 0
                var previousEnd = -1
                for i in 0...bytes.count {
                    if i < bytes.count {
                        let byte = bytes[i]
                        guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { continue }
                    }
                    if i > start {
                        if previousEnd >= 0 ? (start != previousEnd + 1 || bytes[previousEnd] != 0x20) : start != 0 { asWritten = false }
                        do throws(RuleError) {
                            // `RRULE:` without parameters (as rules are written): its value is read
                            // where it lies, without making a line of it first.
                            if i - start > 6, Self.isPlainRRULE(bytes, start) {
                                try RecurrenceRule.read(UnsafeBufferPointer(rebasing: bytes[(start + 6)..<i]), offset: start + 6,
                                                        into: &reading.rules)
                            } else {
                                let line: ContentLine
                                do throws(ContentLine.ReadError) { line = try ContentLine.read(bytes, start..<i) } catch {
                                    throw RuleError(error.message, at: error.offset, length: error.length)
                                }
                                try reading.add(line)
                            }
                        } catch {
                            failure = error
                            return
                        }
                        previousEnd = i
                    }
                    start = i + 1
                }
                if previousEnd != bytes.count { asWritten = false }
                if !asWritten {
                    written = ContentLine.segments(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                        .joined(separator: " ")
                }
            }
            if let failure { throw failure }
            try self.init(reading, text: written)
        } catch {
            // Offsets were counted in bytes; the caret under the text counts characters.
            guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { throw error }
            let from = text.characterOffset(ofByte: error.offset)
            throw RuleError(error.message, at: from, length: text.characterOffset(ofByte: error.offset + error.length) - from)
        }
    }

    /// Whether the line at `start` begins `RRULE:` (in any case).
    static func isPlainRRULE(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> Bool {
        bytes[start] & 0xDF == 0x52 && bytes[start + 1] & 0xDF == 0x52 && bytes[start + 2] & 0xDF == 0x55
            && bytes[start + 3] & 0xDF == 0x4C && bytes[start + 4] & 0xDF == 0x45 && bytes[start + 5] == UInt8(ascii: ":")
    }

    /// A recurrence from content lines already read (an imported event's DTSTART, RRULE, RDATE
    /// and EXDATE, their TZIDs named as the tz database names them); its text is the lines as
    /// `ContentLine.written` writes them.
    public init(lines: [ContentLine], knownZone: ((String) -> Bool)? = nil) throws(RuleError) {
        let text = lines.map(\.written).joined(separator: " ")
        try Rule.checkSize(text)
        try self.init(lines: lines, text: text, knownZone: knownZone)
    }

    /// What the lines of a recurrence say, gathered one line at a time as they are read.
    struct Reading {
        let knownZone: ((String) -> Bool)?
        /// The first zone found (mostly the only one: DTSTART's), so it is looked up once.
        var firstFound: (name: String, zone: Zone)?
        var start: DateTimeValue?
        var rules: [RecurrenceRule] = []
        var dates: [DateTimeValue] = []
        var exceptions: [DateTimeValue] = []

        init(knownZone: ((String) -> Bool)?) { self.knownZone = knownZone }

        mutating func isKnown(_ name: String) -> Bool {
            if let knownZone { return knownZone(name) }
            if firstFound?.name == name { return true }
            guard let zone = try? Zone.named(name) else { return false }
            if firstFound == nil { firstFound = (name, zone) }
            return true
        }

        mutating func add(_ line: ContentLine) throws(RuleError) {
            switch line.name {
            case "DTSTART":
                guard start == nil else { throw RuleError("DTSTART is given twice", at: line.offset, length: line.valueOffset - line.offset) }
                var one: DateTimeValue?
                var count = 0
                try Recurrence.dateTimes(line, { isKnown($0) }) { value in
                    one = value
                    count += 1
                }
                guard count == 1, let one else {
                    throw RuleError("DTSTART takes one date or date-time", at: line.valueOffset, length: line.value.utf8.count)
                }
                start = one
            case "RRULE":
                try RecurrenceRule.read(line.value, offset: line.valueOffset, into: &rules)
            case "RDATE":
                try Recurrence.dateTimes(line, { isKnown($0) }) { dates.append($0) }
            case "EXDATE":
                try Recurrence.dateTimes(line, { isKnown($0) }) { exceptions.append($0) }
            default:
                throw RuleError("\(line.name) is not a recurrence property (DTSTART, RRULE, RDATE, EXDATE)",
                                at: line.offset, length: line.name.utf8.count)
            }
        }
    }

    private init(lines: [ContentLine], text: String, knownZone: ((String) -> Bool)?) throws(RuleError) {
        var reading = Reading(knownZone: knownZone)
        for line in lines { try reading.add(line) }
        try self.init(reading, text: text)
    }

    private init(_ reading: consuming Reading, text: String) throws(RuleError) {
        guard let start = reading.start.take() else {
            throw RuleError("a recurrence needs DTSTART, e.g. DTSTART;TZID=Europe/Berlin:20261127T163500")
        }
        // What DTSTART is, read once (each look at an enum with a string in it copies it).
        enum Kind { case date, floating, utc, zoned }
        var civil = CivilTime(year: 1970, month: 1, day: 1)
        var kind = Kind.date
        var zoneName: String?
        switch start {
        case .date(let y, let m, let d): civil = CivilTime(year: y, month: m, day: d)
        case .floating(let c): (civil, kind) = (c, .floating)
        case .utc(let c): (civil, kind) = (c, .utc)
        case .zoned(let c, let name): (civil, kind, zoneName) = (c, .zoned, name)
        }
        // DTSTART alone is one occurrence (a calendar's one-off event).
        for index in reading.rules.indices {
            // §3.3.10: UNTIL is of DTSTART's value type, and in UTC where DTSTART names a zone or UTC.
            // (Its kind told without binding the value: that would copy it.)
            let until: Kind
            switch reading.rules[index].until {
            case .none: continue
            case .date?: until = .date
            case .floating?: until = .floating
            case .utc?: until = .utc
            case .zoned?: until = .zoned
            }
            if (until == .date) != (kind == .date) {
                throw RuleError("RRULE \(index + 1): UNTIL must be a \(kind == .date ? "date" : "date-time"), as DTSTART is")
            }
            switch kind {
            case .utc, .zoned:
                guard until == .utc else { throw RuleError("RRULE \(index + 1): UNTIL must be in UTC (ending in Z), as DTSTART is not floating") }
            case .floating:
                guard until == .utc || until == .floating else { throw RuleError("RRULE \(index + 1): UNTIL must be floating or in UTC") }
            case .date:
                break
            }
        }
        var expansions: [RuleExpansion] = []
        expansions.reserveCapacity(reading.rules.count)
        for index in reading.rules.indices { expansions.append(RuleExpansion(reading.rules[index], start: civil)) }
        self.expansions = expansions
        if let zoneName {
            // The zone found while reading, moved out rather than copied (a zone is six references).
            if let (name, zone) = reading.firstFound.take(), name == zoneName {
                startZone = consume zone
            } else {
                startZone = try? Zone.named(zoneName)
            }
            self.rules = reading.rules
            self.dates = reading.dates
            self.exceptions = reading.exceptions
        } else {
            startZone = nil
            self.rules = reading.rules
            self.dates = reading.dates
            self.exceptions = reading.exceptions
        }
        switch kind {
        case .utc: startInstant = civil.localSeconds
        case .zoned: startInstant = startZone.map { Self.instant(civil, in: $0) }
        case .date, .floating: startInstant = nil
        }
        self.start = start
        self.text = text
    }

    /// The content lines of the recurrence, read again from its text (the export writes them).
    public var lines: [ContentLine] {
        var source = text
        return source.withUTF8 { bytes in ContentLine.segments(bytes).compactMap { try? ContentLine.read(bytes, $0) } }
    }

    /// A DTSTART, RDATE or EXDATE line's value as dates or date-times (VALUE=DATE, TZID=, a trailing Z).
    static func dateTimes(_ line: ContentLine, _ knownZone: (String) -> Bool, _ each: (DateTimeValue) -> Void) throws(RuleError) {
        let kind = line.parameters["VALUE"]?.uppercased() ?? "DATE-TIME"
        guard kind == "DATE" || kind == "DATE-TIME" else {
            throw RuleError("VALUE=\(kind) is not read (DATE or DATE-TIME)", at: line.valueOffset, length: line.value.utf8.count)
        }
        let isDate = kind == "DATE"
        let zone = line.parameters["TZID"]
        if let zone, !knownZone(zone) {
            throw RuleError("TZID=\(zone) is not a zone of the tz database (e.g. Europe/Berlin)", at: line.valueOffset, length: line.value.utf8.count)
        }
        var value = line.value
        var failure: RuleError?
        value.withUTF8 { bytes in
            do throws(RuleError) {
            var from = 0
            for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: ",") {
                guard let parsed = dateTime(bytes, from..<i, isDate: isDate, zone: zone) else {
                    let part = String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<i]), as: UTF8.self)
                    throw RuleError("\(part) is not a \(isDate ? "date (YYYYMMDD)" : "date-time (YYYYMMDDTHHMMSS, Z for UTC)")",
                                    at: line.valueOffset + from, length: i - from)
                }
                each(parsed)
                from = i + 1
            }
            } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// `20261127`, `20261127T163500`, `20261127T153500Z`: checked as dates and times of day.
    static func dateTime(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, isDate: Bool, zone: String?) -> DateTimeValue? {
        let count = range.count
        let base = range.lowerBound
        func number(_ from: Int, _ to: Int) -> Int? {
            guard to <= count else { return nil }
            var value = 0
            for i in (base + from)..<(base + to) {
                let byte = bytes[i]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(4, 6), let day = number(6, 8), (1...12).contains(month),
            (1...daysInMonth(year, month)).contains(day)
        else { return nil }
        if isDate { return count == 8 ? .date(year: year, month: month, day: day) : nil }
        guard count == 15 || count == 16, bytes[base + 8] == UInt8(ascii: "T"), let hour = number(9, 11),
            let minute = number(11, 13), let second = number(13, 15), hour < 24, minute < 60, second < 61
        else { return nil }
        let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
        if count == 16 {
            guard bytes[base + 15] == UInt8(ascii: "Z"), zone == nil else { return nil }
            return .utc(civil)
        }
        return zone.map { .zoned(civil, zone: $0) } ?? .floating(civil)
    }
}

extension RecurrenceRule {
    /// Reads a RRULE value (`FREQ=MONTHLY;BYDAY=-1FR`); `offset` is where it starts in the rule
    /// text (in bytes). Read as bytes: a rule is ASCII, and nothing here builds a `Character`.
    public init(parsing text: String, offset: Int = 0) throws(RuleError) {
        try Rule.checkSize(text)
        var source = text
        var read: RecurrenceRule?
        var failure: RuleError?
        source.withUTF8 { bytes in
            do throws(RuleError) {
                var one = RecurrenceRule(frequency: .daily)
                try Self.read(bytes, offset: offset, filling: &one)
                read = one
            } catch { failure = error }
        }
        if let failure { throw failure }
        self = read.take().unsafelyUnwrapped
    }

    /// A rule part's name (`Part(rawValue:)` is its index in `partNames`).
    private enum Part: Int {
        case freq, interval, count, until, bySecond, byMinute, byHour, byMonthDay, byYearDay, byWeekNo, byMonth, bySetPos, byDay, wkst
    }

    /// Which part `bytes[range]` names, in any case; nil: none. Told apart by length and first
    /// letter, then checked whole.
    private static func part(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Part? {
        guard range.count >= 4, range.count <= 10 else { return nil }
        let candidate: Part? = switch (range.count, bytes[range.lowerBound] & 0xDF, bytes[range.lowerBound + 2] & 0xDF) {
        case (4, 0x46, _): .freq  // FREQ
        case (4, 0x57, _): .wkst  // WKST
        case (8, 0x49, _): .interval  // INTERVAL
        case (5, 0x43, _): .count  // COUNT
        case (5, 0x55, _): .until  // UNTIL
        case (8, 0x42, 0x53): .bySecond  // BYSECOND
        case (8, 0x42, 0x4D): .byMinute  // BYMINUTE
        case (6, 0x42, 0x48): .byHour  // BYHOUR
        case (10, 0x42, 0x4D): .byMonthDay  // BYMONTHDAY
        case (9, 0x42, 0x59): .byYearDay  // BYYEARDAY
        case (8, 0x42, 0x57): .byWeekNo  // BYWEEKNO
        case (7, 0x42, 0x4D): .byMonth  // BYMONTH
        case (5, 0x42, 0x44): .byDay  // BYDAY
        default: nil
        }
        guard var found = candidate else { return nil }
        // BYSECOND and BYSETPOS share length and third letter.
        if found == .bySecond, bytes[range.lowerBound + 4] & 0xDF == 0x54 { found = .bySetPos }
        let name = partNameBytes[found.rawValue]
        for k in 0..<name.count where bytes[range.lowerBound + k] & 0xDF != name[k] { return nil }
        return found
    }

    /// `[+-]digits` (at most 9 digits) in `bytes[from..<to]`, or nil.
    @inline(__always) private static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var i = from
        var sign = 1
        if i < to, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
            if bytes[i] == UInt8(ascii: "-") { sign = -1 }
            i += 1
        }
        guard i < to, to - i <= 9 else { return nil }
        var value = 0
        while i < to {
            let digit = bytes[i] &- 0x30
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
            i += 1
        }
        return sign * value
    }

    /// Reads `text` onto the end of `rules` (read in place: a rule is not copied on its way there).
    static func read(_ text: String, offset: Int, into rules: inout [RecurrenceRule]) throws(RuleError) {
        var source = text
        var failure: RuleError?
        source.withUTF8 { bytes in
            do throws(RuleError) { try Self.read(bytes, offset: offset, into: &rules) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Reads a RRULE value onto the end of `rules`, filled where it lies (a rule is nine arrays:
    /// each copy of one retains them all); nothing is added when it is not a rule.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int, into rules: inout [RecurrenceRule]) throws(RuleError) {
        rules.append(RecurrenceRule(frequency: .daily))
        do throws(RuleError) {
            try read(bytes, offset: offset, filling: &rules[rules.count - 1])
        } catch {
            rules.removeLast()
            throw error
        }
    }

    static func read(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int, filling rule: inout RecurrenceRule) throws(RuleError) {
        var frequency: Frequency?
        var hasUntil = false
        var seen: UInt32 = 0
        var partStart = 0
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        while partStart <= bytes.count {
            var partEnd = partStart
            var equals = -1
            while partEnd < bytes.count, bytes[partEnd] != UInt8(ascii: ";") {
                if equals < 0, bytes[partEnd] == UInt8(ascii: "=") { equals = partEnd }
                partEnd += 1
            }
            let part = partStart..<partEnd
            partStart = partEnd + 1
            func fail(_ message: String) -> RuleError { RuleError(message, at: offset + part.lowerBound, length: part.count) }
            guard equals >= 0, equals + 1 < part.upperBound else { throw fail("\(text(part)) is not a rule part (NAME=VALUE)") }
            guard let name = Self.part(bytes, part.lowerBound..<equals) else {
                throw fail("\(text(part.lowerBound..<equals).uppercased()) is not a part of RRULE (FREQ, INTERVAL, COUNT, UNTIL, BYSECOND ... BYSETPOS, WKST)")
            }
            let nameText = partNames[name.rawValue]
            guard seen & (1 << name.rawValue) == 0 else { throw fail("\(nameText) is given twice") }
            seen |= 1 << name.rawValue
            let from = equals + 1, to = part.upperBound
            func numbers(_ allowed: ClosedRange<Int>, signed: Bool) throws(RuleError) -> [Int] {
                var commas = 0
                for i in from..<to where bytes[i] == UInt8(ascii: ",") { commas += 1 }
                if commas == 0, let n = integer(bytes, from, to), allowed.contains(abs(n)), signed || n >= 0 { return RecurrenceRule.one(n) }
                var out: [Int] = []
                out.reserveCapacity(commas + 1)
                var itemStart = from
                for i in from...to where i == to || bytes[i] == UInt8(ascii: ",") {
                    guard let n = integer(bytes, itemStart, i), allowed.contains(abs(n)), signed || n >= 0 else {
                        throw fail("\(nameText): \(text(itemStart..<i)) is not \(signed ? "±" : "")\(allowed.lowerBound)-\(allowed.upperBound)")
                    }
                    out.append(n)
                    itemStart = i + 1
                }
                // Each value once: a part is a set, and repeats would multiply the work of every
                // period (BYHOUR, BYMINUTE and BYSECOND of 800 zeros each: 512 million times). A list
                // without repeats (nearly every one) is kept as read, without allocating to check it.
                if out.count > 16 { return sortedUnique(out) }
                for i in out.indices.dropFirst() {
                    for j in 0..<i where out[j] == out[i] { return sortedUnique(out) }
                }
                return out
            }
            switch name {
            case .freq:
                var found: Frequency?
                for candidate in Frequency.allCases where candidate.bytes.count == to - from {
                    var same = true
                    for k in 0..<(to - from) where bytes[from + k] & 0xDF != candidate.bytes[k] { same = false; break }
                    if same { found = candidate; break }
                }
                guard let found else {
                    throw fail("FREQ=\(text(from..<to)): give SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY")
                }
                frequency = found
            case .interval:
                guard let n = integer(bytes, from, to), n >= 1, n <= 1_000_000 else { throw fail("INTERVAL=\(text(from..<to)): give a whole number from 1") }
                rule.interval = n
            case .count:
                guard let n = integer(bytes, from, to), n >= 1, n <= 1_000_000 else { throw fail("COUNT=\(text(from..<to)): give a whole number from 1") }
                rule.count = n
            case .until:
                guard let until = Recurrence.dateTime(bytes, from..<to, isDate: to - from == 8, zone: nil) else {
                    throw fail("UNTIL=\(text(from..<to)) is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSSZ)")
                }
                rule.until = until
                hasUntil = true
            case .bySecond: rule.bySecond = try numbers(0...60, signed: false)
            case .byMinute: rule.byMinute = try numbers(0...59, signed: false)
            case .byHour: rule.byHour = try numbers(0...23, signed: false)
            case .byMonthDay: rule.byMonthDay = try numbers(1...31, signed: true)
            case .byYearDay: rule.byYearDay = try numbers(1...366, signed: true)
            case .byWeekNo: rule.byWeekNo = try numbers(1...53, signed: true)
            case .byMonth: rule.byMonth = try numbers(1...12, signed: false)
            case .bySetPos: rule.bySetPos = try numbers(1...366, signed: true)
            case .byDay:
                var days: [WeekdayNumber] = []
                var commas = 0
                for i in from..<to where bytes[i] == UInt8(ascii: ",") { commas += 1 }
                days.reserveCapacity(commas + 1)
                var itemStart = from
                for i in from...to where i == to || bytes[i] == UInt8(ascii: ",") {
                    defer { itemStart = i + 1 }
                    guard i - itemStart >= 2, let weekday = Self.weekday(bytes[i - 2], bytes[i - 1]) else {
                        throw fail("BYDAY: \(text(itemStart..<i)) is not a weekday (MO, TU, ... or -1FR)")
                    }
                    var ordinal: Int?
                    if i - itemStart > 2 {
                        guard let n = integer(bytes, itemStart, i - 2), n != 0, abs(n) <= 53 else {
                            throw fail("BYDAY: \(text(itemStart..<i)): the number is ±1-53")
                        }
                        ordinal = n
                    }
                    days.append(WeekdayNumber(ordinal: ordinal, weekday: weekday))
                }
                // Each once (at most 7 × 107), in the order first given; a list without repeats
                // (nearly every one: MO,WE,FR) is kept as read, without allocating to check it.
                var repeats = false
                if days.count > 16 {
                    repeats = Set(days).count != days.count
                } else {
                    outer: for i in days.indices.dropFirst() {
                        for j in 0..<i where days[j] == days[i] { repeats = true; break outer }
                    }
                }
                if repeats {
                    var seenDays = Set<WeekdayNumber>()
                    days = days.filter { seenDays.insert($0).inserted }
                }
                rule.byDay = days
            case .wkst:
                guard to - from == 2, let weekday = Self.weekday(bytes[from], bytes[from + 1]) else {
                    throw fail("WKST=\(text(from..<to)) is not a weekday (MO ... SU)")
                }
                rule.weekStart = weekday
            }
        }
        guard let frequency else { throw RuleError("RRULE needs FREQ, e.g. FREQ=WEEKLY", at: offset, length: bytes.count) }
        rule.frequency = frequency
        func refuse(_ message: String) -> RuleError { RuleError(message, at: offset, length: bytes.count) }
        // §3.3.10: the parts that do not go together.
        if rule.count != nil, hasUntil { throw refuse("give COUNT or UNTIL, not both") }
        if !rule.byWeekNo.isEmpty, frequency != .yearly { throw refuse("BYWEEKNO goes with FREQ=YEARLY only") }
        if !rule.byYearDay.isEmpty, frequency == .daily || frequency == .weekly || frequency == .monthly {
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
    }

    /// The part names as upper-case bytes (compared with a byte `& 0xDF`: letters in any case).
    private static let partNameBytes = partNames.map { Array($0.utf8) }
    static let partNames = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYMONTHDAY", "BYYEARDAY",
                            "BYWEEKNO", "BYMONTH", "BYSETPOS", "BYDAY", "WKST"]

    /// The weekday of a two-letter code (`MO` ... `SU`, any case): 1 Monday ... 7 Sunday.
    static func weekday(_ a: UInt8, _ b: UInt8) -> Int? {
        switch (a & 0xDF, b & 0xDF) {
        case (0x4D, 0x4F): 1  // MO
        case (0x54, 0x55): 2  // TU
        case (0x57, 0x45): 3  // WE
        case (0x54, 0x48): 4  // TH
        case (0x46, 0x52): 5  // FR
        case (0x53, 0x41): 6  // SA
        case (0x53, 0x55): 7  // SU
        default: nil
        }
    }
}
