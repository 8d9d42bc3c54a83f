import Foundation
import Testing
import TestSupport
import Timekeeping

/// chime-eds against Debian's real Evolution Data Server on a private bus (issue 47): the folder it
/// keeps holds each event of the calendar as EDS does, within moments of a change made as GNOME
/// Calendar makes it (python's gi), and what chime writes or removes there reaches EDS.
@Suite struct EDSMirrorTests {
    static var binary: String {
        URL(fileURLWithPath: chimeBinaryPath()).deletingLastPathComponent().appendingPathComponent("chime-eds").path
    }

    /// chime-eds mirror, its lines read as they come.
    final class Mirror: @unchecked Sendable {
        let child: ChildProcess
        let folder: URL
        private let lock = NSLock()
        private var _lines: [String] = []
        var lines: [String] { lock.withLock { _lines } }
        private var reader: Thread?

        init(_ eds: EDSSession, calendar: String, folder: URL) throws {
            self.folder = folder
            child = try ChildProcess(EDSMirrorTests.binary, ["mirror", calendar, folder.path], environment: eds.environment(),
                                     logDirectory: eds.bus.directory)
            let thread = Thread { [child, weak self] in
                while let line = try? child.readLine(timeout: 3600) { self?.lock.withLock { self?._lines.append(line) } }
            }
            reader = thread
            thread.start()
        }

        /// Waits until it has said `line` (as a whole line), 60 s at most: the bound is for a busy machine (make test runs these tests beside
        /// the main stage and the app's tests).
        func waitFor(_ line: String) -> Bool { waitUntil(60) { lines.contains(line) } }

        func file(_ uid: String) -> String? { try? String(contentsOf: folder.appendingPathComponent(uid + ".ics"), encoding: .utf8) }
    }

    /// A Tuesday a year from now, 09:30 in Berlin (its weekly rule's day), and the times the tests move
    /// events to: made from now, once.
    static let tuesday = TestDates.utcDay(in: 365, onWeekday: 2, hour: 9, minute: 30)
    static let tuesdayAtTen = tuesday.at(hour: 10)
    static let wednesday = tuesday.addingDays(1)

    static func event(_ uid: String, _ summary: String, start: String = tuesday.icsLocal, rule: String? = "FREQ=WEEKLY;BYDAY=TU") -> String {
        let head = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//chime tests//EN", "BEGIN:VEVENT", "UID:\(uid)", "SUMMARY:\(summary)",
                    "DTSTART;TZID=Europe/Berlin:\(start)", "DURATION:PT15M"]
        let tail = ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:\(summary)", "TRIGGER:-PT5M", "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""]
        return (head + (rule.map { ["RRULE:\($0)"] } ?? []) + tail).joined(separator: "\r\n")
    }

    /// Writes `event(uid, summary, …)` and adds it to `calendar` through eds.py, as GNOME Calendar adds one.
    static func create(_ eds: EDSSession, _ uid: String, _ summary: String, start: String = tuesday.icsLocal,
                       rule: String? = "FREQ=WEEKLY;BYDAY=TU", modify: Bool = false, in calendar: String = "Personal") throws {
        let ics = eds.home.deletingLastPathComponent().appendingPathComponent("event.ics")
        try event(uid, summary, start: start, rule: rule).write(to: ics, atomically: true, encoding: .utf8)
        try eds.python([modify ? "modify" : "create", calendar, ics.path])
    }

    @Test func theFolderFollowsEDSAndEDSFollowsTheFolder() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let scratch = eds.home.deletingLastPathComponent()
        try Self.create(eds, "before@example", "Made before")

        let folder = scratch.appendingPathComponent("mirror")
        let mirror = try Mirror(eds, calendar: "Personal", folder: folder)
        defer { mirror.child.stop() }
        #expect(mirror.waitFor("ready 1"), "\(mirror.lines)")
        #expect(mirror.file("before@example")?.contains("SUMMARY:Made before") == true)
        // A zone of the tz database is read by its name: Evolution's VTIMEZONE for it (history back to
        // 1893) is left out.
        #expect(mirror.file("before@example")?.contains("DTSTART;TZID=Europe/Berlin:\(Self.tuesday.icsLocal)") == true)
        #expect(mirror.file("before@example")?.contains("BEGIN:VTIMEZONE") == false)

        // Added, changed and removed in EDS, as GNOME Calendar does.
        try Self.create(eds, "live@example", "Standup")
        #expect(mirror.waitFor("wrote live@example"), "\(mirror.lines)")
        #expect(mirror.file("live@example")?.contains("RRULE:FREQ=WEEKLY;BYDAY=TU") == true)
        try Self.create(eds, "live@example", "Standup moved", start: Self.tuesdayAtTen.icsLocal, modify: true)
        #expect(waitUntil { mirror.file("live@example")?.contains("SUMMARY:Standup moved") == true }, "\(mirror.lines)")
        #expect(mirror.file("live@example")?.contains("DTSTART;TZID=Europe/Berlin:\(Self.tuesdayAtTen.icsLocal)") == true)
        try eds.python(["remove", "Personal", "live@example"])
        #expect(mirror.waitFor("removed live@example"), "\(mirror.lines)")
        #expect(mirror.file("live@example") == nil)

        // chime writes an event into the folder (as it writes a vdir's), then removes it.
        let mine = Self.event("chime-1@chime", "Wake up", start: Self.wednesday.at(hour: 7).icsLocal, rule: nil)
        try mine.write(to: folder.appendingPathComponent("chime-1@chime.ics"), atomically: true, encoding: .utf8)
        #expect(mirror.waitFor("put chime-1@chime"), "\(mirror.lines)")
        #expect(waitUntil { (try? eds.python(["list", "Personal"]).stdout.split(separator: "\n").contains { $0.hasPrefix("chime-1@chime ") }) == true })
        try FileManager.default.removeItem(at: folder.appendingPathComponent("chime-1@chime.ics"))
        #expect(mirror.waitFor("removed chime-1@chime"), "\(mirror.lines)")
        // A file that is no event, and one too big to be one: said, nothing put, nothing else disturbed.
        try "not a calendar".write(to: folder.appendingPathComponent("junk.ics"), atomically: true, encoding: .utf8)
        #expect(waitUntil { mirror.lines.contains { $0.hasPrefix("error junk.ics: not put into the calendar") } }, "\(mirror.lines)")
        let big = Data(count: 3 << 20)
        try big.write(to: folder.appendingPathComponent("big.ics"))
        #expect(waitUntil { mirror.lines.contains { $0.hasPrefix("error big.ics: 3145728 bytes") } }, "\(mirror.lines)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("junk.ics"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("big.ics"))
        #expect(try eds.python(["list", "Personal"]).stdout.split(separator: "\n").allSatisfy { !$0.hasPrefix("chime-1@chime ") })
        #expect(mirror.lines.filter { $0.hasPrefix("error") && !$0.hasPrefix("error junk.ics") && !$0.hasPrefix("error big.ics") }.isEmpty,
                "\(mirror.lines)")
    }

    /// Changes made while it did not run are taken in when it starts again: EDS's into the folder,
    /// chime's into EDS.
    @Test func whatChangedWhileItWasStoppedIsTakenInAtStart() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let scratch = eds.home.deletingLastPathComponent()
        let folder = scratch.appendingPathComponent("mirror")
        try Self.create(eds, "kept@example", "Kept")
        do {
            let first = try Mirror(eds, calendar: "Personal", folder: folder)
            #expect(first.waitFor("ready 1"), "\(first.lines)")
            first.child.stop()
        }
        // Meanwhile: EDS gets an event, chime writes one and removes the file of another.
        try Self.create(eds, "new@example", "New in EDS")
        try Self.event("mine@chime", "Mine", rule: nil).write(to: folder.appendingPathComponent("mine@chime.ics"), atomically: true,
                                                              encoding: .utf8)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("kept@example.ics"))

        let second = try Mirror(eds, calendar: "Personal", folder: folder)
        defer { second.child.stop() }
        #expect(second.waitFor("ready 2"), "\(second.lines)")
        let listed = try eds.python(["list", "Personal"]).stdout.split(separator: "\n").map { String($0.split(separator: " ").first ?? "") }
        #expect(Set(listed) == ["new@example", "mine@chime"], "\(listed)")
        #expect(second.file("new@example") != nil && second.file("mine@chime") != nil && second.file("kept@example") == nil)
    }

    /// Started again with nothing changed in EDS (its revision of the calendar is the one the folder
    /// last held whole), the events are listed, not fetched again; a change made in EDS meanwhile
    /// moves the revision, and all is fetched.
    @Test func anUnchangedCalendarIsNotFetchedAgain() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let folder = eds.home.deletingLastPathComponent().appendingPathComponent("mirror")
        try Self.create(eds, "one@example", "One")
        try Self.create(eds, "two@example", "Two")
        func run(_ expected: [String]) throws -> [String] {
            let mirror = try Mirror(eds, calendar: "Personal", folder: folder)
            defer { mirror.child.stop() }
            #expect(mirror.waitFor("ready 2"), "\(mirror.lines)")
            for line in expected { #expect(mirror.lines.contains(line), "\(mirror.lines)") }
            return mirror.lines
        }
        let first = try run(["wrote one@example", "wrote two@example"])
        #expect(!first.contains { $0.hasPrefix("unchanged") }, "nothing to trust the first time: \(first)")
        // EDS's local calendar may move its revision a moment after an event is created, after the
        // first run read it: then all is rightly fetched again once, and trusted after that.
        let saved = try? String(contentsOf: folder.appendingPathComponent(".chime-eds-revision"), encoding: .utf8)
        let current = try eds.python(["revision", "Personal"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(!current.isEmpty, "EDS said no revision of the calendar")
        if saved != current {
            print("measured: EDS moved the calendar's revision after the first run read it (\(saved ?? "none") then \(current))")
            let again = try run([])
            #expect(!again.contains { $0.hasPrefix("unchanged") }, "\(again)")
        }
        _ = try run(["unchanged 2"])
        try Self.create(eds, "two@example", "Two moved", start: Self.wednesday.at(hour: 10).icsLocal, modify: true)
        let changed = try run(["wrote two@example"])
        #expect(!changed.contains { $0.hasPrefix("unchanged") }, "\(changed)")
        let moved = try? String(contentsOf: folder.appendingPathComponent("two@example.ics"), encoding: .utf8)
        #expect(moved?.contains("SUMMARY:Two moved") == true, "\(moved ?? "no file")")
        _ = try run(["unchanged 2"])
    }

    /// A calendar of thousands of events is fetched in one call and written an event a file.
    @Test func aBigCalendarIsMirroredWhole() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        try eds.python(["bulk", "Personal", "3000"])
        let folder = eds.home.deletingLastPathComponent().appendingPathComponent("mirror")
        let mirror = try Mirror(eds, calendar: "Personal", folder: folder)
        defer { mirror.child.stop() }
        #expect(waitUntil(120) { mirror.lines.contains("ready 3000") }, "\(mirror.lines.suffix(3))")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".ics") && !$0.hasPrefix(".") }
        #expect(files.count == 3000)
        #expect(mirror.file("bulk-2999")?.contains("SUMMARY:Event 2999") == true)
    }

    /// EDS stopping under it is said, and the folder stays as it was (nothing is taken for removed).
    @Test func edsGoingAwayIsSaidAndTheFolderStays() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let scratch = eds.home.deletingLastPathComponent()
        try Self.create(eds, "stays@example", "Stays")
        let folder = scratch.appendingPathComponent("mirror")
        let mirror = try Mirror(eds, calendar: "Personal", folder: folder)
        defer { mirror.child.stop() }
        #expect(mirror.waitFor("ready 1"), "\(mirror.lines)")
        eds.killEDS()
        #expect(mirror.waitFor("error Evolution Data Server went away"), "\(mirror.lines)")
        #expect(waitUntil { !mirror.child.isRunning })
        #expect(mirror.file("stays@example") != nil)
    }

    /// eds = "*": every enabled calendar in a folder of its own; one added in GNOME Calendar is
    /// followed as it comes, and its folder goes when it is removed.
    @Test func everyCalendarIsFollowedAsCalendarsComeAndGo() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let scratch = eds.home.deletingLastPathComponent()
        try Self.create(eds, "personal@example", "In Personal")
        let folder = scratch.appendingPathComponent("all")
        let all = try Mirror(eds, calendar: "*", folder: folder)
        defer { all.child.stop() }
        #expect(all.waitFor("system-calendar ready 1"), "\(all.lines)")
        #expect(all.waitFor("birthdays ready 0"), "\(all.lines)")
        let personal = folder.appendingPathComponent("system-calendar/personal@example.ics")
        #expect(FileManager.default.fileExists(atPath: personal.path))
        func index() -> String { (try? String(contentsOf: folder.appendingPathComponent("calendars"), encoding: .utf8)) ?? "" }
        #expect(index().contains("system-calendar\tsystem-calendar\trw\tPersonal\n"), "\(index())")
        // The contacts' birthdays: EDS keeps them read-only, and says so.
        #expect(index().contains("birthdays\tbirthdays\tro\tBirthdays & Anniversaries\n"), "\(index())")

        let uid = try eds.python(["newcal", "Running"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.create(eds, "run@example", "Long run", rule: nil, in: "Running")
        #expect(waitUntil(30) { FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(uid)/run@example.ics").path) },
                "\(all.lines)")
        #expect(waitUntil { index().contains("\t\(uid)\trw\tRunning\n") }, "\(index())")

        try eds.python(["dropcal", uid])
        #expect(all.waitFor("\(uid) gone"), "\(all.lines)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(uid).path))
        #expect(waitUntil { !index().contains(uid) }, "\(index())")
        #expect(FileManager.default.fileExists(atPath: personal.path), "the other calendars stay")
    }

    @Test func aCalendarEDSDoesNotHaveIsSaidWithTheOnesItHas() throws {
        let eds = try EDSSession()
        defer { eds.stop() }
        let result = try runProgram(Self.binary, [Array("mirror".utf8), Array("Work".utf8), Array("/nonexistent-never-made".utf8)],
                                    environment: eds.environment(), timeout: 120)
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("Evolution Data Server has no calendar \"Work\" (its calendars: \"Birthdays & Anniversaries\", \"Personal\")"),
                "\(result.stderr)")
        let sources = try runProgram(Self.binary, [Array("sources".utf8)], environment: eds.environment(), timeout: 120)
        #expect(sources.stdout.contains("\"name\":\"Personal\",\"uid\":\"system-calendar\",\"writable\":true"), "\(sources)")
    }

    @Test func withoutEDSItSaysSo() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let result = try runProgram(Self.binary, [Array("sources".utf8)], environment: bus.environment(), timeout: 120)
        #expect(result.status == 4, "\(result)")
        #expect(result.stderr.hasPrefix("chime-eds: Evolution Data Server cannot be reached"), "\(result.stderr)")
    }
}
