import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// The occurrences of RFC 5545's example rules and of random rules, against python-dateutil's
/// `rrule` (an independent implementation, from Debian's python3-dateutil), across DST changes. Run by
/// `make test` (not `make check`: it starts Python).
@Suite struct RecurrenceAgainstDateutilTests {
    static let start = "19970902T090000"
    static let through: Int64 = 978_307_199  // 2000-12-31 23:59:59 UTC

    /// dateutil's first `limit` occurrences (through 2000) of `rule` from DTSTART in New York, as
    /// Unix times, DTSTART first (RFC 5545: it is always the first occurrence; dateutil yields it only
    /// where the rule matches it); nil for a rule with COUNT that DTSTART does not match, whose set
    /// RFC 5545 leaves undefined.
    static func dateutil(_ rules: [String], limit: Int) throws -> [[Int64]?] {
        let script = """
            import sys, json
            from datetime import datetime
            from dateutil import tz
            from dateutil.rrule import rrulestr
            zone = tz.gettz("America/New_York")
            start = datetime(1997, 9, 2, 9, 0, 0, tzinfo=zone)
            end = datetime(2000, 12, 31, 23, 59, 59, tzinfo=tz.UTC)
            out = []
            for line in sys.stdin.read().splitlines():
                rule = rrulestr(line, dtstart=start)
                times = []
                for t in rule:
                    if t > end or len(times) >= \(limit): break
                    times.append(int(t.timestamp()))
                first = int(start.timestamp())
                if times and times[0] == first:
                    out.append(times)
                elif "COUNT=" in line:
                    out.append(None)
                else:
                    out.append(([first] + times)[:\(limit)])
            print(json.dumps(out))
            """
        let input = rules.joined(separator: "\n")
        let directory = try makeTemporaryDirectory("chime-rrule")
        defer { try? FileManager.default.removeItem(at: directory) }
        let scriptPath = directory.appendingPathComponent("expand.py").path
        let inputPath = directory.appendingPathComponent("rules.txt").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        try input.write(toFile: inputPath, atomically: true, encoding: .utf8)
        let result = try runProgram("/bin/sh", ["-c", "/usr/bin/python3 '\(scriptPath)' < '\(inputPath)'"].map { Array($0.utf8) },
                                    environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("dateutil: \(result.stderr)") }
        let decoded = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any] ?? []
        return decoded.map { ($0 as? [NSNumber])?.map(\.int64Value) }
    }

    @Test func theRFCsExamplesAgreeWithDateutil() throws {
        let rules = RecurrenceReadingTests.rfcExamples
        let expected = try Self.dateutil(rules, limit: 60)
        let newYork = try Zone.named("America/New_York")
        var compared = 0
        for (rule, expected) in zip(rules, expected) {
            guard let expected else { continue }
            let recurrence = try Recurrence(parsing: "DTSTART;TZID=America/New_York:\(Self.start) RRULE:\(rule)")
            let ours = recurrence.occurrences(through: Self.through, floatingZone: newYork, maximum: 60)
            #expect(ours == expected, "\(rule): \(ours.prefix(8)) vs \(expected.prefix(8))")
            compared += 1
        }
        print("measured: \(compared) of \(rules.count) RFC example rules compared with dateutil (all but COUNT rules DTSTART does not match)")
        #expect(compared >= 30)
    }

    /// A random rule that RFC 5545 allows: every frequency, INTERVAL, COUNT or UNTIL, and the BY parts
    /// that go with the frequency, negative values and BYSETPOS included.
    static func randomRule(_ r: inout SplitMix) -> String {
        let frequencies = ["YEARLY", "YEARLY", "MONTHLY", "MONTHLY", "WEEKLY", "WEEKLY", "DAILY", "DAILY", "HOURLY", "MINUTELY"]
        let frequency = frequencies[r.below(frequencies.count)]
        var parts = ["FREQ=\(frequency)"]
        if r.below(2) == 0 { parts.append("INTERVAL=\(1 + r.below(4))") }
        if r.below(3) == 0 { parts.append("COUNT=\(1 + r.below(20))") }
        func list(_ count: Int, _ make: (inout SplitMix) -> String) -> String {
            (0..<count).map { _ in make(&r) }.joined(separator: ",")
        }
        let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
        let coarse = ["YEARLY", "MONTHLY"].contains(frequency)
        if r.below(3) == 0 { parts.append("BYMONTH=" + list(1 + r.below(3)) { "\(1 + $0.below(12))" }) }
        if r.below(3) == 0 {
            // Either every entry with an ordinal or none: dateutil reads a mix (FR,-1SU) as days that
            // are both, where RFC 5545 lists days that are either (tested by hand below).
            let ordinals = coarse && r.below(2) == 0
            parts.append("BYDAY=" + list(1 + r.below(3)) { r in
                let ordinal = ordinals ? "\(r.below(2) == 0 ? "-" : "")\(1 + r.below(frequency == "MONTHLY" ? 5 : 53))" : ""
                return ordinal + days[r.below(7)]
            })
        }
        if frequency != "WEEKLY", r.below(3) == 0 {
            parts.append("BYMONTHDAY=" + list(1 + r.below(3)) { "\($0.below(2) == 0 ? "-" : "")\(1 + $0.below(31))" })
        }
        if frequency == "YEARLY", !parts.contains(where: { $0.hasPrefix("BYDAY=") && $0.contains(where: \.isNumber) }), r.below(4) == 0 {
            parts.append("BYWEEKNO=" + list(1 + r.below(2)) { "\($0.below(2) == 0 ? "-" : "")\(1 + $0.below(53))" })
        }
        if ["YEARLY", "HOURLY", "MINUTELY"].contains(frequency), r.below(5) == 0 {
            parts.append("BYYEARDAY=" + list(1 + r.below(3)) { "\($0.below(2) == 0 ? "-" : "")\(1 + $0.below(366))" })
        }
        if r.below(3) == 0 { parts.append("BYHOUR=" + list(1 + r.below(3)) { "\($0.below(24))" }) }
        if r.below(3) == 0 { parts.append("BYMINUTE=" + list(1 + r.below(2)) { "\($0.below(60))" }) }
        if r.below(4) == 0 { parts.append("WKST=" + days[r.below(7)]) }
        if parts.count > 2, parts.contains(where: { $0.hasPrefix("BY") }), r.below(4) == 0 {
            parts.append("BYSETPOS=" + list(1 + r.below(2)) { "\($0.below(2) == 0 ? "-" : "")\(1 + $0.below(5))" })
        }
        return parts.joined(separator: ";")
    }

    /// Random rules from random starts in zones with DST changes (Lord Howe's is half an hour),
    /// against dateutil. Compared: the rule's own occurrences after DTSTART (RFC 5545 adds DTSTART,
    /// dateutil only where the rule matches it), through three years, at most 40; a rule with COUNT
    /// only where DTSTART matches it (the RFC leaves the others undefined); rules whose times fall
    /// into a DST gap or overlap are left to the test below (dateutil reads those its own way).
    @Test func randomRulesAgreeWithDateutil() throws {
        var r = SplitMix(seed: 0x2026_1124)
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "America/Sao_Paulo"]
        var cases: [(zone: String, start: String, rule: String)] = []
        for _ in 0..<200 {
            let start = "20\(20 + r.below(10))\(pad(1 + r.below(12), 2))\(pad(1 + r.below(28), 2))T\(pad(r.below(24), 2))\(pad(r.below(60), 2))00"
            cases.append((zones[r.below(zones.count)], start, Self.randomRule(&r)))
        }
        let script = """
            import sys, json, signal
            from datetime import datetime, timedelta
            from dateutil import tz
            from dateutil.rrule import rrulestr
            class Slow(Exception): pass
            def slow(*_): raise Slow()
            signal.signal(signal.SIGALRM, slow)
            out = []
            for line in sys.stdin.read().splitlines():
                zone_name, start_text, rule_text = line.split(" ")
                zone = tz.gettz(zone_name)
                start = datetime.strptime(start_text, "%Y%m%dT%H%M%S").replace(tzinfo=zone)
                end = start + timedelta(days=3 * 366)
                times, odd, synced = [], False, False
                try:
                    rule = rrulestr(rule_text, dtstart=start)
                    # A rule that matches nothing for a long while (FEB 30): dateutil searches on for years.
                    signal.setitimer(signal.ITIMER_REAL, 0.25)
                    for t in rule:
                        if t > end or len(times) >= 41: break
                        if not tz.datetime_exists(t) or tz.datetime_ambiguous(t): odd = True
                        if t == start: synced = True; continue
                        times.append(int(t.timestamp()))
                except (IndexError, ValueError, Slow):
                    # dateutil 2.8's own failures (some ordinals with BYMONTH; parts it will not take
                    # together), or its long search: not compared.
                    odd = True
                signal.setitimer(signal.ITIMER_REAL, 0)
                if not tz.datetime_exists(start) or tz.datetime_ambiguous(start): odd = True
                if odd or ("COUNT=" in rule_text and not synced):
                    out.append(None)
                else:
                    out.append({"times": times[:40], "end": int(end.timestamp())})
            print(json.dumps(out))
            """
        let directory = try makeTemporaryDirectory("chime-rrule")
        defer { try? FileManager.default.removeItem(at: directory) }
        try script.write(toFile: directory.appendingPathComponent("expand.py").path, atomically: true, encoding: .utf8)
        try cases.map { "\($0.zone) \($0.start) \($0.rule)" }.joined(separator: "\n")
            .write(toFile: directory.appendingPathComponent("rules.txt").path, atomically: true, encoding: .utf8)
        let result = try runProgram("/bin/sh", ["-c", "cd '\(directory.path)' && /usr/bin/python3 expand.py < rules.txt"].map { Array($0.utf8) },
                                    environment: ProcessInfo.processInfo.environment)
        try #require(result.status == 0, "dateutil: \(result.stderr)")
        let answers = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any] ?? []
        try #require(answers.count == cases.count)
        var compared = 0
        for (item, answer) in zip(cases, answers) {
            guard let answer = answer as? [String: Any], let times = (answer["times"] as? [NSNumber])?.map(\.int64Value),
                let end = (answer["end"] as? NSNumber)?.int64Value
            else { continue }
            let zone = try Zone.named(item.zone)
            let recurrence = try Recurrence(parsing: "DTSTART;TZID=\(item.zone):\(item.start) RRULE:\(item.rule)")
            let startInstant = Recurrence.instant(recurrence.start, in: zone)
            let ours = Array(recurrence.occurrences(through: end, floatingZone: zone, maximum: 42).filter { $0 != startInstant }.prefix(40))
            #expect(ours == times, "\(item.zone) \(item.start) \(item.rule): \(ours.prefix(5)) vs \(times.prefix(5))")
            compared += 1
        }
        print("measured: \(compared) of \(cases.count) random rules compared with dateutil over three years each")
        #expect(compared >= 100)
    }
}

/// Occurrences checked by hand: what dateutil reads otherwise, and DST changes.
@Suite struct RecurrenceExpansionTests {
    /// BYDAY lists days that are either: every Friday and the first Monday (RFC 5545's BYDAY is a
    /// list; dateutil 2.8 reads a mix as days that are both, so this is checked by hand).
    @Test func aBydayMixingOrdinalsAndWeekdaysIsTheirUnion() throws {
        let recurrence = try Recurrence(parsing: "DTSTART:20261101T090000Z RRULE:FREQ=MONTHLY;BYDAY=1MO,FR;COUNT=8")
        let days = recurrence.occurrences(through: Instant.latest.seconds, floatingZone: .utc).map { Zone.utc.civil(at: $0) }
        #expect(days.map { "\($0.month)-\($0.day)" } == ["11-1", "11-2", "11-6", "11-13", "11-20", "11-27", "12-4", "12-7"])
    }

    /// A time a DST change skips is read with the offset before the gap, one it repeats is the first
    /// (RFC 5545 §3.3.5): daily at 02:30 over Berlin's spring change, and at 02:30 over its autumn one.
    @Test func timesInAGapOrAnOverlapAreReadAsTheRFCSays() throws {
        let berlin = try Zone.named("Europe/Berlin")
        let spring = try Recurrence(parsing: "DTSTART;TZID=Europe/Berlin:20270327T023000 RRULE:FREQ=DAILY;COUNT=3")
        let springTimes = spring.occurrences(through: Instant.latest.seconds, floatingZone: berlin)
        // 2027-03-28 02:30 does not exist: with the offset before it (+01:00) it is 01:30 UTC, shown as 03:30.
        #expect(springTimes.map { berlin.iso8601($0) } == ["2027-03-27T02:30:00+01:00", "2027-03-28T03:30:00+02:00", "2027-03-29T02:30:00+02:00"])
        let autumn = try Recurrence(parsing: "DTSTART;TZID=Europe/Berlin:20271030T023000 RRULE:FREQ=DAILY;COUNT=3")
        let autumnTimes = autumn.occurrences(through: Instant.latest.seconds, floatingZone: berlin)
        // 2027-10-31 02:30 happens twice: the first, at +02:00.
        #expect(autumnTimes.map { berlin.iso8601($0) } == ["2027-10-30T02:30:00+02:00", "2027-10-31T02:30:00+02:00", "2027-11-01T02:30:00+01:00"])
    }
}

/// `next(after:)` starts from the period that holds its time (without COUNT) rather than from
/// DTSTART: it must give what the whole expansion gives.
@Suite struct RecurrenceNextTests {
    @Test func theNextOccurrenceIsTheExpansionsFirstAfterAnyTime() throws {
        var r = SplitMix(seed: 0x2026_1125)
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kolkata"]
        var checked = 0
        for _ in 0..<120 {
            let zoneName = zones[r.below(zones.count)]
            let zone = try Zone.named(zoneName)
            let start = "20\(20 + r.below(10))\(pad(1 + r.below(12), 2))\(pad(1 + r.below(28), 2))T\(pad(r.below(24), 2))\(pad(r.below(60), 2))00"
            var text = "DTSTART;TZID=\(zoneName):\(start) RRULE:\(RecurrenceAgainstDateutilTests.randomRule(&r))"
            let recurrence0 = try Recurrence(parsing: text)
            let first = Recurrence.instant(recurrence0.start, in: zone)
            let all0 = recurrence0.occurrences(through: first + 3 * 366 * 86_400, floatingZone: zone, maximum: 200)
            // Some of its occurrences taken out again.
            let excepted = all0.enumerated().filter { $0.offset % 7 == 3 }.map(\.element)
            if !excepted.isEmpty {
                text += " EXDATE:" + excepted.map { t in
                    let c = Zone.utc.civil(at: t)
                    return "\(pad(c.year, 4))\(pad(c.month, 2))\(pad(c.day, 2))T\(pad(c.hour, 2))\(pad(c.minute, 2))\(pad(c.second, 2))Z"
                }.joined(separator: ",")
            }
            let recurrence = try Recurrence(parsing: text)
            let all = recurrence.occurrences(through: first + 3 * 366 * 86_400, floatingZone: zone, maximum: 200)
            #expect(Set(all).isDisjoint(with: excepted))
            guard all0.count < 200, let last = all.last else { continue }  // all of them, not the first 200
            for _ in 0..<15 {
                let t = first - 86_400 + Int64(r.below(Int(last - first) + 2 * 86_400))
                guard t < last else { continue }
                let expected = all.first { $0 > t }
                #expect(recurrence.next(after: t, floatingZone: zone) == expected, "\(text) after \(t)")
                checked += 1
            }
            let beyond = recurrence.next(after: last, floatingZone: zone)
            #expect(beyond.map { $0 > first + 3 * 366 * 86_400 } ?? true, "\(text): \(String(describing: beyond)) after the last, \(last)")
        }
        #expect(checked > 800)
    }
}

extension RecurrenceNextTests {
    /// The shortcut for times far from a DST change gives what resolving the wall-clock time gives.
    @Test func aSteadyOffsetAgreesWithResolvingTheTime() throws {
        var r = SplitMix(seed: 0x5EAD)
        for name in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo", "Pacific/Apia"] {
            let zone = try Zone.named(name)
            for _ in 0..<2000 {
                // 1970-2199, with more of the years around DST changes.
                let local = Int64(r.below(7_258_118_399))
                let civil = CivilTime(localSeconds: local)
                let expected: Int64 = switch zone.resolve(civil) {
                case .unique(let t): t
                case .ambiguous(let earlier, _): earlier
                case .gap(let endsAt): local - Int64(zone.offset(at: endsAt - 1))
                }
                #expect(Recurrence.instant(local: local, in: zone) == expected, "\(name) \(civil)")
            }
        }
    }

    /// A rule whose periods hold millions of candidates (every second of every day of the year)
    /// with BYSETPOS is answered from its days and times, without listing them.
    @Test func aPeriodOfMillionsOfCandidatesIsNotListed() throws {
        let hours = (0..<24).map(String.init).joined(separator: ",")
        let minutes = (0..<60).map(String.init).joined(separator: ",")
        let recurrence = try Recurrence(parsing: "DTSTART:20260101T000000Z RRULE:FREQ=YEARLY;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;"
                                        + "BYHOUR=\(hours);BYMINUTE=\(minutes);BYSECOND=\(minutes);BYSETPOS=-1,2")
        // Each month on DTSTART's day (RFC 5545's default for YEARLY with BYMONTH alone), at every
        // second: after 15 January 2027, the year's last candidate, then 2028's second.
        let next = try #require(recurrence.next(after: 1_800_000_000, floatingZone: .utc))
        #expect(Zone.utc.civil(at: next).description == "2027-12-01 23:59:59")
        let after = try #require(recurrence.next(after: next, floatingZone: .utc))
        #expect(Zone.utc.civil(at: after).description == "2028-01-01 00:00:01")
    }
}
