import ChimeCenter
import ChimeClient
@testable import ChimeCommands
import DBus
import Foundation
import Notifications
import NotifyTool
import Testing
import TestSupport
import Timekeeping

/// Every `--json` output, from the built binary against a real daemon and a real server (dunst),
/// is checked against its JSON Schema in docs/json/ (with Debian's python3-jsonschema), and the
/// text form of the same command is compared line for line with the report built here from the
/// same values: text and JSON are two renderings of one report.
@Suite(.serialized) struct JSONOutputTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The schema's complaints about `json` (empty: valid).
    static func problems(_ json: String, schema: String) throws -> [String] {
        let directory = try makeTemporaryDirectory("chime-json")
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = directory.appendingPathComponent("document.json")
        try json.write(to: document, atomically: true, encoding: .utf8)
        let result = try runProgram("/usr/bin/python3", [root.appendingPathComponent("scripts/check-json.py").path,
                                                         root.appendingPathComponent("docs/json/\(schema).schema.json").path,
                                                         document.path].map { Array($0.utf8) },
                                    environment: ["PATH": "/usr/bin:/bin"])
        return result.status == 0 ? [] : [result.stdout + result.stderr]
    }

    /// The delivered alarms once there are `count` of them (or after 30 s, whatever there is).
    static func waitDelivered(_ count: Int, _ center: UserNotificationCenter) throws -> [DeliveredSummary] {
        var delivered: [DeliveredSummary] = []
        _ = try waitUntil {
            delivered = try center.deliveredNotifications()
            return delivered.count >= count
        }
        return delivered
    }

    @Test func everyJSONOutputMatchesItsSchemaAndItsText() throws {
        let session = try DunstSession()
        let bus = session.bus
        let alarmFile = bus.directory.appendingPathComponent("alarms.toml")
        try """
            [[alarm]]
            id = "homeroom"
            title = "Homeroom"
            when = "16:35 mon-fri"
            sound = "bell"

            [[timer]]
            name = "eggs"
            duration = "7m"
            """.write(to: alarmFile, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path,
                                       arguments: ["--config", alarmFile.path])
        defer { daemon.stop(); session.stop() }
        let environment = bus.environment()
        let connection = try bus.connect()
        let center = UserNotificationCenter(connection: connection)
        var checked: Set<String> = []

        /// Runs `arguments` with --json and without; checks the JSON against `schema`; returns both.
        func run(_ arguments: [String], schema: String, status: Int32 = 0) throws -> (json: String, text: [String]) {
            let json = try runChime(arguments + ["--json"], environment: environment)
            #expect(json.status == status, "\(arguments) --json: \(json.stderr)")
            #expect(try Self.problems(json.stdout, schema: schema) == [], "\(arguments) --json: \(json.stdout)")
            let text = try runChime(arguments, environment: environment)
            #expect(text.status == status, "\(arguments): \(text.stderr)")
            checked.insert(schema)
            return (json.stdout.trimmingCharacters(in: .newlines), text.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init))
        }
        func expectSame(_ report: some Report, _ output: (json: String, text: [String]), _ what: String) {
            #expect(output.json == report.jsonText, "\(what): JSON")
            #expect(output.text == report.lines, "\(what): text")
        }

        // Adding: an absolute time, so both forms (the second replaces the first) name one instant.
        let added = try run(["at", "2199-01-01 10:00", "--tz", "UTC", "--id", "far", "--sound", "bell", "--snooze", "5m", "Far"], schema: "added")
        expectSame(AddedReport(identifier: "far", nextFire: Instant(seconds: 7_226_618_400), zone: try Zone.named("UTC")), added, "at")
        _ = try run(["timer", "eggs", "--id", "eggs", "--config", alarmFile.path], schema: "added")
        let timers = try run(["timer", "--list", "--config", alarmFile.path], schema: "timer-list")
        #expect(timers.json == #"[{"name":"eggs","duration":420,"title":"eggs"}]"#)
        #expect(timers.text == ["eggs  7m  eggs"])

        // One on screen, for `delivered`.
        #expect(try runChime(["in", "1s", "--id", "now", "Now"], environment: environment).status == 0)
        let delivered = try Self.waitDelivered(1, center)
        try #require(delivered.count == 1)
        expectSame(Delivered.report(delivered), try run(["delivered"], schema: "delivered"), "delivered")

        let pending = try center.pendingSummaries()
        #expect(Set(pending.map(\.identifier)) == ["far", "eggs", "homeroom"])
        expectSame(List.pendingReport(pending), try run(["list"], schema: "list"), "list")
        expectSame(List.missedReport(try center.missedOccurrences()), try run(["list", "--missed"], schema: "list-missed"), "list --missed")
        expectSame(List.ringingReport(try center.ringing()), try run(["list", "--ringing"], schema: "list-ringing"), "list --ringing")
        for id in ["far", "eggs", "homeroom"] {
            let report = Show.report(try center.request(withIdentifier: id), summary: pending.first { $0.identifier == id })
            let shown = try run(["show", id], schema: "show")
            expectSame(report, shown, "show \(id)")
            // Typed: seconds, booleans, null.
            if id == "far" {
                #expect(report["snooze"]?.jsonText == "300")
                #expect(shown.json.contains(#""snooze":300,"grace":3600,"expire":null,"#))
                #expect(shown.json.contains(#""ring":300,"autoSnooze":false,"volume":100,"fade":0,"fadeFrom":null,"insist":false,"wake":false,"#))
            }
        }

        // Switched off and on: listed as disabled, then planned again.
        #expect(try runChime(["disable", "far"], environment: environment).status == 0)
        expectSame(List.pendingReport(try center.pendingSummaries()), try run(["list"], schema: "list"), "list with one off")
        _ = try run(["show", "far"], schema: "show")
        let enableJSON = try runChime(["enable", "far", "--json"], environment: environment)
        #expect(try Self.problems(enableJSON.stdout, schema: "enable") == [], "\(enableJSON.stdout)")
        let farNext = Zone.system().iso8601(Instant(seconds: 7_226_618_400))  // printed in the system's zone
        #expect(enableJSON.stdout == #"[{"id":"far","nextFire":""# + farNext + #""}]"# + "\n")
        #expect(try runChime(["disable", "far"], environment: environment).status == 0)
        #expect(try runChime(["enable", "far"], environment: environment).stdout == "far: \(farNext)\n")
        checked.insert("enable")
        // A timer paused and resumed; the list says what it has left, typed.
        #expect(try runChime(["in", "1h", "--id", "kettle", "Kettle"], environment: environment).status == 0)
        let pauseJSON = try runChime(["pause", "kettle", "--json"], environment: environment)
        #expect(try Self.problems(pauseJSON.stdout, schema: "pause") == [], "\(pauseJSON.stdout)")
        let pausedList = try center.pendingSummaries()
        let left = Dictionary(try center.pausedTimers().map { ($0.identifier, $0.remaining) }, uniquingKeysWith: { a, _ in a })
        expectSame(List.pendingReport(pausedList, paused: left), try run(["list"], schema: "list"), "list with a paused timer")
        let resumeJSON = try runChime(["resume", "kettle", "--json"], environment: environment)
        #expect(try Self.problems(resumeJSON.stdout, schema: "resume") == [], "\(resumeJSON.stdout)")
        checked.formUnion(["pause", "resume"])

        // The last Friday of the month, reminded the day before, not in December, until the summer;
        // then its next occurrence skipped and brought back. From a year ahead whose 29 January is a
        // Friday (the last of its month, as 26 February is).
        let y = TestDates.year(whereMonth: 1, day: 29, isWeekday: 5)
        let first = CivilTime(year: y, month: 1, day: 29, hour: 16, minute: 35).asUTC - .seconds(3600)  // 16:35 CET
        let second = CivilTime(year: y, month: 2, day: 26, hour: 16, minute: 35).asUTC - .seconds(3600)
        let review = try run(["at", "DTSTART;TZID=Europe/Berlin:\(y)0129T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR", "--id", "review",
                              "--remind", "1d,15m", "--except", "\(y)-12", "--until", "\(y + 1)-06-30", "Review"], schema: "added")
        let berlin = try Zone.named("Europe/Berlin")
        #expect(review.text == ["review: \(Zone.system().iso8601(first))"])
        let reviewRequest = try center.request(withIdentifier: "review")
        #expect(reviewRequest.trigger.reminders == [.seconds(900), .seconds(86_400)])
        #expect(reviewRequest.trigger.exceptions.map(\.description) == ["\(y)-12"])
        #expect(reviewRequest.trigger.until.map { berlin.iso8601($0) } == "\(y + 1)-06-30T23:59:59+02:00")
        let reviewShown = try run(["show", "review"], schema: "show")
        #expect(reviewShown.json.contains(#""remind":[900,86400],"notice":null,"except":["\#(y)-12"],"until":""#), "\(reviewShown.json)")
        #expect(reviewShown.text.contains("remind:       15m before, 1d before"), "\(reviewShown.text)")
        let skipped = try runChime(["skip", "review", "--json"], environment: environment)
        #expect(try Self.problems(skipped.stdout, schema: "skip") == [], "\(skipped.stdout)")
        let system = Zone.system()
        #expect(skipped.stdout == #"{"id":"review","occurrence":""# + system.iso8601(first) + #"","nextFire":""#
                + system.iso8601(second) + #""}"# + "\n")
        #expect(try center.request(withIdentifier: "review").trigger.skipped == [first])
        let undone = try runChime(["skip", "--undo", "review"], environment: environment)
        #expect(undone.stdout == "review: brought back \(system.iso8601(first)); next \(system.iso8601(first))\n")
        #expect(try runChime(["skip", "--undo", "review"], environment: environment).status == 64)
        checked.insert("skip")
        _ = try center.removePendingNotificationRequests(withIdentifiers: ["review"])

        let next = try run(["next", "16:35 mon-fri", "--after", "2026-11-23 12:00", "--tz", "Europe/Berlin", "--count", "3"], schema: "next")
        #expect(next.json == #"["2026-11-23T16:35:00+01:00","2026-11-24T16:35:00+01:00","2026-11-25T16:35:00+01:00"]"#)
        // The text says what was understood first; the JSON is the times alone.
        #expect(next.text == ["every weekday at 16:35", "Mon 2026-11-23 16:35:00 CET (+01:00)", "Tue 2026-11-24 16:35:00 CET (+01:00)",
                              "Wed 2026-11-25 16:35:00 CET (+01:00)"])

        let client = NotificationClient(connection: connection)
        expectSame(CapabilitiesReport(capabilities: try client.capabilities()), try run(["capabilities"], schema: "capabilities"), "capabilities")
        expectSame(ServerInfo.report(try client.serverInformation()), try run(["server-info"], schema: "server-info"), "server-info")

        let check = try run(["config", "check", alarmFile.path], schema: "config-check")
        #expect(check.json.hasPrefix(#"{"file":"\#(alarmFile.path)","valid":true,"alarms":[{"id":"homeroom","when":"16:35 mon-fri","#))
        #expect(check.text.first == "\(alarmFile.path): 1 alarm, 1 timer, no errors")
        // Each reload is a new read (its time differs): each form is compared with the status it left.
        let reloadJSON = try runChime(["config", "reload", "--json"], environment: environment)
        #expect(try Self.problems(reloadJSON.stdout, schema: "config-reload") == [], "\(reloadJSON.stdout)")
        #expect(reloadJSON.stdout == alarmFileDatum(try center.alarmFileStatus()).jsonText + "\n")
        let reloadText = try runChime(["config", "reload"], environment: environment)
        #expect(reloadText.stdout == alarmFileSummary(try center.alarmFileStatus()) + "\n")
        checked.insert("config-reload")

        let status = try run(["status"], schema: "status")
        let report = Status.report(try notificationSettings(connection: connection), daemon: try center.daemonStatus(),
                                   file: try center.alarmFileStatus(), away: try center.away())
        expectSame(report, status, "status")
        #expect(status.text.first == "Authorization:  authorized")

        // notify: its text is notify-send's (the id with -p, the action after --wait); its JSON has a schema too.
        let notify = try runChime(["notify", "--json", "Hello"], environment: environment)
        #expect(try Self.problems(notify.stdout, schema: "notify") == [], "\(notify.stdout)")
        let expired = try runChime(["notify", "-w", "--json", "-t", "300", "Short"], environment: environment)
        #expect(try Self.problems(expired.stdout, schema: "notify") == [], "\(expired.stdout)")
        #expect(expired.stdout.contains(#""closed":{"reason":"expired","code":1}"#), "\(expired.stdout)")
        checked.insert("notify")

        // Every schema in the tree was used.
        let schemas = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs/json").path)
            .filter { $0.hasSuffix(".schema.json") }.map { String($0.dropLast(".schema.json".count)) }
        #expect(Set(schemas) == checked)
    }

    /// A restarted daemon no longer knows whether popups it showed before are up: on dunst it asks
    /// the history (a popup closed meanwhile is forgotten, one still up is listed as on screen).
    @Test func deliveredAfterARestartAsksDunstsHistory() throws {
        let session = try DunstSession()
        let bus = session.bus
        let state = bus.directory.appendingPathComponent("state").path
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); session.stop() }
        let environment = bus.environment()
        let connection = try bus.connect()
        let center = UserNotificationCenter(connection: connection)
        for id in ["kept", "gone"] {
            #expect(try runChime(["in", "1s", "--id", id, id.capitalized], environment: environment).status == 0)
        }
        let delivered = try Self.waitDelivered(2, center)
        try #require(delivered.count == 2)
        #expect(delivered.allSatisfy { $0.known })
        daemon.stop()
        // Closed while the daemon is down: dunst tells only the connection that showed it, which is gone.
        let gone = try #require(delivered.first { $0.identifier == "gone" })
        _ = try connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                interface: "org.freedesktop.Notifications", member: "CloseNotification", arguments: [.uint32(gone.serverID)])
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        let after = try runChime(["delivered", "--json"], environment: environment)
        #expect(try Self.problems(after.stdout, schema: "delivered") == [])
        let listed = try center.deliveredNotifications()
        #expect(listed.map(\.identifier) == ["kept"], "\(after.stdout)")
        #expect(listed.first?.known == true)
        #expect(after.stdout.contains(#""state":"on screen""#))
    }

    /// On a server that cannot be asked, a popup shown before a restart is listed as unknown.
    @Test func deliveredAfterARestartIsUnknownWhereTheServerCannotSay() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let state = bus.directory.appendingPathComponent("state").path
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let environment = bus.environment()
        #expect(try runChime(["in", "1s", "--id", "shown", "Shown"], environment: environment).status == 0)
        #expect(recorder.waitForCalls(1).count == 1)
        let center = UserNotificationCenter(connection: try bus.connect())
        let delivered = try Self.waitDelivered(1, center)
        #expect(delivered.map(\.known) == [true])
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try center.deliveredNotifications().map(\.known) == [false])
        let text = try runChime(["delivered"], environment: environment)
        #expect(text.stdout.hasPrefix("shown  shown "))
        #expect(text.stdout.contains("  (state unknown: shown before the daemon restarted; this server cannot say whether it was closed)"))
    }
}

/// The printer on its own: each kind of value as text and as JSON.
@Suite struct ReportTests {
    @Test func eachValueReadsTheSameInTextAndJSON() throws {
        let utc = try Zone.named("UTC")
        let report = RecordReport(fields: [
            Field("title", "title", .text("Tea")),
            Field("snooze", "snooze", .duration(.seconds(600))),
            Field("next", "next", .instant(Instant(seconds: 1_800_000_000), utc)),  // a fixed reference: the printer alone
            Field("wake", "wake", .flag(false)),
            Field("sound", "sound", .none),
            Field("words", "words", .list([.text("date"), .text("+%H")])),
            Field("count", "count", .count(3)),
        ])
        #expect(report.jsonText == #"{"title":"Tea","snooze":600,"next":"2027-01-15T08:00:00+00:00","wake":false,"sound":null,"words":["date","+%H"],"count":3}"#)
        #expect(report.lines == ["title:        Tea", "snooze:       10m", "next:         2027-01-15T08:00:00+00:00", "wake:         no",
                                 "words:        date, +%H", "count:        3"])
        let table = TableReport(rows: [[Field("id", "", .text("a")), Field("due", "", .instant(Instant(seconds: 0), utc))]],
                                line: { "\($0["id"]) at \($0["due"])" }, empty: "none")
        #expect(table.jsonText == #"[{"id":"a","due":"1970-01-01T00:00:00+00:00"}]"#)
        #expect(table.lines == ["a at 1970-01-01T00:00:00+00:00"])
        #expect(TableReport(rows: [], line: { _ in "" }, empty: "none").lines == ["none"])
        #expect(TableReport(rows: [], line: { _ in "" }, empty: "none").jsonText == "[]")
        // Strings escaped as JSON says: quotes, backslashes, control characters; the rest as it is.
        #expect(Datum.text("a\"b\\c\n\u{1}é").jsonText == #""a\"b\\c\n\u0001é""#)
    }

    @Test func theSubcommandListComesFromTheCommands() {
        #expect(Chime.subcommandNames.contains("timer"))
        #expect(Chime.subcommandNames.contains("config"))
        #expect(Chime.subcommandNames.count == Chime.configuration.subcommands.count)
    }
}
