// `make bench`: nextFireDate for 100,000 random calendar rules (release build),
// and the cost of one rule whose next fire is a day away vs decades away.
// Prints "parse_seconds next_seconds near_us far_us checksum".
//
// `chime-bench-nextfire COUNT rrule [FILE]`: the same for COUNT random iCalendar recurrences
// (RFC 5545) started 2015-2026 in five zones, their next occurrence after November 2026; prints
// "parse_seconds next_seconds rules_without_next checksum" and, with FILE, writes
// "ZONE DTSTART RRULE NEXT" lines there (NEXT: Unix time or "none") for bench/rrule_dateutil.py,
// which times python-dateutil on the same rules and checks that it finds the same occurrences.
//
// `chime-bench-nextfire COUNT phrase [FILE]`: reading COUNT random phrases in English and German
// (once and repeating) beside parsing COUNT calendar expressions (see below).
//
// `chime-bench-nextfire COUNT languages`: reading COUNT random phrases in each of English, German,
// French and Spanish, by a reader of all four languages (what chime reads with) and by one of that
// language alone (see below).
//
// `chime-bench-nextfire COUNT holidays`: COUNT weekday alarms with three holiday calendars (see below).
import ChimeCalendars
import ChimeCenter
@_spi(Benchmarks) import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

final class Random {
    var state: UInt64 = 0x5EED
    func below(_ n: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(n))
    }
}
let generator = Random()
@MainActor func random(_ n: Int) -> Int { generator.below(n) }
func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
@MainActor func field(_ upper: Int, _ lower: Int) -> String {
    switch random(5) {
    case 0, 1: return "*"
    case 2: return two(lower + random(upper - lower + 1))
    case 3: let a = lower + random(upper - lower); return "\(two(a))..\(two(a + 1 + random(upper - a)))"
    default: let step = 1 + random((upper - lower) / 2); return "\(two(lower + random(upper - lower + 1 - step)))/\(step)"
    }
}
let weekdays = ["", "Mon ", "Mon..Fri ", "Sat,Sun ", "Tue,Thu "]
let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"].map { try! Zone.named($0) }

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let base: Int64 = 1_795_000_000  // November 2026

/// A random RRULE of every frequency, with the BY parts RFC 5545 lets go with it.
@MainActor func randomRule() -> String {
    let frequencies = ["YEARLY", "MONTHLY", "MONTHLY", "WEEKLY", "WEEKLY", "DAILY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"]
    let frequency = frequencies[random(frequencies.count)]
    var parts = ["FREQ=\(frequency)"]
    if random(2) == 0 { parts.append("INTERVAL=\(1 + random(4))") }
    switch random(6) {
    case 0: parts.append("COUNT=\(1 + random(50))")
    case 1: parts.append("UNTIL=20\(26 + random(10))\(two(1 + random(12)))01T000000Z")
    default: break
    }
    func list(_ n: Int, _ make: () -> String) -> String { (0..<n).map { _ in make() }.joined(separator: ",") }
    let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
    let coarse = frequency == "YEARLY" || frequency == "MONTHLY"
    if random(3) == 0 { parts.append("BYMONTH=" + list(1 + random(3)) { "\(1 + random(12))" }) }
    if random(2) == 0 {
        parts.append("BYDAY=" + list(1 + random(3)) {
            (coarse && random(2) == 0 ? "\(random(2) == 0 ? "-" : "")\(1 + random(4))" : "") + days[random(7)]
        })
    }
    if frequency != "WEEKLY", random(4) == 0 {
        parts.append("BYMONTHDAY=" + list(1 + random(2)) { "\(random(2) == 0 ? "-" : "")\(1 + random(28))" })
    }
    if frequency == "YEARLY", random(5) == 0, !parts.contains(where: { $0.hasPrefix("BYDAY=") }) {
        parts.append("BYWEEKNO=\(1 + random(52))")
    }
    if frequency == "YEARLY", random(6) == 0 { parts.append("BYYEARDAY=\(random(2) == 0 ? "-" : "")\(1 + random(365))") }
    if random(3) == 0 { parts.append("BYHOUR=" + list(1 + random(3)) { "\(random(24))" }) }
    if random(3) == 0 { parts.append("BYMINUTE=" + list(1 + random(2)) { "\(random(60))" }) }
    if random(5) == 0 { parts.append("WKST=" + days[random(7)]) }
    if parts.contains(where: { $0.hasPrefix("BYDAY=") || $0.hasPrefix("BYMONTHDAY=") }), random(4) == 0 {
        parts.append("BYSETPOS=\(random(2) == 0 ? "-" : "")\(1 + random(3))")
    }
    return parts.joined(separator: ";")
}

/// A random phrase a person might type: once or repeating, English or German, with random numbers.
/// The second value says whether it is a one-off (what bench/phrase_dateparser.py gives dateparser).
@MainActor func randomPhrase() -> (String, Bool) {
    let hour12 = 1 + random(12), hour = random(24), minute = random(60)
    let time = "\(hour):\(two(minute))"
    let ampm = "\(hour12)\(random(2) == 0 ? "am" : "pm")"
    let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    let tage = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let monate = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"]
    // Not the day it is said (18 Nov): a time already passed that day is refused, as at(1) refuses it.
    var day = 1 + random(28)
    let month = random(12)
    if month == 10, day == 18 { day = 19 }
    let ordinals = ["1st", "2nd", "3rd", "4th"]
    let once: [() -> String] = [
        { "tomorrow \(ampm)" }, { "tomorrow at \(time)" }, { "next \(days[random(7)]) \(time)" },
        { "\(day) \(months[month]) \(ampm)" }, { "\(months[month]) \(day) at \(time)" },
        { "in \(1 + random(9)) days at \(time)" }, { "in \(1 + random(50)) minutes" }, { "in an hour and a half" },
        { "\(days[random(7)]) at \(ampm)" }, { "now + \(1 + random(9)) hours" }, { "\(ampm) + \(1 + random(5)) days" },
        { "morgen um \(hour) Uhr" }, { "übermorgen um \(time)" }, { "am \(day). \(monate[month]) um \(time)" },
        { "am \(day).\(month + 1). um \(time)" }, { "in \(1 + random(9)) Stunden" }, { "heute abend um \(1 + random(11))" },
    ]
    let repeating: [() -> String] = [
        { "every weekday \(time)" }, { "every other \(days[random(7)]) \(ampm)" }, { "every \(2 + random(8)) days at \(time)" },
        { "last friday of the month \(time)" }, { "every \(ordinals[random(2)]) and \(ordinals[2 + random(2)]) saturday \(time)" },
        { "\(ordinals[random(4)]) of every month \(time)" }, { "every monday and thursday \(ampm)" },
        { "every year on \(day) \(months[month]) at \(time)" },
        { "werktags um \(hour) Uhr" }, { "jeden zweiten \(tage[random(7)]) um \(time)" }, { "alle \(2 + random(8)) Tage um \(time)" },
        { "am letzten Freitag im Monat um \(time)" }, { "am Wochenende um \(time)" }, { "jedes Jahr am \(day).\(month + 1). um \(time)" },
    ]
    if random(2) == 0 { return (once[random(once.count)](), true) }
    return (repeating[random(repeating.count)](), false)
}

if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "phrase" {
    // `chime-bench-nextfire COUNT phrase [FILE]`: reading COUNT random phrases (Rule.reading, as
    // `chime at` and Add read a rule), and COUNT calendar expressions beside them; prints
    // "phrase_us calendar_us unread checksum" (microseconds a rule). With FILE, the one-off phrases
    // and what each meant are written there ("UNIX_TIME<TAB>PHRASE") for bench/phrase_dateparser.py.
    let said = Instant(seconds: base)
    let context = PhraseContext(said: said, zone: zones[0], language: .english)
    var phrases: [(String, Bool)] = []
    for _ in 0..<count { phrases.append(randomPhrase()) }
    var expressions: [String] = []
    for _ in 0..<count { expressions.append(weekdays[random(weekdays.count)] + "*-\(field(12, 1))-\(field(28, 1)) \(field(23, 0)):\(field(59, 0))") }
    var unread = 0
    var checksum: Int64 = 0
    var meant: [Int64?] = []
    meant.reserveCapacity(count)
    var t0 = now()
    for (text, _) in phrases {
        if let reading = try? Rule.reading(text, context) {
            let next = reading.rule.nextFire(after: said, anchor: said, repeats: reading.repeats ?? true, in: zones[0])
            meant.append(next?.seconds)
        } else {
            unread += 1
            meant.append(nil)
            if getenv("CHIME_BENCH_UNREAD") != nil { print("unread: \(text)") }
        }
    }
    let phraseSeconds = now() - t0
    t0 = now()
    for text in expressions { checksum &+= Int64((try? CalendarExpression(parsing: text)) == nil ? 0 : 1) }
    let calendarSeconds = now() - t0
    for value in meant { checksum &+= value ?? 0 }
    if CommandLine.arguments.count > 3 {
        let text = zip(phrases, meant).compactMap { phrase, next in
            phrase.1 ? next.map { "\($0)\t\(phrase.0)\n" } : nil
        }.joined()
        let file = fopen(CommandLine.arguments[3], "w")!
        fputs(text, file)
        fclose(file)
    }
    print(phraseSeconds / Double(count) * 1e6, calendarSeconds / Double(count) * 1e6, unread, checksum != 0 ? 1 : 0)
    exit(unread == 0 ? 0 : 1)
}

/// A random phrase in `language`, once or repeating, of the kinds people type.
@MainActor func randomPhrase(in language: PhraseLanguage) -> String {
    let hour = random(24), minute = random(60), hour12 = 1 + random(12)
    let time = "\(hour):\(two(minute))"
    // Not the day it is said (18 Nov): a time already passed that day is refused.
    var day = 1 + random(28)
    let month = random(12), weekday = random(7)
    if month == 10, day == 18 { day = 19 }
    let forms: [String]
    switch language {
    case .english:
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        forms = ["tomorrow \(hour12)\(random(2) == 0 ? "am" : "pm")", "next \(days[weekday]) \(time)", "in \(1 + random(50)) minutes",
                 "\(months[month]) \(day) at \(time)", "in an hour and a half", "every weekday \(time)", "every other \(days[weekday]) at \(time)",
                 "last friday of the month \(time)", "every \(day)th at \(time)", "every morning", "monday to friday at \(time)",
                 "every year on \(day) \(months[month]) at \(time)"]
    case .german:
        let tage = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
        forms = ["morgen um \(hour) Uhr", "übermorgen um \(time)", "am \(day).\(month + 1). um \(time)", "in \(1 + random(9)) Stunden",
                 "heute abend um \(1 + random(11))", "nächsten \(tage[weekday]) um \(time)", "werktags um \(time)",
                 "jeden zweiten \(tage[weekday]) um \(time)", "am letzten Freitag im Monat um \(time)", "jeden \(day). um \(time)",
                 "montags bis freitags um \(time)", "jedes Jahr am \(day).\(month + 1). um \(time)"]
    case .french:
        let jours = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"]
        let mois = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"]
        forms = ["demain à \(hour)h", "\(jours[weekday]) prochain à \(hour)h\(two(minute))", "le \(day) \(mois[month]) à \(time)",
                 "dans \(1 + random(50)) minutes", "dans une heure et demie", "en semaine à \(time)", "tous les \(jours[weekday])s à \(time)",
                 "le dernier vendredi du mois à \(time)", "le \(day) de chaque mois à \(time)", "tous les matins",
                 "du lundi au vendredi à \(time)", "tous les ans le \(day) \(mois[month]) à \(time)"]
    case .spanish:
        let dias = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
        let meses = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"]
        forms = ["mañana a las \(hour)", "el próximo \(dias[weekday]) a las \(time)", "el \(day) de \(meses[month]) a las \(time)",
                 "dentro de \(1 + random(9)) horas", "en una hora y media", "entre semana a las \(time)", "cada \(dias[weekday]) a las \(time)",
                 "el último viernes de cada mes a las \(time)", "el \(day) de cada mes a las \(time)", "todas las mañanas",
                 "de lunes a viernes a las \(time)", "cada año el \(day) de \(meses[month]) a las \(time)"]
    }
    return forms[random(forms.count)]
}

if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "languages" {
    // `chime-bench-nextfire COUNT languages`: for each language, COUNT random phrases in it, read
    // (as said on 18 Nov 2026, in that language) by a reader of all four languages, the one chime
    // reads with, and by a reader of that language alone, alternately, three times each; the best of
    // three. Prints one line a language: "LANGUAGE four_us one_us unread" (microseconds a phrase).
    let all = PhraseReader(languages: PhraseLanguage.allCases)
    var failed = 0
    for language in PhraseLanguage.allCases {
        let alone = PhraseReader(languages: [language])
        let context = PhraseContext(said: Instant(seconds: base), zone: zones[0], language: language)
        var phrases: [String] = []
        for _ in 0..<count { phrases.append(randomPhrase(in: language)) }
        var best = (four: Double.infinity, one: Double.infinity)
        var unread = 0
        for round in 0..<3 {
            for (index, reader) in [all, alone].enumerated() {
                var missed = 0
                let t0 = now()
                for text in phrases where (try? reader.read(text, context)) == nil { missed += 1 }
                let microseconds = (now() - t0) / Double(count) * 1e6
                if index == 0 { best.four = min(best.four, microseconds) } else { best.one = min(best.one, microseconds) }
                if round == 0 { unread += missed }
                if missed > 0, getenv("CHIME_BENCH_UNREAD") != nil {
                    for text in phrases where (try? reader.read(text, context)) == nil { print("unread (\(language.rawValue)): \(text)") }
                }
            }
        }
        print(language.rawValue, best.four, best.one, unread)
        failed += unread
    }
    exit(failed == 0 ? 0 : 1)
}

if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "holidays" {
    // `chime-bench-nextfire COUNT holidays`: three holiday calendars as a person follows them (a
    // country's public holidays as yearly rules and one-offs, a region's school holidays as ranges,
    // a company's bridge days), read as the daemon reads them, then COUNT weekday alarms at random
    // times in three zones, each skipping or moving off days off, planned: their next occurrence,
    // and the ten after it. Prints "read_ms plan_ms plain_ms ten_ms days_off checksum": reading the
    // calendars; planning every alarm's next occurrence with the days off; the same without them;
    // the ten occurrences after it with them.
    func date(_ y: Int, _ m: Int, _ d: Int) -> String { "\(y)\(two(m))\(two(d))" }
    func calendar(_ events: [[String]]) -> [UInt8] {
        Array((["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//EN"] + events.enumerated().flatMap { index, lines in
            ["BEGIN:VEVENT", "UID:\(index)@bench", "DTSTAMP:20261101T000000Z"] + lines + ["END:VEVENT"]
        } + ["END:VCALENDAR"]).joined(separator: "\r\n").utf8)
    }
    var publicHolidays: [[String]] = [[String]]()
    for (m, d, name) in [(1, 1, "New Year"), (5, 1, "Labour Day"), (10, 3, "Unity Day"), (12, 25, "Christmas Day"), (12, 26, "Boxing Day")] {
        publicHolidays.append(["SUMMARY:\(name)", "DTSTART;VALUE=DATE:\(date(2020, m, d))", "RRULE:FREQ=YEARLY"])
    }
    publicHolidays.append(["SUMMARY:Thanksgiving", "DTSTART;VALUE=DATE:20201126", "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH"])
    for year in 2025...2037 {
        for (m, d) in [(4, 3), (4, 6), (5, 14), (5, 25), (6, 4)] {
            publicHolidays.append(["SUMMARY:Movable feast", "DTSTART;VALUE=DATE:\(date(year, m, d + year % 5))"])
        }
    }
    var school: [[String]] = []
    for year in 2025...2037 {
        for (m, d, days) in [(2, 9, 5), (3, 30, 12), (7, 20, 40), (10, 12, 12), (12, 21, 14)] {
            school.append(["SUMMARY:School holidays", "DTSTART;VALUE=DATE:\(date(year, m, d))", "DURATION:P\(days)D"])
        }
    }
    var bridges: [[String]] = []
    for year in 2025...2037 {
        for month in 1...12 { bridges.append(["SUMMARY:Bridge day", "DTSTART;VALUE=DATE:\(date(year, month, 1 + random(27)))"]) }
    }
    let files = [calendar(publicHolidays), calendar(school), calendar(bridges)]
    let said = Instant(seconds: base)
    var alarms: [Trigger] = []
    let alarmZones = ["Europe/Berlin", "America/New_York", "UTC"]
    for _ in 0..<count {
        var trigger = try! Trigger(parsing: "\(two(5 + random(4))):\(two(random(60))) mon-fri", timeZone: alarmZones[random(3)], anchor: said)
        trigger.onHoliday = [.skip, .before, .after][random(3)]
        alarms.append(trigger)
    }
    var t0 = now()
    let window = HolidayCalendar.window(around: said)
    let off = DaysOff(holidays: DaysOff.merging(files.map { HolidayCalendar(reading: $0, window: window).days }))
    let readSeconds = now() - t0
    var checksum: Int64 = 0
    t0 = now()
    var firsts: [Instant] = []
    firsts.reserveCapacity(count)
    for trigger in alarms { let next = trigger.nextFire(after: said, off: off)!; firsts.append(next); checksum &+= next.seconds }
    let planSeconds = now() - t0
    t0 = now()
    for trigger in alarms { checksum &+= trigger.nextFire(after: said)!.seconds }
    let plainSeconds = now() - t0
    t0 = now()
    for (trigger, first) in zip(alarms, firsts) {
        var t = first
        for _ in 0..<10 { t = trigger.nextFire(after: t, off: off)!; checksum &+= t.seconds }
    }
    let tenSeconds = now() - t0
    print(readSeconds * 1e3, planSeconds * 1e3, plainSeconds * 1e3, tenSeconds * 1e3, off.holidays.count, checksum != 0 ? 1 : 0)
    exit(0)
}

if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "rrule" {
    let zoneNames = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"]
    var lines: [(zone: String, start: String, rule: String)] = []
    for _ in 0..<count {
        let start = "20\(15 + random(12))\(two(1 + random(12)))\(two(1 + random(28)))T\(two(random(24)))\(two(random(60)))00"
        lines.append((zoneNames[random(zoneNames.count)], start, randomRule()))
    }
    // The texts are made first: what is timed is reading them.
    let texts = lines.map { "DTSTART;TZID=\($0.zone):\($0.start) RRULE:\($0.rule)" }
    var t0 = now()
    let recurrences = texts.map { try! Recurrence(parsing: $0) }
    let parseSeconds = now() - t0
    t0 = now()
    var sum: Int64 = 0
    var none = 0
    var answers: [Int64?] = []
    answers.reserveCapacity(count)
    for recurrence in recurrences {
        let next = recurrence.next(after: base, floatingZone: .utc)
        answers.append(next)
    }
    let nextSeconds = now() - t0
    for answer in answers { if let answer { sum &+= answer } else { none += 1 } }
    // Each rule alone, for the slowest (CHIME_BENCH_SLOWEST=1).
    var slowest: [(Double, Int)] = []
    if getenv("CHIME_BENCH_SLOWEST") != nil {
        for (index, recurrence) in recurrences.enumerated() {
            let t1 = now()
            _ = recurrence.next(after: base, floatingZone: .utc)
            slowest.append((now() - t1, index))
        }
    }
    if CommandLine.arguments.count > 3 {
        let text = zip(lines, answers).map { "\($0.zone) \($0.start) \($0.rule) \($1.map(String.init) ?? "none")\n" }.joined()
        let file = fopen(CommandLine.arguments[3], "w")!
        fputs(text, file)
        fclose(file)
    }
    if getenv("CHIME_BENCH_SLOWEST") != nil {
        let sorted = slowest.map(\.0).sorted()
        let total = sorted.reduce(0, +)
        let tail = sorted.suffix(sorted.count / 100).reduce(0, +)
        print("median \(Int(sorted[sorted.count / 2] * 1e9)) ns; the slowest 1% take \(Int(tail / total * 100))% of the time")
        var byFrequency: [String: [Double]] = [:]
        for (seconds, index) in slowest {
            let frequency = String(lines[index].rule.split(separator: ";")[0].dropFirst(5))
            byFrequency[frequency, default: []].append(seconds)
        }
        for (frequency, times) in byFrequency.sorted(by: { $0.key < $1.key }) {
            let sortedTimes = times.sorted()
            print("\(frequency): \(times.count) rules, median \(Int(sortedTimes[times.count / 2] * 1e9)) ns, mean \(Int(times.reduce(0, +) / Double(times.count) * 1e9)) ns")
        }
        for (seconds, index) in slowest.sorted(by: { $0.0 > $1.0 }).prefix(25) {
            print("\(Int(seconds * 1e6)) us  \(lines[index].zone) \(lines[index].start) \(lines[index].rule)")
        }
    }
    print(parseSeconds, nextSeconds, none, sum != 0 ? 1 : 0)
    exit(0)
}
var texts: [String] = []
texts.reserveCapacity(count)
for _ in 0..<count {
    texts.append(weekdays[random(weekdays.count)] + "*-\(field(12, 1))-\(field(28, 1)) \(field(23, 0)):\(field(59, 0))")
}
var start = now()
var rules: [CalendarExpression] = []
rules.reserveCapacity(count)
for text in texts { rules.append(try! CalendarExpression(parsing: text)) }
let parseSeconds = now() - start

var checksum: Int64 = 0
start = now()
for (i, rule) in rules.enumerated() {
    checksum &+= rule.nextElapse(after: base, in: zones[i % zones.count]) ?? 0
}
let nextSeconds = now() - start

// One rule a day away and one decades away, many times each.
let berlin = zones[0]
let near = try! CalendarExpression(parsing: "*-*-* 12:00")
let far = try! CalendarExpression(parsing: "2090-06-01 12:00")
@MainActor func perCall(_ rule: CalendarExpression) -> (Double, Int64) {
    let runs = 20_000
    var sum: Int64 = 0
    let t0 = now()
    for k in 0..<runs { sum &+= rule.nextElapse(after: base + Int64(k), in: berlin) ?? 0 }
    return ((now() - t0) / Double(runs) * 1e6, sum)
}
let (nearMicros, nearSum) = perCall(near)
let (farMicros, farSum) = perCall(far)
checksum &+= nearSum &+ farSum
print(parseSeconds, nextSeconds, nearMicros, farMicros, checksum != 0 ? 1 : 0)
