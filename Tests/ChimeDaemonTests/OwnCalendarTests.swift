import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// The person's own calendar on one machine (no sync): what chime writes into its events besides the
/// alarm itself. `[defaults] calendar` puts `chime at` there (`--here` keeps one here); switching an
/// alarm off and on, skipping an occurrence and bringing it back change its event (X-CHIME-DISABLED,
/// EXDATE) and what is pending follows; what the calendar cannot carry is kept here and said; an
/// answer written into the event that a sync then takes away is written again.
@Suite struct OwnCalendarTests {
    final class Home {
        let bus: PrivateBus
        let recorder: RecordingServer
        let vdir: URL
        let alarmFile: URL
        var daemon: DaemonProcess?

        init(defaults: String = "[defaults]\ncalendar = \"personal\"\n") throws {
            bus = try PrivateBus()
            recorder = try RecordingServer(address: bus.address)
            vdir = bus.directory.appendingPathComponent("calendars/personal")
            try FileManager.default.createDirectory(at: vdir, withIntermediateDirectories: true)
            let config = bus.directory.appendingPathComponent(".config/chime")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            alarmFile = config.appendingPathComponent("alarms.toml")
            try (defaults + "[[calendar]]\npath = \"\(vdir.path)\"\nlabel = \"personal\"\nwrite = true\n")
                .write(to: alarmFile, atomically: true, encoding: .utf8)
            // A stand-in sound player (each play a third of a second), so alarms ring here.
            let players = bus.directory.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: players, withIntermediateDirectories: true)
            try installExecutable("#!/bin/sh\nsleep 0.3\n", at: players.appendingPathComponent("canberra-gtk-play").path)
            daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path,
                                       environment: ["PATH": players.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        }

        func chime(_ arguments: [String]) throws -> CommandResult { try runChime(arguments, environment: bus.environment()) }

        /// The alarm file with these `[[alarm]]`s after its calendar, read again.
        func fileAlarms(_ alarms: String) throws {
            try ("[[calendar]]\npath = \"\(vdir.path)\"\nlabel = \"personal\"\nwrite = true\n" + alarms)
                .write(to: alarmFile, atomically: true, encoding: .utf8)
            let reloaded = try chime(["config", "reload"])
            #expect(reloaded.status == 0, "\(reloaded.stderr)")
        }

        func pending() throws -> [String: [String: Any]] {
            let items = try JSONSerialization.jsonObject(with: Data(try chime(["list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0) })
        }

        /// The event file of an alarm chime put there (`ID@chime.ics`).
        func event(_ id: String) -> String? { try? String(contentsOf: vdir.appendingPathComponent("\(id)@chime.ics"), encoding: .utf8) }

        func stop() {
            daemon?.stop()
            recorder.stop()
            bus.stop()
        }
    }

    @Test func theDefaultCalendarTakesChimeAtAndHereKeepsOneHere() throws {
        let home = try Home()
        defer { home.stop() }
        let set = try home.chime(["at", "07:00", "--days", "mon-fri", "--id", "wake", "Wake up"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(home.event("wake")?.contains("X-CHIME-ID:wake") == true)
        #expect(try home.pending()["wake"]?["origin"] as? String == "file")
        let here = try home.chime(["at", "07:00", "--days", "sat", "--here", "--id", "weekend", "Weekend"])
        #expect(here.status == 0, "\(here.stderr)")
        #expect(home.event("weekend") == nil)
        #expect(try home.pending()["weekend"]?["origin"] as? String == "command-line")
        // chime in is never the calendar's: a timer is this machine's.
        #expect(try home.chime(["in", "1h", "--id", "tea", "Tea"]).status == 0)
        #expect(home.event("tea") == nil)
        // The app's Lives On reads the calendars: this one is chime's to write, and the default.
        let calendars = try UserNotificationCenter(connection: try home.bus.connect()).perform(Scheduler1.listCalendars)
        #expect(calendars.count == 1 && calendars[0].name == "personal" && calendars[0].write && calendars[0].isDefault && calendars[0].failing.isEmpty)
    }

    @Test func aDefaultCalendarThatIsNotOneChimeWritesToIsAnError() throws {
        let home = try Home(defaults: "[defaults]\ncalendar = \"work\"\n")
        defer { home.stop() }
        let checked = try home.chime(["config", "check", home.alarmFile.path])
        #expect(checked.status != 0)
        #expect(checked.stderr.contains("'calendar' must name a [[calendar]] with write = true; the file's are 'personal', found \"work\""), "\(checked.stderr)")
    }

    @Test func switchingOffAndSkippingChangeTheEvent() throws {
        let home = try Home()
        defer { home.stop() }
        #expect(try home.chime(["at", "07:00", "--id", "wake", "Wake up"]).status == 0)
        let first = try #require(try home.pending()["wake"]?["nextFire"] as? String)

        // Off: marked in the event (for every machine), and no longer pending; on again: as it was.
        let off = try home.chime(["disable", "wake"])
        #expect(off.status == 0, "\(off.stderr)")
        #expect(home.event("wake")?.contains("X-CHIME-DISABLED:TRUE") == true)
        #expect(try home.pending()["wake"] == nil)
        let on = try home.chime(["enable", "wake"])
        #expect(on.status == 0, "\(on.stderr)")
        #expect(home.event("wake")?.contains("X-CHIME-DISABLED") == false)
        #expect(try home.pending()["wake"]?["nextFire"] as? String == first)

        // Skipped: the occurrence is excluded in the event (an EXDATE), the next one is a day later;
        // undone: the exclusion goes and the first time is back.
        let skipped = try home.chime(["skip", "wake"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(home.event("wake")?.contains("EXDATE") == true, "\(home.event("wake") ?? "")")
        let after = try #require(try home.pending()["wake"]?["nextFire"] as? String)
        let format = ISO8601DateFormatter()
        let gap = try #require(format.date(from: after)).timeIntervalSince(try #require(format.date(from: first)))
        #expect(gap >= 23 * 3600 && gap <= 25 * 3600, "\(first) → \(after)")
        let undone = try home.chime(["skip", "--undo", "wake"])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(home.event("wake")?.contains("EXDATE") == false)
        #expect(try home.pending()["wake"]?["nextFire"] as? String == first)
        // Nothing skipped ahead: undo says so.
        #expect(try home.chime(["skip", "--undo", "wake"]).status != 0)
    }

    @Test func whatTheCalendarCannotCarryIsKeptHereAndSaid() throws {
        let home = try Home()
        defer { home.stop() }
        let set = try home.chime(["at", "07:00", "--id", "news", "--body-command", "date", "--grace", "5m", "News"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(home.event("news")?.contains("date") == false, "the body command went into the calendar")
        let shown = try home.chime(["show", "--json", "news"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        #expect(object["keptHere"] as? [String] == ["body command", "grace"], "\(shown.stdout)")
        #expect(object["calendar"] as? String == "personal")
        #expect(object["calendarEvent"] as? String == "news@chime")
        #expect((object["bodyCommand"] as? [String]) == ["date"], "the body command was lost here")
        let text = try home.chime(["show", "news"]).stdout
        #expect(text.contains("body command, grace (its calendar cannot carry them: on this machine only)"), "\(text)")
    }

    /// A sync that brings back a copy of the event without the answer made here (a conflict the
    /// server's side won) does not undo it: the daemon writes its answer again.
    @Test func anAnswerASyncTookAwayIsWrittenAgain() throws {
        let home = try Home()
        defer { home.stop() }
        let due = Date().addingTimeInterval(8)  // (ahead enough for a busy machine to set it in time)
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd HH:mm:ss"
        format.locale = Locale(identifier: "en_US_POSIX")
        #expect(try home.chime(["at", format.string(from: due), "--id", "call", "--sound", "bell", "--ring", "5m", "Call"]).status == 0)
        let before = try #require(home.event("call"))
        #expect(try waitUntil(30) { try home.chime(["list", "--ringing"]).stdout.contains("call") }, "it did not ring")
        #expect(try home.chime(["stop", "call"]).status == 0)
        #expect(waitUntil { home.event("call")?.contains("ACKNOWLEDGED:") == true })
        // The older copy, as a sync would write it (a new file renamed into place).
        let path = home.vdir.appendingPathComponent("call@chime.ics")
        try before.write(to: path, atomically: true, encoding: .utf8)
        #expect(waitUntil(30) { home.event("call")?.contains("ACKNOWLEDGED:") == true }, "the answer stayed lost: \(home.daemon?.log ?? "")")
        #expect(home.event("call")?.contains("X-MOZ-LASTACK:") == true)
    }

    /// An `[[alarm]]` of the file with `calendar`: put into the calendar by the daemon and rung from
    /// there; written again when changed in the file, taken out when removed from it.
    @Test func anAlarmOfTheFileLivesInItsCalendar() throws {
        let home = try Home(defaults: "")
        defer { home.stop() }
        try home.fileAlarms("[[alarm]]\nid = \"pills\"\nwhen = \"08:00\"\ntitle = \"Pills\"\ncalendar = \"personal\"\n")
        #expect(waitUntil(30) { home.event("pills")?.contains("X-CHIME-ID:pills") == true }, "it was not put into the calendar")
        #expect(try waitUntil(30) { try home.pending()["pills"] != nil })
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try home.chime(["show", "--json", "pills"]).stdout.utf8)) as? [String: Any])
        #expect(shown["calendar"] as? String == "personal" && shown["calendarEvent"] as? String == "pills@chime", "\(shown)")
        // Changed in the file: the event is written again.
        try home.fileAlarms("[[alarm]]\nid = \"pills\"\nwhen = \"08:00\"\ntitle = \"Vitamins\"\ncalendar = \"personal\"\n")
        #expect(waitUntil(30) { home.event("pills")?.contains("SUMMARY:Vitamins") == true }, "the change did not reach the calendar")
        #expect(try waitUntil(30) { try home.pending()["pills"]?["title"] as? String == "Vitamins" })
        // Switched off in the file: switched off in the calendar.
        try home.fileAlarms("[[alarm]]\nid = \"pills\"\nwhen = \"08:00\"\ntitle = \"Vitamins\"\nenabled = false\ncalendar = \"personal\"\n")
        #expect(waitUntil(30) { home.event("pills")?.contains("X-CHIME-DISABLED:TRUE") == true })
        #expect(try waitUntil(30) { try home.pending()["pills"] == nil })
        // Removed from the file: out of the calendar too.
        try home.fileAlarms("")
        #expect(waitUntil(30) { home.event("pills") == nil }, "it stayed in the calendar")
        // One naming a calendar chime does not write to is an error at its place.
        try "[[alarm]]\nid = \"x\"\nwhen = \"08:00\"\ntitle = \"X\"\ncalendar = \"work\"\n".write(to: home.alarmFile, atomically: true, encoding: .utf8)
        let checked = try home.chime(["config", "check", home.alarmFile.path])
        #expect(checked.status != 0 && (checked.stdout + checked.stderr).contains("'calendar' must name a [[calendar]] with write = true; the file has none, found \"work\""),
                "\(checked.stderr)")
    }
}
