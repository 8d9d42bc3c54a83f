import ChimeCenter
import ChimeClient
import ChimeDaemon
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport
import Timekeeping

/// The real daemon process on a private bus, with our recording server (exact contents) as the notification server.
@Suite struct DaemonTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }


    func request(_ id: String, _ rule: String, title: String = "Alarm") throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: title, body: "body"),
                            trigger: try Trigger(parsing: rule, timeZone: "UTC", anchor: WallClock.system.now()))
    }

    /// An instant reads back as the daemon holds it, to the nanosecond: a timer's next fire in
    /// `ListPending` and `chime list --json`, its anchor and a skipped occurrence in `Get`.
    @Test func instantsReadBackExactly() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let center = try center()
        // Counted from the daemon's now, which has a fraction of a second (nine times in ten thousand
        // million it has none, and the test then checks whole seconds: still exact).
        let added = try runChime(["at", "every 25m", "--id", "tea", "Tea"], environment: bus.environment())
        try #require(added.status == 0, "\(added.stderr)")
        let listed = try #require(try center.pendingSummaries().first { $0.identifier == "tea" }?.nextFire)
        let stored = try center.request(withIdentifier: "tea")
        #expect(stored.trigger.anchor + .minutes(25) == listed, "anchor \(stored.trigger.anchor), next \(listed)")
        let json = try runChime(["list", "--json"], environment: bus.environment()).stdout
        #expect(json.contains("\"nextFire\":\"\(Zone.system().iso8601(listed))\""), "\(json)")
        if listed.nanosecond != 0 { #expect(Zone.system().iso8601(listed).contains("."), "the fraction is written") }
        // Skipped: the occurrence is kept exactly, and the next one follows it by 25 minutes.
        let skipped = try center.skip("tea")
        #expect(skipped.occurrence == listed.wholeSecond, "Skip answers in whole seconds")
        #expect(try center.request(withIdentifier: "tea").trigger.skipped == [listed])
        #expect(try center.pendingSummaries().first { $0.identifier == "tea" }?.nextFire == listed + .minutes(25))
        // One-off instants with a fraction, given as seconds with a fraction (`at`, d).
        let exact = Instant(seconds: TestDates.utcDay(in: 365).asUTC.seconds, nanosecond: 250_000_000)
        let once = try center.add(NotificationRequest(identifier: "once", content: NotificationContent(title: "Once"),
                                                      trigger: Trigger(rule: .instant(exact), repeats: false, timeZone: nil,
                                                                       anchor: WallClock.system.now())))
        #expect(once.identifier == "once")
        #expect(try center.pendingSummaries().first { $0.identifier == "once" }?.nextFire == exact)
    }

    /// The list beside the bus (`ListPendingFile`, what `chime list` reads) holds exactly what
    /// `ListPending` answers, in its order, in a file sealed against change; held, disabled and
    /// quarantined alarms keep their state and note, and text that needs escaping survives.
    @Test func theListBesideTheBusIsTheListOnIt() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let center = try center()
        for (id, title) in [("a", #"Tea "strong" \ now"#), ("b", "Ümlaut ☕"), ("c", "plain")] {
            _ = try center.add(NotificationRequest(identifier: id, content: NotificationContent(title: title, label: "x;y"),
                                                   trigger: try Trigger(parsing: "16:35 mon-fri", anchor: WallClock.system.now())))
        }
        _ = try center.perform(Scheduler1.disable(["b"]))
        let onTheBus = try center.perform(Scheduler1.listPending)
        let beside = try center.perform(Scheduler1.listPendingFile)
        #expect(beside == onTheBus)
        #expect(beside.map(\.identifier).sorted() == ["a", "b", "c"])
        #expect(beside.first { $0.identifier == "b" }?.state == .disabled)
        #expect(beside.first { $0.identifier == "a" }?.title == #"Tea "strong" \ now"#)
        // And chime list --json prints it, escaped.
        let json = try runChime(["list", "--json"], environment: bus.environment())
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""title":"Tea \"strong\" \\ now""#), "\(json.stdout)")
    }

    @Test func anEggTimerReachesTheServerOnTime() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let result = try runChime(["in", "2s", "Wait!", "Your eggs are almost done!", "--json"], environment: bus.environment())
        #expect(result.status == 0, "\(result.stderr)")
        // When it is due, as the daemon planned it (its answer, which chime printed).
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let nextFire = json?["nextFire"] as? String
        let due = try #require(nextFire.flatMap { TestDates.instant(iso8601: $0) }, "\(result.stdout)")
        let calls = recorder.waitForCalls(1, timeout: 30)
        try #require(calls.count == 1)
        #expect(calls[0].summary == "Wait!")
        #expect(calls[0].body == "Your eggs are almost done!")
        #expect(calls[0].actions == ["snooze", "Snooze", "dismiss", "Dismiss"])
        #expect(calls[0].hints["urgency"] == .byte(2))
        // Shown when it was due, by the daemon's own record (the test's thread may be slower than the
        // daemon on a busy machine): late only by what a busy machine adds, never by a whole planning
        // mistake (a second or more).
        let shown = try #require(waitForValue { try? center().deliveredNotifications().first?.shown })
        #expect(shown >= due && shown - due < .seconds(2), "due \(due), shown \(shown)")
        // A one-off leaves the pending list once it fired.
        #expect(try waitUntil { try center().pendingNotificationRequests().isEmpty })
        #expect(try waitUntil { try center().deliveredNotifications().map(\.title) == ["Wait!"] })
    }

    /// A one-off on the next 29 February (made from now: the one ahead of whatever day the test runs)
    /// is planned for that day, and kept across a restart.
    @Test func anAlarmOnTheNextLeapDayIsPlannedForIt() throws {
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let leap = TestDates.nextLeapDay(hour: 9, minute: 30)
        let set = try runChime(["at", leap.dateAndMinute, "--tz", "UTC", "--id", "leap", "Leap day"], environment: bus.environment())
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try center().pendingSummaries().first { $0.identifier == "leap" }?.nextFire == leap.asUTC)
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try center().pendingSummaries().first { $0.identifier == "leap" }?.nextFire == leap.asUTC)
    }

    @Test func alarmsSurviveARestartAndACrash() throws {
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        try center().add(try request("homeroom", "16:35 mon-fri"))
        try center().add(try request("xmas", TestDates.utcDay(in: 365, hour: 18).dateAndMinute))
        daemon.kill()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try center().pendingNotificationRequests().map(\.request.identifier).sorted() == ["homeroom", "xmas"])
        try center().removePendingNotificationRequests(withIdentifiers: ["xmas"])
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try center().pendingNotificationRequests().map(\.request.identifier) == ["homeroom"])
    }

    @Test func killedAtRandomMomentsNothingAcknowledgedIsLost() throws {
        var r = SplitMix(seed: 7)
        let inAYear = TestDates.utcDay(in: 365, hour: 0).dateAndMinute
        var added: Set<String> = []  // adds the daemon acknowledged
        var cancelled: Set<String> = []  // cancels it acknowledged
        var attempted: Set<String> = []  // cancels sent, acknowledged or not (an unanswered one may have happened)
        for round in 0..<6 {
            let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
            let victim = daemon.pid
            let delay = 20_000 + r.below(200_000)
            let killer = Thread {
                usleep(UInt32(delay))
                kill(victim, SIGKILL)
            }
            killer.start()
            let center = try center()
            var k = 0
            while true {
                let id = "r\(round)-\(k)"
                do {
                    if k % 3 == 2, let some = added.subtracting(attempted).randomElement(using: &r) {
                        attempted.insert(some)
                        _ = try center.removePendingNotificationRequests(withIdentifiers: [some])
                        cancelled.insert(some)
                    } else {
                        try center.add(try request(id, inAYear))
                        added.insert(id)
                    }
                } catch {
                    break  // the daemon died: this call was not acknowledged
                }
                k += 1
            }
            daemon.kill()
            // The store opens cleanly after every crash: nothing moved aside, nothing half-written.
            let store = try Store(directory: state, now: 1)
            #expect(store.warnings.isEmpty, "round \(round): \(store.warnings)")
        }
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let pending = Set(try center().pendingNotificationRequests().map(\.request.identifier))
        #expect(added.subtracting(attempted).isSubset(of: pending), "acknowledged adds lost: \(added.subtracting(attempted).subtracting(pending))")
        #expect(pending.isDisjoint(with: cancelled), "acknowledged cancels came back")
        #expect(added.count > 10)
    }

    @Test func anAlarmDueWithoutAServerArrivesLateWhenOneAppears() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        try center().add(try request("late", "in 1s", title: "Late one"))
        // Listed as held, since when, not as "never" (once it fell due and found no server).
        var list = ""
        #expect(try waitUntil {
            list = try runChime(["list"], environment: bus.environment()).stdout
            return list.hasPrefix("late  held  Late one  (in 1s, no sound, command line)  held: no notification server since ")
        }, "\(list)")
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let calls = recorder.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].summary == "Late one")
        #expect(calls[0].body.hasPrefix("<b>Late: due at "))
    }

    @Test func anAlarmMissedWhileDownFiresOnceOnStart() throws {
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        try center().add(try request("missed", "in 1s", title: "Missed one"))
        daemon.stop()
        usleep(1_500_000)
        let recorder = try RecordingServer(address: bus.address)
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let calls = recorder.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].body.hasPrefix("<b>Missed at "))
        usleep(300_000)
        #expect(recorder.calls.count == 1)  // never twice
    }

    @Test func errorsAreClear() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let second = try runChime(["daemon", "--state-dir", state + "2"], environment: bus.environment())
        #expect(second.status == 71)
        #expect(second.stderr == "chime: another chime daemon is already running for this user (org.chime.Scheduler is taken)\n")
        let badRule = try runChime(["at", "16:65", "Nope"], environment: bus.environment())
        #expect(badRule.status == 64)
        #expect(badRule.stderr == "chime: 16:65: minute 65 is out of range 0-59\n")
        let unknown = try runChime(["cancel", "ghost"], environment: bus.environment())
        #expect(unknown.status == 6)
        daemon.stop()
        let unusable = try runChime(["daemon", "--state-dir", "/dev/null/chime"], environment: bus.environment())
        #expect(unusable.status == 71)
        #expect(unusable.stderr.hasPrefix("chime: cannot open the state: cannot create the directory /dev/null/chime"))
    }

    /// `chime list` shows each alarm's rule in words in the user's language (as written where words
    /// do not say it), its sound and where it comes from; `chime show` everything about one; an
    /// unknown identifier is exit 6.
    @Test func listAndShowSayRuleSoundAndOrigin() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let env = bus.environment()
        for arguments in [["in", "1h", "Tea", "--id", "tea"],
                          ["at", "16:35", "--days", "mon-fri", "--label", "school", "--sound", "bell", "--id", "homeroom", "Homeroom", "Check"],
                          ["at", "*:0/15", "--id", "quarter", "Quarter"]] {
            let added = try runChime(arguments, environment: env)
            try #require(added.status == 0, "\(added.stderr)")
        }
        let lines = try runChime(["list"], environment: env).stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("tea  ") && $0.hasSuffix("  Tea  (in 1 hour, no sound, command line)") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("homeroom  ") && $0.hasSuffix("  Homeroom [school]  (every weekday at 16:35, sound bell, command line)") },
                "\(lines)")
        #expect(lines.contains { $0.hasPrefix("quarter  ") && $0.hasSuffix("  Quarter  (*-*-* *:00/15:00, no sound, command line)") }, "\(lines)")
        let json = try runChime(["list", "--json"], environment: env).stdout
        #expect(json.contains(#""id":"homeroom","title":"Homeroom","label":"school","nextFire":"#))
        #expect(json.contains(#""rule":"16:35 mon-fri","words":"every weekday at 16:35","sound":"bell","origin":"command-line""#))
        #expect(json.contains(#""rule":"*-*-* *:00/15:00","words":null,"#), "\(json)")
        var german = env
        german["LC_TIME"] = "de_DE.UTF-8"
        let deutsch = try runChime(["list"], environment: german).stdout
        #expect(deutsch.contains("  Homeroom [school]  (werktags um 16:35, sound bell, command line)"), "\(deutsch)")

        let show = try runChime(["show", "homeroom"], environment: env)
        #expect(show.status == 0)
        for line in ["id:           homeroom", "body:         Check", "label:        school",
                     "rule:         16:35 mon-fri", "expression:   Mon..Fri *-*-* 16:35:00", "sound:        bell", "urgency:      critical",
                     "actions:      snooze=Snooze, dismiss=Dismiss", "snooze:       10m", "origin:       command line",
                     "state:        scheduled"] {
            #expect(show.stdout.contains(line + "\n"), "\(line) in \(show.stdout)")
        }
        let showJSON = try runChime(["show", "--json", "tea"], environment: env)
        #expect(showJSON.stdout.hasPrefix(#"{"id":"tea","title":"Tea","#))
        #expect(showJSON.stdout.contains(#""rule":"in 1h""#))
        // Typed: seconds, booleans, null; each key once.
        #expect(showJSON.stdout.contains(#""snooze":600,"grace":3600,"expire":null,"#), "\(showJSON.stdout)")
        #expect(showJSON.stdout.contains(#""wake":false"#))
        #expect(showJSON.stdout.components(separatedBy: #""ring":"#).count == 2)
        let unknown = try runChime(["show", "nope"], environment: env)
        #expect(unknown.status == 6)
        #expect(unknown.stderr == "chime: no pending alarm \"nope\"; see chime list\n")
    }

    @Test func withoutADaemonTheCLISaysHowToStartOne() throws {
        defer { bus.stop() }
        let result = try runChime(["list"], environment: bus.environment())
        #expect(result.status == 67)
        #expect(result.stderr == "chime: the chime daemon is not running; start it with `chime daemon &` (or `systemctl --user start chime`)\n")
    }

    @Test func theDaemonServesExactlyTheInterfaceInTheRepository() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let connection = try bus.connect()
        let xml = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: .introspectable,
                                      member: "Introspect").first?.stringValue ?? ""
        let file = try String(contentsOf: repositoryRoot.appendingPathComponent("packaging/org.chime.Scheduler1.xml"), encoding: .utf8)
        let served = try #require(interfaceElement(xml, "org.chime.Scheduler1"))
        let documented = try #require(interfaceElement(file, "org.chime.Scheduler1"))
        #expect(served == documented)
        // Every call on every path is answered: the nodes above introspect, the rest is an error at once.
        for (path, child) in [("/", "org"), ("/org", "chime"), ("/org/chime", "Scheduler")] as [(ObjectPath, String)] {
            let parent = try connection.call(destination: "org.chime.Scheduler", path: path, interface: .introspectable,
                                             member: "Introspect", timeout: .milliseconds(2000)).first?.stringValue ?? ""
            #expect(parent.contains("<node name=\"\(child)\"/>"), "\(path)")
        }
        for path in ["/org/chime", "/elsewhere"] as [ObjectPath] {
            #expect(throws: DBusError.self) {
                try connection.call(destination: "org.chime.Scheduler", path: path, interface: "org.chime.Scheduler1",
                                    member: "ListPending", timeout: .milliseconds(2000))
            }
        }
    }

    @Test func everyDoorRefusesWhatCanNeverFire() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let past = try runChime(["at", "2020-01-01 10:00", "x"], environment: bus.environment())
        #expect(past.status == 64)
        #expect(past.stderr == "chime: \"2020-01-01 10:00\": 2020-01-01 10:00:00 is in the past\n")
        let huge = try runChime(["in", "2s", "--expire", "15000w", "x"], environment: bus.environment())
        #expect(huge.status == 64)
        #expect(huge.stderr == "chime: --expire 15000w: must be 1s-1d, got 15000w\n")
        let snooze = try runChime(["in", "2s", "--snooze", "15000w", "x"], environment: bus.environment())
        #expect(snooze.stderr == "chime: --snooze 15000w: must be 1s-1w, got 15000w\n")
        let emptyID = try runChime(["in", "2s", "--id", "", "x"], environment: bus.environment())
        #expect(emptyID.status == 64)
        #expect(try center().pendingSummaries().isEmpty)
        // Over D-Bus, the same checks answer with documented error names.
        let connection = try bus.connect()
        func add(_ pairs: [(String, Value)]) throws -> [Value] {
            try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                member: "Add", arguments: [.vardict(pairs)])
        }
        for (pairs, name) in [
            ([("title", Value.string("x")), ("rule", .string("2020-01-01 10:00"))], "org.chime.Scheduler.Error.NeverFires"),
            ([("title", .string("x")), ("rule", .string("in 5m")), ("expire", .int64(.max))], "org.chime.Scheduler.Error.InvalidRequest"),
            ([("title", .string("x")), ("rule", .string("in 5m")), ("time-zone", .string("../../etc/passwd"))], "org.chime.Scheduler.Error.InvalidRequest"),
        ] {
            do {
                _ = try add(pairs)
                Issue.record("\(pairs) accepted")
            } catch let error as DBusError {
                #expect(error.name.rawValue == name, "\(error)")
            }
        }
        let reply = try add([("title", .string("Tea")), ("rule", .string("in 1h"))])
        #expect(reply.first?.stringValue?.hasPrefix("timer-") == true)
        #expect(daemon.isRunning)
    }

    @Test func identifiersChimeMakesNeverCollide() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        // 100 `chime in` at once, in the same second, none with --id: 100 alarms.
        let statuses = Mutex([Int32]())
        let environment = bus.environment()
        DispatchQueue.concurrentPerform(iterations: 100) { i in
            let status = (try? runChime(["in", "1h", "Tea \(i)"], environment: environment))?.status ?? -1
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 } == Array(repeating: 0, count: 100))
        let pending = try center().pendingSummaries()
        #expect(pending.count == 100)
        #expect(Set(pending.map(\.identifier)).count == 100)
        // Only an explicit --id replaces.
        _ = try runChime(["in", "1h", "--id", "tea", "First"], environment: bus.environment())
        _ = try runChime(["in", "2h", "--id", "tea", "Second"], environment: bus.environment())
        #expect(try center().pendingSummaries().filter { $0.identifier == "tea" }.map(\.title) == ["Second"])
        // Identifiers stay unique across a restart (the sequence is in the store).
        let before = Set(try center().pendingSummaries().map(\.identifier))
        daemon.stop()
        let again = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { again.stop() }
        let added = try center().add(NotificationRequest(identifier: "", content: NotificationContent(title: "After"),
                                                         trigger: try Trigger(parsing: "in 1h", anchor: WallClock.system.now())))
        #expect(!before.contains(added.identifier))
    }
}

/// The `<interface name="…">…</interface>` element of an introspection document, with
/// whitespace between tags removed.
func interfaceElement(_ xml: String, _ name: String) -> String? {
    guard let start = xml.range(of: "<interface name=\"\(name)\">"),
        let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex)
    else { return nil }
    return xml[start.lowerBound..<end.upperBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
}

/// The repository this test was built from.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Rings, snoozes and dismissals driven by the server's signals, with real time a few seconds ahead.
@Suite struct RingingTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }


    @Test func aWeekdayRuleFiresOnItsDayAndNotOnOthers() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let soon = Int64(time(nil)) + 3
        let civil = Zone.utc.civil(at: soon)
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        let today = names[civil.weekday - 1]
        let otherDays = names.filter { $0 != today }.joined(separator: ",")
        let clock = "\(civil.hour):\(civil.minute):\(civil.second)"
        let on = try center().add(NotificationRequest(identifier: "on", content: NotificationContent(title: "Today"),
                                                      trigger: try Trigger(parsing: "\(today) *-*-* \(clock) UTC", anchor: 0)))
        let off = try center().add(NotificationRequest(identifier: "off", content: NotificationContent(title: "Not today"),
                                                       trigger: try Trigger(parsing: "\(otherDays) *-*-* \(clock) UTC", anchor: 0)))
        #expect(on.nextFire == Instant(seconds: soon))
        #expect(off.nextFire >= Instant(seconds: soon + 86_400))
        let calls = recorder.waitForCalls(1)
        usleep(500_000)
        #expect(recorder.calls.map(\.summary) == ["Today"])
        #expect(calls.count == 1)
    }

    @Test func snoozeReArmsTheAlarm() throws {
        let recorder = try RecordingServer(address: bus.address, autoResponse: .invokeFirstAction)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        var content = NotificationContent(title: "Wake up", actions: [.snooze, .dismiss])
        content.snooze = 1
        try center().add(NotificationRequest(identifier: "wake", content: content,
                                             trigger: Trigger.timeInterval(1, anchor: WallClock.system.now())))
        let calls = recorder.waitForCalls(2)
        try #require(calls.count >= 2)
        #expect(calls[0].summary == "Wake up" && calls[1].summary == "Wake up")
        #expect(!recorder.closedIDs.isEmpty)  // each snoozed ring was taken down
        try center().removeAllPendingNotificationRequests()
    }

    @Test func dismissStopsOnlyTheCurrentRing() throws {
        let recorder = try RecordingServer(address: bus.address, autoResponse: .invokeFirstAction)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try center().add(NotificationRequest(identifier: "pomodoro", content: NotificationContent(title: "Break", actions: [.dismiss, .snooze]),
                                             trigger: Trigger.timeInterval(1, repeats: true, anchor: WallClock.system.now())))
        let calls = recorder.waitForCalls(2)
        try #require(calls.count >= 2)
        #expect(!recorder.closedIDs.isEmpty)
        #expect(try center().pendingNotificationRequests().map(\.request.identifier) == ["pomodoro"])
    }

    @Test func aServerKilledBeforeTheAlarmAndRestartedAfterGetsItLate() throws {
        let first = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        try center().add(NotificationRequest(identifier: "late", content: NotificationContent(title: "Held"),
                                             trigger: Trigger.timeInterval(1, anchor: WallClock.system.now())))
        first.stop()
        usleep(2_000_000)
        let second = try RecordingServer(address: bus.address)
        defer { second.stop() }
        let calls = second.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].body.hasPrefix("<b>Late: due at "))
        #expect(first.calls.isEmpty)
    }

    @Test func deliveredAlarmsAreListedAndClosedFromTheCommandLine() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        #expect(try runChime(["in", "1s", "--id", "tea", "Tea"], environment: bus.environment()).status == 0)
        try #require(recorder.waitForCalls(1).count == 1)
        // Delivered once the server's answer to Notify is in: waited for, not slept on.
        var listed = ""
        #expect(try waitUntil {
            listed = try runChime(["delivered"], environment: bus.environment()).stdout
            return listed.hasPrefix("tea  shown ")
        }, "chime delivered printed \(listed)")
        #expect(try runChime(["close", "tea"], environment: bus.environment()).status == 0)
        // The daemon answers `close` once it has sent CloseNotification; the server reads it after.
        #expect(waitUntil { recorder.closedIDs == [1] }, "closed: \(recorder.closedIDs)")
        let again = try runChime(["close", "tea"], environment: bus.environment())
        #expect(again.status == 6)
        #expect(again.stderr == "chime: not delivered: \"tea\"; see chime delivered\n")
    }
}

/// One request that crashes the daemon costs that request alone.
@Suite struct QuarantineTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }


    func request(_ id: String, in seconds: Int64) throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: id),
                            trigger: try Trigger(parsing: "in \(seconds)s", anchor: WallClock.system.now()))
    }


    @Test func aRequestThatCrashesTheDaemonTwiceIsQuarantinedAndTheRestFireOnTime() throws {
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let crashing = ["CHIME_TEST_CRASH_FIRING": "victim"]
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: crashing)
        try center().add(try request("victim", in: 1))
        try center().add(try request("control", in: 6))
        // It crashes firing the victim, and again when a restart (systemd's Restart=on-failure) catches up.
        #expect(daemon.waitForExit())
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: crashing)
        #expect(daemon.waitForExit())
        // The third start quarantines it and goes on.
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: crashing)
        defer { daemon.stop() }
        let calls = recorder.waitForCalls(1)
        #expect(calls.map(\.summary) == ["control"])
        #expect(daemon.isRunning)
        let list = try runChime(["list"], environment: bus.environment())
        #expect(list.stdout.contains("victim  never  victim  (in 1s, no sound, command line)  QUARANTINED: the daemon crashed twice while firing it"))
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Quarantined:    1 alarm kept but not fired"))
        #expect(try runChime(["cancel", "victim"], environment: bus.environment()).status == 0)
        #expect(try center().pendingSummaries().isEmpty)
    }

    @Test func anAlarmFileAlarmThatCrashesTheDaemonTwiceIsLeftOutAndTheRestRun() throws {
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let file = bus.directory.appendingPathComponent("alarms.toml")
        try """
            [[alarm]]
            id = "bad"
            title = "Bad"
            when = "in 1h"
            [[alarm]]
            id = "good"
            title = "Good"
            when = "in 3s"
            """.write(to: file, atomically: true, encoding: .utf8)
        let crashing = ["CHIME_TEST_CRASH_FIRING": "bad"]
        let arguments = ["--config", file.path]
        // The file's reader (a child of the daemon) crashes on "bad", twice, and is run again
        // without it: the daemon itself never stops.
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: arguments, environment: crashing)
        defer { daemon.stop() }
        #expect(recorder.waitForCalls(1).map(\.summary) == ["Good"])
        #expect(daemon.isRunning)
        #expect(daemon.log.contains("quarantined: the alarm file's reader stopped twice (killed by signal"), "\(daemon.log)")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("alarm 'bad' is quarantined: the alarm file's reader crashed twice while scheduling it"), "\(status.stdout)")
        // An edit elsewhere in the file leaves it out still.
        try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "\"Good\"", with: "\"Good again\"")
            .write(to: file, atomically: true, encoding: .utf8)
        _ = try runChime(["config", "reload"], environment: bus.environment())
        #expect(daemon.isRunning)
        #expect(try center().pendingSummaries().map(\.identifier).contains("bad") == false)
    }

    /// A followed calendar that crashes its reader (the 153 KB TRIGGER once crashed the daemon, at
    /// every start, with the unit restarting it every 2 s) is charged like an alarm: after the
    /// second crash it is left out, said in `chime status`, and everything else runs, in the same
    /// daemon; changed, it is read again.
    @Test func aCalendarThatCrashesTheReaderTwiceIsLeftOutUntilItChanges() throws {
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let calendar = bus.directory.appendingPathComponent("shared.ics")
        let event = { (summary: String) in
            ["BEGIN:VCALENDAR", "BEGIN:VEVENT", "UID:shared-1", "DTSTART:\(TestDates.utcDay(in: 365).icsUTC)", "SUMMARY:\(summary)",
             "BEGIN:VALARM", "TRIGGER:-PT5M", "END:VALARM", "END:VEVENT", "END:VCALENDAR", ""].joined(separator: "\r\n")
        }
        try event("Shared").write(to: calendar, atomically: true, encoding: .utf8)
        let file = bus.directory.appendingPathComponent("alarms.toml")
        try """
            [[alarm]]
            id = "plain"
            title = "Plain"
            when = "in 3s"

            [[calendar]]
            path = "\(calendar.path)"
            """.write(to: file, atomically: true, encoding: .utf8)
        let crashing = ["CHIME_TEST_CRASH_READING": calendar.path]
        let arguments = ["--config", file.path]
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: arguments, environment: crashing)
        #expect(recorder.waitForCalls(1).map(\.summary) == ["Plain"])
        #expect(daemon.isRunning)
        #expect(daemon.log.contains("quarantined: the alarm file's reader stopped twice (killed by signal"), "\(daemon.log)")
        #expect(daemon.log.contains("while reading \(calendar.path); it is left out until it changes"), "\(daemon.log)")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("\(calendar.path): not read: chime's reader stopped twice reading it (it crashed, or ran past its time limit); it is read again once it changes"),
                "\(status.stdout)")
        #expect(try center().pendingSummaries().map(\.identifier) == [])
        // Changed (a sync brought a new version), it is read again: here by a daemon without the crash.
        daemon.stop()
        try event("Shared, moved").write(to: calendar, atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: arguments)
        defer { daemon.stop() }
        #expect(try waitUntil { try center().pendingSummaries().map(\.identifier) == ["ics-shared-1"] })
    }

    @Test func aStoredRequestThatNoLongerValidatesIsQuarantinedNotFired() throws {
        // What an older chime accepted and stored: an expiry of Int64.max seconds, which trapped
        // at fire time and then at every start, in catch-up.
        let store = try Store(directory: state, now: WallClock.system.now())
        var bad = try request("overflow", in: 1)
        bad.content.expiry = .after(.seconds(.max))
        try store.add(bad, nextFire: WallClock.system.now() + .seconds(1))
        try store.add(try request("fine", in: 2), nextFire: WallClock.system.now() + .seconds(2))
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let calls = recorder.waitForCalls(1)
        #expect(calls.map(\.summary) == ["fine"])
        #expect(daemon.isRunning)
        let summary = try center().pendingSummaries().first { $0.identifier == "overflow" }
        #expect(summary?.state == .quarantined)
        #expect(summary?.note.contains("expire: must be 1s-1d") == true)
        // Kept and listed, never planned again: a skip or an enable is refused, with why.
        for arguments in [["skip", "overflow"], ["enable", "overflow"]] {
            let refused = try runChime(arguments, environment: bus.environment())
            #expect(refused.status == 64, "\(arguments): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("\"overflow\" is quarantined (") && refused.stderr.contains("chime cancel overflow removes it"),
                    "\(refused.stderr)")
        }
        #expect(try center().pendingSummaries().first { $0.identifier == "overflow" }?.state == .quarantined)
        #expect(recorder.calls.map(\.summary) == ["fine"])
    }
}

/// docs/dbus-interface.md's examples, run as written against the real daemon.
@Suite struct InterfaceDocumentationTests {
    @Test func theBusctlAndGdbusExamplesRunAsWritten() throws {
        let bus = try PrivateBus()
        let state = bus.directory.appendingPathComponent("state").path
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let document = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/dbus-interface.md"), encoding: .utf8)
        let block = try #require(document.components(separatedBy: "```sh\n").last?.components(separatedBy: "```").first)
        let commands = block.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            .map(String.init).filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(commands.count == 5)
        var outputs: [String] = []
        for command in commands {
            let result = try runProgram("/bin/sh", [Array("-c".utf8), Array(command.utf8)], environment: bus.environment())
            #expect(result.status == 0, "\(command): \(result.stderr)")
            outputs.append(result.stdout)
        }
        #expect(outputs[0].hasPrefix("sx \"timer-"))
        #expect(outputs[1].hasPrefix("sx \"homeroom\""))
        #expect(outputs[2].hasPrefix("('timer-"))
        #expect(outputs[3].contains("\"homeroom\"") && outputs[3].contains("\"Stretch\""))
        #expect(outputs[4] == "as 1 \"homeroom\"\n")
        #expect(try UserNotificationCenter(connection: bus.connect()).pendingSummaries().map(\.title).sorted() == ["Stretch", "Tea"])
    }
}

/// What another client of the session bus cannot do to the daemon.
@Suite struct HostileClientTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }

    @Test func aForgedServerLeftSignalSilencesNothing() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let forger = try bus.connect()
        let target = try #require(try forger.nameOwner("org.chime.Scheduler"))
        let server = try #require(try forger.nameOwner("org.freedesktop.Notifications"))
        // "The notification server left", sent straight to the daemon by a client that is not the bus.
        try forger.send(try Message.signal(
            path: "/org/freedesktop/DBus", interface: .dbus, member: "NameOwnerChanged",
            arguments: [.string("org.freedesktop.Notifications"), .string(server), .string("")], destination: BusName(rawValue: target)))
        // And a forged close of a popup that is not closed.
        try forger.send(try Message.signal(
            path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: "NotificationClosed",
            arguments: [.uint32(1), .uint32(2)], destination: BusName(rawValue: target)))
        forger.flush()
        usleep(200_000)
        let added = try UserNotificationCenter(connection: bus.connect()).add(NotificationRequest(
            identifier: "", content: NotificationContent(title: "Still here"), trigger: try Trigger(parsing: "in 1s", anchor: WallClock.system.now())))
        let calls = recorder.waitForCalls(1)
        #expect(calls.map(\.summary) == ["Still here"])
        // Recorded as shown once the server answers its Notify, a moment after it arrived there.
        #expect(try waitUntil { try UserNotificationCenter(connection: bus.connect()).deliveredNotifications().map(\.identifier) == [added.identifier] })
    }

    @Test func aDaemonThatDiesMidCallIsNamedAsTheDaemon() throws {
        defer { bus.stop() }
        // A stand-in that owns the daemon's name and drops off the bus when asked for the list.
        nonisolated(unsafe) let fake = try bus.connect()
        #expect(try fake.requestName("org.chime.Scheduler") == .primaryOwner)
        nonisolated(unsafe) var closed = false
        fake.export(ExportedObject(interfaces: [ExportedInterface("org.chime.Scheduler1", methods: [
            ExportedMethod("ListPending") { _ in
                closed = true
                fake.close()
                return []
            },
        ])]), at: "/org/chime/Scheduler")
        let server = Thread { _ = fake.run(until: .now + .seconds(10)) { !closed } }
        server.start()
        let result = try runChime(["list"], environment: bus.environment())
        #expect(result.status == 71)
        #expect(result.stderr.hasPrefix("chime: the chime daemon left the bus during the call"), "\(result.stderr)")
        #expect(!result.stderr.contains("notification server"))
    }

    @Test func daemonsStartedTogetherLeaveExactlyOne() throws {
        defer { bus.stop() }
        // Five at once on a fresh state directory: one runs, the others say why they stop.
        let daemons = try (0..<5).map { _ in try DaemonProcess(bus: bus, stateDirectory: state, waitForName: false) }
        defer { daemons.forEach { $0.stop() } }
        try bus.waitForName("org.chime.Scheduler")
        let deadline = Date().addingTimeInterval(10)
        while daemons.filter(\.isRunning).count > 1, Date() < deadline { usleep(20_000) }
        #expect(daemons.filter(\.isRunning).count == 1)
        #expect(daemons[0].log.components(separatedBy: "another chime daemon is already running").count - 1 == 4)
        #expect(!daemons[0].log.contains("database is locked"))
        let added = try UserNotificationCenter(connection: bus.connect()).add(NotificationRequest(
            identifier: "after-the-race", content: NotificationContent(title: "x"), trigger: try Trigger(parsing: "in 1h", anchor: WallClock.system.now())))
        #expect(added.identifier == "after-the-race")
    }
}
