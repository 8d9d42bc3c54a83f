import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// The notice before an alarm (`--notice`): a quiet popup with Skip this one and Open; Skip skips
/// that occurrence as `chime skip` does and the popup says so in place, with Undo; a reminder
/// carries Skip this one too; a server without buttons is told how to skip from a terminal.
/// Pressed on the recording server here (the exact Notify calls); on dunst by a real click in
/// NoticeOnDunstTests.
@Suite(.serialized) struct NoticeTests {
    static let category = AlarmDefaults.reminderCategory

    static func shown(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// The first notice popup of the alarm (category x-chime.reminder, not replacing another).
    static func firstNotice(_ recorder: RecordingServer) -> RecordingServer.Call? {
        recorder.calls.first { $0.hints["category"]?.stringValue == category && $0.replacesID == 0 }
    }

    @Test func skipThisOneSkipsThatOccurrenceAndUndoBringsItBack() throws {
        let session = try RecorderSession()
        let state = session.bus.directory.appendingPathComponent("state").path
        // Open starts chime-alarms: here a stand-in on PATH that notes it was started.
        let bin = session.bus.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opened = session.bus.directory.appendingPathComponent("opened").path
        let app = bin.appendingPathComponent("chime-alarms").path
        try installExecutable("#!/bin/sh\ntouch '\(opened)'\n", at: app)
        let daemon = try DaemonProcess(bus: session.bus, stateDirectory: state,
                                       environment: ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        defer { daemon.stop(); session.stop() }
        let env = session.environment
        // Every 20 seconds, noticed 15 s before: a notice comes within 20 s, its occurrence 15 s after.
        let added = try runChime(["at", "*:*:0/20", "--notice", "15s", "--id", "drill", "Fire drill"], environment: env)
        try #require(added.status == 0, "\(added.stderr)")
        #expect(try runChime(["show", "--json", "drill"], environment: env).stdout.contains(#""notice":15,"#))
        #expect(waitUntil(30) { Self.firstNotice(session.recorder) != nil })
        let notice = try #require(Self.firstNotice(session.recorder))
        #expect(notice.summary == "Fire drill")
        #expect(notice.body.contains("Rings on ") && notice.body.contains(", in 15s"), "\(notice.body)")
        #expect(notice.actions == ["skip", "Skip this one", "open", "Open"])
        #expect(notice.hints["urgency"] == .byte(0), "a quiet popup: low urgency")
        #expect(notice.hints["resident"] == .boolean(true))
        let occurrence = try #require(try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)["nextFire"] as? String)

        // Skip this one: that occurrence is skipped, the popup says so in place, with Undo.
        try session.recorder.invokeAction(id: notice.assignedID, key: "skip")
        #expect(waitUntil { session.recorder.calls.contains { $0.replacesID == notice.assignedID && $0.body.contains("Skipped") } })
        let skipped = try #require(session.recorder.calls.last { $0.replacesID == notice.assignedID })
        #expect(skipped.body.contains("Skipped: it does not ring on "), "\(skipped.body)")
        #expect(skipped.actions == ["undo-skip", "Undo", "open", "Open"])
        var shown = try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)
        #expect(shown["skipped"] as? [String] == [occurrence], "\(String(describing: shown["skipped"]))")
        #expect(shown["nextFire"] as? String != occurrence)
        // And chime skip --undo would bring it back; here the popup's Undo does.
        try session.recorder.invokeAction(id: notice.assignedID, key: "undo-skip")
        #expect(waitUntil { session.recorder.calls.filter { $0.replacesID == notice.assignedID }.count >= 2 })
        let undone = try #require(session.recorder.calls.last { $0.replacesID == notice.assignedID })
        #expect(undone.body.contains("Rings on "), "\(undone.body)")
        #expect(undone.actions == ["skip", "Skip this one", "open", "Open"])
        shown = try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)
        #expect((shown["skipped"] as? [String])?.isEmpty == true)
        #expect(shown["nextFire"] as? String == occurrence)
        // Skipped once more, from the terminal this time, and undone there too: the same skip.
        try session.recorder.invokeAction(id: notice.assignedID, key: "skip")
        #expect(waitUntil { session.recorder.calls.filter { $0.replacesID == notice.assignedID }.count >= 3 })
        let undo = try runChime(["skip", "--undo", "drill"], environment: env)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)["nextFire"] as? String == occurrence)
        // Open starts the app.
        try session.recorder.invokeAction(id: notice.assignedID, key: "open")
        #expect(waitUntil { FileManager.default.fileExists(atPath: opened) })
    }

    @Test func aReminderCarriesSkipAndAServerWithoutButtonsIsToldHow() throws {
        let session = try RecorderSession(capabilities: ["body"])
        let state = session.bus.directory.appendingPathComponent("state").path
        let daemon = try DaemonProcess(bus: session.bus, stateDirectory: state)
        defer { daemon.stop(); session.stop() }
        let added = try runChime(["at", "*:*:0/20", "--notice", "15s", "--remind", "10s", "--id", "drill", "Fire drill"], environment: session.environment)
        try #require(added.status == 0, "\(added.stderr)")
        #expect(waitUntil(30) { Self.firstNotice(session.recorder) != nil })
        let notice = try #require(Self.firstNotice(session.recorder))
        #expect(notice.actions.isEmpty)
        #expect(notice.body.contains("chime skip drill skips it"), "\(notice.body)")
        // The reminder 10 s before: its own line, and how to skip.
        #expect(waitUntil(30) { session.recorder.calls.contains { $0.hints["category"]?.stringValue == Self.category && $0.body.contains("Reminder: in 10s") } })
        let reminder = try #require(session.recorder.calls.first { $0.body.contains("Reminder: in 10s") })
        #expect(reminder.body.contains("chime skip drill skips it"), "\(reminder.body)")
    }

    /// dunst with a rule a person writes to skip from a notice with one click (its `action_name`
    /// picks the button a click presses), the popup at a known place.
    static let dunstrc = """
        [global]
            notification_limit = 5
            idle_threshold = 0
            origin = top-left
            offset = 10x10
            width = 400
            browser = /bin/true
            dmenu = /bin/true
            mouse_left_click = do_action
        [urgency_low]
            timeout = 0
        [urgency_normal]
            timeout = 0
        [urgency_critical]
            timeout = 0
        [chime-notice]
            category = x-chime.reminder
            action_name = skip
        """

    /// A left click of the pointer on the popup, through the X server (XTest), as a person's.
    static func click(display: String, x: Int, y: Int) throws {
        let script = """
            import sys
            from Xlib import X, display
            from Xlib.ext import xtest
            d = display.Display(sys.argv[1])
            x, y = int(sys.argv[2]), int(sys.argv[3])
            xtest.fake_input(d, X.MotionNotify, x=x, y=y); d.sync()
            xtest.fake_input(d, X.ButtonPress, 1); d.sync()
            xtest.fake_input(d, X.ButtonRelease, 1); d.sync()
            """
        let result = try runProgram("/usr/bin/python3", ["-c", script, display, String(x), String(y)].map { Array($0.utf8) },
                                    environment: ["PATH": "/usr/bin:/bin"])
        guard result.status == 0 else { throw HarnessError("click: \(result.stderr)") }
    }

    @Test func skipThisOneByAClickOnDunst() throws {
        let bus = try PrivateBus()
        let config = bus.directory.appendingPathComponent("dunstrc").path
        try Self.dunstrc.write(toFile: config, atomically: true, encoding: .utf8)
        let dunst = try Dunst(bus: bus, config: config)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); dunst.stop(); bus.stop() }
        let env = bus.environment()
        // Every day, next 40 s from now, noticed 35 s before: the notice is the only popup for half a minute.
        let zone = Zone.system()
        let when = zone.civil(at: Int64(Date().timeIntervalSince1970) + 40)
        func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let rule = "\(pad(when.hour)):\(pad(when.minute)):\(pad(when.second))"
        let added = try runChime(["at", rule, "--notice", "35s", "--id", "once", "Dentist"], environment: env)
        try #require(added.status == 0, "\(added.stderr)")
        func displayed() throws -> Int {
            Int(try runProgram("/usr/bin/dunstctl", [Array("count".utf8), Array("displayed".utf8)], environment: env).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        #expect(try waitUntil { try displayed() == 1 }, "the notice is not on screen")
        func skipped() throws -> Bool {
            let shown = try Self.shown(runChime(["show", "--json", "once"], environment: env).stdout)
            return (shown["skipped"] as? [String])?.count == 1
        }
        // Clicked as a person clicks: dunst presses the button its rule names. (Clicked again if the
        // first click came before dunst drew the popup.)
        var clicks = 0
        while clicks < 5, try !skipped() {
            try Self.click(display: dunst.display.display, x: 60, y: 25)
            clicks += 1
            _ = try waitUntil { try skipped() }
        }
        #expect(try skipped(), "the click did not skip it")
        // The popup says so in place: still one popup on screen, and the next time is tomorrow's.
        #expect(try displayed() == 1)
        let shown = try Self.shown(runChime(["show", "--json", "once"], environment: env).stdout)
        #expect((shown["nextFire"] as? String).map { $0 > (shown["skipped"] as? [String])?.first ?? "" } == true, "\(shown)")
    }
}
