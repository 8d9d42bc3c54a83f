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
        try "#!/bin/sh\ntouch '\(opened)'\n".write(toFile: app, atomically: true, encoding: .utf8)
        chmod(app, 0o755)
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
        #expect(waitUntil(10) { session.recorder.calls.contains { $0.replacesID == notice.assignedID && $0.body.contains("Skipped") } })
        let skipped = try #require(session.recorder.calls.last { $0.replacesID == notice.assignedID })
        #expect(skipped.body.contains("Skipped: it does not ring on "), "\(skipped.body)")
        #expect(skipped.actions == ["undo-skip", "Undo", "open", "Open"])
        var shown = try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)
        #expect(shown["skipped"] as? [String] == [occurrence], "\(String(describing: shown["skipped"]))")
        #expect(shown["nextFire"] as? String != occurrence)
        // And chime skip --undo would bring it back; here the popup's Undo does.
        try session.recorder.invokeAction(id: notice.assignedID, key: "undo-skip")
        #expect(waitUntil(10) { session.recorder.calls.filter { $0.replacesID == notice.assignedID }.count >= 2 })
        let undone = try #require(session.recorder.calls.last { $0.replacesID == notice.assignedID })
        #expect(undone.body.contains("Rings on "), "\(undone.body)")
        #expect(undone.actions == ["skip", "Skip this one", "open", "Open"])
        shown = try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)
        #expect((shown["skipped"] as? [String])?.isEmpty == true)
        #expect(shown["nextFire"] as? String == occurrence)
        // Skipped once more, from the terminal this time, and undone there too: the same skip.
        try session.recorder.invokeAction(id: notice.assignedID, key: "skip")
        #expect(waitUntil(10) { session.recorder.calls.filter { $0.replacesID == notice.assignedID }.count >= 3 })
        let undo = try runChime(["skip", "--undo", "drill"], environment: env)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(try Self.shown(runChime(["show", "--json", "drill"], environment: env).stdout)["nextFire"] as? String == occurrence)
        // Open starts the app.
        try session.recorder.invokeAction(id: notice.assignedID, key: "open")
        #expect(waitUntil(10) { FileManager.default.fileExists(atPath: opened) })
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
}
