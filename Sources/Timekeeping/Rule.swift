// Every form of rule chime accepts, parsed from text: the short human forms,
// systemd calendar expressions, intervals, date components and one instant.

/// When an alarm fires: the rule, in the zone it names or the system's.
///
/// Forms (`chime next --help` and the README list them with examples):
/// - human: `16:35`, `16:35 mon-fri`, `07:00 mon,wed,fri`, `weekdays 08:00`,
///   `2026-12-24 18:00`, `in 5m`, `in 1h30m`, `every 25m`;
/// - any systemd calendar expression: `Mon..Fri *-*-* 16:35:00`, `*:0/15`, `*-*~01`, `weekly`;
/// - iCalendar recurrence (RFC 5545): `DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR`;
/// - from code: date components (`UNCalendarNotificationTrigger` style) and one absolute instant.
public enum Rule: Hashable, Sendable {
    /// A wall-clock rule (the human forms compile to one of these).
    case calendar(CalendarExpression)
    /// `span` after the moment the rule was set; with `repeats`, every `span` from then on.
    case interval(TimeSpan, repeats: Bool)
    /// One absolute instant.
    case instant(Instant)
    /// iCalendar recurrence (RFC 5545): DTSTART with RRULEs, RDATEs and EXDATEs.
    case recurrence(Recurrence)

    /// The longest rule text read, in bytes: every door (D-Bus, the command line, the alarm file,
    /// an imported or followed calendar) is held to it before anything is parsed.
    public static let maximumBytes = 16_384

    /// Refuses text longer than `maximumBytes`, before it is parsed.
    static func checkSize(_ text: String) throws(RuleError) {
        let size = text.utf8.count
        if size > maximumBytes { throw RuleError("the rule is \(size) bytes; a rule has at most \(maximumBytes)") }
    }

    /// Parses any text form; errors point at the offending part of `text`.
    public init(parsing text: String) throws(RuleError) {
        try Self.checkSize(text)
        if Recurrence.looksLikeContentLines(text) {
            self = .recurrence(try Recurrence(parsing: text))
        } else if let rule = try HumanRule.parse(text) {
            self = rule
        } else {
            self = .calendar(try CalendarExpression(parsing: text))
        }
    }

    /// Any rule a person may write: the machine forms above first, then a phrase in English, German, French or Spanish
    /// (`tomorrow 7am`, `every other tuesday 09:00`, `jeden zweiten Dienstag um 9:00`), read as said
    /// at `context.said`. `repeats` and `words` come with a phrase (nil for a machine form). When
    /// neither reads it, the error is the phrase reading's if the text has words a phrase has.
    public static func reading(_ text: String, _ context: PhraseContext) throws(RuleError) -> (rule: Rule, repeats: Bool?, words: String?) {
        let machine: RuleError
        do {
            return (try Rule(parsing: text), nil, nil)
        } catch {
            machine = error
        }
        do {
            let phrase = try Phrase.read(text, context)
            return (phrase.rule, phrase.repeats, phrase.words)
        } catch {
            // A systemd expression or an RFC 5545 rule gets its own parser's word on what is wrong.
            let machineLike = ["*", "..", "~", "="].contains { text.contains($0) } || text.uppercased().hasPrefix("DTSTART")
                || text.uppercased().hasPrefix("RRULE")
            // Else the phrase's, unless it stopped at something it did not know as a word, a time or a
            // date and has no word to suggest (`16:65`, `99999999999m`): the machine reading says
            // more of those (minute 65 is out of range; too large).
            if machineLike { throw machine }
            let stopped = PhraseTokenizer.tokens(text, language: context.language).first { $0.offset == error.offset }
            if case .unknown? = stopped?.kind, !error.suggests { throw machine }
            throw error
        }
    }

    /// The next time the rule fires strictly after `time`, or nil when it never does again
    /// (nothing after `Instant.latest` counts). `anchor` is when the rule was set: an
    /// interval counts from it, and a non-repeating rule fires only at its first time after it.
    ///
    /// This is where calendar arithmetic, which works in whole seconds, meets instants:
    /// wall-clock rules fire on the second.
    public func nextFire(after time: Instant, anchor: Instant, repeats: Bool = true, in zone: Zone) -> Instant? {
        let next: Instant?
        switch self {
        case .instant(let t):
            next = t > time ? t : nil
        case .interval(let span, let again):
            guard span > .zero else { return nil }
            let first = anchor + span
            if first > time {
                next = first
            } else if again && repeats {
                let steps = (time - first).nanoseconds / span.nanoseconds + 1
                next = first + span * steps
            } else {
                next = nil
            }
        case .calendar(let expression):
            if repeats {
                next = expression.nextElapse(after: time.seconds, in: zone).map { Instant(seconds: $0) }
            } else {
                // The first time after the anchor, if that is still ahead.
                let only = expression.nextElapse(after: anchor.seconds, in: zone).map { Instant(seconds: $0) }
                next = only.flatMap { $0 > time ? $0 : nil }
            }
        case .recurrence(let recurrence):
            // Its own DTSTART anchors it; `zone` is where a floating time is read.
            if repeats {
                next = recurrence.next(after: time.seconds, floatingZone: zone).map { Instant(seconds: $0) }
            } else {
                let only = recurrence.next(after: anchor.seconds, floatingZone: zone).map { Instant(seconds: $0) }
                next = only.flatMap { $0 > time ? $0 : nil }
            }
        }
        guard let next, next <= Instant.latest else { return nil }
        return next
    }

    /// Whether the rule fires more than once.
    public var repeats: Bool {
        switch self {
        case .instant: false
        case .interval(_, let repeats): repeats
        case .calendar(let expression): !expression.matchesOnce
        case .recurrence(let recurrence): !recurrence.rules.isEmpty || recurrence.dates.count > 1
        }
    }
}

/// Date components to match, as `UNCalendarNotificationTrigger` takes them:
/// fields left out above the most significant given one match anything; those
/// below the least significant given one are their first value (so
/// `hour: 8` means 08:00:00 every day). `weekday` is ISO: 1 Monday ... 7 Sunday.
public struct DateComponents: Hashable, Sendable, Codable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var weekday: Int?
    public var hour: Int?
    public var minute: Int?
    public var second: Int?

    public init(year: Int? = nil, month: Int? = nil, day: Int? = nil, weekday: Int? = nil, hour: Int? = nil,
                minute: Int? = nil, second: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.weekday = weekday
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The equivalent calendar expression.
    public func expression() throws(RuleError) -> CalendarExpression {
        let fields = [year, month, day, hour, minute, second]
        guard fields.contains(where: { $0 != nil }) || weekday != nil else {
            throw RuleError("give at least one date component")
        }
        // Below the least significant given field, fields take their first value.
        let lowest = fields.lastIndex { $0 != nil } ?? 2  // a weekday alone is a day-level field
        func part(_ index: Int, _ first: Int, _ width: Int) -> String {
            if let value = fields[index] { return pad(value, width) }
            return index > lowest ? pad(first, width) : "*"
        }
        var text = ""
        if let weekday {
            guard (1...7).contains(weekday) else { throw RuleError("weekday \(weekday) is out of range 1-7 (1 is Monday)") }
            text = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][weekday - 1] + " "
        }
        text += "\(part(0, 0, 4))-\(part(1, 1, 2))-\(part(2, 1, 2)) \(part(3, 0, 2)):\(part(4, 0, 2)):\(part(5, 0, 2))"
        return try CalendarExpression(parsing: text)
    }
}

// MARK: - The short human forms

enum HumanRule {
    static let dayNames: [(String, Int)] = [
        ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("tues", 1), ("wednesday", 2), ("wed", 2),
        ("thursday", 3), ("thu", 3), ("thur", 3), ("thurs", 3), ("friday", 4), ("fri", 4), ("saturday", 5),
        ("sat", 5), ("sunday", 6), ("sun", 6),
    ]

    /// A human form, or nil when `text` is not one (then it is read as a systemd expression).
    static func parse(_ text: String) throws(RuleError) -> Rule? {
        // One unit per character, lower-cased (offsets in errors count characters).
        let source = CharacterUnits(text)
        let units = source.units.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        let words = tokens(units)
        guard let first = words.first else { return nil }
        func wordText(_ word: Token) -> String { String(decoding: units[word.range], as: UTF8.self) }
        let firstText = wordText(first)
        if firstText == "in" || firstText == "every" {
            guard words.count >= 2 else {
                throw RuleError("'\(firstText)' needs a duration, e.g. '\(firstText) 5m'", at: first.offset, length: first.length)
            }
            let start = words[1].offset
            let seconds = try duration(source.text(start..<units.count).lowercased(), offset: start)
            return .interval(.seconds(seconds), repeats: firstText == "every")
        }
        // [days] TIME [days] [zone], or DATE TIME [zone]
        var days: UInt8 = 0
        var time: (Int, Int, Int)? = nil
        var date: (Int, Int, Int)? = nil
        var zone: String? = nil
        for (index, word) in words.enumerated() {
            if let t = try clock(units, word) {
                guard time == nil else { throw RuleError("the rule has two times", at: word.offset, length: word.length) }
                time = t
            } else if let d = try calendarDate(units, word) {
                guard date == nil else { throw RuleError("the rule has two dates", at: word.offset, length: word.length) }
                date = d
            } else if let bits = dayList(wordText(word)) {
                days |= bits
            } else if index == words.count - 1, index > 0, let name = zoneName(source.text(word.range)) {
                zone = name
            } else {
                // Not a human form: let the systemd parser read (and report on) it.
                return nil
            }
        }
        guard let (hour, minute, second) = time else { return nil }
        if date != nil && days != 0 { return nil }
        // Every part was checked as it was read: the expression is built, not parsed again.
        var expression = CalendarExpression(hour: hour, minute: minute, second: second)
        if days != 0 && days != 0x7F { expression.weekdays = days }
        if let (y, m, d) = date {
            expression.years = [.init(start: y, stop: nil, repeatEvery: 0)]
            expression.months = [.init(start: m, stop: nil, repeatEvery: 0)]
            expression.days = [.init(start: d, stop: nil, repeatEvery: 0)]
        }
        expression.timeZone = zone
        return .calendar(expression)
    }

    struct Token {
        /// Where the word is, in characters (one unit each).
        var range: Range<Int>
        var offset: Int { range.lowerBound }
        var length: Int { range.count }
    }

    static func tokens(_ units: [UInt8]) -> [Token] {
        var result: [Token] = []
        var i = 0
        while i < units.count {
            while i < units.count, units[i] == UInt8(ascii: " ") { i += 1 }
            let start = i
            while i < units.count, units[i] != UInt8(ascii: " ") { i += 1 }
            if i > start { result.append(Token(range: start..<i)) }
        }
        return result
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    /// The word split at `separator` into runs of 1...`maxDigits` digits, or nil when it is not that shape.
    static func numbers(_ units: [UInt8], _ word: Token, separator: UInt8, maxDigits: [Int]) -> [(value: Int, length: Int)]? {
        var parts: [(Int, Int)] = []
        var i = word.range.lowerBound
        while true {
            let start = i
            var value = 0
            while i < word.range.upperBound, isDigit(units[i]) {
                // A run longer than any field is not this shape: stop before the value can overflow.
                guard i - start < 4 else { return nil }
                value = value * 10 + Int(units[i] - UInt8(ascii: "0"))
                i += 1
            }
            let length = i - start
            guard parts.count < maxDigits.count, length > 0, length <= maxDigits[parts.count] else { return nil }
            parts.append((value, length))
            if i == word.range.upperBound { return parts }
            guard units[i] == separator else { return nil }
            i += 1
        }
    }

    /// `HH:MM` or `HH:MM:SS` with plain numbers; out-of-range parts are errors pointing at them.
    static func clock(_ units: [UInt8], _ word: Token) throws(RuleError) -> (Int, Int, Int)? {
        guard let parts = numbers(units, word, separator: UInt8(ascii: ":"), maxDigits: [2, 2, 2]), parts.count >= 2 else { return nil }
        var offset = word.offset
        for (part, (name, range)) in zip(parts, [("hour", 0...23), ("minute", 0...59), ("second", 0...59)]) {
            if !range.contains(part.value) {
                throw RuleError("\(name) \(part.value) is out of range \(range.lowerBound)-\(range.upperBound)",
                                at: offset, length: String(part.value).count)
            }
            offset += 3
        }
        return (parts[0].value, parts[1].value, parts.count > 2 ? parts[2].value : 0)
    }

    /// `YYYY-MM-DD`, checked against the calendar.
    static func calendarDate(_ units: [UInt8], _ word: Token) throws(RuleError) -> (Int, Int, Int)? {
        guard let parts = numbers(units, word, separator: UInt8(ascii: "-"), maxDigits: [4, 2, 2]), parts.count == 3,
            parts[0].length == 4
        else { return nil }
        let (y, m, d) = (parts[0].value, parts[1].value, parts[2].value)
        guard CalendarExpression.years.contains(y) else {
            throw RuleError("year \(y) is out of range \(CalendarExpression.years.lowerBound)-\(CalendarExpression.years.upperBound)",
                            at: word.offset, length: 4)
        }
        guard (1...12).contains(m) else { throw RuleError("month \(m) is out of range 1-12", at: word.offset + 5, length: parts[1].length) }
        guard (1...daysInMonth(y, m)).contains(d) else {
            throw RuleError("day \(d) is out of range 1-\(daysInMonth(y, m)) for \(pad(y, 4))-\(pad(m, 2))",
                            at: word.offset + 6 + parts[1].length, length: parts[2].length)
        }
        return (y, m, d)
    }

    /// `mon-fri`, `mon,wed,fri`, `weekdays`, `weekends`, `daily`, `sat..sun`: a weekday bit set.
    static func dayList(_ text: String) -> UInt8? {
        // Day names start with a letter; dates, times and systemd forms (`*-*-*`) do not.
        guard let first = text.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else { return nil }
        switch text {
        case "weekdays", "workdays": return 0x1F
        case "weekends", "weekend": return 0x60
        case "daily", "everyday", "every-day": return 0x7F
        default: break
        }
        var bits: UInt8 = 0
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            // `mon-fri` or `mon..fri`.
            let range: [Substring]
            if let dot = item.firstIndex(of: "."), item[item.index(after: dot)...].first == "." {
                range = [item[..<dot], item[item.index(dot, offsetBy: 2)...]]
                guard !range[1].contains("-"), !range[1].contains(".") else { return nil }
            } else {
                range = item.split(separator: "-", omittingEmptySubsequences: false)
            }
            guard range.count == 1 || range.count == 2 else { return nil }
            guard let from = day(range[0]) else { return nil }
            let to = range.count == 2 ? day(range[1]) : from
            guard let to else { return nil }
            // A range may wrap past Sunday: fri-mon.
            var d = from
            while true {
                bits |= 1 << d
                if d == to { break }
                d = (d + 1) % 7
            }
        }
        return bits
    }

    static func day(_ text: Substring) -> Int? {
        dayNames.first { $0.0 == text }?.1
    }

    /// A trailing word that names a zone, as a calendar expression reads one (the rule is kept as
    /// one): `UTC` (or `Z`), a tz name with a `/`, or one such as `EST5EDT`.
    static func zoneName(_ name: String) -> String? {
        let upper = name.uppercased()
        if upper == "UTC" || upper == "Z" { return "UTC" }
        guard let first = name.first, first.isLetter, !name.contains(":"), name.contains("/") || CalendarExpression.isZoneName(name) else {
            return nil
        }
        return (try? Zone.named(name)) != nil ? name : nil
    }

    /// `5m`, `1h30m`, `90s`, `2 hours`, `1d12h`, `25min`.
    static func duration(_ text: String, offset: Int) throws(RuleError) -> Int64 {
        let characters = Array(text)
        var i = 0
        var total: Int64 = 0
        var sawAny = false
        while i < characters.count {
            while i < characters.count, characters[i] == " " { i += 1 }
            if i == characters.count { break }
            let numberStart = i
            while i < characters.count, characters[i].isASCII, characters[i].isNumber { i += 1 }
            guard i > numberStart else {
                throw RuleError("expected a number in the duration", at: offset + numberStart, length: 1)
            }
            guard let value = Int64(String(characters[numberStart..<i])), value <= 10_000_000 else {
                throw RuleError("\(String(characters[numberStart..<i])) is too large (at most 10000000 of a unit)",
                                at: offset + numberStart, length: i - numberStart)
            }
            while i < characters.count, characters[i] == " " { i += 1 }
            let unitStart = i
            while i < characters.count, characters[i].isLetter { i += 1 }
            let unit = String(characters[unitStart..<i])
            let scale: Int64
            switch unit {
            case "s", "sec", "secs", "second", "seconds": scale = 1
            case "m", "min", "mins", "minute", "minutes": scale = 60
            case "h", "hr", "hrs", "hour", "hours": scale = 3600
            case "d", "day", "days": scale = 86_400
            case "w", "week", "weeks": scale = 604_800
            case "":
                throw RuleError("the duration \(value) needs a unit (s, m, h, d or w)", at: offset + numberStart, length: i - numberStart)
            default:
                throw RuleError("unknown duration unit '\(unit)' (use s, m, h, d or w)", at: offset + unitStart, length: unit.count)
            }
            total = total.saturatingAdd(value * scale)  // each term is at most 10,000,000 w
            sawAny = true
        }
        guard sawAny, total > 0 else { throw RuleError("the duration must be longer than 0 s", at: offset, length: characters.count) }
        return total
    }
}

/// A duration as chime writes it everywhere ("90s", "5m", "1h30m", "2 hours"), in seconds;
/// nil when the text is not one. The same grammar as `in 5m`.
public func parseDuration(_ text: String) -> Int64? {
    guard case .interval(let span, _)? = try? Rule(parsing: "in " + text) else { return nil }
    return span.seconds
}
