import ChimeCenter
import Foundation
import Testing
import TestSupport

/// Calendars written by other people, against the real daemon: an import never replaces an alarm
/// set otherwise without saying so, a followed calendar sets only what its events mean unless it is
/// marked as the person's own, and two calendars holding the same UID keep both alarms.
@Suite struct OthersCalendarsTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws { bus = try PrivateBus() }

    static func calendar(uid: String, start: String, _ extra: [String] = []) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//somebody//EN", "BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:\(TestDates.utcDay(in: -7).icsUTC)",
          "DTSTART:\(start)", "SUMMARY:Meeting \(start)"] + extra
            + ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT5M", "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""])
            .joined(separator: "\r\n")
    }

    /// `X-CHIME-ID:wake` replaced the command-line alarm `wake` ("1 updated"). Now: someone else's file
    /// cannot name it at all; a file imported as the user's own names it, and the import stops and
    /// says so unless --replace.
    @Test func anImportNeverSilentlyReplacesAnAlarmSetOtherwise() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let environment = bus.environment()
        #expect(try runChime(["at", "07:00", "--id", "wake", "Wake up"], environment: environment).status == 0)
        let file = bus.directory.appendingPathComponent("invite.ics").path
        let start = TestDates.utcDay(in: 365).icsUTC
        try Self.calendar(uid: "invite-1@example.org", start: start, ["X-CHIME-ID:wake", "X-CHIME-RULE:every 1s"])
            .write(toFile: file, atomically: true, encoding: .utf8)

        let strangers = try runChime(["import", file], environment: environment)
        #expect(strangers.status == 0, "\(strangers.stderr)")
        #expect(strangers.stderr.contains("note: chime's settings (X-CHIME-*) are taken only from a calendar marked as your own"))
        #expect(strangers.stdout.hasPrefix("imported 1 alarm from \(file) (1 new, 0 updated)"), "\(strangers.stdout)")
        #expect(try center().request(withIdentifier: "wake").content.title == "Wake up")
        #expect(try center().request(withIdentifier: "ics-invite-1@example.org").summaryRule == "DTSTART:\(start)")

        let own = try runChime(["import", "--own", file], environment: environment)
        #expect(own.status == 65)
        #expect(own.stderr.contains("wake (Wake up, not from a calendar) is already an alarm that did not come from this file's event"),
                "\(own.stderr)")
        #expect(own.stderr.contains("it would replace 1 alarm set otherwise; nothing imported (--replace replaces them)"))
        #expect(try center().request(withIdentifier: "wake").content.title == "Wake up")

        let replaced = try runChime(["import", "--own", "--replace", file], environment: environment)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try center().request(withIdentifier: "wake").summaryRule == "every 1s")
        // The same file again updates what it made, without --replace.
        let again = try runChime(["import", "--own", file], environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("imported 1 alarm from \(file) (0 new, 1 updated)"), "\(again.stdout)")
    }

    /// Two followed calendars with the same UID (an invitation in both) keep both alarms; chime's
    /// settings count only in the one marked as the person's own, and never insist.
    @Test func followedCalendarsKeepBothAlarmsOfOneUID() throws {
        let work = bus.directory
        let team = work.appendingPathComponent("team.ics").path
        let mine = work.appendingPathComponent("mine.ics").path
        let (teamStart, mineStart) = (TestDates.utcDay(in: 365).icsUTC, TestDates.utcDay(in: 366).icsUTC)
        try Self.calendar(uid: "same@example.org", start: teamStart, ["X-CHIME-RULE:every 1s", "X-CHIME-INSIST:TRUE"])
            .write(toFile: team, atomically: true, encoding: .utf8)
        try Self.calendar(uid: "same@example.org", start: mineStart, ["X-CHIME-LABEL:mine", "X-CHIME-INSIST:TRUE"])
            .write(toFile: mine, atomically: true, encoding: .utf8)
        let config = work.appendingPathComponent("alarms.toml").path
        try """
            [[calendar]]
            path = "\(team)"

            [[calendar]]
            path = "\(mine)"
            own = true
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", config])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        #expect(try waitUntil { try center().pendingSummaries().count == 2 }, "\(daemon.log)")
        let pending = try center().pendingSummaries().map(\.identifier).sorted()
        #expect(pending.first == "ics-same@example.org")
        #expect(pending.last?.hasPrefix("ics-same@example.org@") == true, "\(pending)")
        let first = try center().request(withIdentifier: "ics-same@example.org")
        let second = try center().request(withIdentifier: try #require(pending.last))
        #expect(first.summaryRule == "DTSTART:\(teamStart)", "the team's calendar cannot make it ring every second")
        #expect(second.content.label == "mine", "the person's own calendar sets chime's settings")
        #expect(!first.content.insist && !second.content.insist, "never insist from a followed calendar")
        // The notes say what was left out, where `chime status` shows them.
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("team.ics:4: chime's settings (X-CHIME-*) are taken only from a calendar marked as your own"),
                "\(status.stdout)")
    }

    /// A calendar that grows past 16 MiB was cut at the limit, its last line broke, and all its
    /// alarms were dropped. Now it is not read, said so, and the alarms it gave stay until it can be
    /// read again.
    @Test func aCalendarThatCannotBeReadKeepsTheAlarmsItGave() throws {
        let work = bus.directory
        let calendar = work.appendingPathComponent("team.ics").path
        let start = TestDates.utcDay(in: 365).icsUTC
        try Self.calendar(uid: "weekly@example.org", start: start).write(toFile: calendar, atomically: true, encoding: .utf8)
        let config = work.appendingPathComponent("alarms.toml").path
        try "[[calendar]]\npath = \"\(calendar)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", config])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        #expect(try waitUntil { try center().pendingSummaries().map(\.identifier) == ["ics-weekly@example.org"] })
        // 25 bytes over the limit.
        let big = Array(Self.calendar(uid: "weekly@example.org", start: start).utf8)
        var grown = big
        grown += Array(repeating: UInt8(ascii: "\n"), count: (16 << 20) + 25 - big.count)
        try Data(grown).write(to: URL(fileURLWithPath: calendar))
        #expect(try runChime(["config", "reload"], environment: bus.environment()).status == 0)
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("team.ics: larger than 16 MiB; not read, and the alarms it gave before are kept"), "\(status.stdout)")
        #expect(try center().pendingSummaries().map(\.identifier) == ["ics-weekly@example.org"])
        // Readable again, without the event: then it goes.
        try Self.calendar(uid: "other@example.org", start: TestDates.utcDay(in: 366).icsUTC).write(toFile: calendar, atomically: true, encoding: .utf8)
        #expect(try runChime(["config", "reload"], environment: bus.environment()).status == 0)
        #expect(try waitUntil { try center().pendingSummaries().map(\.identifier) == ["ics-other@example.org"] })
    }

    /// A folder of events (a vdir, or chime-eds's folder of an EDS calendar): a change to one event
    /// is one file, and only that file is read (a folder of 100,000 events is not read again for
    /// it); what the files read no longer give goes, the rest stays, and the counts stay true.
    /// Where only a whole reading can say (an event moved to another file), all is read.
    @Test func aChangeInAFolderReadsOnlyTheFilesThatChanged() throws {
        let folder = bus.directory.appendingPathComponent("team")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Days a year from now (counted once: a test that runs past midnight means the same days).
        let yearOn = TestDates.utcDay(in: 365)
        func day(_ n: Int) -> String { yearOn.addingDays(n).icsUTC }
        func write(_ name: String, uid: String, start: String) throws {
            try Self.calendar(uid: uid, start: start).write(toFile: folder.appendingPathComponent(name).path, atomically: true, encoding: .utf8)
        }
        for (name, n) in [("a", 1), ("b", 2), ("c", 3)] { try write("\(name).ics", uid: "\(name)@example.org", start: day(n)) }
        let config = bus.directory.appendingPathComponent("alarms.toml").path
        try "[[alarm]]\nid = \"own\"\nwhen = \"07:00\"\ntitle = \"Own\"\n\n[[calendar]]\npath = \"\(folder.path)\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", config])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        func ids() throws -> [String] { try center().pendingSummaries().map(\.identifier).sorted() }
        func counted() throws -> Int? {
            let status = try runChime(["status", "--json"], environment: bus.environment())
            let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            return (json?["alarmFile"] as? [String: Any])?["alarms"] as? Int
        }
        // The readings of the alarm file, as the daemon logged them: nil for a whole one, else the
        // names of the files a part read. (How many there are for one change is inotify's: a
        // writer's rename and its chmod may come apart, and each is then read. What a test can hold
        // the daemon to is which files were read, and whether all was.)
        func logged() -> [[String]?] {
            daemon.log.split(separator: "\n").filter { $0.contains("alarm file loaded") }.map { line -> [String]? in
                if line.contains("read=all") { return nil }
                guard let files = line.range(of: "files=") else { return [] }
                return line[files.upperBound...].prefix { $0 != " " }.split(separator: ",").map(String.init)
            }
        }
        func onlyParts(_ readings: ArraySlice<[String]?>, of files: Set<String>) -> Bool {
            readings.allSatisfy { $0.map { Set($0).isSubset(of: files) } ?? false }
        }
        #expect(try waitUntil { try ids() == ["ics-a@example.org", "ics-b@example.org", "ics-c@example.org", "own"] }, "\(daemon.log)")
        #expect(waitUntil { logged() == [nil] }, "one whole reading at start: \(daemon.log)")

        // One event moved: only its file is read.
        var mark = logged().count
        try write("b.ics", uid: "b@example.org", start: day(12))
        #expect(try waitUntil { try center().request(withIdentifier: "ics-b@example.org").summaryRule == "DTSTART:\(day(12))" },
                "\(daemon.log)")
        #expect(waitUntil { logged().dropFirst(mark).contains { $0 == ["b.ics"] } }, "\(daemon.log)")
        #expect(onlyParts(logged().dropFirst(mark), of: ["b.ics"]), "only b.ics is read: \(daemon.log)")
        #expect(try center().request(withIdentifier: "ics-a@example.org").summaryRule == "DTSTART:\(day(1))")
        #expect(try counted() == 4)
        // One taken out, one added: those two files.
        mark = logged().count
        try FileManager.default.removeItem(at: folder.appendingPathComponent("c.ics"))
        try write("d.ics", uid: "d@example.org", start: day(4))
        #expect(try waitUntil { try ids() == ["ics-a@example.org", "ics-b@example.org", "ics-d@example.org", "own"] }, "\(daemon.log)")
        #expect(try waitUntil { try counted() == 4 }, "\(daemon.log)")
        #expect(waitUntil { Set(logged().dropFirst(mark).compactMap { $0 }.joined()) == ["c.ics", "d.ics"] }, "\(daemon.log)")
        #expect(onlyParts(logged().dropFirst(mark), of: ["c.ics", "d.ics"]), "no whole reading for files that changed: \(daemon.log)")
        // An event moved to another file, in two steps (another program copied it, then took out
        // the first): while both hold it, both ring (the second named after its calendar); then
        // the one left keeps its name. Only a whole reading says which is which: all is read.
        mark = logged().count
        try write("e.ics", uid: "a@example.org", start: day(5))
        #expect(try waitUntil { try ids().count == 5 }, "\(daemon.log)")
        #expect(waitUntil { logged().dropFirst(mark).contains(nil) }, "\(daemon.log)")
        mark = logged().count
        try FileManager.default.removeItem(at: folder.appendingPathComponent("a.ics"))
        #expect(try waitUntil { try ids() == ["ics-a@example.org", "ics-b@example.org", "ics-d@example.org", "own"] }, "\(daemon.log)")
        // (Waited for: a part reading of a.ics may come first, and the whole one then says which is which.)
        #expect(try waitUntil { try center().request(withIdentifier: "ics-a@example.org").summaryRule == "DTSTART:\(day(5))" }, "\(daemon.log)")
        #expect(waitUntil { logged().dropFirst(mark).contains(nil) }, "\(daemon.log)")
        #expect(try waitUntil { try counted() == 4 }, "\(daemon.log)")
    }
}
