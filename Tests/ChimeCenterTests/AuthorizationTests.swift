import ChimeCenter
import DBus
import Foundation
import Notifications
import Testing
import TestSupport

/// Authorization read from live servers: dunst, and our recorder advertising other capability sets.
@Suite struct AuthorizationTests {
    @Test func dunstIsAuthorizedWithItsCapabilities() throws {
        let session = try DunstSession()
        defer { session.stop() }
        let settings = try notificationSettings(connection: try session.bus.connect(), playerSearchPath: "/nonexistent")
        #expect(settings.isAuthorized)
        #expect(settings.server?.name == "dunst")
        #expect(settings.actions == .enabled)
        #expect(settings.bodyMarkup == .notSupported)
        #expect(settings.sound == .notSupported)  // dunst plays no sounds, and no player on this PATH
        #expect(settings.badge == .notSupported)
        let (granted, _) = try requestAuthorization(options: [.alert, .actions], connection: try session.bus.connect())
        #expect(granted)
    }

    @Test func aLocalPlayerGrantsSound() throws {
        let session = try RecorderSession(capabilities: ["body"])
        defer { session.stop() }
        let bin = session.bus.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let player = bin.appendingPathComponent("paplay")
        try installExecutable("#!/bin/sh\nexit 0\n", at: player.path)
        let settings = try notificationSettings(connection: try session.bus.connect(), playerSearchPath: bin.path)
        #expect(settings.sound == .localPlayer(name: "paplay", path: player.path))
        #expect(settings.actions == .notSupported)
    }

    @Test func aServerThatPlaysSoundsDoesSoItself() throws {
        let session = try RecorderSession(capabilities: ["actions", "body", "body-markup", "sound", "persistence"])
        defer { session.stop() }
        let settings = try notificationSettings(connection: try session.bus.connect())
        #expect(settings.sound == .byServer)
        #expect(settings.persistence == .enabled && settings.bodyMarkup == .enabled)
    }

    @Test func noServerIsDeniedWithTheReason() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let settings = try notificationSettings(connection: try bus.connect())
        #expect(!settings.isAuthorized)
        guard case .denied(let reason) = settings.authorizationStatus else {
            Issue.record("not denied")
            return
        }
        #expect(reason.contains("no notification server"))
        let (granted, _) = try requestAuthorization(options: [.alert], connection: try bus.connect())
        #expect(!granted)
    }

    @Test func renderedContentReachesTheServerAsRendered() throws {
        let session = try RecorderSession(capabilities: ["body", "body-markup"])
        defer { session.stop() }
        let connection = try session.bus.connect()
        let settings = try notificationSettings(connection: connection)
        let rendered = render(ContentTests.full, for: settings.capabilities)
        _ = try NotificationClient(connection: connection).notify(rendered.notification)
        let call = try #require(session.recorder.waitForCalls(1).first)
        #expect(call.body == "<b>16:35</b>\nCheck the &lt;guidance&gt; list &amp; more")
        #expect(call.actions.isEmpty)
        #expect(call.hints["x-chime-label"] == .string("homeroom"))
        #expect(rendered.playLocally == .named("bell"))
    }
}

/// Rendering on the wire, for servers advertising nothing, a body only, and everything.
@Suite struct RenderingOnTheWireTests {
    @Test(arguments: [
        ([String](), "Homeroom — 16:35", "", [String](), true),
        (["body"], "Homeroom", "16:35\nCheck the <guidance> list & more", [], true),
        (["actions", "body", "body-markup", "body-hyperlinks", "sound", "persistence"], "Homeroom",
         "<b>16:35</b>\nCheck the &lt;guidance&gt; list &amp; more", ["snooze", "Snooze", "dismiss", "Dismiss"], false),
    ])
    func theServerGetsWhatItCanShow(_ capabilities: [String], _ summary: String, _ body: String, _ actions: [String], _ playsLocally: Bool) throws {
        let session = try RecorderSession(capabilities: capabilities)
        defer { session.stop() }
        let connection = try session.bus.connect()
        let settings = try notificationSettings(connection: connection)
        let rendered = render(ContentTests.full, for: settings.capabilities)
        _ = try NotificationClient(connection: connection).notify(rendered.notification)
        let call = try #require(session.recorder.waitForCalls(1).first)
        #expect(call.summary == summary)
        #expect(call.body == body)
        #expect(call.actions == actions)
        #expect((call.hints["sound-name"] == nil) == playsLocally)
        #expect((rendered.playLocally != nil) == playsLocally)
        #expect(rendered.droppedActions.isEmpty == !actions.isEmpty)
    }
}

/// What `chime status` says of each server's ways.
@Suite struct ServerWaysTests {
    @Test func gnomeShellsWaysAreSaid() {
        let gnome = ServerInformation(name: "gnome-shell", vendor: "GNOME", version: "43.9", specVersion: "1.2")
        let notes = ServerWays.notes(for: gnome, capabilities: ["actions", "body", "body-markup", "icon-static", "persistence", "sound"])
        #expect(notes.contains { $0.hasPrefix("ignores expire times") })
        #expect(notes.contains { $0.contains("--wait-timeout") })
        #expect(!notes.contains { $0.hasPrefix("no buttons") })
    }

    @Test func theTwoNotificationDaemonsAreToldApartByVendor() {
        let caps: [Capability] = ["actions", "body"]
        let gnome = ServerWays.notes(for: ServerInformation(name: "Notification Daemon", vendor: "GNOME", version: "3.20.0", specVersion: "1.2"), capabilities: caps)
        let mate = ServerWays.notes(for: ServerInformation(name: "Notification Daemon", vendor: "MATE", version: "1.26.0", specVersion: "1.1"), capabilities: caps)
        #expect(gnome == ["ignores expire times: chime closes an alarm itself when its --expire passes"])
        #expect(mate == ["keeps critical popups up: chime closes an alarm when its --expire passes"])
    }

    @Test func anUnknownServerGetsWhatItsCapabilitiesSay() {
        let notes = ServerWays.notes(for: ServerInformation(name: "someday-notifyd", vendor: "x", version: "1", specVersion: "1.2"),
                                     capabilities: ["body"])
        #expect(notes == ["no buttons: alarms show without Snooze and Dismiss (chime cancel ID stops one)"])
        #expect(ServerWays.notes(for: nil, capabilities: ["actions"]).isEmpty)
    }
}
