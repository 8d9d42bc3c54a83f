import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// Switching alarms off and on (`chime disable`, `chime enable`, the D-Bus `Disable` and `Enable`),
/// and `PendingChanged`, which announces every change of the pending alarms.
@Suite(.serialized) struct OnAndOffTests {
    func center(_ bus: PrivateBus) throws -> UserNotificationCenter { UserNotificationCenter(connection: try bus.connect()) }

    /// Waits for the wall clock (the daemon's) to pass `instant`.
    static func sleep(until instant: Instant) {
        while true {
            let left = instant - WallClock.system.now()
            if left <= .zero { return }
            usleep(UInt32(min(left.milliseconds, 1000)) * 1000 + 1000)
        }
    }

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
        func pump(until condition: () -> Bool, timeout: TimeInterval = 30) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline, !condition() { _ = connection.run(until: .now + .milliseconds(20)) { true } }
            return condition()
        }

        // Far enough ahead that it is switched off before its time on a busy machine (the steps before
        // `disable` take a second or two there); its time is then waited for, as a state of the clock.
        #expect(try runChime(["in", "20s", "--id", "soon", "Soon"], environment: environment).status == 0)
        let due = try #require(try center(bus).pendingSummaries().first { $0.identifier == "soon" }?.nextFire)
        #expect(try runChime(["at", "07:00", "--id", "morning", "Morning"], environment: environment).status == 0)
        #expect(pump { announced.contains(["soon"]) && announced.contains(["morning"]) }, "\(announced)")
        let off = try runChime(["disable", "soon"], environment: environment)
        #expect(off.status == 0, "\(off.stderr)")
        #expect(WallClock.system.now() < due, "switched off only after its time: the machine took over 20 s for three commands")
        #expect(pump { announced.last == ["soon"] && announced.count >= 3 }, "\(announced)")
        let list = try runChime(["list"], environment: environment).stdout
        #expect(list.contains("soon  off  Soon  (in 20s, no sound, command line)  off (chime enable soon switches it on)"), "\(list)")
        let json = try runChime(["list", "--json"], environment: environment).stdout
        #expect(json.contains(#""id":"soon","title":"Soon","label":"","nextFire":null,"#), "\(json)")
        #expect(json.contains(#""state":"disabled""#))
        // Its time passes: nothing is shown, and a restart does not fire it either.
        Self.sleep(until: due + .milliseconds(500))
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
        // "quiet" far enough ahead that it is switched off before its time on a busy machine.
        for (id, after) in [("quiet", 20.0), ("back", 60.0)] {
            let request = NotificationRequest(identifier: id, content: NotificationContent(title: id),
                                              trigger: Trigger(rule: .instant(Instant(seconds: Int64(now + after))), repeats: false,
                                                               timeZone: nil, anchor: Instant(seconds: Int64(now))))
            _ = try center.add(request)
        }
        #expect(try center.disable(["quiet"]) == ["quiet"])
        #expect(Date().timeIntervalSince1970 < now + 20, "switched off only after its time: the machine took over 20 s for two calls")
        let enabled = try center.enable(["back"])
        #expect(enabled.map(\.identifier) == ["back"])
        Self.sleep(until: Instant(seconds: Int64(now + 20)) + .milliseconds(500))
        #expect(recorder.calls.isEmpty, "\(recorder.calls.map(\.summary))")
        #expect(try center.pendingSummaries().first { $0.identifier == "quiet" }?.state == .disabled)
    }

    @Test func aPausedTimerKeepsItsTimeLeftAcrossARestartAndFiresThatLongAfterItResumes() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        let state = bus.directory.appendingPathComponent("state").path
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let environment = bus.environment()
        #expect(try runChime(["at", "07:00", "--id", "morning", "Morning"], environment: environment).status == 0)
        // A timer paused as soon as it is set: it keeps the time it had left, at least 2 s of it (a
        // machine so busy that setting and pausing took longer plays it again with a longer timer).
        var length = 0
        var remaining = 0
        for seconds in [3, 6, 12, 24] {
            length = seconds
            #expect(try runChime(["in", "\(seconds)s", "--id", "eggs", "Eggs"], environment: environment).status == 0)
            let paused = try runChime(["pause", "eggs", "--json"], environment: environment)
            if paused.status == 0, let left = paused.stdout.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) }), left >= 2 {
                #expect(paused.stdout == #"[{"id":"eggs","remaining":"# + "\(left)}]\n", "\(paused.stdout)")
                remaining = left
                break
            }
            print("measured: setting and pausing a \(seconds) s timer left \(paused.stdout.isEmpty ? paused.stderr : paused.stdout); again, longer")
            _ = try runChime(["cancel", "eggs"], environment: environment)
        }
        try #require(remaining >= 2, "could not pause a timer within 24 s of setting it")
        // What rang before the pause took (the tries that were too slow) is not counted.
        usleep(100_000)
        let before = recorder.calls.count
        // An alarm at a clock time is switched off instead; a paused timer is resumed, not switched on.
        let clock = try runChime(["pause", "morning"], environment: environment)
        #expect(clock.status == 64)
        #expect(clock.stderr.contains("is not a timer"), "\(clock.stderr)")
        #expect(try runChime(["enable", "eggs"], environment: environment).status == 64)

        usleep(UInt32(remaining) * 1_000_000 + 500_000)
        #expect(recorder.calls.count == before, "a paused timer fired")
        daemon.stop()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        usleep(300_000)
        #expect(recorder.calls.count == before)
        let list = try runChime(["list"], environment: environment).stdout
        #expect(list.contains("eggs  paused  Eggs  (in \(length)s, no sound, command line)  paused: \(remaining)s left (chime resume eggs)"), "\(list)")
        let json = try runChime(["list", "--json"], environment: environment).stdout
        #expect(json.contains(#""state":"paused","note":""# + "\(remaining)s left\",\"remaining\":\(remaining),\"offUntil\":null}"), "\(json)")

        let resumedAt = Date()
        let resumed = try runChime(["resume", "eggs"], environment: environment)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.hasPrefix("eggs: "))
        let calls = recorder.waitForCalls(before + 1, timeout: Double(remaining) + 6)
        try #require(calls.count == before + 1)
        let after = calls[before].receivedAt.timeIntervalSince(resumedAt)
        // It had between remaining - 1 and remaining seconds left (the answer is rounded up), and
        // fires that long after the resume.
        #expect(after > Double(remaining - 1) && after < Double(remaining) + 1, "fired \(after) s after the resume, \(remaining) s left")
        #expect(try runChime(["resume", "eggs"], environment: environment).status != 0)  // gone: a one-off that fired
    }
}
