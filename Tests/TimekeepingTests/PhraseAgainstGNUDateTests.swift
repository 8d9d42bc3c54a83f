import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// The one-off English phrases GNU `date -d` reads too, read by it at the same moment (under
/// Debian's faketime, in Berlin): an independent reading of what a person means.
@Suite struct PhraseAgainstGNUDateTests {
    static let phrases = ["tomorrow 7am", "7am tomorrow", "tomorrow 7:30pm", "friday 16:35", "next friday 16:35", "next thursday 16:35",
                          "thursday 16:35", "today 18:00", "2026-12-24 18:00", "December 24 6pm", "12/24/2026 6pm", "now + 2 hours",
                          "4pm + 3 days", "next week", "2027-03-28 03:30", "saturday 9am", "next sunday 10:00", "tomorrow 12am",
                          "tomorrow 12pm"]

    @Test func oneOffPhrasesAreWhereGNUDatePutsThem() throws {
        // All at once: one shell, one faketime per phrase, its clock stopped at that moment (-f: a
        // clock that ran on would put `now + 2 hours` a second late on a busy machine).
        let script = Self.phrases.map { "faketime -f '2026-11-26 10:00:00' date -d '\($0)' '+%s' || echo fail" }.joined(separator: "\n")
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Europe/Berlin"
        let result = try runProgram("/bin/sh", ["-c", script].map { Array($0.utf8) }, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let theirs = result.stdout.split(separator: "\n").map { Int64($0) }
        try #require(theirs.count == Self.phrases.count, "faketime and date (Debian's faketime package): \(result.stderr)")
        let context = PhraseContext(said: PhraseTests.said, zone: PhraseTests.berlin)
        for (phrase, their) in zip(Self.phrases, theirs) {
            let reading = try Rule.reading(phrase, context)
            let ours = reading.rule.nextFire(after: context.said, anchor: context.said, repeats: false, in: context.zone)?.seconds
            #expect(ours != nil && ours == their, "\(phrase): chime \(ours.map { context.zone.iso8601($0) } ?? "never"), GNU date \(their.map { context.zone.iso8601($0) } ?? "nothing")")
        }
    }
}

/// Repeating phrases, in English, German, French and Spanish, read in four zones a few days before their DST changes
/// (or, in Kathmandu, none): the RFC 5545 rule each becomes is given to python-dateutil's `rrule` (an
/// independent implementation, Debian's python3-dateutil), whose next twelve occurrences must be
/// chime's, across the changes. A phrase that becomes a calendar expression (`every weekday 07:00`)
/// is not dateutil's to read, and is counted apart.
@Suite struct PhraseAgainstDateutilTests {
    static let phrases = [
        "every other tuesday 9am", "every 3 days at 9:00", "every 2 weeks on friday 17:00", "last friday of the month 16:35",
        "1st of every month 09:00", "the last day of the month 20:00", "every 2nd and 4th saturday 10:00",
        "every year on 24 Dec at 18:00", "every monday and thursday 8am", "every third wednesday 7:15",
        "jeden zweiten Dienstag um 9:00", "alle 3 Tage um 9:00", "am letzten Freitag im Monat um 16:35",
        "am 1. jedes Monats um 9:00", "jedes Jahr am 24.12. um 18:00", "every 2 months on the 15th at 8:00",
        "toutes les 2 semaines le vendredi à 17h", "le dernier vendredi du mois à 16h35", "le 2e et le 4e samedi du mois à 10h",
        "tous les 3 jours à 9h", "le troisième mercredi de chaque mois à 7h15", "tous les 2 mois le 15 à 8h",
        "cada 2 semanas el martes a las 9", "el último viernes de cada mes a las 16:35",
        "el segundo y cuarto sábado de cada mes a las 10", "cada 3 días a las 9", "el primer lunes de cada mes a las 10",
        "cada 2 meses el último día a las 9",
    ]
    static let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]
    /// Tue 2026-10-20 12:00 UTC: Europe leaves summer time on the 25th, New York on 1 November,
    /// Lord Howe enters it again in April.
    static let said = Instant(seconds: 1_792_497_600)

    @Test func repeatingPhrasesRingWhereDateutilPutsTheirRules() throws {
        var items: [[String: Any]] = []
        var ours: [[Int64]] = []
        var calendar: [String] = []
        for zoneName in Self.zones {
            let zone = try Zone.named(zoneName)
            let context = PhraseContext(said: Self.said, zone: zone)
            for phrase in Self.phrases {
                let reading = try Rule.reading(phrase, context)
                guard case .recurrence(let recurrence) = reading.rule else {
                    calendar.append(phrase)
                    continue
                }
                var times: [Int64] = []
                var after = Self.said
                while times.count < 12, let next = reading.rule.nextFire(after: after, anchor: Self.said, in: zone) {
                    times.append(next.seconds)
                    after = next
                }
                items.append(["zone": zoneName, "text": recurrence.text, "phrase": phrase, "after": Self.said.seconds])
                ours.append(times)
            }
        }
        let script = """
            import json, re, sys
            from datetime import datetime
            from dateutil import tz
            from dateutil.rrule import rrulestr
            out = []
            for item in json.load(sys.stdin):
                zone = tz.gettz(item["zone"])
                text = re.sub(r" (?=(RRULE|RDATE|EXDATE)[:;])", "\\n", item["text"])
                rule = rrulestr(text, forceset=True)
                start = next(iter(rule), None)
                floating = start is not None and start.tzinfo is None
                after = datetime.fromtimestamp(item["after"], zone)
                if floating:
                    after = after.replace(tzinfo=None)
                times = []
                while len(times) < 12:
                    after = rule.after(after)
                    if after is None:
                        break
                    times.append(int((after.replace(tzinfo=zone) if floating else after).timestamp()))
                out.append(times)
            print(json.dumps(out))
            """
        let directory = try makeTemporaryDirectory("chime-phrase-dateutil")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scriptPath = directory.appendingPathComponent("expand.py").path
        let inputPath = directory.appendingPathComponent("rules.json").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        try JSONSerialization.data(withJSONObject: items).write(to: URL(fileURLWithPath: inputPath))
        let result = try runProgram("/bin/sh", ["-c", "/usr/bin/python3 '\(scriptPath)' < '\(inputPath)'"].map { Array($0.utf8) },
                                    environment: ProcessInfo.processInfo.environment)
        try #require(result.status == 0, "dateutil: \(result.stderr)")
        let theirs = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[NSNumber]])
        try #require(theirs.count == items.count)
        for ((item, mine), their) in zip(zip(items, ours), theirs) {
            let zone = try Zone.named(item["zone"] as! String)
            #expect(mine.count == 12 && mine == their.map(\.int64Value),
                    "\(item["phrase"]!) in \(item["zone"]!) (\(item["text"]!)): chime \(mine.prefix(4).map { zone.iso8601($0) }), dateutil \(their.prefix(4).map { zone.iso8601($0.int64Value) })")
        }
        print("measured: \(items.count) repeating phrase readings (\(Self.phrases.count) phrases in \(Self.zones.count) zones) agree with dateutil over 12 occurrences each; \(calendar.count) became calendar expressions")
        #expect(items.count >= Self.zones.count * 8)
    }
}

/// at(1)'s own time specifications, read by Debian's `at` at the same moment (faketime, Berlin): what
/// `at -v` prints as the job's time (its first line on standard error). It runs on a private spool (a mount namespace with an empty spool
/// of its own); where no namespace can be made, on the system's spool, each job removed with `atrm`
/// as soon as it is queued (no atd runs in the tests' session). A copy of `at` without its set-user-ID
/// bit runs as root, so that faketime's library is loaded into it.
@Suite struct PhraseAgainstAtTests {
    static let specifications = ["teatime tomorrow", "noon", "midnight", "teatime", "now + 2 hours", "now + 90 minutes", "4pm + 3 days",
                                 "noon tomorrow", "10am Jul 31", "16:00 Dec 24", "6pm + 1 week", "0930 tomorrow", "1530", "next week",
                                 "9am next week"]

    @Test func atsTimeSpecificationsAreWhereAtPutsThem() throws {
        let directory = try makeTemporaryDirectory("chime-at")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.specifications.joined(separator: "\n").appending("\n").write(to: directory.appendingPathComponent("specs"), atomically: true,
                                                                             encoding: .utf8)
        // One epoch per specification, or "fail"; then the spool it ran on.
        let each = """
            dir=$1
            while IFS= read -r spec; do
                faketime -f '2026-11-26 10:00:00' "$dir/at" -v "$spec" </dev/null >/dev/null 2>"$dir/err"
                printed=$(head -n 1 "$dir/err")
                job=$(sed -n 's/^job \\([0-9]*\\) at .*/\\1/p' "$dir/err")
                if [ -n "$job" ] && [ "$2" = system ]; then atrm "$job"; fi
                if [ -n "$printed" ]; then date -d "$printed" +%s; else echo fail; fi
            done < "$dir/specs"
            echo "spool: $2"
            """
        try each.write(to: directory.appendingPathComponent("each.sh"), atomically: true, encoding: .utf8)
        let script = """
            dir='\(directory.path)'
            cp "$(command -v at)" "$dir/at" && chmod 755 "$dir/at" || exit 3
            if unshare -m true 2>/dev/null; then
                exec unshare -m /bin/sh -c '
                    mount -t tmpfs -o mode=755 tmpfs /var/spool/cron &&
                    mkdir -m 1770 /var/spool/cron/atjobs /var/spool/cron/atspool &&
                    touch /var/spool/cron/atjobs/.SEQ &&
                    chown daemon:daemon /var/spool/cron/atjobs /var/spool/cron/atspool /var/spool/cron/atjobs/.SEQ &&
                    exec /bin/sh "$0/each.sh" "$0" private' "$dir"
            fi
            exec /bin/sh "$dir/each.sh" "$dir" system
            """
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Europe/Berlin"
        let result = try runProgram("/bin/sh", ["-c", script].map { Array($0.utf8) }, environment: environment)
        try #require(result.status == 0, "at (Debian's at package) and faketime: \(result.stderr)")
        var lines = result.stdout.split(separator: "\n").map(String.init)
        let spool = lines.popLast() ?? ""
        try #require(lines.count == Self.specifications.count, "\(result.stdout)\(result.stderr)")
        let context = PhraseContext(said: PhraseTests.said, zone: PhraseTests.berlin)
        for (specification, their) in zip(Self.specifications, lines) {
            let reading = try Rule.reading(specification, context)
            let ours = reading.rule.nextFire(after: context.said, anchor: context.said, repeats: false, in: context.zone)?.seconds
            #expect(ours != nil && ours == Int64(their),
                    "\(specification): chime \(ours.map { context.zone.iso8601($0) } ?? "never"), at(1) \(Int64(their).map { context.zone.iso8601($0) } ?? their)")
        }
        print("measured: \(Self.specifications.count) at(1) time specifications read as at reads them (\(spool))")
    }
}
