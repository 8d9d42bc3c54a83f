import DBus
import Foundation
import Notifications
import Testing
import TestSupport

/// Exact wire contents, seen by our recording server on a private bus.
@Suite struct ClientWireTests {
    let session: RecorderSession
    var bus: PrivateBus { session.bus }
    var recorder: RecordingServer { session.recorder }

    init() throws { session = try RecorderSession() }

    func finish() { session.stop() }

    @Test func everyArgumentAndHintHasItsWireType() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        let image = try ImageData(width: 1, height: 2, hasAlpha: false, pixels: [1, 2, 3, 4, 5, 6])
        let id = try client.notify(Notification(
            appName: "chime", replacesID: 0, icon: "alarm-symbolic", summary: "Homeroom", body: "Check the list",
            actions: [.default(), Action(key: "snooze", label: "Snooze")],
            hints: [.urgency(.critical), .category("x.y"), .desktopEntry("chime"), .imagePath("file:///i.png"),
                    .imageData(image), .soundFile("/s.oga"), .soundName("bell"), .suppressSound(true), .transient(true),
                    .resident(true), .x(3), .y(4), .actionIcons(true), .senderPID(42),
                    .custom(name: "x-vendor", value: .array(element: .uint16, [.uint16(7)]))],
            expiration: .milliseconds(1500)))
        #expect(id == 1)
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(call.arguments.map(\.signature) == ["s", "u", "s", "s", "s", "as", "a{sv}", "i"])
        #expect(call.appName == "chime")
        #expect(call.icon == "alarm-symbolic")
        #expect(call.actions == ["default", "Open", "snooze", "Snooze"])
        #expect(call.expireTimeout == 1500)
        let hints = call.hints
        #expect(hints["urgency"] == .byte(2))
        #expect(hints["category"] == .string("x.y"))
        #expect(hints["desktop-entry"] == .string("chime"))
        #expect(hints["image-path"] == .string("file:///i.png"))
        #expect(hints["image-data"] == .structure([.int32(1), .int32(2), .int32(3), .boolean(false), .int32(8), .int32(3),
                                                   .array(element: .byte, [1, 2, 3, 4, 5, 6].map(Value.byte))]))
        #expect(hints["sound-file"] == .string("/s.oga"))
        #expect(hints["sound-name"] == .string("bell"))
        #expect(hints["suppress-sound"] == .boolean(true))
        #expect(hints["transient"] == .boolean(true))
        #expect(hints["resident"] == .boolean(true))
        #expect(hints["x"] == .int32(3))
        #expect(hints["y"] == .int32(4))
        #expect(hints["action-icons"] == .boolean(true))
        #expect(hints["sender-pid"] == .int64(42))
        #expect(hints["x-vendor"] == .array(element: .uint16, [.uint16(7)]))
        // Received hints read back as the same typed hints.
        #expect(Hint(name: "urgency", value: .variant(.byte(2))) == .urgency(.critical))
        #expect(Hint(name: "image-data", value: hints["image-data"]!) == .imageData(image))
        #expect(Hint(name: "urgency", value: .int32(2)) == .custom(name: "urgency", value: .int32(2)))
    }

    @Test func expirationHidesTheProtocolSentinels() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        for expiration in [Expiration.serverDefault, .never, .milliseconds(250), Expiration(wireValue: -5)] {
            _ = try client.notify(Notification(summary: "x", expiration: expiration))
        }
        // A negative value the spec leaves undefined goes out as given, as notify-send sends `-t -5`.
        #expect(recorder.waitForCalls(4).map(\.expireTimeout) == [-1, 0, 250, -5])
        #expect(Expiration(wireValue: -1) == .serverDefault)
        #expect(Expiration(wireValue: -5) == .undefined(-5))
        #expect(Expiration(wireValue: 0) == .never)
    }

    @Test func laterHintsOfTheSameNameWin() throws {
        defer { finish() }
        let client = NotificationClient(connection: try bus.connect())
        _ = try client.notify(Notification(summary: "x", hints: [.urgency(.normal), .category("a"), .urgency(.low)]))
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(call.hints == ["urgency": .byte(0), "category": .string("a")])
    }

    @Test func signalsArriveAsTypedEvents() throws {
        defer { finish() }
        let connection = try bus.connect()
        let client = NotificationClient(connection: connection)
        var events: [NotificationEvent] = []
        try client.subscribe { events.append($0) }
        let id = try client.notify(Notification(summary: "x", actions: [.default()]))
        try recorder.emitActivationToken(id: id, token: "tok-1")
        try recorder.invokeAction(id: id, key: "default")
        try recorder.emitClosed(id: id, reason: 2)
        try recorder.emitClosed(id: 99, reason: 17)
        _ = connection.run(until: .now + .seconds(5)) { events.count < 4 }
        #expect(events == [.activationToken(id: id, token: "tok-1"), .actionInvoked(id: id, key: "default"),
                           .closed(id: id, reason: .dismissed), .closed(id: 99, reason: .other(17))])
    }

    @Test func noServerIsItsOwnError() throws {
        recorder.stop()
        defer { bus.stop() }
        let client = NotificationClient(connection: try bus.connect())
        #expect(try !client.serverIsRunning())
        #expect(throws: NoNotificationServerError.self) { try client.notify(Notification(summary: "x")) }
        #expect(throws: NoNotificationServerError.self) { try client.capabilities() }
    }
}
