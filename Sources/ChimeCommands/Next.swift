import NotifyTool
import ArgumentParser
import ChimeCalendars
import ChimeCenter
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime next RULE`: when a rule fires next.
public struct Next: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "Print the next times a rule fires.",
        discussion: """
            RULE is any form chime accepts:

              16:35                   every day at 16:35
              16:35 mon-fri           weekdays at 16:35 (also: mon,wed,fri  sat-sun  fri-mon)
              weekdays 08:00          the same with the days first (also: weekends, daily)
              2026-12-24 18:00        once
              in 5m, in 1h30m         once, that long from now (s, m, h, d, w)
              every 25m               repeatedly, from now
              Mon..Fri *-*-* 16:35    any systemd calendar expression (systemd.time(7)):
              *:0/15                    every quarter hour
              *-*~01 18:00              the last day of every month
              weekly, monthly, ...      and the other shorthands
              DTSTART... RRULE:...    iCalendar recurrence (RFC 5545), content lines
                                      separated by spaces or newlines:
              "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR"
                                        the last Friday of every month
                                      (every RRULE part; RDATE and EXDATE; DTSTART in
                                      UTC with Z, floating, or with TZID)

            Or say it as you would, in English, German, French or Spanish (all are always read; \
            what was understood is said back first, in your language: LC_TIME, then LANG):

              tomorrow 7am, noon tomorrow, next friday 16:35, 24 Dec 6pm,
              in an hour and a half, in 2 days at 9:00, now + 2 hours,
              4pm + 3 days, teatime, next week
              every weekday 07:00, every monday and thursday 9:00,
              every other tuesday 09:00, every 3 days at 9:00,
              last friday of the month 16:35, 1st of every month 09:00,
              every 2nd and 4th saturday 10:00, every year on 24 Dec at 18:00,
              weekly on monday at 9, monthly on the 15th at noon,
              every 27th at 9am, every jan 27th at 9am,
              every morning (09:00; afternoon 12:00, evening 19:00, night 22:00),
              sat and sun at 10, monday to friday at 6:45
              morgen um 7 Uhr, übermorgen halb acht, am 24.12. um 18:00,
              in einer Stunde, werktags um 7, jeden zweiten Dienstag um 9:00,
              am letzten Freitag im Monat um 16:35,
              jedes Jahr am 24.12. um 18:00, monatlich am 15. um 12,
              jeden Morgen um 7, montags bis freitags um 6:45
              demain à 7h, vendredi prochain à 16h35, dans une heure et demie,
              tous les lundis et jeudis à 18h, en semaine à 6h45,
              le 15 de chaque mois à midi,
              chaque dernier vendredi du mois à 16h35
              mañana a las 7, el próximo viernes a las 16:35,
              dentro de 2 horas, cada lunes a las 9,
              de lunes a viernes a las 6:45, el 15 de cada mes a mediodía,
              el último viernes de cada mes a las 16:35

            A phrase counts from when it is said (--after says when: a preview of any day); an \
            every-other or every-N rule from its first occurrence after that. A time said alone in \
            words (noon, 5:30pm, teatime) is once, as chime at sets it; 16:35 alone is every day. On a 12-hour clock \
            (LC_TIME en_US) an hour without am or pm has two readings: chime names both and takes neither.

            A trailing zone name (Europe/Berlin, UTC) evaluates the rule in that zone (iCalendar: \
            DTSTART's TZID); otherwise --tz or the system's zone. In a DST gap (02:30 on a spring-forward night) the rule fires \
            once at the end of the gap; in an overlap (01:30 twice) it fires once, the first time.

            Days off: --holidays names a holiday calendar (an .ics file or a directory of them, as \
            [[holidays]] in the alarm file; give it again for more), --on-holiday what a day off does \
            (ring, skip, before, after: before and after move the occurrence, same time of day, to the \
            nearest working day, --working-days, mon-fri unless given). Each occurrence a day off moves \
            or leaves out is said where it would have been ("Fri 25 Dec: Christmas Day, moved to Thu \
            24 Dec"); --json gives the times alone.

            Examples:
              chime next "16:35 mon-fri" --count 5
              chime next "07:00 mon-fri" --holidays ~/.calendars/holidays --on-holiday before
              chime next "*-*~01 18:00" --after "2026-12-01 00:00" --tz Europe/Berlin --json
              chime next "every other tuesday 09:00" --after "2026-11-26 10:00"
            """)

    @Argument(help: "The rule.")
    var rule: String

    @Option(name: .customLong("count"), help: "How many fire times to print.")
    var count: Int = 3

    @Option(name: .customLong("after"), help: ArgumentHelp(
        "Start after this time instead of now, and read a phrase as said then: YYYY-MM-DD[ HH:MM[:SS]] in the rule's zone, or @UNIXTIME.", valueName: "TIME"))
    var after: String?

    @Option(name: .customLong("tz"), help: ArgumentHelp("Evaluate in this time zone (a tz name such as Europe/Berlin).", valueName: "ZONE"))
    var tz: String?

    @Flag(name: .customLong("json"), help: "Print a JSON array of ISO 8601 times with their UTC offsets.")
    var json = false

    @Option(name: .customLong("holidays"), help: ArgumentHelp("A holiday calendar: an .ics file or a directory of them (repeatable).", valueName: "PATH"))
    var holidays: [String] = []

    @Option(name: .customLong("on-holiday"), help: ArgumentHelp("What a day off does: ring (the default), skip, before or after.", valueName: "POLICY"))
    var onHoliday: String?

    @Option(name: .customLong("working-days"), help: ArgumentHelp("The working days before and after move to (default mon-fri).", valueName: "DAYS"))
    var workingDays: String?

    public func validate() throws {
        if count < 1 || count > 10_000 { throw ValidationError("--count must be between 1 and 10000") }
        if let onHoliday, HolidayPolicy(rawValue: onHoliday) == nil {
            throw ValidationError("--on-holiday \(onHoliday): give ring, skip, before or after")
        }
        if let workingDays, DaysOff.workingDays(parsing: workingDays) == nil {
            throw ValidationError("--working-days \(workingDays): give \(DaysOff.workingDaysExample)")
        }
    }

    /// The days off of --holidays and --working-days, and what the holiday files held that was
    /// left out (said on standard error).
    static func daysOff(_ paths: [String], workingDays: String?, now: Instant) -> DaysOff {
        var calendars: [[Int64: String]] = []
        for path in paths {
            do throws(SystemError) {
                let (days, notes) = try HolidayCalendar.load(path: path, window: HolidayCalendar.window(around: now))
                for note in notes { printError("chime: \(note)") }
                calendars.append(days)
            } catch {
                ExitStatus.invalidInput.exit("--holidays \(path): \(error.reason)")
            }
        }
        return DaysOff(holidays: DaysOff.merging(calendars), workingDays: workingDays.flatMap(DaysOff.workingDays(parsing:)) ?? Set(1...5))
    }

    public func run() throws {
        let zone: Zone
        if let tz {
            do { zone = try Zone.named(tz) } catch { ExitStatus.usage.exit("--tz \(tz): \(error)") }
        } else {
            zone = Zone.system()
        }
        let now = WallClock.system.now().seconds
        // A phrase is read as said at --after (or now), in the zone of --tz (or the system's).
        var said = now
        if let after {
            guard let t = Self.parseTime(after, in: zone) else {
                ExitStatus.usage.exit("--after \(after): use YYYY-MM-DD[ HH:MM[:SS]] or @UNIXTIME")
            }
            said = t
        }
        let context = PhraseContext(said: Instant(seconds: said), zone: zone, language: .ofUser,
                                    twelveHourClock: PhraseLanguage.userHasTwelveHourClock)
        let parsed: Rule
        var words: String?
        // A phrase says whether it repeats (`noon`, `5:30pm`: once, as `chime at` sets it); a
        // machine form, by its rule (`16:35` is every day).
        let phraseRepeats: Bool?
        do {
            (parsed, phraseRepeats, words) = try Rule.reading(rule, context)
        } catch {
            let characters = Array(rule)
            let end = min(characters.count, error.offset + max(error.length, 1))
            let part = error.offset < characters.count ? String(characters[error.offset..<end]) : ""
            ExitStatus.usage.exit("\(rule): \(error.message)" + (part.isEmpty || part == rule ? "" : " (at \"\(part)\")"))
        }
        var displayZone = zone
        if case .calendar(let expression) = parsed, let own = expression.timeZone, let named = try? Zone.named(own) {
            displayZone = named
        } else if case .recurrence(let recurrence) = parsed {
            displayZone = recurrence.zone(floatingZone: zone)
        }
        let start: Int64
        if let after {
            guard let t = Self.parseTime(after, in: displayZone) else {
                ExitStatus.usage.exit("--after \(after): use YYYY-MM-DD[ HH:MM[:SS]] or @UNIXTIME")
            }
            start = t
        } else {
            start = now
        }
        var times: [Int64] = []
        var changes: [(original: Instant, fate: OccurrenceFate)] = []
        if holidays.isEmpty {
            var t = start
            while times.count < count,
                let next = parsed.nextFire(after: Instant(seconds: t), anchor: Instant(seconds: start), repeats: phraseRepeats ?? true, in: zone)
            {
                times.append(next.seconds)
                t = next.seconds
            }
        } else {
            // As the daemon plans it: the rule as a trigger, with the days off.
            let off = Self.daysOff(holidays, workingDays: workingDays, now: Instant(seconds: start))
            var trigger = Trigger(rule: parsed, repeats: phraseRepeats ?? parsed.repeats, timeZone: tz, anchor: Instant(seconds: start))
            trigger.onHoliday = onHoliday.flatMap(HolidayPolicy.init(rawValue:))
            var t = Instant(seconds: start)
            while times.count < count, let next = trigger.nextFire(after: t, off: off) {
                times.append(next.seconds)
                t = next
            }
            if let last = times.last { changes = trigger.changes(after: Instant(seconds: start), through: Instant(seconds: last), off: off, limit: 10_000) }
        }
        // What was understood, in words: a phrase's, or a machine form's where words say it.
        if words == nil { words = parsed.words(context.language, zone: zone) }
        NextReport(times: times, zone: displayZone, never: "never: \(rule) does not fire after \(Self.iso8601(start, in: displayZone))",
                   words: words, changes: changes.map { ($0.original.seconds, $0.fate.describe($0.original, in: displayZone, now: Instant(seconds: now))) })
            .print(json: json)
    }

    /// `Mon 2026-11-23 16:35:00 CET (+01:00)`.
    static func human(_ time: Int64, in zone: Zone) -> String {
        let civil = zone.civil(at: time)
        let weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][civil.weekday - 1]
        return "\(weekday) \(civil) \(zone.abbreviation(at: time)) (\(Self.offsetText(zone.offset(at: time))))"
    }

    static func offsetText(_ offset: Int) -> String {
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        let h = String(minutes / 60)
        let m = String(minutes % 60)
        return sign + (h.count < 2 ? "0" + h : h) + ":" + (m.count < 2 ? "0" + m : m)
    }

    /// `2026-12-24T18:00:00+01:00`.
    /// `instant` to the second, as `iso8601(_:in:)` writes it.
    static func iso8601(_ instant: Instant, in zone: Zone) -> String { iso8601(instant.seconds, in: zone) }

    static func iso8601(_ time: Int64, in zone: Zone) -> String { zone.iso8601(time) }

    /// `@UNIXTIME`, or `YYYY-MM-DD[ HH:MM[:SS]]` (a `T` may separate date and time) in `zone`.
    /// Years 1 to 9999 (and the seconds between them): calendar arithmetic beyond that overflows.
    static func parseTime(_ text: String, in zone: Zone) -> Int64? {
        if text.hasPrefix("@") { return Int64(text.dropFirst()).flatMap { (-62_135_596_800...253_402_300_799).contains($0) ? $0 : nil } }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "T" })
        guard let datePart = parts.first, parts.count <= 2 else { return nil }
        let date = datePart.split(separator: "-").compactMap { Int($0) }
        guard date.count == 3, (1...9999).contains(date[0]), (1...12).contains(date[1]), (1...daysInMonth(date[0], date[1])).contains(date[2])
        else { return nil }
        var clock = [0, 0, 0]
        if parts.count == 2 {
            let fields = parts[1].split(separator: ":").compactMap { Int($0) }
            guard (2...3).contains(fields.count), (0...23).contains(fields[0]), (0...59).contains(fields[1]),
                fields.count == 2 || (0...59).contains(fields[2])
            else { return nil }
            for (i, f) in fields.enumerated() { clock[i] = f }
        }
        let civil = CivilTime(year: date[0], month: date[1], day: date[2], hour: clock[0], minute: clock[1], second: clock[2])
        switch zone.resolve(civil) {
        case .unique(let t): return t
        case .ambiguous(let earlier, _): return earlier
        case .gap(let end): return end
        }
    }
}

/// `chime next`: a JSON array of ISO 8601 times with their offsets; in text, each with its weekday
/// and zone abbreviation.
struct NextReport: Report {
    var times: [Int64]
    var zone: Zone
    /// What the text says when there is no occurrence.
    var never: String
    /// What a phrase was understood as, said back first (in text only).
    var words: String? = nil
    /// The occurrences a day off moved or left out, where they would have been, in words (in text only).
    var changes: [(at: Int64, said: String)] = []

    func writeJSON(to out: inout PrintedOutput) { Datum.list(times.map { .instant(Instant(seconds: $0), zone) }).writeJSON(to: &out) }
    var lines: [String] {
        guard !times.isEmpty else { return (words.map { [$0] } ?? []) + [never] }
        // Each time, and each change said in its place among them (a moved occurrence may come
        // before the times it was moved past).
        var out: [(Int64, Int, String)] = times.map { ($0, 1, Next.human($0, in: zone)) }
        out += changes.map { ($0.at, 0, "  (\($0.said))") }
        return (words.map { [$0] } ?? []) + out.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }
}
