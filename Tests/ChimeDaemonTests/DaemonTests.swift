import ChimeCenter
import ChimeDaemon
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// The real daemon process on a private bus, with our recording server (exact contents) as the notification server.
@Suite struct DaemonTests {
    let bus: PrivateBus
    let state: String

    init() throws {
        bus = try PrivateBus()
        state = bus.directory.appendingPathComponent("state").path
    }

    func center() throws -> UserNotificationCenter { UserNotificationCenter(connection: try bus.connect()) }

    func request(_ id: String, _ rule: String, title: String = "Alarm") throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: title, body: "body"),
                            trigger: try Trigger(parsing: rule, timeZone: "UTC", anchor: Int64(time(nil))))
    }

    @Test func anEggTimerReachesTheServerOnTime() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let result = try runChime(["in", "2s", "Wait!", "Your eggs are almost done!", "--json"], environment: bus.environment())
        #expect(result.status == 0, "\(result.stderr)")
        let due = Date().addingTimeInterval(2)
        let calls = recorder.waitForCalls(1, timeout: 10)
        let arrived = Date()
        try #require(calls.count == 1)
        #expect(calls[0].summary == "Wait!")
        #expect(calls[0].body == "Your eggs are almost done!")
        #expect(calls[0].actions == ["snooze", "Snooze", "dismiss", "Dismiss"])
        #expect(calls[0].hints["urgency"] == .byte(2))
        // Whole-second timers: due within the second it was set for, give or take scheduling.
        #expect(arrived.timeIntervalSince(due) < 1.5)
        // A one-off leaves the pending list once it fired.
        #expect(try center().pendingNotificationRequests().isEmpty)
        #expect(try center().deliveredNotifications().map(\.content.title) == ["Wait!"])
    }

    @Test func alarmsSurviveARestartAndACrash() throws {
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        try center().add(try request("homeroom", "16:35 mon-fri"))
        try center().add(try request("xmas", "2099-12-24 18:00"))
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
                        try center.add(try request(id, "2099-01-01 00:00"))
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
        usleep(2_000_000)
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let calls = recorder.waitForCalls(1, timeout: 5)
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
        let calls = recorder.waitForCalls(1, timeout: 5)
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
        let unusable = try runChime(["daemon", "--state-dir", "/dev/null/chime"], environment: bus.environment())
        #expect(unusable.status == 71)
        #expect(unusable.stderr.hasPrefix("chime: cannot open the state: cannot create /dev/null/chime"))
    }

    @Test func withoutADaemonTheCLISaysHowToStartOne() throws {
        defer { bus.stop() }
        let result = try runChime(["list"], environment: bus.environment())
        #expect(result.status == 67)
        #expect(result.stderr == "chime: the chime daemon is not running; start it with `chime daemon &`\n")
    }

    @Test func theInterfaceIsIntrospectableForBusctlAndGdbus() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let connection = try bus.connect()
        let xml = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: .introspectable,
                                      member: "Introspect").first?.stringValue ?? ""
        #expect(xml.contains("<interface name=\"org.chime.Scheduler1\">"))
        #expect(xml.contains("<method name=\"Schedule\">"))
        // What `gdbus call ... org.chime.Scheduler1.Schedule '' 'in 1h' 'Tea' ''` does:
        let reply = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                        member: "Schedule", arguments: [.string(""), .string("in 1h"), .string("Tea"), .string("")])
        #expect(reply.count == 2)
        do {
            _ = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                    member: "Add", arguments: [.string("{not json")])
            Issue.record("bad JSON accepted")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.chime.Scheduler.Error.InvalidRequest")
        }
    }
}

/// Rings, snoozes and dismissals driven by the server's signals, with real time a few seconds ahead.
@Suite struct RingingTests {
    let bus: PrivateBus
    let state: String

    init() throws {
        bus = try PrivateBus()
        state = bus.directory.appendingPathComponent("state").path
    }

    func center() throws -> UserNotificationCenter { UserNotificationCenter(connection: try bus.connect()) }

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
        #expect(on == soon)
        #expect((off ?? 0) >= soon + 86_400)
        let calls = recorder.waitForCalls(1, timeout: 8)
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
                                             trigger: Trigger.timeInterval(1, anchor: Int64(time(nil)))))
        let calls = recorder.waitForCalls(2, timeout: 8)
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
                                             trigger: Trigger.timeInterval(1, repeats: true, anchor: Int64(time(nil)))))
        let calls = recorder.waitForCalls(2, timeout: 8)
        try #require(calls.count >= 2)
        #expect(!recorder.closedIDs.isEmpty)
        #expect(try center().pendingNotificationRequests().map(\.request.identifier) == ["pomodoro"])
    }

    @Test func aServerKilledBeforeTheAlarmAndRestartedAfterGetsItLate() throws {
        let first = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        try center().add(NotificationRequest(identifier: "late", content: NotificationContent(title: "Held"),
                                             trigger: Trigger.timeInterval(1, anchor: Int64(time(nil)))))
        first.stop()
        usleep(2_000_000)
        let second = try RecordingServer(address: bus.address)
        defer { second.stop() }
        let calls = second.waitForCalls(1, timeout: 5)
        try #require(calls.count == 1)
        #expect(calls[0].body.hasPrefix("<b>Late: due at "))
        #expect(first.calls.isEmpty)
    }

    @Test func deliveredAlarmsAreListedAndClosedFromTheCommandLine() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        #expect(try runChime(["in", "1s", "--id", "tea", "Tea"], environment: bus.environment()).status == 0)
        _ = recorder.waitForCalls(1, timeout: 5)
        usleep(200_000)
        let listed = try runChime(["delivered"], environment: bus.environment())
        #expect(listed.stdout.hasPrefix("tea  shown "))
        #expect(try runChime(["close", "tea"], environment: bus.environment()).status == 0)
        #expect(recorder.closedIDs == [1])
        let again = try runChime(["close", "tea"], environment: bus.environment())
        #expect(again.status == 6)
        #expect(again.stderr == "chime: not delivered: tea; see chime delivered\n")
    }
}
