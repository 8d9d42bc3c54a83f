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
@Suite(.serialized) struct OneAlarmEveryMachineTests {
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
            daemon = try DaemonProcess(bus: bus, stateDirectory: home.appendingPathComponent("state").path)
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

    @Test func anAlarmSetOnOneMachineRingsOnTheOther() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("caldav-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("store"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let port = try CalendarSyncTests.freePort(in: work)
        let radicale = try ChildProcess("/usr/bin/radicale", [
            "--storage-filesystem-folder", work.appendingPathComponent("store").path, "--server-hosts", "127.0.0.1:\(port)",
            "--auth-type", "none", "--rights-type", "authenticated", "--logging-level", "warning",
        ], logDirectory: work)
        defer { radicale.stop() }
        let url = "http://127.0.0.1:\(port)/alice/shared/"
        let script = work.appendingPathComponent("caldav.py").path
        try CalendarSyncTests.caldav.write(toFile: script, atomically: true, encoding: .utf8)
        func http(_ method: String, _ url: String) throws -> String {
            let result = try runProgram("/usr/bin/python3", [script, method, url].map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment)
            return result.status == 0 ? result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : "failed: \(result.stderr)"
        }
        #expect(waitUntil(10) { (try? http("PROPFIND", "http://127.0.0.1:\(port)/")).map { !$0.hasPrefix("failed") } ?? false })
        #expect(try http("MKCALENDAR", url) == "201")
        let a = try Home("a", url: url, in: work)
        defer { a.stop() }
        let b = try Home("b", url: url, in: work)
        defer { b.stop() }

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
        let listing = try CalendarSyncTests.python("""
            import sys, urllib.request, base64
            from icalendar import Calendar
            request = urllib.request.Request(sys.argv[1])  # the collection, every event in it
            request.add_header("Authorization", "Basic " + base64.b64encode(b"alice:x").decode())
            calendar = Calendar.from_ical(urllib.request.urlopen(request, timeout=10).read())
            for event in calendar.walk("VEVENT"):
                print(event["SUMMARY"], event["X-CHIME-ID"], len(event.walk("VALARM")))
            """, [url], in: work)
        #expect(listing.split(separator: "\n").sorted() == ["Gym gym 1", "Standup standup 1"], "\(listing)")

        // Cancelled on A: its event goes, from the server and then from B.
        let cancelled = try a.chime(["cancel", "standup"])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(try a.pending()["standup"] == nil)
        #expect(try waitUntil(30) { try b.pending()["standup"] == nil }, "B kept the alarm cancelled on A")
        #expect(try b.pending()["gym"] != nil)
        // Every sync went well: chime status says nothing of them.
        for home in [a, b] {
            let status = try home.chime(["status"]).stdout
            #expect(!status.contains("sync failing"), "\(home.name): \(status)")
        }
    }
}
