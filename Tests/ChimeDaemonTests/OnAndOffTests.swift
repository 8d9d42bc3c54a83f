import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// Switching alarms off and on (`chime disable`, `chime enable`, the D-Bus `Disable` and `Enable`),
/// and `PendingChanged`, which announces every change of the pending alarms.
@Suite(.serialized) struct OnAndOffTests {
    func center(_ bus: PrivateBus) throws -> UserNotificationCenter { UserNotificationCenter(connection: try bus.connect()) }

    @Test func anAlarmSwitchedOffIsKeptAndNeverFiresUntilSwitchedOn() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let state = bus.directory.appendingPathComponent("state").path
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let environment = bus.environment()
        let connection = try bus.connect()
        nonisolated(unsafe) var announced: [[String]] = []
        _ = try connection.subscribe(MatchRule(interface: "org.chime.Scheduler1", member: "PendingChanged")) { message in
            announced.append(message.arguments().first?.arrayElements?.compactMap(\.stringValue) ?? [])
        }
        func pump(until condition: () -> Bool, timeout: TimeInterval = 3) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline, !condition() { _ = connection.run(until: .now + .milliseconds(20)) { true } }
            return condition()
        }

        #expect(try runChime(["in", "2s", "--id", "soon", "Soon"], environment: environment).status == 0)
        #expect(try runChime(["at", "07:00", "--id", "morning", "Morning"], environment: environment).status == 0)
        #expect(pump { announced.contains(["soon"]) && announced.contains(["morning"]) }, "\(announced)")
        let off = try runChime(["disable", "soon"], environment: environment)
        #expect(off.status == 0, "\(off.stderr)")
        #expect(pump { announced.last == ["soon"] && announced.count >= 3 }, "\(announced)")
        let list = try runChime(["list"], environment: environment).stdout
        #expect(list.contains("soon  off  Soon  (in 2s, no sound, command line)  off (chime enable soon switches it on)"), "\(list)")
        let json = try runChime(["list", "--json"], environment: environment).stdout
        #expect(json.contains(#""id":"soon","title":"Soon","label":"","nextFire":null,"#), "\(json)")
        #expect(json.contains(#""state":"disabled""#))
        // Its time passes: nothing is shown, and a restart does not fire it either.
        usleep(2_500_000)
        #expect(recorder.calls.isEmpty)
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        usleep(500_000)
        #expect(recorder.calls.isEmpty)
        #expect(try runChime(["list"], environment: environment).stdout.contains("soon  off  "))

        // A one-off whose time passed while it was off has nothing to switch on for: it stays off.
        let late = try runChime(["enable", "soon"], environment: environment)
        #expect(late.status == 64)
        #expect(late.stderr == "chime: rule: \"soon\" has no occurrence left to switch on for; it stays off\n", "\(late.stderr)")
        // A repeating one is planned from now.
        #expect(try runChime(["disable", "morning"], environment: environment).status == 0)
        let on = try runChime(["enable", "morning", "--json"], environment: environment)
        #expect(on.status == 0, "\(on.stderr)")
        #expect(on.stdout.hasPrefix(#"[{"id":"morning","nextFire":""#) && on.stdout.contains("T07:00:00"), "\(on.stdout)")
        #expect(try runChime(["list", "--json"], environment: environment).stdout.contains(#""id":"morning","title":"Morning","label":"","nextFire":""#))

        // Replaced under its identifier (--id), one switched off starts on.
        #expect(try runChime(["in", "1h", "--id", "soon", "Soon again"], environment: environment).status == 0)
        #expect(try center(bus).pendingSummaries().first { $0.identifier == "soon" }?.state == .scheduled)

        // Unknown identifiers and the alarm file's alarms are refused, as for cancel.
        let unknown = try runChime(["disable", "nope"], environment: environment)
        #expect(unknown.status == 6)
        #expect(unknown.stderr == "chime: no pending alarm \"nope\"; see chime list\n")
    }

    @Test func anAlarmSwitchedOffThatWouldFireDoesNotAndOneSwitchedOnFires() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let center = UserNotificationCenter(connection: try bus.connect())
        let now = Date().timeIntervalSince1970
        for (id, after) in [("quiet", 1.5), ("back", 60.0)] {
            let request = NotificationRequest(identifier: id, content: NotificationContent(title: id),
                                              trigger: Trigger(rule: .instant(Instant(seconds: Int64(now + after))), repeats: false,
                                                               timeZone: nil, anchor: Instant(seconds: Int64(now))))
            _ = try center.add(request)
        }
        #expect(try center.disable(["quiet"]) == ["quiet"])
        let enabled = try center.enable(["back"])
        #expect(enabled.map(\.identifier) == ["back"])
        usleep(2_500_000)
        #expect(recorder.calls.isEmpty, "\(recorder.calls.map(\.summary))")
        #expect(try center.pendingSummaries().first { $0.identifier == "quiet" }?.state == .disabled)
    }
}
