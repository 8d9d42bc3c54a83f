import ChimeCenter
import ChimeClient
import Foundation
import Testing
import TestSupport

/// GNOME's calendars through Evolution Data Server, end to end (issue 47): Debian's EDS on a
/// private bus, chime's daemon on the same bus following `[[calendar]] eds = "Personal"` (its
/// chime-eds child keeps a folder in step), events made as GNOME Calendar makes them (python's gi).
/// A reminder rings on time; a moved event moves its alarm, a removed one is forgotten; `chime at
/// --calendar Personal` makes an event EDS lists, and Stop writes ACKNOWLEDGED that EDS then holds;
/// the child killed, EDS killed: a plain alarm beside them rings and `chime status` says what happened.
@Suite struct EDSCalendarTests {
    final class Home {
        let eds: EDSSession
        let recorder: RecordingServer
        let alarmFile: URL
        let state: URL
        var daemon: DaemonProcess?

        init(calendar: String = "eds = \"Personal\"\nwrite = true\n", edsProgram: String? = nil,
             prepare: (EDSSession) throws -> Void = { _ in }) throws {
            eds = try EDSSession()
            try prepare(eds)
            recorder = try RecordingServer(address: eds.bus.address)
            let config = eds.home.appendingPathComponent(".config/chime")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            alarmFile = config.appendingPathComponent("alarms.toml")
            try ("[[calendar]]\n" + calendar).write(to: alarmFile, atomically: true, encoding: .utf8)
            state = eds.home.deletingLastPathComponent().appendingPathComponent("state")
            // A stand-in sound player (each play a third of a second), so alarms ring here.
            let players = eds.home.deletingLastPathComponent().appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: players, withIntermediateDirectories: true)
            try installExecutable("#!/bin/sh\nsleep 0.3\n", at: players.appendingPathComponent("canberra-gtk-play").path)
            var environment = eds.environment()
            environment["PATH"] = players.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            if let edsProgram { environment["CHIME_TEST_EDS_PROGRAM"] = edsProgram }
            daemon = try DaemonProcess(bus: eds.bus, stateDirectory: state.path, environment: environment)
        }

        func chime(_ arguments: [String]) throws -> CommandResult { try runChime(arguments, environment: eds.environment()) }

        func pending() throws -> [String: [String: Any]] {
            let items = try JSONSerialization.jsonObject(with: Data(try chime(["list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0) })
        }

        /// The alarm made of the EDS event `uid` (its id is the UID's, maybe with its calendar's hash).
        func alarm(_ uid: String) throws -> [String: Any]? {
            try pending().first { $0.key == "ics-" + uid || $0.key.hasPrefix("ics-" + uid + "@") }?.value
        }

        func status() throws -> String { try chime(["status"]).stdout }
        /// What `chime status` says now, for a failure's message.
        var said: String { (try? status()) ?? "" }

        /// What EDS holds of the calendar: a line per event (eds.py list).
        func listed(_ calendar: String = "Personal") throws -> String { try eds.python(["list", calendar]).stdout }

        func stop() {
            daemon?.stop()
            recorder.stop()
            eds.stop()
        }
    }

    static func utc(_ date: Date) -> String {
        let format = DateFormatter()
        format.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        format.timeZone = TimeZone(identifier: "UTC")
        format.locale = Locale(identifier: "en_US_POSIX")
        return format.string(from: date)
    }

    static func local(_ date: Date) -> String {
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd HH:mm:ss"
        format.locale = Locale(identifier: "en_US_POSIX")
        return format.string(from: date)
    }

    /// An event as GNOME Calendar writes one (UTC start, a display reminder `minutes` before).
    static func add(_ home: Home, _ uid: String, _ summary: String, start: Date, reminder: String = "-PT1M", modify: Bool = false,
                    in calendar: String = "Personal") throws {
        let text = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//GNOME//Calendar//EN", "BEGIN:VEVENT", "UID:\(uid)", "SUMMARY:\(summary)",
                    "DTSTART:\(utc(start))", "DTEND:\(utc(start.addingTimeInterval(1800)))", "BEGIN:VALARM", "ACTION:DISPLAY",
                    "DESCRIPTION:\(summary)", "TRIGGER:\(reminder)", "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""].joined(separator: "\r\n")
        let ics = home.eds.home.deletingLastPathComponent().appendingPathComponent("event.ics")
        try text.write(to: ics, atomically: true, encoding: .utf8)
        try home.eds.python([modify ? "modify" : "create", calendar, ics.path])
    }

    @Test func aReminderMadeInGNOMECalendarRingsAndFollowsItsEvent() throws {
        let home = try Home(calendar: "eds = \"Personal\"\n")
        defer { home.stop() }
        // (EDS activated and the calendar read once first: what follows is a change made in GNOME Calendar.)
        try #require(try waitUntil(30) { try home.status().contains("followed live") }, "\(home.said)")
        // Rings 20 s from now: its event starts in 80 s, the reminder a minute before.
        let ringsAt = Date().addingTimeInterval(20)
        try Self.add(home, "standup@example", "Standup", start: ringsAt.addingTimeInterval(60))
        try #require(try waitUntil(30) { try home.alarm("standup@example") != nil }, "chime never learned of the event: \(home.daemon?.log ?? "")")
        #expect(try waitUntil { try home.status().contains("EDS calendar \"Personal\": followed live (1 event)") }, "\(home.said)")
        #expect(waitUntil(60) { home.recorder.calls.contains { $0.summary.contains("Standup") } }, "it did not ring: \(home.daemon?.log ?? "")")
        // On time by the daemon's own account (its grace), not by this test's clock.
        // (The daemon logs it once the server has answered: after the popup the recorder saw.)
        func fired() -> [Substring] {
            (home.daemon?.log ?? "").split(separator: "\n").filter { $0.contains("alarm.id=ics-standup@example") && $0.contains("] fired") }
        }
        #expect(waitUntil { !fired().isEmpty }, "\(home.daemon?.log ?? "")")
        #expect(fired().count == 1 && fired().first?.contains("timeliness=on-time") == true, "\(home.daemon?.log ?? "")")

        // Moved in GNOME Calendar: the alarm moves.
        try Self.add(home, "later@example", "Review", start: Date().addingTimeInterval(86_400))
        try #require(try waitUntil(30) { try home.alarm("later@example") != nil })
        let before = try #require(try home.alarm("later@example")?["nextFire"] as? String)
        try Self.add(home, "later@example", "Review", start: Date().addingTimeInterval(2 * 86_400), modify: true)
        #expect(try waitUntil(30) { (try home.alarm("later@example")?["nextFire"] as? String).map { $0 != before } ?? false },
                "the alarm stayed where it was")
        // Removed: forgotten.
        try home.eds.python(["remove", "Personal", "later@example"])
        #expect(try waitUntil(30) { try home.alarm("later@example") == nil }, "the alarm of a removed event stayed")
        // The calendars' list (the app's, and chime status's) shows it, synced by EDS.
        let calendars = try UserNotificationCenter(connection: try home.eds.bus.connect()).perform(Scheduler1.listCalendars)
        #expect(calendars.map(\.name) == ["Personal"] && calendars[0].syncs && !calendars[0].write && calendars[0].failing.isEmpty, "\(calendars)")
    }

    @Test func chimeAtPutsAnAlarmIntoGNOMECalendarAndStopIsWrittenThere() throws {
        let home = try Home()
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("followed live") }, "\(home.said)")
        let due = Date().addingTimeInterval(10)
        let set = try home.chime(["at", Self.local(due), "--calendar", "Personal", "--id", "call", "--sound", "bell", "--ring", "5m", "Call"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try waitUntil(30) { try home.listed().contains("call@chime") }, "EDS never got the event: \((try? home.listed()) ?? "")")
        #expect(try home.listed().contains("SUMMARY:Call"))
        #expect(try waitUntil(60) { try home.chime(["list", "--ringing"]).stdout.contains("call") }, "it did not ring: \(home.daemon?.log ?? "")")
        #expect(try home.chime(["stop", "call"]).status == 0)
        // The answer, as RFC 9074 writes it, is what EDS holds (and syncs to the account's server).
        #expect(try waitUntil(30) { try home.listed().contains("ACKNOWLEDGED:") }, "EDS never got the answer: \((try? home.listed()) ?? "")")
        // A weekly one, cancelled: gone from EDS too.
        #expect(try home.chime(["at", "06:30", "--days", "sat", "--calendar", "Personal", "--id", "gym", "Gym"]).status == 0)
        #expect(try waitUntil(30) { try home.listed().contains("gym@chime") }, "EDS never got the event")
        let cancelled = try home.chime(["cancel", "gym"])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(try waitUntil(30) { try !home.listed().contains("gym@chime") }, "the event stayed in EDS")
    }

    @Test func theChildOrEDSKilledCostsNoAlarm() throws {
        let home = try Home()
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("followed live") }, "\(home.said)")
        try Self.add(home, "known@example", "Known", start: Date().addingTimeInterval(60 + 25))
        try #require(try waitUntil(30) { try home.alarm("known@example") != nil })
        let plain = try home.chime(["at", Self.local(Date().addingTimeInterval(15)), "--here", "--id", "plain", "Plain"])
        #expect(plain.status == 0, "\(plain.stderr)")

        // The child killed (by its PID): started again, and following again.
        let child = try #require(Self.children(of: home.daemon!.pid, named: "chime-eds").first, "no chime-eds child")
        kill(child, SIGKILL)
        #expect(try waitUntil(30) { try home.status().contains("killed by signal 9") || Self.children(of: home.daemon!.pid, named: "chime-eds").first != child },
                "\(home.said)")
        #expect(try waitUntil(60) { try home.status().contains("followed live") && Self.children(of: home.daemon!.pid, named: "chime-eds").first != child },
                "it never came back: \(home.said)")

        // EDS killed (as a crash): said, and what was known keeps ringing; the child comes back once
        // EDS is activated again.
        home.eds.killEDS()
        #expect(try waitUntil(30) { try home.status().contains("Evolution Data Server went away") || home.status().contains("cannot be reached") },
                "\(home.said)")
        #expect(waitUntil(60) { home.recorder.calls.contains { $0.summary.contains("Plain") } }, "the plain alarm did not ring")
        #expect(waitUntil(60) { home.recorder.calls.contains { $0.summary.contains("Known") } }, "the known reminder did not ring")
        #expect(try waitUntil(60) { try home.status().contains("followed live") }, "it never followed EDS again: \(home.said)")
        #expect(try home.alarm("known@example") != nil || home.recorder.calls.contains { $0.summary.contains("Known") })
    }

    /// `eds = "*"`: every calendar, those added in GNOME Calendar (or by an account) later too;
    /// `chime at --calendar` names any of them; a calendar removed takes its alarms with it.
    @Test func everyCalendarIsFollowedAsTheyComeAndGo() throws {
        let home = try Home(calendar: "eds = \"*\"\nwrite = true\n")
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("every EDS calendar: followed live") }, "\(home.said)")
        let work = try home.eds.python(["newcal", "Work"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.add(home, "review@example", "Review", start: Date().addingTimeInterval(86_400), in: "Work")
        #expect(try waitUntil(30) { try home.alarm("review@example") != nil }, "the new calendar's event never rang here: \(home.said)")
        let calendars = try UserNotificationCenter(connection: try home.eds.bus.connect()).perform(Scheduler1.listCalendars)
        // (The contacts' birthdays are followed, never written to: EDS keeps them read-only.)
        #expect(Set(calendars.map(\.name)) == ["Birthdays & Anniversaries", "Personal", "Work"], "\(calendars)")
        #expect(calendars.allSatisfy { $0.syncs && $0.write == ($0.name != "Birthdays & Anniversaries") }, "\(calendars)")
        let set = try home.chime(["at", "06:30", "--days", "sat", "--calendar", "Work", "--id", "gym", "Gym"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try waitUntil(30) { try home.listed("Work").contains("gym@chime") }, "EDS's Work never got the event")
        #expect(try !home.listed("Personal").contains("gym@chime"))
        // Removed in GNOME Calendar: its alarms go.
        try home.eds.python(["dropcal", work])
        #expect(try waitUntil(30) { try home.alarm("review@example") == nil && home.pending()["gym"] == nil }, "\((try? home.pending().keys.sorted()) ?? [])")
    }

    /// A CalDAV calendar through EDS's own CalDAV backend (Debian's radicale on loopback, which lets
    /// anyone in): `chime at --calendar` reaches the server, and so does the Stop; an event another
    /// client puts on the server rings here once EDS has fetched it.
    @Test func aCalDAVCalendarThroughEDSCarriesAlarmsAndAnswersToTheServer() throws {
        let work = try makeTemporaryDirectory("chime-eds-caldav")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store")
        try "[anyone]\nuser: .*\ncollection: .*\npermissions: RrWw\n".write(to: work.appendingPathComponent("rights"), atomically: true, encoding: .utf8)
        let port = try CalendarSyncTests.freePort(in: work)
        let radicale = try ChildProcess("/usr/bin/radicale", [
            "--storage-filesystem-folder", store.path, "--server-hosts", "127.0.0.1:\(port)", "--auth-type", "none",
            "--rights-type", "from_file", "--rights-file", work.appendingPathComponent("rights").path, "--logging-level", "warning",
        ], logDirectory: work)
        defer { radicale.stop() }
        let script = work.appendingPathComponent("caldav.py").path
        try CalendarSyncTests.caldav.write(toFile: script, atomically: true, encoding: .utf8)
        func http(_ method: String, _ url: String, _ body: String? = nil) throws -> String {
            var arguments = [script, method, url]
            if let body {
                let file = work.appendingPathComponent("body.ics")
                try body.write(to: file, atomically: true, encoding: .utf8)
                arguments.append(file.path)
            }
            let result = try runProgram("/usr/bin/python3", arguments.map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment)
            return result.status == 0 ? result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "failed: \(result.stderr)"
        }
        let root = "http://127.0.0.1:\(port)/"
        try #require(waitUntil { (try? http("PROPFIND", root)).map { !$0.hasPrefix("failed") } ?? false })
        try #require(try http("MKCOL", root + "anyone/") == "201")
        try #require(try http("MKCALENDAR", root + "anyone/work/") == "201")
        /// What the server holds: each event file's text.
        func onServer() -> [String] {
            let folder = store.appendingPathComponent("collection-root/anyone/work")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.filter { $0.hasSuffix(".ics") }.compactMap { try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
        }

        let home = try Home(calendar: "eds = \"Work\"\nwrite = true\n") { eds in
            try eds.python(["newcaldav", "Work", root + "anyone/work/"])
        }
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("EDS calendar \"Work\": followed live") }, "\(home.said)")
        let due = Date().addingTimeInterval(10)
        let set = try home.chime(["at", Self.local(due), "--calendar", "Work", "--id", "call", "--sound", "bell", "--ring", "5m", "Call"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(waitUntil(30) { onServer().contains { $0.contains("UID:call@chime") } }, "the server never got the event: \(onServer())")
        #expect(try waitUntil(60) { try home.chime(["list", "--ringing"]).stdout.contains("call") }, "it did not ring: \(home.daemon?.log ?? "")")
        #expect(try home.chime(["stop", "call"]).status == 0)
        #expect(waitUntil(30) { onServer().contains { $0.contains("UID:call@chime") && $0.contains("ACKNOWLEDGED") } },
                "the server never got the answer: \(onServer())")

        // Put on the server by another client (another machine, the web calendar): fetched by EDS, it is chime's.
        let other = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//other//EN", "BEGIN:VEVENT", "UID:web@example", "SUMMARY:From the web",
                     "DTSTART:\(Self.utc(Date().addingTimeInterval(86_400)))", "DURATION:PT30M", "BEGIN:VALARM", "ACTION:DISPLAY",
                     "DESCRIPTION:From the web", "TRIGGER:-PT10M", "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""].joined(separator: "\r\n")
        #expect(try http("PUT", root + "anyone/work/web.ics", other) == "201")
        try home.eds.python(["refresh", "Work"])
        #expect(try waitUntil(60) { try home.alarm("web@example") != nil }, "the server's event never rang here: \(home.said)")
    }

    /// An answer finds its event's file at once whatever its UID (Exchange's run to 180 characters):
    /// chime-eds and the daemon name the file alike, and the Stop reaches EDS.
    @Test func anAnswerReachesAnEventWithALongUID() throws {
        let home = try Home()
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("followed live") }, "\(home.said)")
        let uid = "040000008200E00074C5B7101A82E008" + String(repeating: "0A1B2C3D", count: 18) + "@example"
        let ringsAt = Date().addingTimeInterval(15)
        try Self.add(home, uid, "Board meeting", start: ringsAt.addingTimeInterval(60))
        // (Its alarm's id is the UID's first 80 letters and digits and a hash of the whole.)
        try #require(try waitUntil(30) { try home.pending().keys.contains { $0.hasPrefix("ics-040000008200E") } }, "chime never learned of the event")
        let id = try #require(try home.pending().keys.first { $0.hasPrefix("ics-040000008200E") })
        #expect(try waitUntil(60) { try home.chime(["list", "--ringing"]).stdout.contains(id) || home.recorder.calls.contains { $0.summary.contains("Board meeting") } },
                "it did not ring")
        #expect(try home.chime(["stop", id]).status == 0)
        #expect(try waitUntil(30) { try home.listed().split(separator: "\n").contains { $0.hasPrefix(uid) && $0.contains("ACKNOWLEDGED:") } },
                "EDS never got the answer: \(home.daemon?.log ?? "")")
    }

    /// A chime-eds that crashes before it has read its calendar is started again after a pause, and
    /// after three crashes left stopped (never a restart loop) until the person has the file read again.
    @Test func aChildThatKeepsCrashingIsLeftStoppedUntilTheFileIsReadAgain() throws {
        let crashing = try makeTemporaryDirectory("chime-eds-crash").appendingPathComponent("chime-eds")
        try installExecutable("#!/bin/sh\nkill -SEGV $$\n", at: crashing.path)
        let home = try Home(edsProgram: crashing.path)
        defer { home.stop() }
        func quarantines() -> Int { (home.daemon?.log ?? "").components(separatedBy: "so it is left stopped until `chime config reload`").count - 1 }
        #expect(try waitUntil(60) { try home.status().contains("left stopped until `chime config reload`") }, "\(home.said)")
        #expect(quarantines() == 1, "\(home.daemon?.log ?? "")")
        #expect(try home.chime(["config", "reload"]).status == 0)
        #expect(waitUntil(60) { quarantines() == 2 }, "it was not started again: \(home.daemon?.log ?? "")")
    }

    /// Rings once: GNOME's own reminders are left out of the calendar when the person says so
    /// (GNOME's own switch, the calendar's "include in reminders"), and a Stop in chime takes the
    /// reminder off GNOME's reminder window's list (EReminderWatcher's past reminders).
    @Test func GNOMEsRemindersLeaveTheRingingToChimeAndHearItsAnswers() throws {
        let home = try Home()
        defer { home.stop() }
        try #require(try waitUntil(30) { try home.status().contains("followed live") }, "\(home.said)")
        #expect(try home.status().contains("GNOME's own reminders ring it too: `chime config gnome-reminders off`"), "\(home.said)")
        let shown = try home.chime(["config", "gnome-reminders"])
        #expect(shown.status == 0 && shown.stdout.contains("Personal: GNOME's reminders ring it too"), "\(shown.stdout)\(shown.stderr)")
        let off = try home.chime(["config", "gnome-reminders", "off"])
        #expect(off.status == 0 && off.stdout.contains("Personal: rings through chime alone"), "\(off.stdout)\(off.stderr)")
        #expect(try home.eds.python(["included", "Personal"]).stdout == "off\n")
        #expect(try waitUntil(30) { try !home.status().contains("GNOME's own reminders") }, "\(home.said)")

        // A reminder GNOME's window holds (as if it had shown it), answered in chime: it leaves the list.
        let due = Date().addingTimeInterval(10)
        let set = try home.chime(["at", Self.local(due), "--calendar", "Personal", "--id", "call", "--sound", "bell", "--ring", "5m", "Call"])
        #expect(set.status == 0, "\(set.stderr)")
        try #require(try waitUntil(30) { try home.listed().contains("call@chime") }, "EDS never got the event")
        try home.eds.python(["remind", "Personal", "call@chime", String(Int(due.timeIntervalSince1970))])
        #expect(try home.eds.python(["past", "Personal"]).stdout.contains("call@chime"))
        #expect(try waitUntil(60) { try home.chime(["list", "--ringing"]).stdout.contains("call") }, "it did not ring")
        #expect(try home.chime(["stop", "call"]).status == 0)
        #expect(try waitUntil(30) { try !home.eds.python(["past", "Personal"]).stdout.contains("call@chime") },
                "the answered reminder stayed on GNOME's list: \(home.daemon?.log ?? "")")

        // On again, as it was.
        #expect(try home.chime(["config", "gnome-reminders", "on"]).status == 0)
        #expect(try home.eds.python(["included", "Personal"]).stdout == "on\n")
        #expect(try waitUntil(30) { try home.status().contains("GNOME's own reminders ring it too") }, "\(home.said)")
    }

    /// The PIDs of `parent`'s children whose command is `name`.
    static func children(of parent: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            let comm = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            return fields.count > 1 && Int32(fields[1]) == parent && comm == name
        }
    }
}
