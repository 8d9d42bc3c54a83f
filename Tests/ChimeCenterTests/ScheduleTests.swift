import ChimeCenter
import DBus
import Foundation
import Notifications
import Testing
import TestSupport
import Timekeeping

@Suite struct ScheduleTests {
    let now = CivilTime(year: 2026, month: 11, day: 22, hour: 12).localSeconds

    func request(_ id: String, _ rule: String, title: String = "x") throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: title),
                            trigger: try Trigger(parsing: rule, timeZone: "UTC", anchor: now))
    }

    @Test func addingTheSameIdentifierReplaces() throws {
        var schedule = Schedule()
        #expect(!schedule.add(try request("tea", "in 5m")))
        #expect(schedule.add(try request("tea", "in 3m", title: "Tea!")))
        #expect(schedule.pending.count == 1)
        #expect(schedule.pending[0].content.title == "Tea!")
    }

    @Test func pendingRequestsAreSortedByNextFire() throws {
        var schedule = Schedule()
        schedule.add(try request("later", "18:00"))
        schedule.add(try request("soon", "in 5m"))
        schedule.add(try request("past", "2020-01-01 00:00"))
        schedule.add(try request("tomorrow", "09:00"))
        let order = schedule.pendingRequests(after: now)
        #expect(order.map(\.request.identifier) == ["soon", "later", "tomorrow", "past"])
        #expect(order[0].nextFire == now + 300)
        #expect(order[3].nextFire == nil)
        #expect(schedule.removePending(withIdentifiers: ["soon", "nope"]) == ["soon"])
        #expect(schedule.pending.count == 3)
        schedule.removeAllPending()
        #expect(schedule.pending.isEmpty)
    }

    @Test func deliveredNotificationsAreShownAndClosed() throws {
        let session = try RecorderSession(capabilities: ["actions", "body"])
        defer { session.stop() }
        let deliverer = Deliverer(connection: try session.bus.connect())
        var schedule = Schedule()
        var homeroom = try request("homeroom", "16:35 mon-fri", title: "Homeroom")
        homeroom.content.actions = [.snooze, .dismiss]
        homeroom.content.sound = .named("bell")
        let rendered = try deliverer.deliver(homeroom, at: now, into: &schedule)
        #expect(rendered.playLocally == .named("bell"))  // the recorder plays no sounds
        _ = try deliverer.deliver(try request("eggs", "in 5m", title: "Wait!"), at: now + 1, into: &schedule)
        #expect(schedule.deliveredNotifications().map(\.identifier) == ["homeroom", "eggs"])
        // Delivering the same identifier again replaces the popup.
        _ = try deliverer.deliver(homeroom, at: now + 2, into: &schedule)
        let calls = session.recorder.waitForCalls(3)
        #expect(calls.map(\.replacesID) == [0, 0, 1])
        #expect(calls[0].actions == ["snooze", "Snooze", "dismiss", "Dismiss"])
        try deliverer.removeDelivered(withIdentifiers: ["homeroom"], from: &schedule)
        #expect(session.recorder.closedIDs == [1])
        #expect(schedule.deliveredNotifications().map(\.identifier) == ["eggs"])
    }

    @Test func theScheduleRoundTripsThroughJSON() throws {
        var schedule = Schedule()
        schedule.add(try request("a", "*:0/15"))
        schedule.recordDelivery(DeliveredNotification(identifier: "b", serverID: 7, date: now, content: NotificationContent(title: "b")))
        let decoded = try JSONDecoder().decode(Schedule.self, from: JSONEncoder().encode(schedule))
        #expect(decoded == schedule)
    }
}
