import ChimeCalendars
import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// One alarm, two machines, through the person's own CalDAV server: Debian's radicale on loopback,
/// two homes (each its own bus, daemon, notification server, vdir and vdirsyncer configuration for
/// the same collection). An alarm set on A with `--calendar` is written into A's vdir, synced to the
/// server by A's daemon running vdirsyncer, synced down by B's, and rings on B; cancelled on A, it
/// goes from B. The event on the server reads in python's icalendar.
@Suite struct OneAlarmEveryMachineTests {
    /// One machine: its bus, recording notification server, vdir, vdirsyncer configuration, daemon.
    final class Home {
        let name: String
        let bus: PrivateBus
        let recorder: RecordingServer
        let vdir: String
        let config: String
        var daemon: DaemonProcess?

        init(_ name: String, url: String, in work: URL) throws {
            self.name = name
            bus = try PrivateBus()
            recorder = try RecordingServer(address: bus.address)
            let home = work.appendingPathComponent(name)
            vdir = home.appendingPathComponent("calendars/shared").path
            try FileManager.default.createDirectory(atPath: vdir, withIntermediateDirectories: true)
            config = home.appendingPathComponent("vdirsyncer.conf").path
            try """
                [general]
                status_path = "\(home.path)/status/"
                [pair shared]
                a = "shared_local"
                b = "shared_remote"
                collections = null
                conflict_resolution = "b wins"
                [storage shared_local]
                type = "filesystem"
                path = "\(vdir)/"
                fileext = ".ics"
                [storage shared_remote]
                type = "caldav"
                url = "\(url)"
                username = "alice"
                password = "x"
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let discovered = try runProgram("/usr/bin/vdirsyncer", ["-c", config, "discover"].map { Array($0.utf8) },
                                            environment: ProcessInfo.processInfo.environment, timeout: 60)
            guard discovered.status == 0 else { throw HarnessError("vdirsyncer discover (\(name)): \(discovered.stderr)") }
            // The alarm file: the shared calendar is this person's own, chime writes to it and syncs it.
            let chimeConfig = bus.directory.appendingPathComponent(".config/chime")
            try FileManager.default.createDirectory(at: chimeConfig, withIntermediateDirectories: true)
            try """
                [[calendar]]
                path = "\(vdir)"
                label = "shared"
                write = true
                sync = ["/usr/bin/vdirsyncer", "-c", "\(config)", "sync"]
                sync-interval = "10s"
                """.write(to: chimeConfig.appendingPathComponent("alarms.toml"), atomically: true, encoding: .utf8)
            // A stand-in sound player (each play a third of a second), so alarms ring here.
            let players = home.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: players, withIntermediateDirectories: true)
            try installExecutable("#!/bin/sh\nsleep 0.3\n", at: players.appendingPathComponent("canberra-gtk-play").path)
            daemonEnvironment = ["PATH": players.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
            state = home.appendingPathComponent("state").path
            try start()
        }

        let daemonEnvironment: [String: String]
        let state: String

        /// Starts its daemon (again).
        func start() throws {
            daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: daemonEnvironment)
        }

        /// What rings here now.
        func ringing() throws -> [String] {
            let listed = try chime(["list", "--ringing", "--json"])
            let items = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
            return items.compactMap { $0["id"] as? String }
        }

        func chime(_ arguments: [String]) throws -> CommandResult { try runChime(arguments, environment: bus.environment()) }

        func pending() throws -> [String: [String: Any]] {
            let listed = try chime(["list", "--json"])
            let items = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0) })
        }

        func stop() {
            daemon?.stop()
            recorder.stop()
            bus.stop()
        }
    }

    /// A CalDAV server (radicale, on loopback) with an empty calendar, and two homes syncing it.
    final class Network {
        let work: URL
        let radicale: ChildProcess
        let url: String
        let script: String
        var homes: [Home] = []

        init() throws {
            work = FileManager.default.temporaryDirectory.appendingPathComponent("caldav-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work.appendingPathComponent("store"), withIntermediateDirectories: true)
            let port = try CalendarSyncTests.freePort(in: work)
            radicale = try ChildProcess("/usr/bin/radicale", [
                "--storage-filesystem-folder", work.appendingPathComponent("store").path, "--server-hosts", "127.0.0.1:\(port)",
                "--auth-type", "none", "--rights-type", "authenticated", "--logging-level", "warning",
            ], logDirectory: work)
            url = "http://127.0.0.1:\(port)/alice/shared/"
            script = work.appendingPathComponent("caldav.py").path
            try CalendarSyncTests.caldav.write(toFile: script, atomically: true, encoding: .utf8)
            let root = "http://127.0.0.1:\(port)/"
            try #require(waitUntil { (try? self.http("PROPFIND", root)).map { !$0.hasPrefix("failed") } ?? false })
            try #require(try http("MKCALENDAR", url) == "201")
            homes = [try Home("a", url: url, in: work), try Home("b", url: url, in: work)]
        }

        func http(_ method: String, _ url: String) throws -> String {
            let result = try runProgram("/usr/bin/python3", [script, method, url].map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment)
            return result.status == 0 ? result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "failed: \(result.stderr)"
        }

        /// The events on the server, as python's icalendar reads them: what `body` prints of each.
        func serverEvents(_ body: String) throws -> [String] {
            let listing = try CalendarSyncTests.python("""
                import sys, urllib.request, base64
                from icalendar import Calendar, vDatetime
                def utc(p):  # X- properties and ACKNOWLEDGED read as text in icalendar 4
                    return p.dt if hasattr(p, "dt") else vDatetime.from_ical(str(p))
                request = urllib.request.Request(sys.argv[1])  # the collection, every event in it
                request.add_header("Authorization", "Basic " + base64.b64encode(b"alice:x").decode())
                calendar = Calendar.from_ical(urllib.request.urlopen(request, timeout=10).read())
                for event in calendar.walk("VEVENT"):
                \(body.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
                """, [url], in: work)
            return listing.split(separator: "\n").map(String.init).sorted()
        }

        /// Every sync of every home went well: `chime status` says nothing of a failing one.
        func expectEverySyncWentWell() throws {
            for home in homes {
                let status = try home.chime(["status"]).stdout
                #expect(!status.contains("sync failing"), "\(home.name): \(status)")
            }
        }

        func stop() {
            for home in homes { home.stop() }
            radicale.stop()
            try? FileManager.default.removeItem(at: work)
        }
    }

    @Test func anAlarmSetOnOneMachineRingsOnTheOther() throws {
        let network = try Network()
        defer { network.stop() }
        let (a, b) = (network.homes[0], network.homes[1])

        // An alarm already in the calendar (vdirsyncer will not sync a calendar emptied on one side).
        let other = try a.chime(["at", "06:30", "--days", "sat", "--calendar", "shared", "--id", "gym", "Gym"])
        try #require(other.status == 0, "\(other.stderr)")
        // Set on A, every 20 seconds: whenever B learns of it, it rings there within 20 s more.
        let set = Date()
        let added = try a.chime(["at", "*:*:0/20", "--calendar", "shared", "--id", "standup", "--label", "team", "Standup"])
        try #require(added.status == 0, "\(added.stderr)")
        #expect(try a.pending()["standup"]?["origin"] as? String == "file")
        // B knows it once A's sync put it on the server and B's brought it down (every 10 s here).
        #expect(try waitUntil(30) { try b.pending()["standup"] != nil }, "B never learned of the alarm set on A")
        let known = Date().timeIntervalSince(set)
        print("measured: set on A → known on B in \(String(format: "%.1f", known)) s")
        let onB = try #require(try b.pending()["standup"])
        #expect(onB["title"] as? String == "Standup")
        #expect(onB["label"] as? String == "team")
        #expect(onB["rule"] as? String == "*-*-* *:*:00/20", "\(onB)")
        // And it rings on B.
        #expect(waitUntil(40) { b.recorder.calls.contains { $0.summary == "Standup" } }, "it did not ring on B")

        // The event on the server (the collection as radicale gives it) is an iCalendar event python's
        // icalendar reads, with its alarm.
        let listing = try network.serverEvents(#"print(event["SUMMARY"], event["X-CHIME-ID"], len(event.walk("VALARM")))"#)
        #expect(listing == ["Gym gym 1", "Standup standup 1"], "\(listing)")

        // Cancelled on A: its event goes, from the server and then from B.
        let cancelled = try a.chime(["cancel", "standup"])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(try a.pending()["standup"] == nil)
        #expect(try waitUntil(30) { try b.pending()["standup"] == nil }, "B kept the alarm cancelled on A")
        #expect(try b.pending()["gym"] != nil)
        try network.expectEverySyncWentWell()
    }

    /// `yyyy-MM-dd HH:mm:ss` on this machine's clock, `seconds` from now: a one-off for `chime at`.
    static func moment(in seconds: Double) -> String {
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd HH:mm:ss"
        format.locale = Locale(identifier: "en_US_POSIX")
        return format.string(from: Date().addingTimeInterval(seconds))
    }

    /// Answers travel (RFC 9074, Thunderbird's properties): Stop on A ends B's ring of the same
    /// occurrence, and the answer is on the server, as python's icalendar reads it. (How fast is
    /// `make bench`'s: the issue's 10 s is measured there, not raced here. Snooze is the next test's,
    /// on a network of its own: each waits on two machines' syncs and a ring, a minute of real time,
    /// and the two run at once.)
    @Test func aStopOnOneMachineIsHeardOnTheOther() throws {
        let network = try Network()
        defer { network.stop() }
        let (a, b) = (network.homes[0], network.homes[1])
        #expect(try a.chime(["at", "06:30", "--days", "sat", "--calendar", "shared", "--id", "gym", "Gym"]).status == 0)

        // A one-off 40 s ahead, set on A: B learns of it, and both ring it.
        let standup = try a.chime(["at", Self.moment(in: 40), "--calendar", "shared", "--id", "standup", "--sound", "bell", "--ring", "5m", "Standup"])
        try #require(standup.status == 0, "\(standup.stderr)")
        try #require(try waitUntil(60) { try b.pending()["standup"] != nil }, "B never learned of the alarm set on A")
        try #require(try waitUntil(90) { try a.ringing().contains("standup") && b.ringing().contains("standup") }, "it did not ring on both")
        let shownOnB = try #require(b.recorder.calls.last { $0.summary == "Standup" }?.assignedID)

        // Stop on A: B's ring ends (its popup closed by B's daemon), though it could ring 5 minutes.
        let stoppedAt = Date()
        let stopped = try a.chime(["stop", "standup"])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(try waitUntil(60) { try !b.ringing().contains("standup") }, "B rang on after the Stop on A")
        print("measured: Stop on A → silence on B in \(String(format: "%.1f", Date().timeIntervalSince(stoppedAt))) s")
        #expect(waitUntil { b.recorder.closedIDs.contains(shownOnB) }, "B's popup stayed up")
        // Answered: a one-off is over on both.
        #expect(try waitUntil(30) { try a.pending()["standup"] == nil && b.pending()["standup"] == nil })
        // On the server: ACKNOWLEDGED on its alarms, Thunderbird's X-MOZ-LASTACK beside it, both
        // at or after the time it rang.
        let acknowledged = try network.serverEvents("""
            if event["X-CHIME-ID"] == "standup":
                alarms = [a for a in event.walk("VALARM")]
                start = event["DTSTART"].dt
                start = start if start.tzinfo else start.astimezone()  # floating: this machine's wall clock
                print(utc(event["X-MOZ-LASTACK"]) >= start, all(utc(a["ACKNOWLEDGED"]) == utc(event["X-MOZ-LASTACK"]) for a in alarms), len(alarms))
            """)
        #expect(acknowledged == ["True True 2"], "\(acknowledged)")
        // vdirsyncer carried chime's event as chime wrote it: B's copy has A's content lines, every one
        // (radicale stores an event as vobject writes it, its properties sorted; the lines are the same).
        func lines(_ home: Home, holding id: String) -> [String]? {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: home.vdir)) ?? []
            guard let text = names.lazy.compactMap({ FileManager.default.contents(atPath: home.vdir + "/" + $0) })
                .map({ String(decoding: $0, as: UTF8.self) }).first(where: { $0.contains("X-CHIME-ID:\(id)") })
            else { return nil }
            return text.replacingOccurrences(of: "\r\n ", with: "").replacingOccurrences(of: "\n ", with: "")
                .split(whereSeparator: \.isNewline).map(String.init).sorted()
        }
        #expect(waitUntil(30) { lines(a, holding: "standup").map { $0 == lines(b, holding: "standup") } ?? false },
                "B's copy of the answered event is not A's:\n\(lines(a, holding: "standup") ?? [])\n---\n\(lines(b, holding: "standup") ?? [])")
        try network.expectEverySyncWentWell()
    }

    /// Snooze on B stops A's ring and moves A's alarm to B's snooze time; the snooze is on the server,
    /// as python's icalendar reads it.
    @Test func aSnoozeOnOneMachineIsHeardOnTheOther() throws {
        let network = try Network()
        defer { network.stop() }
        let (a, b) = (network.homes[0], network.homes[1])
        #expect(try a.chime(["at", "06:30", "--days", "sat", "--calendar", "shared", "--id", "gym", "Gym"]).status == 0)

        // A one-off 40 s ahead, set on A: B learns of it, both ring it; Snooze on B: A's ring stops,
        // and A rings again at B's snooze time.
        let tea = try a.chime(["at", Self.moment(in: 40), "--calendar", "shared", "--id", "tea", "--sound", "bell", "--ring", "5m", "Tea"])
        try #require(tea.status == 0, "\(tea.stderr)")
        try #require(try waitUntil(60) { try b.pending()["tea"] != nil }, "B never learned of the alarm set on A")
        try #require(try waitUntil(90) { try a.ringing().contains("tea") && b.ringing().contains("tea") }, "it did not ring on both")
        let snoozed = try b.chime(["snooze", "tea", "--for", "3m"])
        #expect(snoozed.status == 0, "\(snoozed.stderr)")
        #expect(try waitUntil(60) { try !a.ringing().contains("tea") }, "A rang on after the Snooze on B")
        func next(_ home: Home) throws -> Date? {
            (try home.pending()["tea"]?["nextFire"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
        }
        let onB = try #require(try next(b))
        let moved = try waitUntil(30) { try next(a).map { abs($0.timeIntervalSince(onB)) <= 1 } ?? false }
        let onA = try next(a)
        #expect(moved, "A's alarm is not at B's snooze time \(onB): \(String(describing: onA))")
        let snooze = try network.serverEvents("""
            if event["X-CHIME-ID"] == "tea":
                snoozes = [a for a in event.walk("VALARM") if a.get("RELATED-TO") is not None and a["RELATED-TO"].params.get("RELTYPE") == "SNOOZE"]
                print(len(snoozes), snoozes[0]["TRIGGER"].dt == utc(event["X-MOZ-SNOOZE-TIME"]) if snoozes else None)
            """)
        #expect(snooze == ["1 True"], "\(snooze)")
        try network.expectEverySyncWentWell()
    }

    /// A machine that was off hears the answer at its start: an occurrence stopped on A while B's
    /// daemon was not running does not ring late on B (B's sync runs before its late alarms are rung).
    @Test func anOccurrenceAnsweredWhileAMachineWasOffDoesNotRingLateThere() throws {
        let network = try Network()
        defer { network.stop() }
        let (a, b) = (network.homes[0], network.homes[1])
        #expect(try a.chime(["at", "06:30", "--days", "sat", "--calendar", "shared", "--id", "gym", "Gym"]).status == 0)
        let call = try a.chime(["at", Self.moment(in: 40), "--calendar", "shared", "--id", "call", "--sound", "bell", "--ring", "5m", "Call"])
        try #require(call.status == 0, "\(call.stderr)")
        try #require(try waitUntil(60) { try b.pending()["call"] != nil }, "B never learned of the alarm set on A")
        b.daemon?.stop()
        b.daemon = nil
        try #require(try waitUntil(90) { try a.ringing().contains("call") }, "it did not ring on A")
        #expect(try a.chime(["stop", "call"]).status == 0)
        // The answer is on the server before B starts again.
        #expect(try waitUntil(60) {
            try network.serverEvents(#"print(event["X-CHIME-ID"], "X-MOZ-LASTACK" in event)"#).contains("call True")
        })
        try b.start()
        // B reads its calendar, syncs, reads what the sync brought: the alarm is over, never rung.
        #expect(try waitUntil(60) { try b.pending()["call"] == nil }, "B kept the alarm answered on A")
        #expect(!b.recorder.calls.contains { $0.summary == "Call" }, "B rang an occurrence answered on A while it was off")
        let missed = try b.chime(["list", "--missed"]).stdout
        #expect(!missed.contains("call"), "\(missed)")
    }

    /// Answers as other programs write them, made by python's icalendar (Apple's form: ACKNOWLEDGED
    /// on the alarm and a snooze alarm related to it by its UID; Thunderbird's: X-MOZ-LASTACK and a
    /// repeating event's X-MOZ-SNOOZE-TIME-<microseconds>), read by chime as the person's own
    /// calendar is read: each alarm plans past its acknowledgment and rings at its snooze.
    @Test func answersOtherProgramsWriteAreReadRight() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("answers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let written = try CalendarSyncTests.python("""
            from datetime import datetime, timedelta, timezone
            from icalendar import Calendar, Event, Alarm, vDatetime
            utc = timezone.utc
            start = datetime(2026, 11, 30, 7, 0, tzinfo=utc)
            calendar = Calendar()
            calendar.add("prodid", "-//python icalendar//EN")
            calendar.add("version", "2.0")
            # Apple's form: the alarm acknowledged when snoozed, a snooze alarm at an absolute time.
            apple = Event()
            apple.add("uid", "apple-1")
            apple.add("summary", "Standup")
            apple.add("dtstart", start)
            apple.add("rrule", {"freq": "daily"})
            alarm = Alarm()
            alarm.add("uid", "apple-1-alarm")
            alarm.add("action", "DISPLAY")
            alarm.add("description", "Standup")
            alarm.add("trigger", timedelta(0))
            alarm.add("acknowledged", vDatetime(start + timedelta(seconds=4)))
            apple.add_component(alarm)
            snooze = Alarm()
            snooze.add("uid", "apple-1-snooze")
            snooze.add("related-to", "apple-1-alarm", parameters={"RELTYPE": "SNOOZE"})
            snooze.add("action", "DISPLAY")
            snooze.add("description", "Standup")
            snooze.add("trigger", start + timedelta(minutes=9, seconds=4))
            apple.add_component(snooze)
            calendar.add_component(apple)
            # Thunderbird's: the last acknowledgment on the event, a repeating event's snooze by its occurrence.
            bird = Event()
            bird.add("uid", "bird-1")
            bird.add("summary", "Pills")
            bird.add("dtstart", start)
            bird.add("rrule", {"freq": "daily"})
            bird.add("x-moz-lastack", vDatetime(start + timedelta(seconds=2)))
            bird.add("x-moz-snooze-time-%d" % (int(start.timestamp()) * 1000000), vDatetime(start + timedelta(minutes=5, seconds=2)))
            alarm = Alarm()
            alarm.add("action", "DISPLAY")
            alarm.add("description", "Pills")
            alarm.add("trigger", timedelta(0))
            bird.add_component(alarm)
            calendar.add_component(bird)
            print(calendar.to_ical().decode())
            """, in: work)
        let start = Instant(seconds: 1_796_022_000)  // 2026-11-30 07:00:00 UTC, the reading's fixed reference (no daemon, no clock)
        #expect(CalendarAnswers.utc("20261130T070000Z") == start)
        let read = CalendarImport(reading: written, anchor: start - .seconds(86_400), trust: .ownCalendar)
        #expect(read.problems.isEmpty, "\(read.problems)\n\(written)")
        #expect(read.alarms.count == 2, "the snooze alarm is an answer, not an alarm: \(read.alarms.map(\.draft.identifier))")
        for alarm in read.alarms {
            let request = try alarm.draft.build(now: start - .seconds(86_400))
            let (acknowledged, snoozed) = CalendarAnswers.of(request)
            let apple = alarm.uid == "apple-1"
            #expect(acknowledged == start + .seconds(apple ? 4 : 2), "\(alarm.uid)")
            #expect(snoozed == start + .seconds(apple ? 544 : 302), "\(alarm.uid)")
            // Planned from before today's 07:00: the snooze first, then tomorrow's, never today's.
            let next = request.nextFire(after: start - .seconds(60), off: .none)
            #expect(next == snoozed, "\(alarm.uid)")
            #expect(request.nextFire(after: snoozed!, off: .none) == start + .seconds(86_400), "\(alarm.uid)")
        }
        // Someone else's calendar: the same answers are not the person's.
        let others = CalendarImport(reading: written, anchor: start - .seconds(86_400), trust: .others)
        for alarm in others.alarms {
            let request = try alarm.draft.build(now: start - .seconds(86_400))
            #expect(request.nextFire(after: start - .seconds(60), off: .none) == start, "\(alarm.uid)")
        }
    }
}
