import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Synchronization
import Testing
import TestSupport
import Timekeeping

/// Notification servers that refuse, hang, crawl or die: the real daemon loses no alarm to them,
/// and none of them makes another alarm or a client wait.
@Suite struct FaultyServerTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }


    /// One-offs `apart` from each other from `start`, in one call (AddAll): one call each could take
    /// longer than the time ahead on a busy machine, and the last would be in the past when sent.
    func addAll(_ titles: [String], from start: Instant, apart: TimeSpan) throws {
        let added = try center().addAll(titles.enumerated().map { i, title in
            NotificationRequest(identifier: "", content: NotificationContent(title: title),
                                trigger: Trigger(rule: .instant(start + TimeSpan(nanoseconds: apart.nanoseconds * Int64(i))), repeats: false,
                                                 timeZone: nil, anchor: WallClock.system.now()))
        })
        #expect(added.count == titles.count)
    }

    /// A one-off alarm with this title, due at `due`.
    @discardableResult
    func add(_ title: String, at due: Instant) throws -> String {
        try center().add(NotificationRequest(identifier: "", content: NotificationContent(title: title),
                                             trigger: Trigger(rule: .instant(due), repeats: false, timeZone: nil, anchor: WallClock.system.now()))).identifier
    }


    @Test func anErrorFromTheServerIsRetriedNotDeleted() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .errorReply
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let due = WallClock.system.now() + .seconds(1)
        let titles = (0..<10).map { "refused \($0)" }
        for title in titles { try add(title, at: due) }
        // Refused, and kept: each is retrying, with the server's reason.
        #expect(waitUntil(30) { Set(recorder.refusedCalls.map(\.summary)).count == 10 })
        #expect(try waitUntil { try center().pendingSummaries().filter { $0.state == .retrying }.count == 10 })
        // (Which attempt: the first retry comes a second later, perhaps before `chime list` runs.)
        let list = try runChime(["list"], environment: bus.environment())
        #expect(list.stdout.contains(/retrying: attempt [0-9]+ failed: org\.freedesktop\.Notifications\.Error\.Failed: the test server refuses/),
                "\(list.stdout)")
        // The server mends: every alarm arrives, once.
        recorder.fault = .none
        #expect(waitUntil { recorder.calls.count >= 10 })
        #expect(try waitUntil { try center().pendingSummaries().isEmpty })
        usleep(300_000)  // and none comes twice
        #expect(recorder.calls.map(\.summary).sorted() == titles.sorted())
        #expect(try center().missedOccurrences().isEmpty)
    }

    /// Plasma refuses a notification identical to the one it showed less than a second before:
    /// two alarms with the same title at the same time both show, at once, neither retried later.
    @Test func twoAlarmsAlikeBothShowOnAServerThatRefusesRepeats() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .refusesRepeats
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let due = WallClock.system.now() + .seconds(1)
        try add("Stand up", at: due)
        try add("Stand up", at: due)
        #expect(waitUntil(30) { recorder.calls.count == 2 })
        #expect(recorder.refusedCalls.count == 1)
        let shown = recorder.calls
        try #require(shown.count == 2)
        // The second differs only by a zero-width space, which nobody sees.
        func seen(_ call: RecordingServer.Call) -> String { (call.summary + "|" + call.body).replacingOccurrences(of: "\u{200B}", with: "") }
        #expect(seen(shown[0]) == seen(shown[1]))
        #expect(shown[0].summary + shown[0].body != shown[1].summary + shown[1].body)
        // At once: a retry would wait a second (Presenter.firstRetryWait).
        #expect(shown[1].receivedAt.timeIntervalSince(shown[0].receivedAt) < 0.9)
        #expect(try center().pendingSummaries().isEmpty)
    }

    /// The same for `chime notify` run twice: both shown, as the user asked.
    @Test func notifyTwiceShowsTwiceOnAServerThatRefusesRepeats() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .refusesRepeats
        defer { recorder.stop(); bus.stop() }
        for _ in 0..<2 {
            let result = try runChime(["notify", "Build done", "all green"], environment: bus.environment())
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(recorder.calls.count == 2)
        #expect(recorder.refusedCalls.count == 1)
        #expect(recorder.calls.map(\.body) == ["all green", "all green\u{200B}"])
    }

    @Test func aHungServerMakesNoClientWaitAndLosesNothing() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        recorder.fault = .neverReply
        try add("hung", at: WallClock.system.now() + .seconds(1))
        #expect(waitUntil(30) { recorder.refusedCalls.count == 1 })
        // The Notify hangs; the daemon does not.
        for arguments in [["list"], ["in", "1h", "Tea"], ["status"]] {
            let started = Date()
            let result = try runChime(arguments, environment: bus.environment())
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            // Waiting for the server would take its 10 s; a busy machine takes far less than 5.
            #expect(Date().timeIntervalSince(started) < 5, "\(arguments) waited for the hung server")
        }
        // After the server's time is up the alarm is retrying, and arrives once the server answers.
        #expect(try waitUntil { try center().pendingSummaries().contains { $0.state == .retrying } })
        recorder.fault = .none
        #expect(waitUntil { recorder.calls.contains { $0.summary == "hung" } })
    }

    @Test func aSlowServerMakesNoOtherAlarmLate() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        // (Answered 6 s late, within the daemon's 10 s: waiting for it would make the second 5 s late.)
        recorder.fault = .delay(milliseconds: 6000)
        // Far enough ahead that both are set before the first is due, however busy the machine.
        let first = WallClock.system.now() + .seconds(6)
        try add("first", at: first)
        try add("second", at: first + .seconds(1))
        #expect(waitUntil { recorder.calls.count == 2 })
        // The second reached the server on time although the first was still unanswered.
        let second = try #require(recorder.calls.first { $0.summary == "second" })
        let due = Date(timeIntervalSince1970: Double((first + .seconds(1)).nanosecondsSinceEpoch) / 1e9)
        // Waiting for the first one's answer would make it at least 5 s late.
        #expect(second.receivedAt.timeIntervalSince(due) < 3, "second arrived \(second.receivedAt.timeIntervalSince(due)) s late")
        #expect(try waitUntil(30) { try center().deliveredNotifications().count == 2 })
    }

    @Test func aServerThatDiesDuringABurstLosesNoAlarm() throws {
        let first = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        let start = WallClock.system.now() + .seconds(2)
        let titles = (0..<60).map { "burst \($0)" }
        try addAll(titles, from: start, apart: .milliseconds(20))
        // Half-way through the burst the server dies on the Notify it is given.
        #expect(waitUntil { first.calls.count >= 25 })
        first.fault = .exitOnNotify
        #expect(waitUntil(30) { !first.isServing })
        first.stop()
        let shownByFirst = Set(first.calls.map(\.summary))
        // A healthy server appears: every alarm the first did not show arrives, once, marked late.
        usleep(500_000)
        let second = try RecordingServer(address: bus.address)
        defer { second.stop() }
        let expected = Set(titles).subtracting(shownByFirst)
        #expect(waitUntil { Set(second.calls.map(\.summary)) == expected })
        usleep(500_000)
        let shownBySecond = second.calls.map(\.summary)
        #expect(shownBySecond.count == Set(shownBySecond).count, "shown twice: \(shownBySecond)")
        #expect(shownByFirst.union(shownBySecond) == Set(titles))
        #expect(shownByFirst.isDisjoint(with: shownBySecond))
        #expect(try center().pendingSummaries().isEmpty)
    }

    @Test func pastItsGraceARefusedAlarmIsRecordedMissedWithTheReason() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .errorReply
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        _ = try runChime(["in", "1s", "--grace", "2s", "--id", "brief", "Brief"], environment: bus.environment())
        #expect(try waitUntil { try !center().missedOccurrences().isEmpty })
        let missed = try center().missedOccurrences()
        #expect(missed.map(\.identifier) == ["brief"])
        #expect(missed.first?.reason?.contains("the test server refuses") == true, "\(missed)")
        let listed = try runChime(["list", "--missed"], environment: bus.environment())
        #expect(listed.stdout.contains("brief  missed ") && listed.stdout.contains("the test server refuses"), "\(listed.stdout)")
        #expect(try center().pendingSummaries().isEmpty)
    }

    @Test func aRetryingAlarmSurvivesADaemonCrash() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .errorReply
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { recorder.stop(); bus.stop() }
        _ = try runChime(["in", "1s", "--id", "stubborn", "Stubborn"], environment: bus.environment())
        #expect(try waitUntil(30) { try center().pendingSummaries().first?.state == .retrying })
        daemon.kill()
        recorder.fault = .none
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop() }
        #expect(waitUntil { recorder.calls.contains { $0.summary == "Stubborn" } })
        #expect(try waitUntil { try center().pendingSummaries().isEmpty })
        usleep(300_000)  // and it does not come twice
        #expect(recorder.calls.filter { $0.summary == "Stubborn" }.count == 1)
    }

    @Test func deliveredTellsTheTruthAcrossRestartsAndServers() throws {
        let recorder = try RecordingServer(address: bus.address)
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { bus.stop() }
        _ = try runChime(["in", "1s", "--id", "shown", "Shown"], environment: bus.environment())
        #expect(try waitUntil(30) { try center().deliveredNotifications().map(\.identifier) == ["shown"] })
        // Restarted between showing and closing, the daemon still knows the popup, and its close.
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        #expect(try center().deliveredNotifications().map(\.identifier) == ["shown"])
        let serverID = try #require(try center().deliveredNotifications().first?.serverID)
        try recorder.emitClosed(id: serverID, reason: 2)
        #expect(try waitUntil(30) { try center().deliveredNotifications().isEmpty })
        // A server that leaves the bus takes its popups with it.
        _ = try runChime(["in", "1s", "--id", "again", "Again"], environment: bus.environment())
        #expect(try waitUntil(30) { try center().deliveredNotifications().map(\.identifier) == ["again"] })
        recorder.stop()
        #expect(try waitUntil(30) { try center().deliveredNotifications().isEmpty })
        // And one that left while the daemon was down, too.
        let second = try RecordingServer(address: bus.address)
        _ = try runChime(["in", "1s", "--id", "third", "Third"], environment: bus.environment())
        #expect(try waitUntil(30) { try center().deliveredNotifications().map(\.identifier) == ["third"] })
        daemon.stop()
        second.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop() }
        #expect(try center().deliveredNotifications().isEmpty)
    }

    @Test func theBusDyingDuringABurstLosesNoAlarm() throws {
        // The store outlives this bus (and its directory), as a user's does their session's.
        let home = try makeTemporaryDirectory("chime-home")
        defer { try? FileManager.default.removeItem(at: home) }
        let state = home.appendingPathComponent("state").path
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        let start = WallClock.system.now() + .seconds(2)
        let titles = (0..<200).map { "alarm \($0)" }
        try addAll(titles, from: start, apart: .milliseconds(5))
        // Part-way through the burst, the session bus dies (its dbus-daemon killed).
        #expect(waitUntil { recorder.calls.count >= 60 })
        kill(bus.pid, SIGKILL)
        #expect(waitUntil { !daemon.isRunning })
        #expect(daemon.log.contains("the session bus went away"))
        let shownOnFirst = Set(recorder.calls.map(\.summary))
        recorder.stop()
        bus.stop()
        // A new session: a new bus, a server, the daemon on the same store.
        let next = try PrivateBus()
        let server = try RecordingServer(address: next.address)
        let again = try DaemonProcess(bus: next, stateDirectory: state)
        defer { again.stop(); server.stop(); next.stop() }
        let rest = Set(titles).subtracting(shownOnFirst)
        #expect(waitUntil { Set(server.calls.map(\.summary)).isSuperset(of: rest) }, "never shown: \(rest.subtracting(server.calls.map(\.summary)).sorted().prefix(5))")
        usleep(500_000)
        let shownOnSecond = server.calls.map(\.summary)
        #expect(shownOnSecond.count == Set(shownOnSecond).count, "shown twice on the second server")
        // Only what was in flight when the bus died may be shown again; nothing is lost.
        #expect(shownOnFirst.intersection(shownOnSecond).count <= 10)
        #expect(shownOnFirst.union(shownOnSecond) == Set(titles))
        #expect(try waitUntil { try UserNotificationCenter(connection: next.connect()).pendingSummaries().isEmpty })
    }

    @Test func aServerThatAnswersNothingHoldsUpNoClientAndSettingsSaySo() throws {
        let recorder = try RecordingServer(address: bus.address)
        recorder.fault = .hangsOnEverything
        // Started beside it: the daemon asks for its capabilities without waiting.
        let started = Date()
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        // Asking and waiting would take the server's 10 s.
        #expect(Date().timeIntervalSince(started) < 5)
        // Settings is answered once the server's time is up, and clients meanwhile wait for nothing.
        let settings = Mutex<NotificationSettings?>(nil)
        let asker = Thread { [bus] in
            let answer = try? UserNotificationCenter(connection: bus.connect()).notificationSettings()
            settings.withLock { $0 = answer }
        }
        asker.start()
        usleep(200_000)
        for arguments in [["list"], ["in", "1h", "Tea"]] {
            let begun = Date()
            #expect(try runChime(arguments, environment: bus.environment()).status == 0)
            #expect(Date().timeIntervalSince(begun) < 5, "\(arguments) waited for the server (10 s)")
        }
        #expect(waitUntil { settings.withLock { $0 } != nil })
        let answered = try #require(settings.withLock { $0 })
        #expect(!answered.isAuthorized)
        if case .denied(let reason) = answered.authorizationStatus { #expect(reason.contains("did not answer"), "\(reason)") }
        // When the server answers again, so does Settings.
        recorder.fault = .none
        #expect(try UserNotificationCenter(connection: bus.connect()).notificationSettings().isAuthorized)
    }
}
