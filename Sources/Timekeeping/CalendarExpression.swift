// systemd calendar expressions (systemd.time(7)): parsing, validation with
// errors that point into the text, and the next elapse in a time zone.

/// A rule that could not be read: what is wrong and where in the text.
public struct RuleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One line saying what is wrong, e.g. "minute 65 is out of range 0-59".
    public var message: String
    /// The offending part's offset in the rule text (in characters) and length.
    public var offset: Int
    public var length: Int
    /// The message names a word chime knows that is near the one it did not (a phrase's "did you
    /// mean").
    public var suggests = false

    public var description: String { message }

    init(_ message: String, at offset: Int = 0, length: Int = 0) {
        self.message = message
        self.offset = offset
        self.length = length
    }
}

/// A systemd calendar expression, such as `Mon..Fri *-*-* 16:35:00`,
/// `*-*-01 09:00`, `*:0/15`, `*-02~03`, `weekly` or `Mon 07:00 Europe/Berlin`.
///
/// ```swift
/// let rule = try CalendarExpression(parsing: "Mon..Fri 16:35")
/// let next = rule.nextElapse(after: now, in: .system())
/// ```
///
/// Next elapses agree with `systemd-analyze calendar`, except in DST gaps:
/// where the wall clock skips the time (02:30 on a spring-forward night),
/// systemd skips the day; chime fires once, at the first instant after the gap,
/// because an alarm clock must not silently skip a day. In an overlap (01:30
/// twice on a fall-back night) both fire once, at the first 01:30.
public struct CalendarExpression: Hashable, Sendable, CustomStringConvertible {
    /// One element of a field's list: `start`, `start..stop`, `start/repeat` or `start..stop/repeat`.
    public struct Component: Hashable, Sendable {
        public var start: Int
        public var stop: Int?
        public var repeatEvery: Int

        /// The smallest value of this component that is at least `value`.
        func next(atLeast value: Int) -> Int? {
            if start >= value { return stop.map { start <= $0 ? start : nil } ?? start }
            guard repeatEvery > 0 else { return nil }
            let steps = (value - start + repeatEvery - 1) / repeatEvery
            let candidate = start + steps * repeatEvery
            if let stop, candidate > stop { return nil }
            return candidate
        }
    }

    /// Weekdays, bit 0 Monday ... bit 6 Sunday; nil for any day.
    public var weekdays: UInt8?
    /// Each field's components; nil means `*` (any value).
    public var years: [Component]?
    public var months: [Component]?
    public var days: [Component]?
    /// Whether `days` count back from the end of the month (`~`).
    public var daysFromEnd: Bool
    public var hours: [Component]?
    public var minutes: [Component]?
    public var seconds: [Component]?
    /// The time zone the expression names, if any (`UTC`, `Europe/Berlin`).
    public var timeZone: String?

    /// Whether the expression names one single moment (every field one plain value).
    public var matchesOnce: Bool {
        weekdays == nil && [years, months, days, hours, minutes, seconds].allSatisfy { chain in
            guard let chain, chain.count == 1 else { return false }
            return chain[0].stop == nil && chain[0].repeatEvery == 0
        } && !daysFromEnd
    }

    /// The years systemd's calendar covers.
    public static let years = 1970...2199

    /// Every day at `hour`:`minute`:`second` (fields as parsed; a caller fills in the rest).
    init(hour: Int, minute: Int, second: Int) {
        weekdays = nil
        years = nil
        months = nil
        days = nil
        daysFromEnd = false
        hours = [Component(start: hour, stop: nil, repeatEvery: 0)]
        minutes = [Component(start: minute, stop: nil, repeatEvery: 0)]
        seconds = [Component(start: second, stop: nil, repeatEvery: 0)]
        timeZone = nil
    }

    // MARK: - Parsing

    /// Parses `text`; a bad expression throws a `RuleError` pointing at the offending part.
    public init(parsing text: String) throws(RuleError) {
        try Rule.checkSize(text)
        weekdays = nil
        years = nil
        months = nil
        days = nil
        daysFromEnd = false
        hours = [Component(start: 0, stop: nil, repeatEvery: 0)]
        minutes = [Component(start: 0, stop: nil, repeatEvery: 0)]
        seconds = [Component(start: 0, stop: nil, repeatEvery: 0)]
        timeZone = nil

        // One unit per character: its ASCII value, or `Parser.other` for anything else (rules are
        // ASCII; offsets in errors still count characters).
        let units = CharacterUnits(text)
        let characters = units.units
        var end = characters.count
        while end > 0, characters[end - 1] == Parser.space { end -= 1 }
        var start = 0
        while start < end, characters[start] == Parser.space { start += 1 }
        guard start < end else { throw RuleError("the rule is empty") }

        // A trailing time zone: " UTC" or a tz name.
        if let space = characters[start..<end].lastIndex(of: Parser.space) {
            let last = units.text((space + 1)..<end)
            if last.uppercased() == "UTC" {
                timeZone = "UTC"
                end = space
            } else if let first = last.first, first.isLetter, !last.contains(":"),
                last.contains("/") || Self.isZoneName(last)
            {
                do {
                    _ = try Zone.named(last)
                } catch {
                    throw RuleError("unknown time zone \"\(last)\"", at: space + 1, length: last.count)
                }
                timeZone = last
                end = space
            }
            while end > start, characters[end - 1] == Parser.space { end -= 1 }
        }

        let body = units.text(start..<end)
        let zero = [Component(start: 0, stop: nil, repeatEvery: 0)]
        func one(_ v: Int) -> [Component] { [Component(start: v, stop: nil, repeatEvery: 0)] }
        switch body.lowercased() {
        case "minutely":
            hours = nil; minutes = nil; seconds = zero
        case "hourly":
            hours = nil; minutes = zero; seconds = zero
        case "daily":
            break
        case "weekly":
            weekdays = 1
        case "monthly":
            days = one(1)
        case "yearly", "annually", "anually":
            months = one(1); days = one(1)
        case "quarterly":
            months = [1, 4, 7, 10].map { Component(start: $0, stop: nil, repeatEvery: 0) }; days = one(1)
        case "semiannually", "semi-annually", "biannually", "bi-annually":
            months = one(1) + one(7); days = one(1)
        default:
            var parser = Parser(units: units, range: start..<end)
            try parser.parse(into: &self)
        }
        try validate(offset: start, text: body)
    }

    static func isZoneName(_ text: String) -> Bool {
        guard let first = text.first, first.isUppercase, text.count >= 3 else { return false }
        return text.allSatisfy { $0.isLetter || $0 == "_" || $0 == "+" || $0 == "-" || $0.isNumber }
            && (try? Zone.named(text)) != nil
    }

    private func validate(offset: Int, text: String) throws(RuleError) {
        func check(_ chain: [Component]?, _ name: String, _ range: ClosedRange<Int>, fromEnd: Bool = false) throws(RuleError) {
            guard let chain else { return }
            let upper = fromEnd ? range.upperBound - 3 : range.upperBound
            for c in chain {
                let shown = fromEnd ? "day ~\(c.start)" : "\(name) \(c.start)"
                if c.start < range.lowerBound || c.start > upper {
                    throw RuleError("\(shown) is out of range \(range.lowerBound)-\(upper)", at: offset, length: text.count)
                }
                if let stop = c.stop {
                    if stop < range.lowerBound || stop > upper {
                        throw RuleError("\(name) \(stop) is out of range \(range.lowerBound)-\(upper)", at: offset, length: text.count)
                    }
                    if stop < c.start {
                        throw RuleError("\(name) range \(c.start)..\(stop) runs backwards", at: offset, length: text.count)
                    }
                }
                if c.repeatEvery > upper - range.lowerBound {
                    throw RuleError("\(name) repetition /\(c.repeatEvery) is longer than the range \(range.lowerBound)-\(upper)", at: offset, length: text.count)
                }
                // As systemd requires: at least one repetition fits.
                if c.repeatEvery > 0 {
                    let fits: Bool
                    if let stop = c.stop {
                        fits = c.start + c.repeatEvery <= stop
                    } else if fromEnd {
                        fits = c.start - c.repeatEvery >= range.lowerBound
                    } else {
                        fits = c.start + c.repeatEvery <= upper
                    }
                    if !fits {
                        throw RuleError("\(name) \(c.start)/\(c.repeatEvery) never repeats within \(range.lowerBound)-\(upper)", at: offset, length: text.count)
                    }
                }
            }
        }
        try check(years, "year", Self.years)
        try check(months, "month", 1...12)
        try check(days, "day", 1...31, fromEnd: daysFromEnd)
        try check(hours, "hour", 0...23)
        try check(minutes, "minute", 0...59)
        try check(seconds, "second", 0...59)
    }

    // MARK: - Next elapse

    /// What to do with a match that falls in a DST gap.
    public enum GapPolicy: Sendable {
        /// Fire once, at the first instant after the gap (chime's alarms).
        case fireAtEnd
        /// Skip it, as systemd timers do.
        case skip
    }

    /// The first instant strictly after `time` that matches, in the expression's
    /// own time zone or else `zone`; nil when it never matches again (before 2200).
    public func nextElapse(after time: UnixTime, in zone: Zone, gaps: GapPolicy = .fireAtEnd) -> UnixTime? {
        var effective = zone
        if let timeZone { effective = (try? Zone.named(timeZone)) ?? zone }
        var from = CivilTime(localSeconds: effective.civil(at: time).localSeconds + 1)
        // Each round moves `from` forward; a few rounds at most outside DST edge cases.
        for _ in 0..<64 {
            guard let match = nextCivil(atOrAfter: from) else { return nil }
            switch effective.resolve(match) {
            case .unique(let t) where t > time:
                return t
            case .ambiguous(let earlier, _):
                // A wall time fires at most once per local date: at the first of its two instants.
                // Re-evaluated inside the repeated hour (after a restart, a reload, a clock step),
                // the first has passed, so this date's occurrence is done, not still ahead.
                if earlier > time { return earlier }
            case .gap(let endsAt) where endsAt > time && gaps == .fireAtEnd:
                return endsAt
            default:
                break
            }
            from = CivilTime(localSeconds: match.localSeconds + 1)
        }
        return nil
    }

    /// The first wall-clock time at or after `from` that matches the fields (no time zone involved).
    public func nextCivil(atOrAfter from: CivilTime) -> CivilTime? {
        var t = from
        func carry() {
            if t.second > 59 { t.second = 0; t.minute += 1 }
            if t.minute > 59 { t.minute = 0; t.hour += 1 }
            if t.hour > 23 { t.hour = 0; t.day += 1 }
            if t.day > daysInMonth(t.year, t.month) { t.day = 1; t.month += 1 }
            if t.month > 12 { t.month = 1; t.year += 1 }
        }
        func first(_ chain: [Component]?, atLeast value: Int) -> Int? {
            guard let chain else { return value }
            var best: Int? = nil
            for c in chain {
                if let v = c.next(atLeast: value), best.map({ v < $0 }) ?? true { best = v }
            }
            return best
        }
        while t.year <= Self.years.upperBound {
            guard let year = first(years, atLeast: max(t.year, Self.years.lowerBound)) else { return nil }
            if year != t.year { t = CivilTime(year: year, month: 1, day: 1) }
            if t.year > Self.years.upperBound { return nil }

            guard let month = first(months, atLeast: t.month), month <= 12 else {
                t = CivilTime(year: t.year + 1, month: 1, day: 1)
                continue
            }
            if month != t.month { t = CivilTime(year: t.year, month: month, day: 1) }

            let length = daysInMonth(t.year, t.month)
            let day: Int?
            if daysFromEnd, let days {
                // ~N is the Nth last day; convert each component to plain days of this month.
                var best: Int? = nil
                for c in days {
                    var lo = length + 1 - c.start
                    var hi = c.stop.map { length + 1 - $0 }
                    if let h = hi, h < lo { swap(&lo, &hi!) }
                    let plain = Component(start: lo, stop: hi, repeatEvery: c.repeatEvery)
                    if let v = plain.next(atLeast: t.day), v >= 1, best.map({ v < $0 }) ?? true { best = v }
                }
                day = best
            } else {
                day = first(days, atLeast: t.day)
            }
            guard let day, day <= length else {
                t.day = length + 1
                t.hour = 0; t.minute = 0; t.second = 0
                carry()
                continue
            }
            if day != t.day { t.day = day; t.hour = 0; t.minute = 0; t.second = 0 }

            if let weekdays, weekdays & (1 << (t.weekday - 1)) == 0 {
                t.day += 1
                t.hour = 0; t.minute = 0; t.second = 0
                carry()
                continue
            }

            guard let hour = first(hours, atLeast: t.hour), hour <= 23 else {
                t.hour = 24; t.minute = 0; t.second = 0
                carry()
                continue
            }
            if hour != t.hour { t.hour = hour; t.minute = 0; t.second = 0 }

            guard let minute = first(minutes, atLeast: t.minute), minute <= 59 else {
                t.minute = 60; t.second = 0
                carry()
                continue
            }
            if minute != t.minute { t.minute = minute; t.second = 0 }

            guard let second = first(seconds, atLeast: t.second), second <= 59 else {
                t.second = 60
                carry()
                continue
            }
            t.second = second
            return t
        }
        return nil
    }

    // MARK: - Normalized form

    /// Weekdays (bit 0 Monday) as a list: a run of three or more days as `first<through>last`
    /// (`Mon..Fri`, `mon-fri`), shorter runs day by day (`Sat,Sun`).
    static func dayList(_ weekdays: UInt8, names: [String], through: String) -> String {
        var parts: [String] = []
        var i = 0
        while i < 7 {
            guard weekdays & (1 << i) != 0 else { i += 1; continue }
            var j = i
            while j + 1 < 7, weekdays & (1 << (j + 1)) != 0 { j += 1 }
            parts.append(j - i >= 2 ? names[i] + through + names[j] : (i...j).map { names[$0] }.joined(separator: ","))
            i = j + 1
        }
        return parts.joined(separator: ",")
    }

    /// The short form chime's rules are written in, where the expression has one (`16:35 mon-fri`,
    /// `08:00`, `07:30 sat,sun`, `2026-12-24 18:00`); the full form (`description`) otherwise.
    /// Parsing the short form gives this expression back.
    public var shortDescription: String {
        func single(_ chain: [Component]?) -> Int? {
            guard let chain, chain.count == 1, chain[0].stop == nil, chain[0].repeatEvery == 0 else { return nil }
            return chain[0].start
        }
        guard timeZone == nil, !daysFromEnd, let hour = single(hours), let minute = single(minutes), single(seconds) == 0 else {
            return description
        }
        let time = "\(pad(hour, 2)):\(pad(minute, 2))"
        if years == nil, months == nil, days == nil {
            guard let weekdays else { return time }
            return time + " " + Self.dayList(weekdays, names: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], through: "-")
        }
        if weekdays == nil, let year = single(years), let month = single(months), let day = single(days) {
            return "\(year)-\(pad(month, 2))-\(pad(day, 2)) \(time)"
        }
        return description
    }

    /// The expression written out in full, as `systemd-analyze calendar` normalizes it.
    public var description: String {
        var out = ""
        if let weekdays {
            out = Self.dayList(weekdays, names: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], through: "..") + " "
        }
        func chain(_ c: [Component]?, _ width: Int) -> String {
            guard let c else { return "*" }
            return c.map { component in
                var s = pad(component.start, width)
                if let stop = component.stop { s += ".." + pad(stop, width) }
                if component.repeatEvery > 0 && !(component.stop != nil && component.repeatEvery == 1) {
                    s += "/\(component.repeatEvery)"
                }
                return s
            }.joined(separator: ",")
        }
        out += "\(chain(years, 4))-\(chain(months, 2))\(daysFromEnd ? "~" : "-")\(chain(days, 2)) "
        out += "\(chain(hours, 2)):\(chain(minutes, 2)):\(chain(seconds, 2))"
        if let timeZone { out += " " + timeZone }
        return out
    }
}

// MARK: - The parser

/// A text as one unit per character: the ASCII value, or `Parser.other`.
struct CharacterUnits {
    let units: [UInt8]
    private let original: String
    private let isASCII: Bool

    init(_ text: String) {
        original = text
        isASCII = text.utf8.allSatisfy { $0 < 0x80 }
        units = isASCII ? Array(text.utf8) : text.map { $0.asciiValue ?? Parser.other }
    }

    /// The characters in `range` (character offsets).
    func text(_ range: Range<Int>) -> String {
        if isASCII { return String(decoding: units[range], as: UTF8.self) }
        return String(Array(original)[range])
    }

    /// The character at `offset`.
    func character(_ offset: Int) -> Character {
        if units[offset] != Parser.other { return Character(Unicode.Scalar(units[offset])) }
        return Array(original)[offset]
    }
}

private struct Parser {
    /// Stands for any non-ASCII character.
    static let other: UInt8 = 0xFF
    static let space = UInt8(ascii: " ")
    static let colon = UInt8(ascii: ":"), dash = UInt8(ascii: "-"), tilde = UInt8(ascii: "~"), dot = UInt8(ascii: ".")
    static let comma = UInt8(ascii: ","), slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")

    let source: CharacterUnits
    let characters: ArraySlice<UInt8>
    let base: Int  // offset of the first character in the original text
    var index = 0

    init(units: CharacterUnits, range: Range<Int>) {
        source = units
        characters = units.units[range]
        base = range.lowerBound
        index = 0
    }

    var count: Int { characters.count }
    subscript(_ i: Int) -> UInt8 { characters[base + i] }
    var current: UInt8? { index < count ? self[index] : nil }
    /// The character at `i`, for messages.
    func shown(_ i: Int) -> Character { source.character(base + i) }

    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    static func isLetter(_ c: UInt8) -> Bool { c | 0x20 >= UInt8(ascii: "a") && c | 0x20 <= UInt8(ascii: "z") }

    func fail(_ message: String, from: Int, to: Int? = nil) -> RuleError {
        RuleError(message, at: base + from, length: max(1, (to ?? index) - from))
    }

    static let weekdayNames: [(String, Int)] = [
        ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2), ("thursday", 3), ("thu", 3),
        ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5), ("sunday", 6), ("sun", 6),
    ]

    mutating func weekday() -> Int? {
        // Only letters can start a weekday; dates and times start with digits or '*'.
        guard let first = current, Self.isLetter(first) else { return nil }
        var end = index
        while end < count, Self.isLetter(self[end]) { end += 1 }
        let word = characters[(base + index)..<(base + end)].lazy.map { $0 | 0x20 }  // lower case
        for (name, number) in Self.weekdayNames where name.utf8.elementsEqual(word) {
            index = end
            return number
        }
        return nil
    }

    mutating func parse(into rule: inout CalendarExpression) throws(RuleError) {
        // Weekdays: Mon, Mon..Fri, Mon,Wed,Fri (also "Mon-Fri").
        if let first = weekday() {
            var bits: UInt8 = 1 << first
            var previous = first
            var rangeFrom: Int? = nil
            while let c = current, c != Self.space {
                let at = index
                if c == Self.comma {
                    index += 1
                    rangeFrom = nil
                } else if c == Self.dot || c == Self.dash {
                    guard rangeFrom == nil else { throw fail("a weekday range needs a day at each end", from: at) }
                    if c == Self.dot {
                        guard index + 1 < count, self[index + 1] == Self.dot else {
                            throw fail("write a weekday range as Mon..Fri", from: at)
                        }
                        index += 2
                    } else {
                        index += 1
                    }
                    rangeFrom = previous
                } else {
                    throw fail("unexpected '\(shown(at))' in the weekdays", from: at)
                }
                if current == nil || current == Self.space { break }
                let dayStart = index
                guard let day = weekday() else { throw fail("expected a weekday (Mon, Tue, ...)", from: dayStart, to: dayStart + 3) }
                if let from = rangeFrom {
                    guard from <= day else { throw fail("weekday range runs backwards", from: dayStart - 2, to: index) }
                    for d in from...day { bits |= 1 << d }
                    rangeFrom = nil
                } else {
                    bits |= 1 << day
                }
                previous = day
            }
            if rangeFrom != nil { throw fail("a weekday range needs a day at each end", from: index - 1) }
            rule.weekdays = (bits == 0 || bits == 0x7F) ? nil : bits
            while current == Self.space { index += 1 }
            if current == nil {
                return  // weekdays alone: midnight on those days
            }
        } else if let c = current, Self.isLetter(c) {
            // Dates and times start with a digit or '*': a word here can only be a misspelt weekday.
            var end = index
            while end < count, self[end] != Self.space, self[end] != Self.dot, self[end] != Self.comma, self[end] != Self.dash { end += 1 }
            throw fail("unknown weekday '\(source.text((base + index)..<(base + end)))'; use Mon, Tue, ... Sun", from: index, to: end)
        }

        // A date (YYYY-MM-DD, MM-DD, with ~ for days from the end) and/or a time (HH:MM[:SS]).
        let partStart = index
        let first = try chain(name: "year or hour", allowStar: true)
        if current == nil || current == Self.colon {
            // It was a time.
            index = partStart
            try time(into: &rule)
            return
        }
        guard current == Self.dash || current == Self.tilde else { throw fail("expected '-' or ':' here", from: index) }
        if current == Self.tilde { rule.daysFromEnd = true }
        index += 1
        let second = try chain(name: "month or day", allowStar: true)
        if current == nil || current == Self.space {
            rule.months = first
            rule.days = second
        } else {
            guard !rule.daysFromEnd else { throw fail("'~' may only come before the day", from: index) }
            guard current == Self.dash || current == Self.tilde else { throw fail("expected '-' here", from: index) }
            if current == Self.tilde { rule.daysFromEnd = true }
            index += 1
            let third = try chain(name: "day", allowStar: true)
            rule.years = first.map { $0.map { c in
                var fixed = c
                // Two-digit years, as systemd reads them: 12 is 2012, 89 is 1989.
                func fix(_ y: Int) -> Int { y < 70 ? y + 2000 : (y < 100 ? y + 1900 : y) }
                fixed.start = fix(c.start)
                fixed.stop = c.stop.map(fix)
                return fixed
            } }
            rule.months = second
            rule.days = third
        }
        // Validate the fields as they are read, so errors point at them.
        if let months = rule.months { try check(months, "month", 1...12, from: partStart) }
        while current == Self.space { index += 1 }
        if current == nil {
            rule.hours = [.init(start: 0, stop: nil, repeatEvery: 0)]
            rule.minutes = rule.hours
            rule.seconds = rule.hours
            return
        }
        try time(into: &rule)
    }

    mutating func time(into rule: inout CalendarExpression) throws(RuleError) {
        let hourStart = index
        let hours = try chain(name: "hour", allowStar: true)
        guard current == Self.colon else { throw fail("expected ':' after the hour", from: index) }
        index += 1
        let minuteStart = index
        let minutes = try chain(name: "minute", allowStar: true)
        var seconds: [CalendarExpression.Component]? = [.init(start: 0, stop: nil, repeatEvery: 0)]
        var secondStart = index
        if current == Self.colon {
            index += 1
            secondStart = index
            seconds = try chain(name: "second", allowStar: true, fractions: true)
        }
        if current != nil {
            var start = index
            while start < count, self[start] == Self.space { start += 1 }
            if start < count, Self.isLetter(self[start]) {
                var end = start
                while end < count, self[end] != Self.space { end += 1 }
                throw fail("unknown weekday or time zone '\(source.text((base + start)..<(base + end)))'", from: start, to: end)
            }
            throw fail("unexpected '\(shown(index))' after the time", from: index, to: count)
        }
        if let hours { try check(hours, "hour", 0...23, from: hourStart) }
        if let minutes { try check(minutes, "minute", 0...59, from: minuteStart) }
        if let seconds { try check(seconds, "second", 0...59, from: secondStart) }
        rule.hours = hours
        rule.minutes = minutes
        rule.seconds = seconds
    }

    func check(_ chain: [CalendarExpression.Component], _ name: String, _ range: ClosedRange<Int>, from: Int) throws(RuleError) {
        for c in chain {
            for value in [c.start] + (c.stop.map { [$0] } ?? []) where !range.contains(value) {
                throw fail("\(name) \(value) is out of range \(range.lowerBound)-\(range.upperBound)", from: from, to: index)
            }
        }
    }

    /// `*` or a comma list of `N`, `N..M`, `N/R`, `N..M/R`.
    mutating func chain(name: String, allowStar: Bool, fractions: Bool = false) throws(RuleError) -> [CalendarExpression.Component]? {
        if current == Self.star {
            index += 1
            if current == Self.slash {
                // "*/R": every R starting at 0 (systemd reads "*" then stops; accept the common cron habit).
                throw fail("write a repetition as 0/\(name == "minute" ? "15" : "R") rather than */R", from: index - 1, to: index + 1)
            }
            return nil
        }
        var components: [CalendarExpression.Component] = []
        while true {
            let start = try number(name, fractions: fractions)
            var component = CalendarExpression.Component(start: start, stop: nil, repeatEvery: 0)
            if current == Self.dot, index + 1 < count, self[index + 1] == Self.dot {
                index += 2
                component.stop = try number(name, fractions: fractions)
                component.repeatEvery = 1
            }
            if current == Self.slash {
                index += 1
                let repeatStart = index
                let every = try number(name, fractions: fractions)
                guard every > 0 else { throw fail("a repetition must be at least 1", from: repeatStart) }
                component.repeatEvery = every
            }
            if let stop = component.stop, component.repeatEvery > 0, stop >= component.start {
                // As systemd does: the range ends on a repetition, and a range holding one value
                // (`5..5`, `10..12/5`) is that value.
                component.stop = stop - (stop - component.start) % component.repeatEvery
                if component.stop == component.start { (component.stop, component.repeatEvery) = (nil, 0) }
            }
            components.append(component)
            guard current == Self.comma else { break }
            index += 1
        }
        if let c = current, c != Self.space, c != Self.dash, c != Self.tilde, c != Self.colon {
            throw fail("unexpected '\(shown(index))' in the \(name)", from: index)
        }
        if components.count > 240 { throw fail("too many values in the \(name)", from: 0, to: index) }
        return components
    }

    mutating func number(_ name: String, fractions: Bool) throws(RuleError) -> Int {
        let start = index
        while let c = current, Self.isDigit(c) { index += 1 }
        guard index > start else {
            throw fail("expected a number for the \(name)" + (current == nil ? "" : ", found '\(shown(index))'"), from: start)
        }
        // At most 6 digits: larger numbers are no field's value.
        var value = 0
        for i in start..<index where value <= 100_000 { value = value * 10 + Int(self[i] - UInt8(ascii: "0")) }
        guard value <= 100_000 else {
            throw fail("\(name) \(source.text((base + start)..<(base + index))) is too large", from: start)
        }
        if fractions, current == Self.dot, !(index + 1 < count && self[index + 1] == Self.dot) {
            index += 1
            let fractionStart = index
            while let c = current, Self.isDigit(c) { index += 1 }
            if (fractionStart..<index).contains(where: { self[$0] != UInt8(ascii: "0") }) {
                throw fail("fractions of a second are not supported", from: start)
            }
        }
        return value
    }
}
