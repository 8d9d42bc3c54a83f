import DBus
import Foundation
import Notifications
import Testing
import TestSupport

/// The notification client against dunst, a real third-party server, under Xvfb on a private bus.
@Suite struct DunstTests {
    let session: DunstSession
    var bus: PrivateBus { session.bus }
    var dunst: Dunst { session.dunst }

    init() throws { session = try DunstSession() }

    func finish() { session.stop() }

    @Test func serverInformationNamesDunst() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        let info = try client.serverInformation()
        #expect(info.name == "dunst")
        #expect(info.specVersion == "1.2")
        let capabilities = try client.capabilities()
        #expect(capabilities.contains(.actions))
        #expect(capabilities.contains(.body))
        #expect(!capabilities.contains(.sound))
    }

    @Test func notifyReturnsAnIdAndCloseReportsReasonThree() throws {
        defer { finish() }
        let connection = try bus.connect()
        let client = NotificationClient(connection: connection)
        var events: [NotificationEvent] = []
        try client.subscribe { events.append($0) }
        let id = try client.notify(Notification(summary: "Tea", body: "is ready", hints: [.urgency(.low)]))
        #expect(id > 0)
        try client.close(id)
        let result = connection.run(until: .now + .seconds(5)) { !events.contains { $0.id == id } }
        #expect(result == .finished)
        #expect(events.contains(.closed(id: id, reason: .closedByCall)))
    }

    @Test func replacingKeepsTheId() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        let id = try client.notify(Notification(summary: "Download", body: "10%"))
        let again = try client.notify(Notification(replacesID: id, summary: "Download", body: "90%"))
        #expect(again == id)
        let other = try client.notify(Notification(summary: "Another"))
        #expect(other != id)
    }

    @Test func dunstInvokesTheDefaultAction() throws {
        defer { finish() }
        let connection = try bus.connect()
        let client = NotificationClient(connection: connection)
        var events: [NotificationEvent] = []
        try client.subscribe { events.append($0) }
        let id = try client.notify(Notification(summary: "Alarm", actions: [.default(label: "Open"), Action(key: "snooze", label: "Snooze")],
                                                expiration: .never))
        // dunst's own control interface: invoke the default action of the first popup.
        try invokeDunstAction(connection)
        let result = connection.run(until: .now + .seconds(5)) { !events.contains(.actionInvoked(id: id, key: "default")) }
        #expect(result == .finished)
    }

    @Test func allStandardHintsAreAccepted() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        let image = try ImageData(width: 2, height: 1, hasAlpha: true, pixels: [255, 0, 0, 255, 0, 0, 255, 128])
        let id = try client.notify(Notification(
            appName: "chime-test", icon: "dialog-information", summary: "Every hint", body: "<b>bold</b>",
            hints: [.urgency(.critical), .category("im.received"), .desktopEntry("chime"), .imagePath("dialog-warning"),
                    .imageData(image), .soundName("bell"), .soundFile("/usr/share/sounds/x.oga"), .suppressSound(true),
                    .transient(true), .resident(false), .x(10), .y(20), .actionIcons(false), .senderPID(Int64(getpid())),
                    .custom(name: "x-chime-extra", value: .vardict([("k", .uint64(1))]))],
            expiration: .milliseconds(3000)))
        #expect(id > 0)
    }
}

/// Calls dunst's `org.dunstproject.cmd0.NotificationAction(0)`, which `dunstctl action 0` uses.
func invokeDunstAction(_ connection: Connection) throws {
    _ = try connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                            interface: "org.dunstproject.cmd0", member: "NotificationAction", arguments: [.uint32(0)])
}
