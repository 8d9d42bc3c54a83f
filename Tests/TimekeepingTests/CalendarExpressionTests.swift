import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// Next elapses checked against `systemd-analyze calendar`, the reference implementation.
@Suite struct CalendarExpressionTests {
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia", "UTC"]

    /// Asks systemd for the next `iterations` elapses of each expression after `base`, in `zone`;
    /// nil for an expression systemd itself fails on (it reports "Infinite loop in calendar
    /// calculation" for a few rare rules).
    static func systemd(_ expressions: [String], base: Int64, zone: String, iterations: Int) throws -> [[Int64]?] {
        if let all = try? systemdBatch(expressions, base: base, zone: zone, iterations: iterations) { return all }
        return expressions.map { try? systemdBatch([$0], base: base, zone: zone, iterations: iterations).first! }
    }

    static func systemdBatch(_ expressions: [String], base: Int64, zone: String, iterations: Int) throws -> [[Int64]] {
        let arguments = ["calendar", "--iterations=\(iterations)", "--base-time=@\(base)"] + expressions
        let result = try runProgram("/usr/bin/systemd-analyze", arguments.map { Array($0.utf8) },
                                    environment: ["TZ": ":" + zone, "PATH": "/usr/bin:/bin", "LANG": "C"])
        guard result.status == 0 else { throw HarnessError("systemd-analyze failed: \(result.stderr)") }
        var blocks: [[Int64]] = []
        for line in result.stdoutLines {
            if line.hasPrefix("Normalized form:") || line.hasPrefix("  Original form:") {
                if line.hasPrefix("Normalized form:") { blocks.append([]) }
            } else if line.contains("(in UTC):") {
                // "       (in UTC): Mon 2026-03-30 14:35:00 UTC"
                let fields = line.split(separator: " ")
                let date = fields[fields.count - 3].split(separator: "-").compactMap { Int($0) }
                let time = fields[fields.count - 2].split(separator: ":").compactMap { Int($0) }
                let civil = CivilTime(year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1], second: time[2])
                blocks[blocks.count - 1].append(civil.localSeconds)
            }
        }
        return blocks
    }

    static func randomExpression(_ r: inout SplitMix) -> String {
        func pick<T>(_ items: [T]) -> T { items[r.below(items.count)] }
        func field(_ range: ClosedRange<Int>, width: Int) -> String {
            switch r.below(6) {
            case 0, 1: return "*"
            case 2: return pad(Int.random(in: range, using: &r), width)
            case 3:
                let a = Int.random(in: range, using: &r)
                let b = Int.random(in: range, using: &r)
                return "\(pad(min(a, b), width)),\(pad(max(a, b), width))"
            case 4:
                let a = Int.random(in: range.lowerBound...(range.upperBound - 1), using: &r)
                let b = Int.random(in: (a + 1)...range.upperBound, using: &r)
                return "\(pad(a, width))..\(pad(b, width))"
            default:
                let step = Int.random(in: 1...max(1, (range.upperBound - range.lowerBound) / 2), using: &r)
                let start = Int.random(in: range.lowerBound...(range.upperBound - step), using: &r)
                return "\(pad(start, width))/\(step)"
            }
        }
        var parts: [String] = []
        if r.below(3) == 0 {
            parts.append(pick(["Mon", "Mon..Fri", "Sat,Sun", "Tue,Thu", "Wed..Sun", "Fri", "Mon,Wed,Fri"]))
        }
        switch r.below(5) {
        case 0: parts.append("*-\(field(1...12, width: 2))-\(field(1...31, width: 2))")
        case 1: parts.append("\(pick(["*", "2031", "2040..2060", "2024/4"]))-\(field(1...12, width: 2))-\(field(1...28, width: 2))")
        case 2: parts.append("*-\(field(1...12, width: 2))~\(pick(["01", "03", "07/1", "02..04"]))")
        default: break
        }
        var time = "\(field(0...23, width: 2)):\(field(0...59, width: 2))"
        if r.below(3) == 0 { time += ":" + field(0...59, width: 2) }
        parts.append(time)
        return parts.joined(separator: " ")
    }

    @Test(arguments: zones)
    func randomExpressionsAgreeWithSystemd(_ zoneName: String) throws {
        let zone = try Zone.named(zoneName)
        var r = SplitMix(seed: UInt64(zoneName.utf8.reduce(7) { $0 &* 31 &+ UInt64($1) }))
        var compared = 0
        var dstCases = 0
        var systemdFailed = 0
        for batch in 0..<8 {
            var expressions: [String] = []
            while expressions.count < 50 {
                let text = Self.randomExpression(&r)
                if (try? CalendarExpression(parsing: text)) != nil { expressions.append(text) }
            }
            // A base time between 2000 and 2100.
            let base = Int64(946_684_800) + Int64(r.below(3_155_760_000))
            let expected = try Self.systemd(expressions, base: base, zone: zoneName, iterations: 4)
            try #require(expected.count == expressions.count, "batch \(batch): systemd parsed \(expected.count) of \(expressions.count)")
            for (text, computed) in zip(expressions, expected) {
                guard let reference = computed else {
                    systemdFailed += 1
                    continue
                }
                let rule = try CalendarExpression(parsing: text)
                var ours: [Int64] = []
                var t = base
                for _ in 0..<reference.count {
                    guard let next = rule.nextElapse(after: t, in: zone) else { break }
                    ours.append(next)
                    t = next
                }
                compared += 1
                if ours == reference { continue }
                // Where chime differs from systemd it must be a DST edge, and there chime must do
                // what the brute-force scan of every second says chime's rules require.
                let divergent = Set(ours).symmetricDifference(reference)
                let window = max(base + 1, divergent.min()! - 2 * 86_400)...(divergent.max()! + 86_400)
                #expect(!zone.transitions(in: window).isEmpty, "\(text) in \(zoneName) after \(base): differs from systemd away from any DST change: ours \(ours), systemd \(reference)")
                let last = ours.last ?? base
                let brute = Self.bruteForce(rule, zone: zone, window: window.lowerBound...min(window.upperBound, last))
                #expect(ours.filter { window.contains($0) } == brute, "\(text) in \(zoneName) after \(base)")
                #expect(ours.filter { !window.contains($0) } == reference.filter { !window.contains($0) && $0 <= last },
                        "\(text) in \(zoneName) after \(base)")
                dstCases += 1
            }
        }
        #expect(compared + systemdFailed == 400)
        #expect(systemdFailed <= 4, "systemd-analyze failed on \(systemdFailed) rules")
        if dstCases > 0 { print("\(zoneName): \(dstCases) of 400 rules met a DST change; checked by brute force") }
    }

    /// A wall time fires at most once per local date, however the rule is re-evaluated: from any
    /// moment of a fall-back night (inside the repeated hour too), the next elapse is what the brute
    /// force gives when it knows every wall time already shown that night.
    @Test(arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"])
    func reEvaluatedInsideARepeatedHourNothingFiresTwice(_ zoneName: String) throws {
        let zone = try Zone.named(zoneName)
        let rules = try ["01:30", "02:15", "*:0/15", "01:*:00", "*:*:00"].map { try CalendarExpression(parsing: $0) }
        // The fall-back transition of 2026 in this zone.
        let year2026 = Int64(1_767_225_600)...Int64(1_798_761_600)
        let changes = zone.transitions(in: year2026)
        let fallBack = try #require(changes.first { zone.civil(at: $0) < zone.civil(at: $0 - 1) })
        let starts = Array(stride(from: fallBack - 2 * 3600, through: fallBack + 2 * 3600, by: 600))
        let nextsByRule = try rules.map { rule in try starts.map { try #require(rule.nextElapse(after: $0, in: zone)) } }
        // Every second's wall time, once for every rule (the brute force below reads them for each
        // rule and start), also as a number of local seconds (what is compared, in the same order,
        // and faster), and the latest wall time shown in the three hours before each start.
        let first = starts[0] - 3 * 3600
        let last = max(nextsByRule.joined().max() ?? first, starts.last ?? first)
        let shownAt = (first...last).map { zone.civil(at: $0) }
        let wallAt = shownAt.map(\.localSeconds)
        func index(_ u: Int64) -> Int { Int(u - first) }
        let latestBefore = starts.map { start in
            wallAt[index(start - 3 * 3600)...index(start)].max()!
        }
        for (rule, nexts) in zip(rules, nextsByRule) {
            // Whether the rule matches each second's wall time. Every rule here fires on a whole
            // minute: the others cannot match.
            let matchesAt = shownAt.map { $0.second == 0 && rule.nextCivil(atOrAfter: $0) == $0 }
            for ((start, next), latest) in zip(zip(starts, nexts), latestBefore) {
                // What the brute force says, given every wall time shown in the hours before.
                var latestShown = latest
                var expected: Int64?
                var u = start + 1
                while expected == nil, u <= next {
                    let shown = wallAt[index(u)]
                    if shown > latestShown {
                        if matchesAt[index(u)] { expected = u }
                        latestShown = shown
                    }
                    u += 1
                }
                #expect(next == expected ?? next, "\(rule) in \(zoneName) after \(start): \(next), brute force \(expected.map(String.init) ?? "none")")
                #expect(expected != nil, "\(rule) in \(zoneName) after \(start): the brute force found nothing up to \(next)")
            }
        }
    }

    /// chime's firing rule, by brute force over every second of `window`: an instant fires when
    /// its wall-clock time matches and shows for the first time (an overlap fires once, the first
    /// time), or when it ends a gap that swallowed a matching wall-clock time.
    static func bruteForce(_ rule: CalendarExpression, zone: Zone, window: ClosedRange<Int64>) -> [Int64] {
        func matches(_ c: CivilTime) -> Bool { rule.nextCivil(atOrAfter: c) == c }
        var result: [Int64] = []
        var latestShown = zone.civil(at: window.lowerBound - 1)
        for u in window {
            let shown = zone.civil(at: u)
            defer { if shown > latestShown { latestShown = shown } }
            let previous = zone.civil(at: u - 1)
            if shown > previous.advanced(by: 1) {
                // The clock jumped forward at u: any matching wall time it skipped fires now.
                var skipped = previous.advanced(by: 1)
                var found = false
                while skipped < shown {
                    if matches(skipped) { found = true; break }
                    skipped = skipped.advanced(by: 1)
                }
                if found || matches(shown) { result.append(u) }
                continue
            }
            if shown > latestShown && matches(shown) { result.append(u) }
        }
        return result
    }

    @Test(arguments: [
        ("Mon..Fri *-*-* 16:35:00", "Mon..Fri *-*-* 16:35:00"),
        ("Mon 07:00", "Mon *-*-* 07:00:00"),
        ("*-*-01 09:00", "*-*-01 09:00:00"),
        ("*:0/15", "*-*-* *:00/15:00"),
        ("daily", "*-*-* 00:00:00"),
        ("weekly", "Mon *-*-* 00:00:00"),
        ("monthly", "*-*-01 00:00:00"),
        ("quarterly", "*-01,04,07,10-01 00:00:00"),
        ("*-02~03", "*-02~03 00:00:00"),
        ("Sat,Sun 10:00 UTC", "Sat,Sun *-*-* 10:00:00 UTC"),
        ("2026-12-24 18:00 Europe/Berlin", "2026-12-24 18:00:00 Europe/Berlin"),
        ("12-24", "*-12-24 00:00:00"),
        // Degenerate ranges, accepted and normalized as systemd-analyze does (issue 14).
        ("*-*-5..5 07:00", "*-*-05 07:00:00"),
        ("*:10..12/5", "*-*-* *:10:00"),
        ("*-*-5..5/3 07:00", "*-*-05 07:00:00"),
        ("*:10..12/1", "*-*-* *:10..12:00"),
    ])
    func normalizedForms(_ text: String, _ normalized: String) throws {
        #expect(try CalendarExpression(parsing: text).description == normalized)
    }

    /// The degenerate ranges a user met, normalized exactly as systemd-analyze normalizes them.
    @Test(arguments: ["*-*-5..5 07:00", "*:10..12/5", "*-*-5..5/3 07:00", "*:10..12/1", "Mon..Mon 08:00"])
    func degenerateRangesAsSystemd(_ text: String) throws {
        let result = try runProgram("/usr/bin/systemd-analyze", ["calendar", text].map { Array($0.utf8) },
                                    environment: ["PATH": "/usr/bin:/bin", "LANG": "C", "TZ": "UTC"])
        try #require(result.status == 0, "\(result.stderr)")
        let line = result.stdout.split(separator: "\n").first { $0.contains("Normalized form:") }
        let theirs = try #require(line.map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) })
        #expect(try CalendarExpression(parsing: text).description == theirs)
    }

    @Test(arguments: [
        ("16:65", "minute 65 is out of range 0-59"),
        ("25:00", "hour 25 is out of range 0-23"),
        ("*-13-01", "month 13 is out of range 1-12"),
        ("Mon..Fry 10:00", "expected a weekday (Mon, Tue, ...)"),
        ("Fri..Mon 10:00", "weekday range runs backwards"),
        ("10:00 Mars/Base", "unknown time zone \"Mars/Base\""),
        ("*:59/5", "minute 59/5 never repeats within 0-59"),
        ("*-*-* 20/7:46", "hour 20/7 never repeats within 0-23"),
        ("", "the rule is empty"),
        ("10:00:00.5", "fractions of a second are not supported"),
    ])
    func badRulesSayWhatIsWrong(_ text: String, _ message: String) {
        #expect { try CalendarExpression(parsing: text) } throws: { ($0 as? RuleError)?.message == message }
    }

    @Test func aWeekdayAlarmSkipsTheWeekend() throws {
        let berlin = try Zone.named("Europe/Berlin")
        let rule = try CalendarExpression(parsing: "Mon..Fri 16:35")
        // Friday 2026-11-20 17:00 CET: the next is Monday 16:35.
        let friday = try #require(berlin.resolve(CivilTime(year: 2026, month: 11, day: 20, hour: 17)).uniqueInstant)
        let next = try #require(rule.nextElapse(after: friday, in: berlin))
        #expect(berlin.civil(at: next) == CivilTime(year: 2026, month: 11, day: 23, hour: 16, minute: 35))
    }

    @Test func inADSTGapTheAlarmFiresOnceAtTheEndOfTheGap() throws {
        let berlin = try Zone.named("Europe/Berlin")
        let rule = try CalendarExpression(parsing: "*-*-* 02:30")
        let saturday = try #require(berlin.resolve(CivilTime(year: 2026, month: 3, day: 28, hour: 12)).uniqueInstant)
        let first = try #require(rule.nextElapse(after: saturday, in: berlin))
        // 2026-03-29 has no 02:30: chime fires at 03:00 CEST (systemd would skip to the 30th).
        #expect(berlin.civil(at: first) == CivilTime(year: 2026, month: 3, day: 29, hour: 3))
        #expect(rule.nextElapse(after: saturday, in: berlin, gaps: .skip).map { berlin.civil(at: $0) }
                == CivilTime(year: 2026, month: 3, day: 30, hour: 2, minute: 30))
        let second = try #require(rule.nextElapse(after: first, in: berlin))
        #expect(berlin.civil(at: second) == CivilTime(year: 2026, month: 3, day: 30, hour: 2, minute: 30))
        // Every quarter hour through the gap: 02:00..02:45 all land on 03:00, which fires once.
        let quarter = try CalendarExpression(parsing: "*:0/15")
        var t = try #require(berlin.resolve(CivilTime(year: 2026, month: 3, day: 29, hour: 1, minute: 40)).uniqueInstant)
        var seen: [CivilTime] = []
        for _ in 0..<4 {
            t = try #require(quarter.nextElapse(after: t, in: berlin))
            seen.append(berlin.civil(at: t))
        }
        #expect(seen == [CivilTime(year: 2026, month: 3, day: 29, hour: 1, minute: 45), CivilTime(year: 2026, month: 3, day: 29, hour: 3),
                         CivilTime(year: 2026, month: 3, day: 29, hour: 3, minute: 15), CivilTime(year: 2026, month: 3, day: 29, hour: 3, minute: 30)])
    }

    @Test func halfHourDSTAndASkippedDay() throws {
        // Lord Howe moves its clocks by 30 minutes: 02:00 becomes 02:30 on 2026-10-04.
        let lordHowe = try Zone.named("Australia/Lord_Howe")
        let rule = try CalendarExpression(parsing: "02:15")
        let before = try #require(lordHowe.resolve(CivilTime(year: 2026, month: 10, day: 3, hour: 12)).uniqueInstant)
        let fired = try #require(rule.nextElapse(after: before, in: lordHowe))
        #expect(lordHowe.civil(at: fired) == CivilTime(year: 2026, month: 10, day: 4, hour: 2, minute: 30))
        #expect(lordHowe.offset(at: fired) == 11 * 3600)
        // Samoa skipped 2011-12-30 entirely: noon that day fires at the first instant of the 31st.
        let apia = try Zone.named("Pacific/Apia")
        let noon = try CalendarExpression(parsing: "12:00")
        let thursday = try #require(apia.resolve(CivilTime(year: 2011, month: 12, day: 29, hour: 13)).uniqueInstant)
        let next = try #require(noon.nextElapse(after: thursday, in: apia))
        #expect(apia.civil(at: next) == CivilTime(year: 2011, month: 12, day: 31))
        let after = try #require(noon.nextElapse(after: next, in: apia))
        #expect(apia.civil(at: after) == CivilTime(year: 2011, month: 12, day: 31, hour: 12))
        // Kathmandu is +05:45.
        let kathmandu = try Zone.named("Asia/Kathmandu")
        #expect(kathmandu.offset(at: 1_795_000_000) == 5 * 3600 + 45 * 60)
    }

    @Test func inAnOverlapTheAlarmFiresOnceAtTheFirstTime() throws {
        let newYork = try Zone.named("America/New_York")
        let rule = try CalendarExpression(parsing: "01:30")
        let before = try #require(newYork.resolve(CivilTime(year: 2026, month: 11, day: 1, hour: 0)).uniqueInstant)
        let first = try #require(rule.nextElapse(after: before, in: newYork))
        #expect(newYork.isDaylightSavingTime(at: first))  // 01:30 EDT, the first one
        let second = try #require(rule.nextElapse(after: first, in: newYork))
        #expect(newYork.civil(at: second) == CivilTime(year: 2026, month: 11, day: 2, hour: 1, minute: 30))
    }

    @Test func lastDaysOfTheMonthAndLeapDays() throws {
        let utc = Zone.utc
        let lastDay = try CalendarExpression(parsing: "*-*~01 12:00")
        var t: Int64 = CivilTime(year: 2024, month: 1, day: 31, hour: 13).localSeconds
        var seen: [Int] = []
        for _ in 0..<3 {
            t = try #require(lastDay.nextElapse(after: t, in: utc))
            seen.append(utc.civil(at: t).day)
        }
        #expect(seen == [29, 31, 30])  // February of a leap year, March, April
        let leap = try CalendarExpression(parsing: "*-02-29 09:00")
        let next = try #require(leap.nextElapse(after: CivilTime(year: 2025, month: 1, day: 1).localSeconds, in: utc))
        #expect(utc.civil(at: next) == CivilTime(year: 2028, month: 2, day: 29, hour: 9))
        #expect(try CalendarExpression(parsing: "*-02-30").nextElapse(after: 0, in: utc) == nil)
    }
}

extension CivilTime {
    func advanced(by seconds: Int64) -> CivilTime { CivilTime(localSeconds: localSeconds + seconds) }
}

extension Resolution {
    var uniqueInstant: Int64? {
        if case .unique(let t) = self { return t }
        return nil
    }
}

