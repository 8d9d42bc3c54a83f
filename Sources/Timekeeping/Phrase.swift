// When, said the way people say it, in English, German, French or Spanish (issues 35 and 50):
// "tomorrow 7am", "noon", "next friday 16:35", "in an hour and a half", "every other tuesday 09:00",
// "last friday of the month 16:35", "1st of every month 09:00", "morgen um 7 Uhr", "halb acht",
// "jeden zweiten Dienstag um 9:00", "demain à 7h", "le 15 de chaque mois à midi", "de lunes a
// viernes a las 6:45", and at(1)'s time specifications ("teatime", "now + 2 hours", "4pm + 3 days",
// "next week").
//
// A phrase is read into what it means (a time of day, a day, a repetition), then written as a rule
// chime already runs: a calendar expression (`Mon,Thu *-*-* 09:00:00`, `2026-11-28 07:00:00`), an
// RFC 5545 recurrence with its DTSTART (`DTSTART:20261201T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;
// BYDAY=TU`), or an interval. Relative words count from the moment the phrase is said, and an
// every-other or every-N rule from its first occurrence after that moment. Every language is always
// read (where a word means different things in two languages, the phrase's language decides, and
// the others are tried when that reading fails); the words said back are in the one asked for.
// Where a phrase can mean two things (`at 9` on a 12-hour clock) both are said, and nothing is
// guessed.
//
// A language is data: its words and what each means (`PhraseVocabulary`), and the words it says
// back in (`PhraseBook`), in one file (`Phrase+French.swift`). The grammar below reads meanings,
// never a language's words.

/// A language phrases are read in and said back in.
public enum PhraseLanguage: String, Sendable, CaseIterable {
    case english = "en"
    case german = "de"
    case french = "fr"
    case spanish = "es"

    /// The user's (`LC_ALL`, `LC_TIME`, then `LANG`): German for `de_*`, French for `fr_*`, Spanish
    /// for `es_*`, else English.
    public static func user(_ environment: (String) -> String?) -> PhraseLanguage {
        for name in ["LC_ALL", "LC_TIME", "LANG"] {
            if let value = environment(name), !value.isEmpty { return PhraseLanguage(locale: value) }
        }
        return .english
    }

    /// The language of a locale name (`fr_CA.UTF-8`, `de`, `es_ES@euro`); English for any other.
    public init(locale: String) {
        self = PhraseLanguage(rawValue: String(locale.prefix(2)).lowercased()).flatMap {
            locale.count == 2 || !(locale.dropFirst(2).first?.isLetter ?? false) ? $0 : nil
        } ?? .english
    }

    /// Whether the user's clock is the 12-hour one (`en_US`, `en_CA`, `en_AU`, `en_NZ`, `en_PH`,
    /// `en_IN`): then `at 9` may be morning or evening, and chime asks.
    public static func twelveHourClock(_ environment: (String) -> String?) -> Bool {
        for name in ["LC_ALL", "LC_TIME", "LANG"] {
            if let value = environment(name), !value.isEmpty {
                return ["en_US", "en_CA", "en_AU", "en_NZ", "en_PH", "en_IN"].contains { value.hasPrefix($0) }
            }
        }
        return false
    }
}

/// Where and when a phrase is said.
public struct PhraseContext: Sendable {
    /// The moment it is said: today, tomorrow and `in an hour` count from it.
    public var said: Instant
    /// The zone its days and times are in.
    public var zone: Zone
    /// The language words are said back in.
    public var language: PhraseLanguage
    /// A 12-hour clock: an hour without am or pm (`at 9`) has two readings.
    public var twelveHourClock: Bool

    public init(said: Instant, zone: Zone, language: PhraseLanguage = .english, twelveHourClock: Bool = false) {
        self.said = said
        self.zone = zone
        self.language = language
        self.twelveHourClock = twelveHourClock
    }
}

/// What a phrase was read as: the rule, whether it repeats, and the words understood.
public struct PhraseReading: Hashable, Sendable {
    public var rule: Rule
    public var repeats: Bool
    /// What was understood, in the context's language ("every 2 weeks on Tuesday at 09:00").
    public var words: String
}

public enum Phrase {
    /// Reads `text` as a phrase; the error points at the word not understood, with the nearest
    /// word chime knows.
    public static func read(_ text: String, _ context: PhraseContext) throws(RuleError) -> PhraseReading {
        try PhraseReader.all.read(text, context)
    }
}

/// Reads phrases in a set of languages: chime reads in all of them (`Phrase.read`); a reader of
/// fewer is for measuring that the grammar does not slow down as languages are added.
public struct PhraseReader: Sendable {
    let lexicon: PhraseLexicon

    static let all = PhraseReader(lexicon: .all)

    init(lexicon: PhraseLexicon) { self.lexicon = lexicon }

    /// A reader of `languages` only.
    @_spi(Benchmarks) public init(languages: [PhraseLanguage]) {
        lexicon = PhraseLexicon(languages.map(\.vocabulary))
    }

    /// Reads `text` as a phrase; the error points at the word not understood, with the nearest
    /// word chime knows.
    public func read(_ text: String, _ context: PhraseContext) throws(RuleError) -> PhraseReading {
        try Rule.checkSize(text)
        var parser = PhraseParser(text: text, context: context, lexicon: lexicon)
        var first: RuleError
        var understood = false
        do {
            let meaning = try parser.parse()
            understood = true
            return try compile(meaning, text, context)
        } catch {
            first = error
        }
        // A word another language reads differently (`sept`: seven, or September): the phrase may be
        // in that language. Its reading is taken if it has one; else the error is the first's, or,
        // when the first did not understand the words, that of the first language that did (`hoy a
        // las 9:00`, said in English at noon: "has passed", not "a second time of day" at `9:00`).
        guard parser.tokens.contains(where: \.ambiguous) else { throw first }
        for language in lexicon.languages where language != context.language {
            var other = PhraseParser(text: text, context: context, tokenLanguage: language, lexicon: lexicon)
            guard let meaning = try? other.parse() else { continue }
            do {
                return try compile(meaning, text, context)
            } catch {
                if !understood { (first, understood) = (error, true) }
            }
        }
        throw first
    }

    func compile(_ meaning: PhraseMeaning, _ text: String, _ context: PhraseContext) throws(RuleError) -> PhraseReading {
        do {
            return try meaning.compile(context)
        } catch {
            // About the whole phrase, not one word of it.
            throw RuleError(error.message, at: 0, length: text.count)
        }
    }
}

// MARK: - Meaning

/// What a phrase says, before it is a rule.
struct PhraseMeaning {
    struct TimeOfDay: Equatable {
        var hour: Int
        var minute: Int
        /// Both readings when the hour could be morning or evening (a 12-hour clock, no am or pm).
        var ambiguous = false
    }
    enum Day: Equatable {
        case offset(Int)  // today + n days
        case weekday(Int, next: Bool)
        case date(year: Int?, month: Int, day: Int)
    }
    enum Repeat: Equatable {
        case days(interval: Int)
        case weekdays(Set<Int>, interval: Int)
        /// Monthly on the nth weekdays (-1: the last).
        case monthlyWeekdays([Int], weekday: Int, interval: Int)
        case monthDay(Int, interval: Int)  // -1: the last day
        case yearly(month: Int, day: Int)
        case everyUnit(PhraseUnit, Int)  // every N weeks/months/years from the first occurrence
        case interval(seconds: Int64)
    }
    var time: TimeOfDay?
    var day: Day?
    var repeating: Repeat?
    /// `in 2 hours`, `now + 3 days`, `4pm + 3 days`: seconds or days added.
    /// Where a repetition starts (`from Tue 1 Dec`): its first occurrence is the first from then.
    var start: Day?
    /// A weekday said beside a date (`Tue 1 Dec`): it must be that date's.
    var weekdayOfDate: Int?
    var plusSeconds: Int64 = 0
    var plusDays = 0
    var plusMonths = 0
    var relativeToNow = false
}

// MARK: - Reading

struct PhraseParser {
    let text: String
    let context: PhraseContext
    var tokens: [PhraseToken]
    var index = 0
    var meaning = PhraseMeaning()

    let lexicon: PhraseLexicon

    /// `tokenLanguage`: the language whose reading of a word wins (else the context's).
    init(text: String, context: PhraseContext, tokenLanguage: PhraseLanguage? = nil, lexicon: PhraseLexicon = .all) {
        self.text = text
        self.context = context
        self.lexicon = lexicon
        tokens = PhraseTokenizer.tokens(text, language: tokenLanguage ?? context.language, lexicon: lexicon)
    }

    var current: PhraseToken? { index < tokens.count ? tokens[index] : nil }
    func peek(_ ahead: Int = 1) -> PhraseToken? { index + ahead < tokens.count ? tokens[index + ahead] : nil }
    func word(_ token: PhraseToken?) -> PhraseWord? { if case .word(let w)? = token?.kind { w } else { nil } }
    /// The word's meaning, or its second meaning (`cuarto`: a quarter, or the fourth).
    func means(_ token: PhraseToken?, _ w: PhraseWord) -> Bool { word(token) == w || token?.alternative == w }
    /// An ordinal (`second`, `2nd`, `zweiten`, `cuarto`), or -1 for `last`.
    func ordinal(_ token: PhraseToken?) -> Int? {
        switch token?.kind {
        case .word(.ordinal(let n))?: return n
        case .word(.last)?: return -1
        case .ordinalNumber(let n)? where n <= 5: return n
        default: if case .ordinal(let n)? = token?.alternative { return n }
        }
        return nil
    }
    /// A part of the day (`morning`, `soir`, `mañana` after `la`).
    func partOfDay(_ token: PhraseToken?) -> PhraseWord? {
        if let w = word(token), w == .morning || w == .evening { return w }
        return token?.alternative == .morning ? .morning : nil
    }
    func number(_ token: PhraseToken?) -> Int? {
        switch token?.kind {
        case .integer(let n)?: n
        case .word(.number(let n))?: n
        default: nil
        }
    }

    /// A problem said in the user's language, at `token`.
    func fail(_ problem: PhraseProblem, _ token: PhraseToken?) -> RuleError {
        var error = fail(context.language.book.say(problem), token)
        if case .notAWord(_, let nearest?) = problem { error.suggests = !nearest.isEmpty }
        return error
    }

    func fail(_ message: String, _ token: PhraseToken?) -> RuleError {
        guard let token else { return RuleError(message, at: text.count, length: 0) }
        return RuleError(message, at: token.offset, length: token.length)
    }

    mutating func parse() throws(RuleError) -> PhraseMeaning {
        guard !tokens.isEmpty else {
            let book = context.language.book
            throw RuleError(book.say(.sayWhen(once: book.exampleOnce, repeating: book.exampleRepeating)))
        }
        while let token = current {
            try step(token)
        }
        // `every morning` without a time: the part of the day's documented time.
        if meaning.time == nil, let documented = documentedTime { meaning.time = documented }
        return meaning
    }

    mutating func setTime(_ time: PhraseMeaning.TimeOfDay, _ token: PhraseToken) throws(RuleError) {
        guard meaning.time == nil else { throw fail(.second(.time), token) }
        meaning.time = time
    }

    var startsHere = false
    /// The time `every morning`, `every evening`... stands for when no time is said.
    var documentedTime: PhraseMeaning.TimeOfDay?
    /// A part of the day said before its time (`morgen früh um 7`, `tomorrow evening at 8`).
    var partOfDay: PhraseWord?

    mutating func setDay(_ day: PhraseMeaning.Day, _ token: PhraseToken) throws(RuleError) {
        if startsHere {
            guard meaning.start == nil else { throw fail(.second(.start), token) }
            meaning.start = day
            startsHere = false
            return
        }
        guard meaning.day == nil, meaning.repeating == nil || {
            if case .date = day, case .yearly? = meaning.repeating { return false }
            return true
        }() else { throw fail(.second(.day), token) }
        meaning.day = day
    }

    mutating func setRepeat(_ repeating: PhraseMeaning.Repeat, _ token: PhraseToken) throws(RuleError) {
        guard meaning.repeating == nil else { throw fail(.second(.repetition), token) }
        meaning.repeating = repeating
    }

    /// An hour and minute of a 24- or 12-hour clock, with what follows it (am, pm, Uhr, morning).
    mutating func clock(_ givenHour: Int, _ givenMinute: Int, meridiem givenMeridiem: PhraseWord?, _ token: PhraseToken) throws(RuleError) {
        var meridiem = givenMeridiem ?? partOfDay
        partOfDay = nil
        var said24 = false
        var minute = givenMinute
        var hour = givenHour
        while let next = current {
            // German `am` before a day is `on` (`um 19 Uhr am Montag`), not a.m.
            if word(next) == .am, let after = peek(), isDayLike(after) { break }
            if let w = word(next), w == .am || w == .pm || w == .morning || w == .evening {
                meridiem = w
                index += 1
            } else if means(next, .oclock) {
                // `7 Uhr`, `7 heures`, and the minutes after it: `7 Uhr 30`, `7 heures 30`.
                said24 = true
                index += 1
                if minute == 0, case .integer(let m)? = current?.kind, (0...59).contains(m) {
                    minute = m
                    index += 1
                }
            } else if let w = word(next), w == .inWord || w == .of, let (part, length) = partOfDayAhead(from: index + 1) {
                // `in the morning`, `de la tarde`, `du soir`
                meridiem = part
                index += 1 + length
            } else if minute == 0, let added = minutesAfterHour() {
                // `7 y media`, `7 heures et quart`, `8 heures moins le quart`
                if added < 0 { hour = hour == 0 ? 23 : hour - 1 }
                minute = (added + 60) % 60
            } else {
                break
            }
        }
        var h = hour
        switch meridiem {
        case .am?, .morning?:
            guard (1...12).contains(hour) || (meridiem == .morning && hour < 12) else { throw fail("\(hour) is not an hour of the morning", token) }
            h = hour == 12 ? 0 : hour
        case .pm?, .evening?:
            guard (1...12).contains(hour) || (meridiem == .evening && (12...23).contains(hour)) else { throw fail("\(hour) is not an hour of the afternoon or evening", token) }
            h = hour < 12 ? hour + 12 : hour
        default:
            guard (0...24).contains(hour), hour < 24 || minute == 0 else { throw fail("\(hour):\(minute) is not a time of day", token) }
            if hour == 24 { h = 0 }
        }
        let ambiguous = meridiem == nil && !said24 && context.twelveHourClock && (1...12).contains(hour) && !token.text.contains(":")
            && !token.text.hasPrefix("0")
        try setTime(PhraseMeaning.TimeOfDay(hour: h, minute: minute, ambiguous: ambiguous), token)
    }

    /// A part of the day from `start`, after any number of `the` (`la tarde`, `the morning`, `soir`):
    /// which, and how many tokens it took.
    func partOfDayAhead(from start: Int) -> (PhraseWord, Int)? {
        var look = start
        while look < tokens.count, word(tokens[look]) == .the { look += 1 }
        guard look < tokens.count, let part = partOfDay(tokens[look]) else { return nil }
        return (part, look - start + 1)
    }

    /// Minutes said after an hour: `and a half` (30), `and a quarter` (15), `minus a quarter` (-15),
    /// consumed; nil when none are said.
    mutating func minutesAfterHour() -> Int? {
        guard let w = word(current), w == .and || w == .minus else { return nil }
        var look = index + 1
        while look < tokens.count, word(tokens[look]) == .the || word(tokens[look]) == .number(1) { look += 1 }
        guard look < tokens.count, word(tokens[look]) == .half || means(tokens[look], .quarter) else { return nil }
        if w == .minus, word(tokens[look]) == .half { return nil }
        let minutes = word(tokens[look]) == .half ? 30 : 15
        index = look + 1
        return w == .minus ? -minutes : minutes
    }

    /// A count and unit (`2 hours`, `an hour and a half`, `einer Stunde`), added to the meaning.
    mutating func span(_ token: PhraseToken, sign: Int) throws(RuleError) {
        var count = 1
        var halfMore = false
        if let n = number(current) {
            count = n
            index += 1
            if n == 1, word(current) == .half {
                // `in einer halben Stunde`, `in a half hour`
                count = 0
                halfMore = true
                index += 1
            }
        } else if word(current) == .half, word(peek()) != .past {
            // `half an hour`, `media hora`: a half of the unit
            count = 0
            halfMore = true
            index += word(peek()) == .number(1) ? 2 : 1
        } else if word(current) == .oneAndAHalf {
            // `in anderthalb Stunden`
            halfMore = true
            index += 1
        }
        let unitToken = current
        var unit: PhraseUnit
        switch word(unitToken) {
        case .unit(let u)?: unit = u
        case .day?: unit = .day
        case .week?: unit = .week
        case .month?: unit = .month
        case .year?: unit = .year
        default: throw fail("a length of time, e.g. '2 hours' or '3 days'", unitToken ?? token)
        }
        index += 1
        if word(current) == .and, word(peek()) == .number(1), word(peek(2)) == .half {
            halfMore = true
            index += 3
        } else if word(current) == .and, word(peek()) == .half {
            halfMore = true
            index += 2
        }
        if unit == .month || unit == .year {
            guard !halfMore else { throw fail("half a month or year is not a length chime counts", unitToken) }
            meaning.plusMonths += sign * count * (unit == .year ? 12 : 1)
        } else if unit == .day || unit == .week {
            meaning.plusDays += sign * count * (unit == .week ? 7 : 1)
            if halfMore { meaning.plusSeconds += Int64(sign * (unit == .week ? 302_400 : 43_200)) }
        } else {
            let seconds = unit.seconds!
            meaning.plusSeconds += Int64(sign) * (Int64(count) * seconds + (halfMore ? seconds / 2 : 0))
        }
        // `an hour and 30 minutes`
        if word(current) == .and, number(peek()) != nil, case .word(.unit)? = peek(2)?.kind {
            index += 1
            try span(token, sign: sign)
        }
    }

    /// A weekday list: `monday and thursday`, `mon, wed, fri`.
    mutating func weekdayList(first: Int) -> Set<Int> {
        var days: Set<Int> = [first]
        while true {
            var look = index
            if look < tokens.count, word(tokens[look]) == .and { look += 1 }
            // `le lundi et le jeudi`
            while look > index, look < tokens.count, word(tokens[look]) == .the { look += 1 }
            guard look < tokens.count else { break }
            switch word(tokens[look]) {
            case .weekday(let d)?, .weekdays(let d)?:
                days.insert(d)
                index = look + 1
            default:
                return days
            }
        }
        return days
    }

    mutating func step(_ token: PhraseToken) throws(RuleError) {
        index += 1
        switch token.kind {
        case .clock(let h, let m, let meridiem):
            try clock(h, m, meridiem: meridiem, token)
        case .integer(let n):
            // `24 Dec 2026`, `24 de diciembre`; `le 15 de chaque mois`; else an hour: `7 Uhr`, `9 am`, `at 9`.
            if (1...31).contains(n), let month = monthAhead() {
                try setDay(.date(year: year(), month: month, day: n), token)
            } else if (1...31).contains(n), token.text.count <= 2, try ofEveryMonth(joined: true) {
                try setRepeat(.monthDay(n, interval: 1), token)
            } else if token.text.count >= 3, n % 100 < 60 {
                // at(1)'s HHMM: `0730`, `1630`
                try clock(n / 100, n % 100, meridiem: nil, token)
            } else {
                try clock(n, 0, meridiem: nil, token)
            }
        case .ordinalNumber(let n):
            // `24th December`, `am 24. Dezember`, `the 1st of every month`
            if let month = monthAhead() {
                try setDay(.date(year: year(), month: month, day: n), token)
            } else if n <= 5, { if case .weekday? = word(current) { true } else { word(current) == .and && ordinalAhead() } }() {
                // `the 2nd saturday of the month`, `le 2e et le 4e samedi`
                try ordinalOfMonth(.ordinal(n), token)
            } else if try ofEveryMonth() {
                try setRepeat(.monthDay(n, interval: 1), token)
            } else {
                throw fail("the \(PhraseWords.englishOrdinal(n)) of which month? e.g. '\(n) Dec' or '\(PhraseWords.englishOrdinal(n)) of every month'", token)
            }
        case .date(let y, let m, let d):
            try setDay(.date(year: y, month: m, day: d), token)
        case .word(let w):
            try step(w, token)
        case .unknown:
            let nearest = closest(token.text)
            throw fail(.notAWord(token.text, nearest: nearest), token)
        }
    }

    /// Whether a token names a day (after German `am`, which is then `on`).
    func isDayLike(_ token: PhraseToken) -> Bool {
        switch token.kind {
        case .ordinalNumber, .date: return true
        case .word(let w):
            switch w {
            case .weekday, .weekend, .workdays, .the, .last, .ordinal, .tomorrow, .today, .dayAfterTomorrow: return true
            default: return false
            }
        default: return false
        }
    }

    /// After `next month`: `on the 1st`, `am 1.` (the day and its token), or nil.
    func nextMonthDay() -> (Int, PhraseToken)? {
        var look = index + 1
        while look < tokens.count, let w = word(tokens[look]), w == .on || w == .the || w == .am { look += 1 }
        guard look < tokens.count, case .ordinalNumber(let day) = tokens[look].kind else { return nil }
        return (day, tokens[look])
    }

    /// After `and`, an ordinal (`and 4th`, `et le 4e`).
    func ordinalAhead() -> Bool {
        var look = index + 1
        while look < tokens.count, word(tokens[look]) == .the { look += 1 }
        return look < tokens.count && ordinal(tokens[look]) != nil
    }

    /// A year after a date (`24 Dec 2026`, `24 de diciembre de 2026`).
    mutating func year() -> Int? {
        let of = word(current) == .of ? 1 : 0
        guard case .integer(let y)? = peek(of)?.kind, y >= 1970, y <= 9999 else { return nil }
        index += of + 1
        return y
    }

    /// A month's name next, or after `of` (`December`, `de diciembre`): consumed, its number.
    mutating func monthAhead() -> Int? {
        let of = word(current) == .of ? 1 : 0
        guard case .monthName(let month)? = word(peek(of)) else { return nil }
        index += of + 1
        return month
    }

    /// `of every month`, `of the month`, `jeden Monats`, `im Monat`, `de chaque mois`: consumed, true
    /// when there. `joined`: only with a word before the month (`15 de cada mes`, not `15 mes`).
    mutating func ofEveryMonth(joined: Bool = false) throws(RuleError) -> Bool {
        var look = index
        while look < tokens.count, let w = word(tokens[look]), w == .of || w == .the || w == .every || w == .inWord { look += 1 }
        guard look < tokens.count, word(tokens[look]) == .month, !joined || look > index else { return false }
        index = look + 1
        return true
    }

    mutating func step(_ w: PhraseWord, _ token: PhraseToken) throws(RuleError) {
        switch w {
        case .at, .on, .the, .and, .oclock, .of:
            return  // words that join
        case .am where current.map(isDayLike) == true:
            return  // German `am Montag`, `am 24.12.`, `am Wochenende`: on
        case .morning where meaning.time == nil && partOfDay == nil, .evening where meaning.time == nil && partOfDay == nil:
            partOfDay = w  // `morgen früh um 7`: the time follows (a `where` holds for its own pattern only)
        case .am, .pm, .morning, .evening:
            throw fail("'\(token.text)' after what time? e.g. '7 \(token.text)'", token)
        case .today: try setDay(.offset(0), token)
        case .tomorrow where token.alternative == .morning && index >= 2 && word(tokens[index - 2]) == .the:
            // Spanish `por la mañana`: the morning, not tomorrow.
            guard meaning.time == nil, partOfDay == nil else { throw fail("'\(token.text)' after what time? e.g. '7 \(token.text)'", token) }
            partOfDay = .morning
        case .tomorrow:
            // German `morgen früh` is tomorrow morning; `morgens` alone is a time of day (above).
            try setDay(.offset(1), token)
        case .dayAfterTomorrow: try setDay(.offset(2), token)
        case .day:
            // `the day after tomorrow`
            if word(current) == .after, word(peek()) == .tomorrow {
                index += 2
                try setDay(.offset(2), token)
            } else if let kind = current?.kind, { if case .integer = kind { true } else if case .ordinalNumber = kind { true } else { false } }() {
                return  // Spanish `el día 15`: the number says the day
            } else {
                throw fail("which day? e.g. 'tomorrow' or 'every day'", token)
            }
        case .from:
            startsHere = true
        case .weekday(let d) where current.map({ t in
            switch t.kind {
            case .date, .ordinalNumber, .integer: true
            default: false
            }
        }) == true:
            // `Tue 1 Dec`, `Sa 28.11.`: the date says the day; the weekday must be its own.
            meaning.weekdayOfDate = d
        case .weekday(let d) where word(current) == .next:
            // French `lundi prochain`, Spanish `el lunes que viene`
            index += 1
            try setDay(.weekday(d, next: true), token)
        case .week where word(current) == .next, .month where word(current) == .next, .year where word(current) == .next:
            // French `la semaine prochaine`: at(1)'s `next week`
            index += 1
            nextUnit(w)
        case .weekday(let d), .weekdays(let d):
            // `monday to friday`, `montags bis freitags`, `de lunes a viernes`: every week, those days.
            if word(current) == .to || word(current) == .at, let last = peek().flatMap({ t -> Int? in
                switch word(t) {
                case .weekday(let e)?, .weekdays(let e)?: e
                default: nil
                }
            }) {
                index += 2
                try setRepeat(.weekdays(Set((0...((last - d + 7) % 7)).map { (d - 1 + $0) % 7 + 1 }), interval: 1), token)
                return
            }
            // `sat and sun`, `mondays`: every week, those days (a day said alone is once).
            if case .weekday = w, !(word(current) == .and || { if case .weekday? = word(current) { return true } else { return false } }()) {
                try setDay(.weekday(d, next: false), token)
                return
            }
            try setRepeat(.weekdays(weekdayList(first: d), interval: 1), token)
        case .monthName(let m):
            // `December 24th`, `Dec 24`, `Dezember 24`
            switch current?.kind {
            case .ordinalNumber(let d)?, .integer(let d)?:
                index += 1
                try setDay(.date(year: year(), month: m, day: d), token)
            default:
                throw fail("which day of \(token.text)? e.g. '\(token.text) 24'", token)
            }
        case .next:
            switch word(current) {
            case .weekday(let d)?:
                index += 1
                try setDay(.weekday(d, next: true), token)
            case .month? where nextMonthDay() != nil:
                // `next month on the 1st`: that day of the month after this one.
                let (day, dayToken) = nextMonthDay()!
                let now = context.zone.civil(at: context.said.seconds)
                index = tokens.firstIndex { $0.offset == dayToken.offset }! + 1
                try setDay(.date(year: now.month == 12 ? now.year + 1 : now.year, month: now.month % 12 + 1, day: day), dayToken)
            case let unit? where [.day, .week, .month, .year].contains(unit):
                index += 1
                nextUnit(unit)
            default:
                let nearest = current.flatMap { closest($0.text) }
                var error = fail("next what? e.g. 'next friday' or 'next week'" + (nearest.map { " (did you mean '\($0)'?)" } ?? ""), current ?? token)
                error.suggests = nearest != nil
                throw error
            }
        case .inWord:
            if word(current) == .the, let part = word(peek()), part == .morning || part == .evening {
                throw fail("'in the \(peek()!.text)' after what time? e.g. '7 in the \(peek()!.text)'", token)
            }
            meaning.relativeToNow = meaning.day == nil
            try span(token, sign: 1)
        case .now:
            meaning.relativeToNow = true
        case .plus:
            try span(token, sign: 1)
        case .noon, .midnight:
            // `midi et demi`, `medianoche y cuarto`
            let hour = w == .noon ? 12 : 0
            let added = minutesAfterHour() ?? 0
            try setTime(.init(hour: added < 0 ? (hour + 23) % 24 : hour, minute: (added + 60) % 60), token)
        case .teatime: try setTime(.init(hour: 16, minute: 0), token)
        case .half:
            // German `halb acht` (7:30); English `half past 7`.
            if let n = number(current) {
                index += 1
                try clock(n == 0 ? 23 : n - 1, 30, meridiem: nil, token)
            } else if word(current) == .past, let n = number(peek()) {
                index += 2
                try clock(n, 30, meridiem: nil, token)
            } else {
                throw fail("half past what? e.g. 'half past 7' or 'halb acht'", token)
            }
        case .quarter where ordinal(token) != nil && { if case .weekday? = word(current) { true } else { word(current) == .day || word(current) == .and } }():
            // Spanish `el cuarto jueves`: the fourth
            try ordinalOfMonth(.ordinal(ordinal(token)!), token)
        case .quarter, .threeQuarters:
            // `quarter past 7`, `quarter to 8`, `viertel nach 7`, `viertel vor 8`, `dreiviertel 8`
            if w == .threeQuarters, let n = number(current) {
                index += 1
                try clock(n == 0 ? 23 : n - 1, 45, meridiem: nil, token)
            } else if let direction = word(current), direction == .past || direction == .to, let n = number(peek()) {
                index += 2
                try clock(direction == .past ? n : (n == 0 ? 23 : n - 1), direction == .past ? 15 : 45, meridiem: nil, token)
            } else {
                throw fail("a quarter past or to what? e.g. 'quarter past 7'", token)
            }
        case .every:
            try every(token)
        case .daily:
            try setRepeat(.days(interval: 1), token)
        case .weekly:
            try everyWeek(interval: 1, token)
        case .monthly:
            try everyMonth(interval: 1, token)
        case .yearly:
            try everyYear(interval: 1, token, token)
        case .workdays:
            try setRepeat(.weekdays([1, 2, 3, 4, 5], interval: 1), token)
        case .weekend:
            try setRepeat(.weekdays([6, 7], interval: 1), token)
        case .ordinal, .last:
            try ordinalOfMonth(w, token)
        case .number(let n):
            // `seven o'clock`, `sieben Uhr`
            try clock(n, 0, meridiem: nil, token)
        default:
            throw fail(.notUnderstoodHere(token.text), token)
        }
    }

    /// at(1)'s `next week`: now and that much.
    mutating func nextUnit(_ unit: PhraseWord) {
        meaning.relativeToNow = true
        meaning.plusDays += unit == .day ? 1 : unit == .week ? 7 : 0
        meaning.plusMonths += unit == .month ? 1 : unit == .year ? 12 : 0
    }

    /// `the first monday of the month`, `the last friday of every month`, `the 2nd and 4th saturday`,
    /// `the last day of the month`.
    /// `interval`: every so many months (`every 2 months on the first monday`).
    mutating func ordinalOfMonth(_ w: PhraseWord, _ token: PhraseToken, interval: Int = 1) throws(RuleError) {
        var ordinals = [w == .last ? -1 : { if case .ordinal(let n) = w { n } else { 1 } }()]
        while word(current) == .and {
            // `2nd and 4th`, `deuxième et le quatrième`, `segundo y cuarto`
            var look = index + 1
            while look < tokens.count, word(tokens[look]) == .the { look += 1 }
            guard look < tokens.count, let more = ordinal(tokens[look]) else { break }
            ordinals.append(more)
            index = look + 1
        }
        switch word(current) {
        case .weekday(let d)?:
            index += 1
            _ = try ofEveryMonth()
            try setRepeat(.monthlyWeekdays(ordinals, weekday: d, interval: interval), token)
        case .day?:
            index += 1
            guard ordinals == [-1] || ordinals.count == 1 else { throw fail("one day of the month at a time", token) }
            _ = try ofEveryMonth()
            try setRepeat(.monthDay(ordinals[0], interval: interval), token)
        default:
            // Spanish `el primero de diciembre`, `el primero de cada mes`
            if ordinals.count == 1, ordinals[0] > 0, let month = monthAhead() {
                try setDay(.date(year: year(), month: month, day: ordinals[0]), token)
            } else if ordinals.count == 1, ordinals[0] > 0, try ofEveryMonth(joined: true) {
                try setRepeat(.monthDay(ordinals[0], interval: 1), token)
            } else {
                throw fail("the \(token.text) what? e.g. '\(token.text) friday of the month'", current ?? token)
            }
        }
    }

    /// After `every`: `day`, `monday and thursday`, `other tuesday`, `2 weeks`, `second tuesday`,
    /// `year on 24 Dec`, `month on the 1st`, `2nd and 4th saturday`, `weekday`, `weekend`.
    mutating func every(_ token: PhraseToken) throws(RuleError) {
        var interval = 1
        // `tous les lundis`, `todos los días`, `toutes les 2 heures`
        while word(current) == .the { index += 1 }
        if word(current) == .other {
            interval = 2
            index += 1
        } else if let n = number(current), let after = peek() {
            switch after.kind {
            case .word(.unit), .word(.day), .word(.week), .word(.month), .word(.year), .word(.weekend), .word(.workdays):
                interval = n
                index += 1
            case .word(.weekday), .word(.weekdays):
                // `alle zwei Wochen`-style counts before a day are read as every other/nth.
                interval = n
                index += 1
            default: break
            }
        }
        guard let next = current else { throw fail("every what? e.g. 'every day' or 'every monday'", token) }
        let monthNameFollows = { if case .monthName? = word(peek()) { true } else { false } }()
        switch next.kind {
        case .word(.quarter) where ordinal(next) != nil:
            // Spanish `cada cuarto jueves`: the fourth
            index += 1
            try ordinalOfMonth(.ordinal(ordinal(next)!), next)
        case .word(.ordinal(let n)):
            // `every second tuesday` (German `jeden zweiten Dienstag`: every other one), or `every first
            // monday of the month`.
            index += 1
            if case .weekday(let d)? = word(current) {
                index += 1
                let monthly = try ofEveryMonth()
                if monthly || interval != 1 {
                    try setRepeat(.monthlyWeekdays([n], weekday: d, interval: 1), token)
                } else {
                    try setRepeat(.weekdays([d], interval: n), token)
                }
            } else if word(current) == .and {
                try ordinalOfMonth(.ordinal(n), next)
            } else if word(current) == .day {
                index += 1
                _ = try ofEveryMonth()
                try setRepeat(.monthDay(n, interval: 1), token)
            } else {
                throw fail("every \(next.text) what? e.g. 'every \(next.text) tuesday'", current ?? next)
            }
        case .word(.monthName):
            // `every jan 27th`: that day every year
            try everyYear(interval: 1, token, next)
        case .ordinalNumber where monthNameFollows, .integer where monthNameFollows:
            // `every 27th jan`, `every 27 jan`
            try everyYear(interval: 1, token, next)
        case .ordinalNumber(let n):
            index += 1
            if case .weekday(let d)? = word(current) {
                index += 1
                _ = try ofEveryMonth()
                try setRepeat(.monthlyWeekdays([n], weekday: d, interval: 1), token)
            } else if word(current) == .and {
                try ordinalOfMonth(.ordinal(n), next)
            } else {
                // `every 15th`, `jeden 15.`: that day of every month.
                _ = try ofEveryMonth()
                try setRepeat(.monthDay(n, interval: interval), token)
            }
        case .word(.last):
            index += 1
            try ordinalOfMonth(.last, next)
        case .word(.day), .word(.unit(.day)):
            index += 1
            try setRepeat(.days(interval: interval), token)
        case .word(.weekday(let d)), .word(.weekdays(let d)):
            index += 1
            try setRepeat(.weekdays(weekdayList(first: d), interval: interval), token)
        case .word(.workdays):
            index += 1
            try setRepeat(.weekdays([1, 2, 3, 4, 5], interval: interval), token)
        case .word(.weekend):
            index += 1
            try setRepeat(.weekdays([6, 7], interval: interval), token)
        case .word(.week), .word(.unit(.week)):
            index += 1
            try everyWeek(interval: interval, token)
        case .word(.month), .word(.unit(.month)):
            index += 1
            try everyMonth(interval: interval, token)
        case .word(.year), .word(.unit(.year)):
            index += 1
            try everyYear(interval: interval, token, next)
        case .word(.morning), .word(.evening):
            index += 1
            try everyPartOfDay(next, interval: interval, token)
        case .word(.tomorrow) where next.alternative == .morning:
            // German `jeden Morgen`, Spanish `cada mañana`: the morning, not tomorrow.
            index += 1
            try everyPartOfDay(next, interval: interval, token)
        case .word(.noon), .word(.midnight):
            index += 1
            try setRepeat(.days(interval: interval), token)
            try setTime(.init(hour: word(next) == .noon ? 12 : 0, minute: 0), next)
        case .word(.unit(let unit)) where unit == .minute || unit == .hour:
            index += 1
            var seconds = Int64(interval) * unit.seconds!
            // `every 1 hour and 30 minutes`
            while word(current) == .and, let n = number(peek()), case .unit(let more)? = word(peek(2)), let size = more.seconds {
                seconds += Int64(n) * size
                index += 3
            }
            try setRepeat(.interval(seconds: seconds), token)
        case .integer(let n) where (1...31).contains(n) && next.text.count <= 2 && {
            var look = index + 1
            while look < tokens.count, let w = word(tokens[look]), w == .of || w == .the || w == .every || w == .inWord { look += 1 }
            return look > index + 1 && look < tokens.count && word(tokens[look]) == .month
        }():
            // French `tous les 15 du mois`: that day of every month.
            index += 1
            _ = try ofEveryMonth()
            try setRepeat(.monthDay(n, interval: 1), token)
        case .integer(let n) where (1...31).contains(n) && next.text.count <= 2 && interval == 1 && {
            // `every 27` (Todoist's): the 27th of every month, when no unit follows
            guard let after = peek() else { return true }
            if case .word(let w) = after.kind { return w == .at || w == .on || w == .oclock || w == .am || w == .pm }
            if case .clock = after.kind { return true }
            return false
        }():
            index += 1
            try setRepeat(.monthDay(n, interval: 1), token)
        case .integer, .word(.number):
            // `every 25 minutes` (the count was not taken above: what follows is no unit)
            throw fail("every \(next.text) what? e.g. 'every \(next.text) days'", peek() ?? next)
        default:
            let nearest = closest(next.text)
            var error = fail("every '\(next.text)'? e.g. 'every day', 'every monday', 'every 2 weeks'" + (nearest.map { " (did you mean '\($0)'?)" } ?? ""), next)
            error.suggests = nearest != nil
            throw error
        }
    }

    /// A part of the day after `every`: how a time said with it reads (morning: a.m.), and its
    /// documented time: morning 09:00, afternoon 12:00, evening 19:00, night 22:00.
    func partOfDayAndHour(_ token: PhraseToken) -> (word: PhraseWord, hour: Int) {
        let word = partOfDay(token) ?? .morning
        return (word, lexicon.partHours[token.text] ?? (word == .morning ? 9 : 19))
    }

    /// `every morning`, `every night`, `jeden Morgen`: every day, at the time said (of that part of
    /// the day), else at the part's documented time (as Todoist documents its own).
    mutating func everyPartOfDay(_ part: PhraseToken, interval: Int, _ token: PhraseToken) throws(RuleError) {
        try setRepeat(.days(interval: interval), token)
        let (word, hour) = partOfDayAndHour(part)
        partOfDay = word
        documentedTime = PhraseMeaning.TimeOfDay(hour: hour, minute: 0)
    }

    /// After `every week`, `every 2 weeks`, `weekly`: `on monday` (else every so many weeks from now).
    mutating func everyWeek(interval: Int, _ token: PhraseToken) throws(RuleError) {
        if let w = word(current), w == .on || w == .am || w == .the, case .weekday(let d)? = word(peek()) {
            index += 2
            try setRepeat(.weekdays(weekdayList(first: d), interval: interval), token)
        } else if case .weekday(let d)? = word(current) {
            index += 1
            try setRepeat(.weekdays(weekdayList(first: d), interval: interval), token)
        } else {
            try setRepeat(.everyUnit(.week, interval), token)
        }
    }

    /// After `every month`, `monthly`: `on the 1st` (else every so many months from now).
    mutating func everyMonth(interval: Int, _ token: PhraseToken) throws(RuleError) {
        var look = index
        while look < tokens.count, let w = word(tokens[look]), w == .on || w == .the || w == .am { look += 1 }
        if look < tokens.count, word(tokens[look]) == .day, look + 1 < tokens.count, case .integer = tokens[look + 1].kind { look += 1 }
        if look < tokens.count, case .ordinalNumber(let d) = tokens[look].kind {
            index = look + 1
            try setRepeat(.monthDay(d, interval: interval), token)
        } else if look > index, look < tokens.count, case .integer(let d) = tokens[look].kind, (1...31).contains(d), tokens[look].text.count <= 2,
                  word(tokens.indices.contains(look + 1) ? tokens[look + 1] : nil).map({ $0 != .oclock && !means(tokens[look + 1], .oclock) }) ?? true {
            // `tous les mois le 15`, `cada mes el día 15`
            index = look + 1
            try setRepeat(.monthDay(d, interval: interval), token)
        } else if look < tokens.count, let n = ordinal(tokens[look]) {
            // `monthly on the last friday`, `cada 2 meses el primer lunes`
            index = look + 1
            try ordinalOfMonth(n == -1 ? .last : .ordinal(n), tokens[look], interval: interval)
        } else {
            try setRepeat(.everyUnit(.month, interval), token)
        }
    }

    /// After `every year`, `yearly`: `on 24 Dec` (every N years counts from now).
    mutating func everyYear(interval: Int, _ token: PhraseToken, _ said: PhraseToken) throws(RuleError) {
        guard interval == 1 else { return try setRepeat(.everyUnit(.year, interval), token) }
        // `every year on 24 Dec`, `jedes Jahr am 24.12.`: the date follows.
        var look = index
        while look < tokens.count, let w = word(tokens[look]), w == .on || w == .the || w == .am { look += 1 }
        index = look
        guard let dateToken = current else { throw fail("every year on which day? e.g. 'every year on 24 Dec'", said) }
        let before = meaning.day
        try step(dateToken)
        guard case .date(_, let m, let d)? = meaning.day, before == nil else {
            throw fail("every year on which day? e.g. 'every year on 24 Dec'", dateToken)
        }
        meaning.day = nil
        try setRepeat(.yearly(month: m, day: d), token)
    }

    /// The known word nearest `word`: the phrase's language's, else another's.
    func closest(_ word: String) -> String? {
        var best: (String, Int)?
        for language in [context.language] + lexicon.languages.filter({ $0 != context.language }) where best == nil {
            for candidate in lexicon.vocabularies[language] ?? [] {
                // (Accents aside: `miercole` is near `miércoles`.)
                let distance = phraseEditDistance(PhraseLexicon.foldedAccents(word), PhraseLexicon.foldedAccents(candidate))
                if distance <= max(1, word.count / 3), best == nil || distance < best!.1 { best = (candidate, distance) }
            }
        }
        return best?.0
    }
}

/// Levenshtein distance, bounded by the words' lengths (phrases are short).
func phraseEditDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.prefix(40)), b = Array(b.prefix(40))
    var row = Array(0...b.count)
    for i in 1...max(1, a.count) where !a.isEmpty {
        var previous = row[0]
        row[0] = i
        for j in 1...max(1, b.count) where !b.isEmpty {
            let kept = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
            previous = kept
        }
    }
    return a.isEmpty ? b.count : row[b.count]
}
