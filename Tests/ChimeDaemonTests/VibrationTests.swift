import ChimeCenter
import Foundation
import Testing
import TestSupport

/// A phone's vibration and light (issue 48): Debian's real feedbackd on the tests' private bus (it
/// runs without a vibration motor or LEDs and says so), the calls chime makes to it and its
/// `FeedbackEnded` read by dbus-monitor on the same bus, the real daemon, a recording notification
/// server and a recording sound player.
@Suite(.serialized) struct VibrationTests: OnAPrivateBus {
    let bus: PrivateBus
    let player: RecordingPlayer

    init() throws {
        bus = try PrivateBus()
        player = try RecordingPlayer(in: bus)
        try player.install("echo start \"$*\" >> \"$LOG\"\nsleep 30")
    }

    static let feedbackd = "/usr/libexec/feedbackd"

    /// feedbackd on the private bus (its settings in memory).
    func startFeedbackd() throws -> ChildProcess {
        var environment = bus.environment()
        environment["GSETTINGS_BACKEND"] = "memory"
        let child = try ChildProcess(Self.feedbackd, [], environment: environment, logDirectory: bus.directory)
        try #require(waitUntil { owner("org.sigxcpu.Feedback") != nil }, "feedbackd did not take its name")
        return child
    }

    /// Who owns `name` on the private bus, if anyone.
    func owner(_ name: String) -> String? {
        let result = try? runProgram("/usr/bin/gdbus", (["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                                         "--method", "org.freedesktop.DBus.GetNameOwner", name]).map { Array($0.utf8) }, environment: bus.environment())
        guard let result, result.status == 0 else { return nil }
        return result.stdout
    }

    /// feedbackd's profile, set as Phosh's quick settings set it.
    func setProfile(_ profile: String) throws {
        let result = try runProgram("/usr/bin/gdbus", (["call", "--session", "--dest", "org.sigxcpu.Feedback", "--object-path", "/org/sigxcpu/Feedback",
                                                        "--method", "org.freedesktop.DBus.Properties.Set", "org.sigxcpu.Feedback", "Profile",
                                                        "<'\(profile)'>"]).map { Array($0.utf8) }, environment: bus.environment())
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// Everything said to and by feedbackd on the bus, as dbus-monitor prints it.
    final class Monitor: @unchecked Sendable {
        let child: ChildProcess
        private let lock = NSLock()
        private var _text = ""
        var text: String { lock.withLock { _text } }

        init(_ bus: PrivateBus) throws {
            child = try ChildProcess("dbus-monitor", ["--address", bus.address, "interface='org.sigxcpu.Feedback'"], logDirectory: bus.directory)
            let thread = Thread { [child, weak self] in
                while let line = try? child.readLine(timeout: 3600) { self?.lock.withLock { self?._text += line + "\n" } }
            }
            thread.start()
            usleep(300_000)  // (its match rule in place)
        }

        /// The calls of `member`, each as its lines of arguments.
        func calls(_ member: String) -> [String] {
            text.components(separatedBy: "method call ").dropFirst().filter { $0.contains("member=\(member)") }
        }

        func signals(_ member: String) -> [String] {
            text.components(separatedBy: "signal ").dropFirst().filter { $0.contains("member=\(member)") }
        }
    }

    func daemon() throws -> DaemonProcess {
        try DaemonProcess(bus: bus, stateDirectory: state, environment: player.environment)
    }

    func plays() -> Int { playLines().count }

    /// Each start of the player, with its arguments.
    func playLines() -> [String] { player.lines() }

    /// A one-off for `chime at`, `seconds` from now on this machine's clock (an alarm, not a timer).
    static func soon(_ seconds: Int) -> String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return format.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
    }

    func set(_ arguments: [String]) throws {
        let result = try runChime(arguments, environment: bus.environment())
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// A ringing alarm triggers `alarm-clock-elapsed`, looping (timeout 0) with the `quiet` profile
    /// (vibration and light: chime plays the sound). Here feedbackd has no motor and ends it at once
    /// (`FeedbackEnded`): the alarm rings on, and is not triggered again (the stand-in below holds
    /// a feedback until it is ended).
    @Test func aRingingAlarmAsksFeedbackdForVibration() throws {
        let feedbackd = try startFeedbackd()
        let monitor = try Monitor(bus)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); monitor.child.stop(); feedbackd.stop(); bus.stop() }
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "wake", "Wake up"])
        #expect(waitUntil { !monitor.calls("TriggerFeedback").isEmpty }, "\(daemon.log)")
        let trigger = try #require(monitor.calls("TriggerFeedback").first)
        #expect(trigger.contains("string \"org.chime.Alarms\"") && trigger.contains("string \"alarm-clock-elapsed\""), "\(trigger)")
        #expect(trigger.contains("string \"profile\"") && trigger.contains("string \"quiet\""), "\(trigger)")
        #expect(trigger.contains("int32 0"), "loops until ended: \(trigger)")
        #expect(waitUntil { plays() == 1 }, "chime plays its own sound")
        #expect(waitUntil { !monitor.signals("FeedbackEnded").isEmpty }, "\(monitor.text)")
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "wake" }?.serverID })
        usleep(500_000)
        #expect(monitor.calls("TriggerFeedback").count == 1, "ended by feedbackd, not asked again while it rings")
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try center().deliveredNotifications().isEmpty }, "\(daemon.log)")
        #expect(monitor.calls("TriggerFeedback").count == 1)
        #expect(feedbackd.isRunning)
    }

    /// The phone set to vibrate (`quiet`): it vibrates without chime's sound; set to silence: the
    /// light alone (`silent`), no sound; an alarm that insists rings and vibrates whatever the
    /// profile. A timer's end is `timeout-completed`, a reminder `message-new-instant` once.
    @Test func feedbackdsProfileIsHonouredButAnInsistingAlarmRings() throws {
        let feedbackd = try startFeedbackd()
        let monitor = try Monitor(bus)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); monitor.child.stop(); feedbackd.stop(); bus.stop() }
        try setProfile("quiet")
        #expect(waitUntil { daemon.log.contains("feedbackd's profile: quiet") }, "\(daemon.log)")
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "quiet", "On vibrate"])
        #expect(waitUntil { monitor.calls("TriggerFeedback").count == 1 }, "\(daemon.log)")
        #expect(waitUntil { daemon.log.contains("ringing without chime's sound") }, "\(daemon.log)")
        #expect(plays() == 0, "no sound on vibrate")
        try set(["stop", "quiet"])

        try setProfile("silent")
        #expect(waitUntil { daemon.log.contains("feedbackd's profile: silent") }, "\(daemon.log)")
        // (Each alarm's own call is looked for among those after it was set: the ring before may
        // have asked feedbackd again before its stop came, on a busy machine.)
        var before = monitor.calls("TriggerFeedback").count
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "silent", "On silent"])
        #expect(waitUntil { monitor.calls("TriggerFeedback").dropFirst(before).contains { $0.contains("string \"silent\"") } },
                "the light alone: \(daemon.log)")
        #expect(plays() == 0)
        try set(["stop", "silent"])

        before = monitor.calls("TriggerFeedback").count
        try set(["at", Self.soon(4), "--sound", "bell", "--insist", "--id", "insists", "Insists"])
        #expect(waitUntil { monitor.calls("TriggerFeedback").dropFirst(before).contains { $0.contains("string \"quiet\"") } },
                "an insisting alarm vibrates: \(daemon.log)")
        #expect(waitUntil { plays() == 1 }, "and rings: \(daemon.log)")
        try set(["stop", "insists"])

        try setProfile("full")
        before = monitor.calls("TriggerFeedback").count
        try set(["in", "2s", "--sound", "bell", "--id", "tea", "Tea"])
        #expect(waitUntil { monitor.calls("TriggerFeedback").dropFirst(before).contains { $0.contains("string \"timeout-completed\"") } },
                "\(daemon.log)")
        try set(["stop", "tea"])
        // (Its reminder 10 s on: far enough ahead that it is set before its time on a busy machine.)
        before = monitor.calls("TriggerFeedback").count
        try set(["at", Self.soon(3600), "--remind", "59m50s", "--id", "later", "Later"])
        #expect(waitUntil(40) { monitor.calls("TriggerFeedback").dropFirst(before).contains { $0.contains("string \"message-new-instant\"") } },
                "\(daemon.log)")
        let reminder = try #require(monitor.calls("TriggerFeedback").dropFirst(before).first { $0.contains("string \"message-new-instant\"") })
        #expect(reminder.contains("int32 -1"), "\(reminder)")
    }

    /// feedbackd dying mid-ring costs the ring nothing but its vibration; back, it vibrates again.
    /// Without feedbackd, chime never starts it, and rings as before.
    @Test func feedbackdGoneOrBackChangesNothingElse() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "alone", "Alone"])
        #expect(waitUntil { plays() == 1 }, "\(daemon.log)")
        #expect(owner("org.sigxcpu.Feedback") == nil, "chime does not start feedbackd")

        let monitor = try Monitor(bus)
        let feedbackd = try startFeedbackd()
        defer { monitor.child.stop(); feedbackd.stop() }
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "wake", "Wake up"])
        #expect(waitUntil { monitor.calls("TriggerFeedback").count == 2 }, "what rings vibrates as feedbackd appears, and the new ring: \(daemon.log)")
        feedbackd.kill9()
        #expect(waitUntil { daemon.log.contains("feedbackd went away") }, "\(daemon.log)")
        let again = try startFeedbackd()
        defer { again.stop() }
        #expect(waitUntil { monitor.calls("TriggerFeedback").count == 4 }, "both rings vibrate again: \(monitor.text)")
        #expect(try center().deliveredNotifications().contains { $0.identifier == "wake" }, "still ringing")
    }

    /// A stand-in for feedbackd that holds a feedback until it is ended, as a phone's does: Dismiss
    /// ends it (EndFeedback with the id it gave). One that never answers: the alarm rings and is
    /// answered as without it.
    @Test func anAnswerEndsTheVibrationAndAHangingFeedbackdCostsNothing() throws {
        func standIn(_ arguments: [String] = [], file: String = #filePath) throws -> (ChildProcess, () -> [String]) {
            let script = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("feedbackd/standin.py").path
            let child = try ChildProcess("/usr/bin/python3", [script] + arguments, environment: bus.environment(), logDirectory: bus.directory)
            try #require(try child.readLine(timeout: 20) == "ready")
            let lock = NSLock()
            nonisolated(unsafe) var lines: [String] = []
            Thread { while let line = try? child.readLine(timeout: 3600) { lock.withLock { lines.append(line) } } }.start()
            return (child, { lock.withLock { lines } })
        }
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        do {
            let (feedbackd, calls) = try standIn()
            defer { feedbackd.stop() }
            #expect(waitUntil { daemon.log.contains("feedbackd is here") }, "\(daemon.log)")
            try set(["at", Self.soon(4), "--sound", "bell", "--id", "wake", "Wake up"])
            #expect(waitUntil { calls().contains("TriggerFeedback org.chime.Alarms alarm-clock-elapsed quiet 0") }, "\(calls())")
            let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "wake" }?.serverID })
            #expect(!calls().contains { $0.hasPrefix("EndFeedback") }, "it vibrates while it rings")
            try recorder.invokeAction(id: id, key: "dismiss")
            #expect(waitUntil { calls().contains("EndFeedback 1") }, "\(calls())")
        }
        #expect(waitUntil { daemon.log.contains("feedbackd went away") }, "\(daemon.log)")
        let (hanging, calls) = try standIn(["--hang"])
        defer { hanging.stop() }
        #expect(waitUntil { daemon.log.contains("feedbackd is here") }, "\(daemon.log)")
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "again", "Again"])
        #expect(waitUntil { calls().contains { $0.hasPrefix("TriggerFeedback") } }, "\(calls())")
        #expect(waitUntil { plays() == 2 }, "it rings as ever: \(daemon.log)")
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "again" }?.serverID })
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try center().deliveredNotifications().isEmpty }, "answered at once: \(daemon.log)")
        #expect(waitUntil { daemon.log.contains("feedbackd did not do TriggerFeedback") }, "its call timed out, and nothing waited: \(daemon.log)")
    }

    /// During a phone call (GNOME Calls' stand-in shows one) an alarm rings as a quiet tone beside
    /// its vibration; when the call ends it rings at its own volume, and quietly again when another
    /// call comes. The calls are read when the daemon starts, then followed as they come and go.
    @Test func duringAPhoneCallARingIsAQuietTone() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("calls/standin.py").path
        let calls = try ChildProcess("/usr/bin/python3", [script], environment: bus.environment(), logDirectory: bus.directory)
        defer { calls.stop() }
        try #require(try calls.readLine(timeout: 20) == "ready")
        func control(_ method: String, _ arguments: [String]) throws {
            let result = try runProgram("/usr/bin/gdbus", (["call", "--session", "--dest", "org.gnome.Calls", "--object-path", "/org/gnome/Calls",
                                                            "--method", "org.chime.TestCalls.\(method)"] + arguments).map { Array($0.utf8) },
                                        environment: bus.environment())
            try #require(result.status == 0, "\(result.stderr)")
        }
        // A call alerting before the daemon starts.
        try control("Place", ["/org/gnome/Calls/Call/1", "4"])
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        #expect(waitUntil { daemon.log.contains("a phone call is in progress") }, "\(daemon.log)")
        try set(["at", Self.soon(4), "--sound", "bell", "--id", "wake", "Wake up"])
        #expect(waitUntil { plays() == 1 }, "\(daemon.log)")
        #expect(playLines().first?.contains("--volume=-49.4") == true, "15%: \(playLines())")
        // The call ends (gone from GNOME Calls): the ring at its own volume.
        try control("Remove", ["/org/gnome/Calls/Call/1"])
        #expect(waitUntil { plays() == 2 }, "\(daemon.log)")
        #expect(playLines().last?.contains("--volume") == false, "\(playLines())")
        // Another call comes while it rings, and ends (disconnected).
        try control("Place", ["/org/gnome/Calls/Call/2", "1"])
        #expect(waitUntil { plays() == 3 }, "\(daemon.log)")
        #expect(playLines().last?.contains("--volume=-49.4") == true, "\(playLines())")
        try control("SetState", ["/org/gnome/Calls/Call/2", "7"])
        #expect(waitUntil { plays() == 4 }, "\(daemon.log)")
        #expect(playLines().last?.contains("--volume") == false, "\(playLines())")
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "wake" }?.serverID })
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try center().deliveredNotifications().isEmpty }, "\(daemon.log)")
    }
}
