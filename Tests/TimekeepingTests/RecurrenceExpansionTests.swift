import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// The occurrences of RFC 5545's example rules, against python-dateutil's `rrule` (an independent
/// implementation, from Debian's python3-dateutil), in America/New_York across its DST changes.
@Suite struct RecurrenceExpansionTests {
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
}
