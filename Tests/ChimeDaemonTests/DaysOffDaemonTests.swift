import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// The real daemon with days off: a holiday calendar the alarm file follows ([[holidays]]), read
/// live as vdirsyncer rewrites it, each policy from the file and the command line, `chime show`
/// saying why; time away (`chime off`, `chime on`, [[off]]) across a restart, its occurrences
/// neither rung nor missed.
@Suite(.serialized) struct DaysOffDaemonTests {
    /// Days from today, UTC, as YYYYMMDD and YYYY-MM-DD.
    static func date(_ offset: Int64, compact: Bool = false) -> String {
        let day = Int64(Date().timeIntervalSince1970) / 86_400 + offset
        let d = civilFromDays(day)
        func pad(_ n: Int, _ w: Int = 2) -> String { String(repeating: "0", count: max(0, w - String(n).count)) + String(n) }
        return compact ? "\(pad(d.year, 4))\(pad(d.month))\(pad(d.day))" : "\(pad(d.year, 4))-\(pad(d.month))-\(pad(d.day))"
    }

    /// A holiday today and tomorrow (UTC), as one event of two days in a vdir.
    static func writeHoliday(in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let text = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", "UID:break@test", "SUMMARY:Winter break",
                    "DTSTART;VALUE=DATE:\(date(0, compact: true))", "DTEND;VALUE=DATE:\(date(2, compact: true))", "END:VEVENT", "END:VCALENDAR"]
            .joined(separator: "\r\n")
        // As vdirsyncer writes: a new file renamed into place.
        let temporary = directory.appendingPathComponent(".break.ics.tmp")
        try Data(text.utf8).write(to: temporary)
        #expect(rename(temporary.path, directory.appendingPathComponent("break.ics").path) == 0)
    }

    static func listed(_ bus: PrivateBus) throws -> [String: [String: Any]] {
        let result = try runChime(["list", "--json"], environment: bus.environment())
        try #require(result.status == 0, "\(result.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0) })
    }

    static func next(_ bus: PrivateBus, _ id: String) throws -> String { try listed(bus)[id]?["nextFire"] as? String ?? "none" }

    @Test func holidayCalendarsAreFollowedAndEachPolicyPlannedAndSaid() throws {
        let bus = try PrivateBus()
        let holidays = bus.directory.appendingPathComponent("calendars/holidays")
        try Self.writeHoliday(in: holidays)
        let config = bus.directory.appendingPathComponent(".config/chime")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
            [defaults]
            working-days = "mon-sun"

            [[holidays]]
            path = "\(holidays.path)"
            label = "school"

            [[alarm]]
            label = "Skipped"
            when = "12:00"
            tz = "UTC"
            on-holiday = "skip"

            [[alarm]]
            label = "Rings"
            when = "12:00"
            tz = "UTC"
            """.write(to: config.appendingPathComponent("alarms.toml"), atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); bus.stop() }
        let env = bus.environment()
        let afterBreak = Self.date(2) + "T12:00:00+00:00"
        #expect(try Self.next(bus, "skipped") == afterBreak)
        #expect(try Self.next(bus, "rings") != afterBreak)
        // From the command line: moved after, onto the first working day that is not a day off.
        let added = try runChime(["at", "12:00", "--tz", "UTC", "--on-holiday", "after", "--id", "moved", "Moved"], environment: env)
        try #require(added.status == 0, "\(added.stderr)")
        #expect(try Self.next(bus, "moved") == afterBreak)
        let show = try runChime(["show", "moved"], environment: env)
        #expect(show.stdout.contains("Winter break (school), moved to "), "\(show.stdout)")
        #expect(show.stdout.contains("moved to the working day after"), "\(show.stdout)")
        let json = try JSONSerialization.jsonObject(with: Data(try runChime(["show", "--json", "skipped"], environment: env).stdout.utf8)) as? [String: Any]
        #expect(json?["onHoliday"] as? String == "skip")
        let off = json?["daysOff"] as? [[String: Any]] ?? []
        #expect(off.contains { ($0["due"] as? String) == Self.date(1) + "T12:00:00+00:00" && ($0["fate"] as? String) == "skipped"
                    && ($0["holiday"] as? String) == "Winter break (school)" }, "\(off)")
        // A bad policy is refused where it is given.
        let bad = try runChime(["at", "12:00", "--on-holiday", "sometimes", "X"], environment: env)
        #expect(bad.status == 64)
        #expect(bad.stderr == "chime: --on-holiday sometimes: give ring, skip, before or after\n")

        // The calendar's sync removes the day off: followed live, the alarms ring on it again.
        try FileManager.default.removeItem(at: holidays.appendingPathComponent("break.ics"))
        #expect(try waitUntil { try Self.next(bus, "skipped") != afterBreak && Self.next(bus, "moved") != afterBreak })
        #expect(try Self.next(bus, "skipped") == Self.next(bus, "rings"))
        // And it comes back.
        try Self.writeHoliday(in: holidays)
        #expect(try waitUntil { try Self.next(bus, "skipped") == afterBreak && Self.next(bus, "moved") == afterBreak })
    }

    @Test func timeAwayIsNeitherRungNorMissedAcrossARestart() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let state = bus.directory.appendingPathComponent("state").path
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let env = bus.environment()
        #expect(try runChime(["at", "*:*:0/2", "--id", "often", "Often"], environment: env).status == 0)
        #expect(try runChime(["at", "12:00", "--tz", "UTC", "--id", "noon", "Noon"], environment: env).status == 0)
        _ = recorder.waitForCalls(1)
        // Away until the day after tomorrow: nothing rings, every alarm is planned past it.
        let away = try runChime(["off", "--until", Self.date(2)], environment: env)
        try #require(away.status == 0, "\(away.stderr)")
        #expect(away.stdout.hasPrefix("every alarm off until "), "\(away.stdout)")
        let list = try runChime(["list"], environment: env).stdout
        #expect(list.contains("off until "), "\(list)")
        let listed = try Self.listed(bus)
        #expect((listed["noon"]?["offUntil"] as? String) != nil, "\(listed)")
        let status = try JSONSerialization.jsonObject(with: Data(try runChime(["status", "--json"], environment: env).stdout.utf8)) as? [String: Any]
        #expect((status?["away"] as? [[String: Any]])?.count == 1, "\(String(describing: status?["away"]))")
        // (The promise is that nothing comes: waited for, after what was on its way has arrived.)
        Thread.sleep(forTimeInterval: 0.5)
        let before = recorder.calls.count
        Thread.sleep(forTimeInterval: 3)
        #expect(recorder.calls.count == before, "rang in time away")
        // Across a restart: still away, and what it silenced is not a missed alarm.
        daemon.stop()
        Thread.sleep(forTimeInterval: 2.5)
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try runChime(["list", "--missed"], environment: env).stdout.isEmpty)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(recorder.calls.count == before, "rang in time away after the restart")
        // chime on: it rings again.
        let on = try runChime(["on"], environment: env)
        #expect(on.status == 0, "\(on.stderr)")
        #expect(on.stdout.hasPrefix("every alarm back on (was off until "), "\(on.stdout)")
        #expect(recorder.waitForCalls(before + 1).count > before)
        // Away for one alarm: the other rings on.
        #expect(try runChime(["off", "often", "--until", Self.date(2)], environment: env).status == 0)
        #expect(try Self.next(bus, "noon") != Self.date(2) + "T12:00:00+00:00" || Self.date(0) == Self.date(2))
        let unknown = try runChime(["off", "ghost", "--until", Self.date(2)], environment: env)
        #expect(unknown.status == 6, "\(unknown.stderr)")
        let onNoon = try runChime(["on", "noon"], environment: env)
        #expect(onNoon.status == 64, "\(onNoon.stdout) \(onNoon.stderr)")
        #expect(try runChime(["on", "often"], environment: env).stdout.hasPrefix("often back on"))
        let past = try runChime(["off", "--until", "2020-01-01"], environment: env)
        #expect(past.status == 64, "\(past.stderr)")
    }

    @Test func theAlarmFilesTimeAwayStaysUntilTheFileChanges() throws {
        let bus = try PrivateBus()
        let config = bus.directory.appendingPathComponent(".config/chime")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let file = config.appendingPathComponent("alarms.toml")
        try """
            [[off]]
            from = \(Self.date(-1))
            until = "\(Self.date(3))"
            alarms = ["gym"]

            [[alarm]]
            label = "Gym"
            when = "12:00"
            tz = "UTC"

            [[alarm]]
            label = "Noon"
            when = "12:00"
            tz = "UTC"
            """.write(to: file, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); bus.stop() }
        let env = bus.environment()
        #expect(try Self.next(bus, "gym").hasPrefix(Self.date(3) + "T12:00"))
        #expect(!(try Self.next(bus, "noon").hasPrefix(Self.date(3))))
        let on = try runChime(["on"], environment: env)
        #expect(on.stdout.contains("the alarm file's [[off]] keeps gym off until "), "\(on.stdout)")
        #expect(try Self.next(bus, "gym").hasPrefix(Self.date(3) + "T12:00"))
        let off = try runChime(["off"], environment: env)
        #expect(off.stdout.hasPrefix("gym off until ") && off.stdout.contains("(alarm file)"), "\(off.stdout)")
        // Bad time away is the file's error, at its line.
        try "[[off]]\nfrom = \"someday\"\n".write(to: file, atomically: true, encoding: .utf8)
        let check = try runChime(["config", "check"], environment: env)
        #expect(check.status == 78)
        #expect(check.stderr.contains("alarms.toml:1:1: time away needs 'until'"), "\(check.stderr)")
        // The message's example of a date is a fixed reference, not a day the daemon is handed.
        #expect(check.stderr.contains("alarms.toml:2:8: 'from' must be a date (\"2027-01-04\") or a date and time"), "\(check.stderr)")
    }
}
