// A phrase's meaning as a rule chime already runs, and said back in words (in the language's `PhraseBook`).

extension PhraseMeaning {
    func compile(_ context: PhraseContext) throws(RuleError) -> PhraseReading {
        let zone = context.zone
        let said = context.said.seconds
        let today = zone.civil(at: said)
        let words = PhraseWords(language: context.language)

        if let time, time.ambiguous {
            let morning = PhraseWords.clock(time.hour % 12, time.minute), evening = PhraseWords.clock(time.hour % 12 + 12, time.minute)
            throw RuleError("\(time.hour % 12 == 0 ? 12 : time.hour % 12) could be \(morning) or \(evening): say '\(time.hour % 12 == 0 ? 12 : time.hour % 12)am' or '\(time.hour % 12 == 0 ? 12 : time.hour % 12)pm' (or \(morning) or \(evening))")
        }

        /// The first day from `from` (a civil date) on which `matches`, with the time of day after `said`.
        func first(from day: CivilTime, within days: Int = 800, _ matches: (CivilTime) -> Bool) throws(RuleError) -> CivilTime {
            guard let time else { throw RuleError(words.book.say(.atWhatTime(example: "09:00"))) }
            var candidate = day
            for _ in 0..<days {
                var at = candidate
                at.hour = time.hour
                at.minute = time.minute
                at.second = 0
                if matches(candidate), zone.resolve(at).instant.map({ $0 > said }) ?? true { return at }
                candidate = CivilTime(localSeconds: candidate.localSeconds + 86_400)
            }
            throw RuleError("it never comes in the next \(days) days")
        }
        func startDay() throws(RuleError) -> CivilTime {
            guard let start else { return today }
            return try civil(of: start, context)
        }
        func expression(_ text: String) throws(RuleError) -> Rule { .calendar(try CalendarExpression(parsing: text)) }
        func recurrence(_ dtstart: CivilTime, _ rule: String) throws(RuleError) -> Rule {
            let stamp = "\(pad(dtstart.year, 4))\(pad(dtstart.month, 2))\(pad(dtstart.day, 2))T\(pad(dtstart.hour, 2))\(pad(dtstart.minute, 2))00"
            return .recurrence(try Recurrence(parsing: "DTSTART:\(stamp) RRULE:\(rule)"))
        }
        let hhmm = time.map { "\(pad($0.hour, 2)):\(pad($0.minute, 2)):00" } ?? ""

        if let repeating {
            if case .interval(let seconds) = repeating {
                guard time == nil, day == nil else { throw RuleError("every few minutes or hours counts from now; say no time or day with it") }
                return PhraseReading(rule: .interval(.seconds(seconds), repeats: true), repeats: true, words: words.every(seconds: seconds))
            }
            guard let time else { throw RuleError(words.book.say(.atWhatTime(example: words.example(repeating)))) }
            guard day == nil else { throw RuleError("a day and a repetition: say 'from' before the day the repetition starts") }
            let from = try startDay()
            let rule: Rule
            var since: CivilTime?
            switch repeating {
            case .days(let interval) where interval == 1 && start == nil:
                rule = try expression("*-*-* \(hhmm)")
            case .days(let interval):
                let dtstart = try first(from: from) { _ in true }
                since = dtstart
                rule = try recurrence(dtstart, "FREQ=DAILY;INTERVAL=\(interval)")
            case .weekdays(let days, let interval) where interval == 1 && start == nil:
                rule = try expression("\(days.sorted().map { PhraseWords.systemdDays[$0 - 1] }.joined(separator: ",")) *-*-* \(hhmm)")
            case .weekdays(let days, let interval):
                let dtstart = try first(from: from) { days.contains($0.weekday) }
                since = dtstart
                rule = try recurrence(dtstart, "FREQ=WEEKLY;INTERVAL=\(interval);BYDAY=\(days.sorted().map { PhraseWords.icalDays[$0 - 1] }.joined(separator: ","))")
            case .monthlyWeekdays(let ordinals, let weekday, let interval):
                let dtstart = try first(from: from) { day in
                    day.weekday == weekday && ordinals.contains { n in Self.isNth(n, weekday: weekday, day) }
                }
                since = start == nil ? nil : dtstart
                let byday = ordinals.map { "\($0)\(PhraseWords.icalDays[weekday - 1])" }.joined(separator: ",")
                rule = try recurrence(dtstart, "FREQ=MONTHLY" + (interval > 1 ? ";INTERVAL=\(interval)" : "") + ";BYDAY=\(byday)")
            case .monthDay(let n, let interval) where interval == 1 && start == nil:
                guard n == -1 || (1...31).contains(n) else { throw RuleError("day \(n) of the month: there is none") }
                rule = try expression(n == -1 ? "*-*~01 \(hhmm)" : "*-*-\(pad(n, 2)) \(hhmm)")
            case .monthDay(let n, let interval):
                guard n == -1 || (1...31).contains(n) else { throw RuleError("day \(n) of the month: there is none") }
                let dtstart = try first(from: from) { day in n == -1 ? Self.isLastOfMonth(day) : day.day == n }
                since = dtstart
                rule = try recurrence(dtstart, "FREQ=MONTHLY;INTERVAL=\(interval);BYMONTHDAY=\(n)")
            case .yearly(let month, let dayOfMonth):
                guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { throw RuleError("\(dayOfMonth).\(month). is not a date") }
                rule = try expression("*-\(pad(month, 2))-\(pad(dayOfMonth, 2)) \(hhmm)")
            case .everyUnit(let unit, let interval):
                let dtstart = try first(from: from) { _ in true }
                since = dtstart
                let frequency = unit == .week ? "WEEKLY" : unit == .month ? "MONTHLY" : "YEARLY"
                rule = try recurrence(dtstart, "FREQ=\(frequency);INTERVAL=\(interval)")
            case .interval:
                fatalError("handled above")
            }
            if let expected = weekdayOfDate, let start, try civil(of: start, context).weekday != expected {
                throw RuleError("the date is a \(words.dayName(try civil(of: start, context).weekday)), not a \(words.dayName(expected))")
            }
            return PhraseReading(rule: rule, repeats: true, words: words.repeating(repeating, time: time, since: since))
        }

        // Once.
        if relativeToNow, time == nil, day == nil, plusDays == 0, plusMonths == 0 {
            guard plusSeconds > 0 else { throw RuleError("in how long? e.g. 'in 2 hours'") }
            return PhraseReading(rule: .interval(.seconds(plusSeconds), repeats: false), repeats: false, words: words.after(seconds: plusSeconds))
        }
        if time == nil, day == nil, !relativeToNow, plusSeconds == 0, plusDays == 0, plusMonths == 0 {
            throw RuleError(words.book.say(.sayWhen(once: words.exampleOnce, repeating: words.book.exampleRepeating)))
        }
        if let time, day == nil, !relativeToNow, plusSeconds == 0, plusDays == 0, plusMonths == 0 {
            // A time of day alone: the next one (as `16:35` is).
            return PhraseReading(rule: try expression("*-*-* \(hhmm)"), repeats: false, words: words.at(time))
        }
        var date: CivilTime
        if let day {
            date = try civil(of: day, context)
        } else {
            date = today
        }
        if let expected = weekdayOfDate, date.weekday != expected {
            throw RuleError("the date is a \(words.dayName(date.weekday)), not a \(words.dayName(expected))")
        }
        if let time {
            date.hour = time.hour
            date.minute = time.minute
            date.second = 0
            // A time with no day said: the next one (`4pm + 3 days` counts from the next 4pm).
            if day == nil, !relativeToNow, let at = zone.resolve(date).instant, at <= said {
                date = CivilTime(localSeconds: date.localSeconds + 86_400)
            }
        } else if relativeToNow {
            date.hour = today.hour
            date.minute = today.minute
            date.second = today.second
        } else {
            throw RuleError(words.book.say(.atWhatTime(example: words.exampleOnce)))
        }
        if case .weekday(_, _)? = day, let at = zone.resolve(date).instant, at <= said, plusDays == 0 {
            // This weekday's time has passed today: the one a week on.
            date = CivilTime(localSeconds: date.localSeconds + 7 * 86_400)
        }
        if plusMonths != 0 {
            var months = date.year * 12 + date.month - 1 + plusMonths
            months = max(0, months)
            date.year = months / 12
            date.month = months % 12 + 1
            date.day = min(date.day, Self.daysIn(year: date.year, month: date.month))
        }
        date = CivilTime(localSeconds: date.localSeconds + Int64(plusDays) * 86_400 + plusSeconds)
        guard (1970...9999).contains(date.year) else { throw RuleError("the year \(date.year) is out of reach") }
        if day != nil || time != nil || plusDays != 0 || plusMonths != 0 {
            if let at = zone.resolve(date).instant, at <= said {
                throw RuleError(words.book.say(.hasPassed(date: words.date(date), time: PhraseWords.clock(date.hour, date.minute))))
            }
        }
        let text = "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2)) \(pad(date.hour, 2)):\(pad(date.minute, 2)):\(pad(date.second, 2))"
        return PhraseReading(rule: try expression(text), repeats: false, words: words.once(date))
    }

    /// The civil date a day word means, said at `context.said`.
    func civil(of day: Day, _ context: PhraseContext) throws(RuleError) -> CivilTime {
        let today = context.zone.civil(at: context.said.seconds)
        let midnight = CivilTime(year: today.year, month: today.month, day: today.day)
        switch day {
        case .offset(let n):
            return CivilTime(localSeconds: midnight.localSeconds + Int64(n) * 86_400)
        case .weekday(let weekday, let next):
            // The coming one (today, if it is today); `next`: at least a day ahead (as GNU date).
            var ahead = (weekday - today.weekday + 7) % 7
            if next, ahead == 0 { ahead = 7 }
            return CivilTime(localSeconds: midnight.localSeconds + Int64(ahead) * 86_400)
        case .date(let year, let month, let dayOfMonth):
            guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { throw RuleError("\(dayOfMonth).\(month). is not a date") }
            var date = CivilTime(year: year ?? today.year, month: month, day: dayOfMonth)
            guard dayOfMonth <= Self.daysIn(year: date.year, month: month) || year == nil else { throw RuleError("\(date.year)-\(pad(month, 2))-\(pad(dayOfMonth, 2)) is not a date") }
            if year == nil {
                // This year's, unless it has passed: next year's (a day before today has passed).
                if date.dayNumber < today.dayNumber || dayOfMonth > Self.daysIn(year: date.year, month: month) { date.year += 1 }
                while dayOfMonth > Self.daysIn(year: date.year, month: month) { date.year += 1 }
            }
            return date
        }
    }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isLastOfMonth(_ day: CivilTime) -> Bool { day.day == daysIn(year: day.year, month: day.month) }

    /// Whether `day` is the month's `n`th `weekday` (-1: its last).
    static func isNth(_ n: Int, weekday: Int, _ day: CivilTime) -> Bool {
        guard day.weekday == weekday else { return false }
        if n == -1 { return day.day + 7 > daysIn(year: day.year, month: day.month) }
        return (day.day - 1) / 7 + 1 == n
    }
}

/// Words said back, in one language (its `PhraseBook`); each reads again as the same rule.
struct PhraseWords {
    let language: PhraseLanguage
    let book: any PhraseBook

    init(language: PhraseLanguage) {
        self.language = language
        book = language.book
    }

    static let systemdDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let icalDays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    static func clock(_ hour: Int, _ minute: Int) -> String { "\(pad(hour, 2)):\(pad(minute, 2))" }

    func dayName(_ weekday: Int) -> String { book.dayNames[weekday - 1] }
    func date(_ day: CivilTime) -> String { book.date(day) }
    func at(_ time: PhraseMeaning.TimeOfDay) -> String { book.at(time.hour, time.minute) }
    func once(_ date: CivilTime) -> String { book.once(date) }

    func duration(_ seconds: Int64) -> String {
        var parts: [(Int64, PhraseBookUnit)] = []
        var rest = seconds
        for (size, unit) in [(Int64(86_400), PhraseBookUnit.day), (3600, .hour), (60, .minute)] where rest >= size {
            parts.append((rest / size, unit))
            rest %= size
        }
        if rest > 0 || parts.isEmpty { parts.append((rest, .second)) }
        return parts.map { book.count($0.0, $0.1) }.joined(separator: book.and)
    }

    func after(seconds: Int64) -> String { book.after(duration(seconds)) }
    func every(seconds: Int64) -> String { book.every(duration(seconds)) }
    var exampleOnce: String { book.exampleOnce }
    func example(_ repeating: PhraseMeaning.Repeat) -> String { book.exampleRepeating }

    func repeating(_ repeating: PhraseMeaning.Repeat, time: PhraseMeaning.TimeOfDay, since: CivilTime?) -> String {
        if case .interval(let seconds) = repeating { return every(seconds: seconds) }
        return book.repeating(repeating, at: at(time), from: since.map(book.since) ?? "")
    }

    static func englishOrdinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][n % 10] ?? "th"
        return "\(n)\(suffix)"
    }
}

enum PhraseBookUnit: Int { case day, hour, minute, second }

/// What a phrase could not be read as, the most common of it said in the user's language (the
/// context's `PhraseBook`); the rest in English.
enum PhraseProblem {
    /// A word chime does not know, and the nearest one it does.
    case notAWord(String, nearest: String?)
    /// No time said (an example in the language).
    case atWhatTime(example: String)
    /// Once, at a time already past.
    case hasPassed(date: String, time: String)
    /// Nothing that says when.
    case sayWhen(once: String, repeating: String)
    /// Two of what there can be one of.
    case second(PhraseSecond)
    /// A word known, in a place where it means nothing.
    case notUnderstoodHere(String)

    enum PhraseSecond { case time, day, repetition, start }
}

/// The words one language says back in: each reads again, in that language, as the same rule
/// (`PhraseTests`). A language's book is in its file, beside its vocabulary.
protocol PhraseBook: Sendable {
    /// A problem, said in the language.
    func say(_ problem: PhraseProblem) -> String
    /// Monday first.
    var dayNames: [String] { get }
    /// `and` between parts of a length and the last two of a list (with its spaces).
    var and: String { get }
    /// A day, with its weekday and year (`Tue 1 Dec 2026`).
    func date(_ day: CivilTime) -> String
    /// At a time of day (`at 09:00`).
    func at(_ hour: Int, _ minute: Int) -> String
    /// Once, on a day at a time.
    func once(_ date: CivilTime) -> String
    /// Each unit's name for one and for more (`PhraseBookUnit`'s order: day, hour, minute, second).
    var unitNames: [(one: String, many: String)] { get }
    /// In a length of time from now, and every so long.
    func after(_ duration: String) -> String
    func every(_ duration: String) -> String
    /// Where a repetition starts (`, from Tue 1 Dec 2026`).
    func since(_ date: CivilTime) -> String
    /// A repetition at a time (`at` is `at(...)`'s words, `from` is `since(...)`'s or empty).
    func repeating(_ repeating: PhraseMeaning.Repeat, at: String, from: String) -> String
    /// Examples for error messages.
    var exampleOnce: String { get }
    var exampleRepeating: String { get }
}

extension PhraseBook {
    /// `Monday, Wednesday and Friday`
    func list(_ days: [Int], names: [String]? = nil) -> String {
        let names = days.map { (names ?? dayNames)[$0 - 1] }
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + and + names.last!
    }
    func clock(_ hour: Int, _ minute: Int) -> String { PhraseWords.clock(hour, minute) }
    /// A count of a unit (`2 hours`).
    func count(_ n: Int64, _ unit: PhraseBookUnit) -> String {
        let names = unitNames[unit.rawValue]
        return "\(n) " + (n == 1 ? names.one : names.many)
    }
}

extension PhraseLanguage {
    var book: any PhraseBook {
        switch self {
        case .english: Self.englishBook
        case .german: Self.germanBook
        case .french: Self.frenchBook
        case .spanish: Self.spanishBook
        }
    }
    // (Made once: a phrase read or a problem said asks for its language's book.)
    private static let englishBook = EnglishBook()
    private static let germanBook = GermanBook()
    private static let frenchBook = FrenchBook()
    private static let spanishBook = SpanishBook()
}

extension Resolution {
    /// The instant a wall-clock time names (the earlier of two; in a gap, when the gap ends).
    var instant: UnixTime? {
        switch self {
        case .unique(let t): t
        case .ambiguous(let earlier, _): earlier
        case .gap(let end): end
        }
    }
}

extension Rule {
    /// The rule said in words in `language`, as a phrase reads it back ("every Monday and Thursday
    /// at 09:00", "am letzten Freitag jedes Monats um 16:35"), for rules written the machine way as
    /// much as for phrases: nil for a shape words do not say (`*:0/15`, a rule with BYSETPOS), which
    /// is then shown as written. `zone` places an instant.
    public func words(_ language: PhraseLanguage, zone: Zone) -> String? {
        let words = PhraseWords(language: language)
        typealias Time = PhraseMeaning.TimeOfDay
        switch self {
        case .interval(let span, let repeats):
            guard span.nanoseconds % 60_000_000_000 == 0, span.seconds > 0 else { return nil }
            return repeats ? words.every(seconds: span.seconds) : words.after(seconds: span.seconds)
        case .instant(let instant):
            return words.once(zone.civil(at: instant.seconds))
        case .calendar(let e):
            guard e.timeZone == nil, let hour = Self.single(e.hours), let minute = Self.single(e.minutes), Self.single(e.seconds) == 0 else { return nil }
            let time = Time(hour: hour, minute: minute)
            if e.matchesOnce, let y = Self.single(e.years), let m = Self.single(e.months), let d = Self.single(e.days) {
                return words.once(CivilTime(year: y, month: m, day: d, hour: hour, minute: minute))
            }
            guard e.years == nil else { return nil }
            switch (e.weekdays, e.months, e.days) {
            case (nil, nil, nil):
                return e.daysFromEnd ? nil : words.repeating(.days(interval: 1), time: time, since: nil)
            case (let bits?, nil, nil):
                let days = Set((0..<7).filter { bits & (1 << $0) != 0 }.map { $0 + 1 })
                return words.repeating(.weekdays(days, interval: 1), time: time, since: nil)
            case (nil, nil, let days?):
                guard let d = Self.single(days) else { return nil }
                if e.daysFromEnd { return d == 1 ? words.repeating(.monthDay(-1, interval: 1), time: time, since: nil) : nil }
                return words.repeating(.monthDay(d, interval: 1), time: time, since: nil)
            case (nil, let months?, let days?):
                guard !e.daysFromEnd, let m = Self.single(months), let d = Self.single(days) else { return nil }
                return words.repeating(.yearly(month: m, day: d), time: time, since: nil)
            default:
                return nil
            }
        case .recurrence(let r):
            guard r.rules.count == 1, r.dates.isEmpty, r.exceptions.isEmpty, case .floating(let start) = r.start, start.second == 0 else { return nil }
            let rule = r.rules[0]
            guard rule.count == nil, rule.until == nil, rule.bySecond.isEmpty, rule.byMinute.isEmpty, rule.byHour.isEmpty, rule.byYearDay.isEmpty,
                  rule.byWeekNo.isEmpty, rule.byMonth.isEmpty, rule.bySetPos.isEmpty, rule.weekStart == 1 else { return nil }
            let time = Time(hour: start.hour, minute: start.minute)
            let plainDays = rule.byDay.allSatisfy { $0.ordinal == nil }
            let repeating: PhraseMeaning.Repeat
            var since: CivilTime? = start
            switch rule.frequency {
            case .daily where rule.byDay.isEmpty && rule.byMonthDay.isEmpty:
                repeating = .days(interval: rule.interval)
            case .weekly where !rule.byDay.isEmpty && plainDays && rule.byMonthDay.isEmpty:
                repeating = .weekdays(Set(rule.byDay.map(\.weekday)), interval: rule.interval)
            case .monthly where !rule.byDay.isEmpty && rule.byMonthDay.isEmpty:
                let weekdays = Set(rule.byDay.map(\.weekday))
                guard weekdays.count == 1, let weekday = weekdays.first, let ordinals = Optional(rule.byDay.compactMap(\.ordinal)),
                      ordinals.count == rule.byDay.count, ordinals.allSatisfy({ $0 == -1 || (1...5).contains($0) }) else { return nil }
                repeating = .monthlyWeekdays(ordinals, weekday: weekday, interval: rule.interval)
                if rule.interval == 1 { since = nil }
            case .monthly where rule.byDay.isEmpty && rule.byMonthDay.count == 1:
                let d = rule.byMonthDay[0]
                guard d == -1 || (1...31).contains(d) else { return nil }
                repeating = .monthDay(d, interval: rule.interval)
            case .weekly, .monthly, .yearly:
                guard rule.byDay.isEmpty, rule.byMonthDay.isEmpty else { return nil }
                repeating = .everyUnit(rule.frequency == .weekly ? .week : rule.frequency == .monthly ? .month : .year, rule.interval)
            default:
                return nil
            }
            return words.repeating(repeating, time: time, since: since)
        }
    }

    /// A field's one plain value (`07`), or nil for anything else (`*`, lists, ranges, steps).
    static func single(_ components: [CalendarExpression.Component]?) -> Int? {
        guard let components, components.count == 1, components[0].stop == nil, components[0].repeatEvery == 0 else { return nil }
        return components[0].start
    }
}
