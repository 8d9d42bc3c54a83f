import DBus
import Foundation
import Testing
import TestSupport
import UserNotifications

/// Code written as an iOS developer writes it, against the real daemon and dunst on a private bus
/// (the center is made for that bus; `UNUserNotificationCenter.current()` is the same on the
/// session bus). The daemon's own `Fired` signal tells when each arrived.
@Suite(.serialized) struct AppleStyleTests {
    /// A private bus with dunst and the daemon, and a listener for the daemon's signals.
    final class Desktop: @unchecked Sendable {
        let session: DunstSession
        let daemon: DaemonProcess
        let address: String
        let lock = NSLock()
        private var _fired: [(id: String, due: Int64, at: Date)] = []
        var fired: [(id: String, due: Int64, at: Date)] { lock.withLock { _fired } }
        private var listening = true
        private var listener: Thread?

        init(dunst: Bool = true) throws {
            session = try DunstSession()
            address = session.bus.address
            daemon = try DaemonProcess(bus: session.bus, stateDirectory: session.bus.directory.appendingPathComponent("state").path)
            // The daemon's Fired signals, timestamped as they arrive, on a thread and connection of
            // their own: when an alarm fired does not depend on how busy the test's thread is.
            let connection = try session.bus.connect()
            _ = try connection.subscribe(MatchRule(interface: "org.chime.Scheduler1", member: "Fired")) { [weak self] message in
                let arguments = message.arguments()
                guard let self, let id = arguments.first?.stringValue, arguments.count > 1, case .int64(let due) = arguments[1] else { return }
                let now = Date()
                self.lock.withLock { self._fired.append((id, due, now)) }
            }
            nonisolated(unsafe) let owned = connection
            let thread = Thread { [weak self] in
                while self?.lock.withLock({ self?.listening ?? false }) ?? false {
                    _ = owned.run(until: .now + .milliseconds(50)) { true }
                }
            }
            listener = thread
            thread.start()
        }

        /// When the daemon said `id` was due, and when its Fired signal reached this test (nil: not
        /// within `timeout`).
        func waitFired(_ id: String, timeout: TimeInterval = 30) -> (due: Int64, at: Date)? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let fired = fired.first(where: { $0.id == id }) { return (fired.due, fired.at) }
                usleep(10_000)
            }
            return fired.first { $0.id == id }.map { ($0.due, $0.at) }
        }

        func center(_ app: String = "org.example.habits") -> UNUserNotificationCenter {
            UNUserNotificationCenter(applicationIdentifier: app, busAddress: address)
        }

        /// Waits until the daemon has fired `id` (watching `chime delivered`).
        func waitDelivered(_ id: String, timeout: TimeInterval = 30) throws -> Date? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let out = try runChime(["delivered", "--json"], environment: session.bus.environment()).stdout
                if out.contains("\"id\":\"\(id)\"") { return Date() }
                usleep(50_000)
            }
            return nil
        }

        func stop() {
            lock.withLock { listening = false }
            daemon.stop()
            session.stop()
        }
    }

    @Test func threeAndFiveSecondTimersArriveOnTimeWithTheirContent() async throws {
        let desktop = try Desktop()
        defer { desktop.stop() }
        let center = desktop.center("org.example.eggs")
        let granted = try await center.requestAuthorization(options: [.alert, .sound, .badge])
        #expect(granted)

        let content = UNMutableNotificationContent()
        content.title = "Wait!"
        content.body = "Your eggs are almost done!"
        content.sound = UNNotificationSound.default
        // Time-sensitive (critical urgency): dunst keeps the popup up until it is closed, so the
        // delivered list still holds it however long this test's thread takes to ask.
        content.interruptionLevel = .timeSensitive
        // The daemon counts a trigger's interval from when it takes the request: somewhere between
        // the call and its answer. Each alarm is timed against both ends, so a slow call (a loaded
        // machine) does not look like a late alarm, and an alarm early by any amount still fails.
        let eggsAsked = Date()
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 3, repeats: false)
        try await center.add(UNNotificationRequest(identifier: "eggs", content: content, trigger: trigger))
        let eggsAnswered = Date()

        let tea = UNMutableNotificationContent()
        tea.title = "Tea"
        tea.subtitle = "Green"
        tea.body = "Ready"
        tea.sound = UNNotificationSound(named: UNNotificationSoundName(rawValue: "bell.mp3"))
        tea.userInfo = ["cups": 2, "kind": "sencha"]
        tea.interruptionLevel = .timeSensitive
        let teaAsked = Date()
        let added: Bool = await withCheckedContinuation { continuation in
            center.add(UNNotificationRequest(identifier: "tea", content: tea,
                                             trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false))) { error in
                continuation.resume(returning: error == nil)
            }
        }
        let teaAnswered = Date()
        #expect(added)

        // Pending, for this program, with what was asked. The two timers may have fired already
        // when this thread lists them (a busy machine can hold it back longer than 5 s), so what a
        // pending request carries is read from a third one with tea's content, an hour away; each
        // timer is pending or has fired (the daemon's Fired signal), never neither.
        try await center.add(UNNotificationRequest(identifier: "later", content: tea,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)))
        let pending = await center.pendingNotificationRequests()
        let pendingIDs = Set(pending.map(\.identifier))
        #expect(pendingIDs.contains("later"), "\(pendingIDs)")
        for id in ["eggs", "tea"] {
            #expect(pendingIDs.contains(id) || desktop.waitFired("org.example.eggs/\(id)") != nil, "\(id): \(pendingIDs)")
        }
        let pendingLater = try #require(pending.first { $0.identifier == "later" })
        #expect(pendingLater.content.title == "Tea")
        #expect(pendingLater.content.subtitle == "Green")
        #expect(pendingLater.content.body == "Ready")
        #expect(pendingLater.content.userInfo["cups"] as? String == "2")
        #expect(pendingLater.content.sound?.chimeSound == .named("bell"))
        #expect((pendingLater.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 3600)
        // chime list shows them under the program's name.
        let list = try runChime(["list"], environment: desktop.session.bus.environment()).stdout
        #expect(list.contains("org.example.eggs/later"), "\(list)")

        // When each was due and shown, as the daemon says (Fired's due, the delivered list's date,
        // both in whole seconds): due its interval after the call (counted from some moment between
        // the call and its answer), shown at that time. The signal reached this test no earlier
        // than the interval after the call: never early, however busy the machine.
        let eggsFired = try #require(desktop.waitFired("org.example.eggs/eggs", timeout: 30))
        let teaFired = try #require(desktop.waitFired("org.example.eggs/tea", timeout: 30))
        #expect(try desktop.waitDelivered("org.example.eggs/tea", timeout: 30) != nil)
        func dueAsAsked(_ due: Int64, after interval: TimeInterval, askedAt asked: Date, answeredAt answered: Date) -> Bool {
            due >= Int64((asked.timeIntervalSince1970 + interval).rounded(.down)) && Double(due) <= answered.timeIntervalSince1970 + interval
        }
        #expect(dueAsAsked(eggsFired.due, after: 3, askedAt: eggsAsked, answeredAt: eggsAnswered),
                "eggs due \(eggsFired.due), asked at \(eggsAsked.timeIntervalSince1970), answered at \(eggsAnswered.timeIntervalSince1970)")
        #expect(dueAsAsked(teaFired.due, after: 5, askedAt: teaAsked, answeredAt: teaAnswered),
                "tea due \(teaFired.due), asked at \(teaAsked.timeIntervalSince1970), answered at \(teaAnswered.timeIntervalSince1970)")
        #expect(eggsFired.at.timeIntervalSince(eggsAsked) >= 3 && teaFired.at.timeIntervalSince(teaAsked) >= 5, "an alarm fired early")
        let delivered = await center.deliveredNotifications()
        #expect(Set(delivered.map(\.request.identifier)) == ["eggs", "tea"])
        #expect(delivered.first { $0.request.identifier == "eggs" }?.request.content.body == "Your eggs are almost done!")
        for (id, due) in [("eggs", eggsFired.due), ("tea", teaFired.due)] {
            let shown = try #require(delivered.first { $0.request.identifier == id }).date
            let late = Int64(shown.timeIntervalSince1970.rounded(.down)) - due
            #expect((0...2).contains(late), "\(id) shown \(late) s after it was due")
        }
        center.removePendingNotificationRequests(withIdentifiers: ["later"])
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    /// Apple's critical sounds are heard on a muted device: chime's insist, with the audio volume as
    /// the sound's own volume; both reach the daemon and come back.
    @Test func aCriticalSoundInsistsAtItsVolume() async throws {
        let desktop = try Desktop()
        defer { desktop.stop() }
        let center = desktop.center("org.example.wake")
        let content = UNMutableNotificationContent()
        content.title = "Wake up"
        content.sound = UNNotificationSound.criticalSoundNamed(UNNotificationSoundName("bell"), withAudioVolume: 0.7)
        try await center.add(UNNotificationRequest(identifier: "wake", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)))
        let shown = try runChime(["show", "org.example.wake/wake", "--json"], environment: desktop.session.bus.environment())
        #expect(shown.stdout.contains(#""volume":70,"fade":0,"fadeFrom":null,"insist":true"#), "\(shown.stdout)")
        let pending = try #require(await center.pendingNotificationRequests().first)
        #expect(pending.content.sound == UNNotificationSound.criticalSoundNamed(UNNotificationSoundName("bell"), withAudioVolume: 0.7))
        #expect(pending.content.sound != UNNotificationSound(named: UNNotificationSoundName("bell")))
        #expect(UNNotificationSound.defaultCriticalSound(withAudioVolume: 0).volume == 1, "silence is no alarm: at least 1%")
    }

    @Test func weekdayRemindersListTheirNextDatesAndOneCanBeRemoved() async throws {
        let desktop = try Desktop()
        defer { desktop.stop() }
        let center = desktop.center()
        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        for weekday in [2, 4, 6] {  // Monday, Wednesday, Friday (1 is Sunday)
            var components = DateComponents()
            components.weekday = weekday
            components.hour = 16
            components.minute = 35
            let content = UNMutableNotificationContent()
            content.title = "Habit check"
            content.body = names[weekday - 1]
            let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
            try await center.add(UNNotificationRequest(identifier: "habit/\(names[weekday - 1])", content: content, trigger: trigger))
        }
        let pending = await center.pendingNotificationRequests()
        #expect(Set(pending.map(\.identifier)) == ["habit/Monday", "habit/Wednesday", "habit/Friday"])
        // Each lists the next such weekday at 16:35 in the system's zone.
        let calendar = Calendar.current
        for request in pending {
            let trigger = try #require(request.trigger as? UNCalendarNotificationTrigger)
            #expect(trigger.repeats)
            #expect(trigger.dateComponents.weekday == names.firstIndex(of: String(request.identifier.dropFirst(6))).map { $0 + 1 })
            let next = try #require(trigger.nextTriggerDate())
            let parts = calendar.dateComponents([.weekday, .hour, .minute, .second], from: next)
            #expect(parts.weekday == trigger.dateComponents.weekday)
            #expect(parts.hour == 16 && parts.minute == 35 && parts.second == 0)
            #expect(next > Date() && next.timeIntervalSinceNow <= 7 * 86_400)
            // The daemon agrees.
            let fresh = UNCalendarNotificationTrigger(dateMatching: trigger.dateComponents, repeats: true)
            #expect(fresh.nextTriggerDate() == next)
        }
        center.removePendingNotificationRequests(withIdentifiers: ["habit/Monday"])
        let left = await center.pendingNotificationRequests()
        #expect(Set(left.map(\.identifier)) == ["habit/Wednesday", "habit/Friday"])
        // Only the hour: the next 09:00, once.
        var nine = DateComponents()
        nine.hour = 9
        let once = UNCalendarNotificationTrigger(dateMatching: nine, repeats: false)
        let next = try #require(once.nextTriggerDate())
        #expect(calendar.component(.hour, from: next) == 9 && calendar.component(.minute, from: next) == 0)
        #expect(next > Date() && next.timeIntervalSinceNow <= 86_400)
    }

    @Test func requestsOfOneProcessArePendingForAnotherAndSurviveARestart() async throws {
        let desktop = try Desktop()
        defer { desktop.stop() }
        let content = UNMutableNotificationContent()
        content.title = "Stand up"
        try await desktop.center().add(UNNotificationRequest(identifier: UUID().uuidString, content: content,
                                                             trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: true)))
        // Another program's request is not this program's.
        try await desktop.center("org.example.other").add(UNNotificationRequest(identifier: "x", content: content,
                                                                                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
        // Another process (a new center, its own connection) sees it; so does it after a daemon restart.
        #expect(await desktop.center().pendingNotificationRequests().count == 1)
        desktop.daemon.stop()
        let again = try DaemonProcess(bus: desktop.session.bus, stateDirectory: desktop.session.bus.directory.appendingPathComponent("state").path)
        defer { again.stop() }
        let after = await desktop.center().pendingNotificationRequests()
        #expect(after.count == 1)
        #expect(after.first?.content.title == "Stand up")
        #expect((after.first?.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 3600)
        // Removing all removes only this program's (one center's calls are done in order, as Apple's are).
        let center = desktop.center()
        center.removeAllPendingNotificationRequests()
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await desktop.center("org.example.other").pendingNotificationRequests().count == 1)
    }

    @Test func settingsAreDeniedWithoutAServerAndAuthorizedWithDunst() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let lonely = UNUserNotificationCenter(applicationIdentifier: "org.example.x", busAddress: bus.address)
        let denied = await lonely.notificationSettings()
        #expect(denied.authorizationStatus == .denied)
        #expect(denied.alertSetting == .disabled)
        await #expect(throws: Never.self) { _ = try await lonely.requestAuthorization(options: [.alert]) }
        #expect(try await lonely.requestAuthorization(options: [.alert]) == false)

        let desktop = try Desktop()
        defer { desktop.stop() }
        let settings = await desktop.center().notificationSettings()
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled)
        #expect(settings.badgeSetting == .notSupported)
        #expect(settings.soundSetting == (settings.chime.sound == .notSupported ? .notSupported : .enabled))
        let nothing = await withCheckedContinuation { continuation in
            desktop.center().getNotificationSettings { settings in continuation.resume(returning: settings.authorizationStatus) }
        }
        #expect(nothing == .authorized)
    }

    @Test func withoutADaemonAddSaysSo() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let center = UNUserNotificationCenter(applicationIdentifier: "org.example.x", busAddress: bus.address)
        let content = UNMutableNotificationContent()
        content.title = "x"
        do {
            try await center.add(UNNotificationRequest(identifier: "x", content: content, trigger: nil))
            Issue.record("added without a daemon")
        } catch {
            #expect("\(error)".contains("the chime daemon is not running"), "\(error)")
        }
    }

    @Test func repeatingIntervalsUnderAMinuteAreApplesError() {
        #expect(UNTimeIntervalNotificationTrigger.problem(timeInterval: 30, repeats: true) == "time interval must be at least 60 if repeating")
        #expect(UNTimeIntervalNotificationTrigger.problem(timeInterval: 0, repeats: false) == "time interval must be greater than 0")
        #expect(UNTimeIntervalNotificationTrigger.problem(timeInterval: 60, repeats: true) == nil)
        #expect(UNTimeIntervalNotificationTrigger.problem(timeInterval: 3, repeats: false) == nil)
    }
}

/// Marks the main queue, to tell it from other queues (on Linux the main queue may be drained by a
/// thread other than the process's first, as under `dispatchMain()`).
let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// The delegate: a click reaches `didReceive` on the main queue with the action's identifier.
@MainActor final class Recorder: NSObject, UNUserNotificationCenterDelegate {
    var presented: [String] = []
    var responses: [(String, String)] = []
    var onMain = true

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                            withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        let id = notification.request.identifier
        let main = DispatchQueue.getSpecific(key: mainQueueKey) == true
        MainActor.assumeIsolated {
            presented.append(id)
            onMain = onMain && main
        }
        completionHandler([.sound, .banner, .list, .badge])
    }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                            withCompletionHandler completionHandler: @escaping () -> Void) {
        let pair = (response.notification.request.identifier, response.actionIdentifier)
        let main = DispatchQueue.getSpecific(key: mainQueueKey) == true
        MainActor.assumeIsolated {
            responses.append(pair)
            onMain = onMain && main
        }
        completionHandler()
    }
}

@Suite struct DelegateTests {
    @MainActor @Test func aClickReachesTheDelegate() async throws {
        let session = try DunstSession()
        let daemon = try DaemonProcess(bus: session.bus, stateDirectory: session.bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); session.stop() }
        let center = UNUserNotificationCenter(applicationIdentifier: "org.example.click", busAddress: session.bus.address)
        _ = mainQueueKey
        let recorder = Recorder()
        center.delegate = recorder
        let done = UNNotificationAction(identifier: "done", title: "Done")
        center.setNotificationCategories([UNNotificationCategory(identifier: "habit", actions: [done], intentIdentifiers: [])])
        let content = UNMutableNotificationContent()
        content.title = "Water the plants"
        content.categoryIdentifier = "habit"
        try await center.add(UNNotificationRequest(identifier: "plants", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
        func waitUntil(_ condition: () -> Bool) async -> Bool {
            let deadline = Date().addingTimeInterval(30)  // a bound for a failure only
            while Date() < deadline {
                if condition() { return true }
                try? await Task.sleep(nanoseconds: 25_000_000)
            }
            return condition()
        }
        #expect(await waitUntil { recorder.presented == ["plants"] }, "\(recorder.presented)")
        // The user clicks the popup (dunst's default action), as a tap on iOS.
        let clicked = try runProgram("/usr/bin/dunstctl", [Array("action".utf8), Array("0".utf8)],
                                     environment: session.bus.environment().merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(clicked.status == 0, "\(clicked.stderr)")
        #expect(await waitUntil { !recorder.responses.isEmpty }, "no response")
        #expect(recorder.responses.first?.0 == "plants")
        #expect(recorder.responses.first?.1 == UNNotificationDefaultActionIdentifier)
        #expect(recorder.onMain, "delegate methods are called on the main queue")
    }

    /// A button of the category reaches the delegate with its identifier; a delegate that answers
    /// `willPresent` with no banner, alert or list has the popup taken down (our recording server
    /// beside dunst, to press a button by its key and see the close on the wire).
    @MainActor @Test func aCategoryButtonReachesTheDelegateAndWillPresentDecides() async throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let center = UNUserNotificationCenter(applicationIdentifier: "org.example.buttons", busAddress: bus.address)
        final class Quiet: NSObject, UNUserNotificationCenterDelegate {
            var responses: [String] = []
            func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
                -> UNNotificationPresentationOptions {
                notification.request.identifier == "quiet" ? [.sound] : [.banner, .list]
            }
            func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
                responses.append(response.actionIdentifier)
            }
        }
        let delegate = Quiet()
        center.delegate = delegate
        let done = UNNotificationAction(identifier: "done", title: "Done")
        let skip = UNNotificationAction(identifier: "skip", title: "Skip", options: [.destructive])
        center.setNotificationCategories([UNNotificationCategory(identifier: "habit", actions: [done, skip], intentIdentifiers: [])])
        for id in ["loud", "quiet"] {
            let content = UNMutableNotificationContent()
            content.title = id.capitalized
            content.categoryIdentifier = "habit"
            try await center.add(UNNotificationRequest(identifier: id, content: content,
                                                       trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
        }
        let calls = recorder.waitForCalls(2)
        try #require(calls.count == 2)
        #expect(calls.allSatisfy { $0.actions == ["default", "Open", "done", "Done", "skip", "Skip"] }, "\(calls.map(\.actions))")
        // The ids the server gave (the library may take "quiet" down before `chime delivered` is read).
        let quietID = try #require(calls.first { $0.summary == "Quiet" }?.assignedID)
        let loudID = try #require(calls.first { $0.summary == "Loud" }?.assignedID)
        #expect(try UserNotificationsTestSupport.serverID(of: "org.example.buttons/loud", on: bus) == loudID)
        // willPresent said [.sound] for "quiet": taken down.
        var deadline = Date().addingTimeInterval(30)  // a bound for a failure only
        while !recorder.closedIDs.contains(quietID), Date() < deadline { try await Task.sleep(nanoseconds: 30_000_000) }
        #expect(recorder.closedIDs.contains(quietID))
        #expect(!recorder.closedIDs.contains(loudID))
        try recorder.invokeAction(id: loudID, key: "done")
        deadline = Date().addingTimeInterval(30)
        while delegate.responses.isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 30_000_000) }
        #expect(delegate.responses == ["done"])
    }
}

enum UserNotificationsTestSupport {
    /// The notification server's id for a delivered alarm, from `chime delivered --json`.
    static func serverID(of identifier: String, on bus: PrivateBus) throws -> UInt32? {
        let deadline = Date().addingTimeInterval(30)  // a bound for a failure only
        while Date() < deadline {
            let out = try runChime(["delivered", "--json"], environment: bus.environment()).stdout
            if let data = out.data(using: .utf8), let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]],
                let item = list.first(where: { $0["id"] as? String == identifier }), let id = item["notificationID"] as? Int {
                return UInt32(id)
            }
            usleep(30_000)
        }
        return nil
    }
}
