import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// What happens at fire time beyond Notify: body commands, local sounds, popups the
/// server leaves up, settings, and held alarms across a restart. Real daemon, real bus.
@Suite struct FiringTests: OnAPrivateBus {
    let bus: PrivateBus
    let scratch: URL

    init() throws {
        bus = try PrivateBus()
        scratch = bus.directory.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }


    func chime(_ arguments: [String]) throws -> CommandResult {
        let result = try runChime(arguments, environment: bus.environment())
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    /// Setting an alarm whose sound nothing here can play sets it, and says why in one line.
    @Test(arguments: [
        ("", "", "the notification server plays no sounds and no player was found"),
        ("aplay", "bell.oga", "aplay, the only player here, plays WAV files only"),
        ("paplay", "", "the server plays no sounds, and paplay needs a file: no bell.oga, .ogg or .wav"),
        ("paplay", "bell.oga", ""),
    ])
    func anUnplayableSoundIsAWarning(_ player: String, _ soundFile: String, _ warning: String) throws {
        let bin = scratch.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        if !player.isEmpty {
            try installExecutable("#!/bin/sh\nexit 0\n", at: bin.appendingPathComponent(player).path)
        }
        let sounds = scratch.appendingPathComponent("share/sounds/freedesktop/stereo")
        try FileManager.default.createDirectory(at: sounds, withIntermediateDirectories: true)
        if !soundFile.isEmpty { try Data("OggS".utf8).write(to: sounds.appendingPathComponent(soundFile)) }
        let environment = ["PATH": bin.path, "XDG_DATA_DIRS": scratch.appendingPathComponent("share").path]
        let recorder = try RecordingServer(address: bus.address, capabilities: ["body", "actions"])
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: environment)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let result = try runChime(["in", "1h", "--sound", "bell", "--id", "tea", "Tea"], environment: bus.environment().merging(environment) { $1 })
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("tea: "))
        if warning.isEmpty {
            #expect(result.stderr == "")
        } else {
            #expect(result.stderr.hasPrefix("chime: warning: nothing here can play this alarm's sound: " + warning), "\(result.stderr)")
            #expect(result.stderr.hasSuffix("; the alarm is set, and silent until that changes\n"))
        }
        #expect(try center().pendingSummaries().map(\.identifier) == ["tea"])
    }

    @Test func aBodyCommandsOutputBecomesTheBody() throws {
        let recorder = try RecordingServer(address: bus.address, capabilities: ["body"])
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        _ = try chime(["in", "1s", "--id", "homeroom", "--body-command", "printf 'today: %s students\\n' 23",
                       "Homeroom", "Check the guidance list"])
        let calls = recorder.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].body == "today: 23 students")
    }

    @Test func aFailingSlowOrChattyBodyCommandKeepsTheStaticBodyWithANote() throws {
        let recorder = try RecordingServer(address: bus.address, capabilities: ["body"])
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        _ = try chime(["in", "1s", "--id", "failing", "--body-command", "sh -c 'echo partial; exit 3'", "Failing", "static"])
        _ = try chime(["in", "1s", "--id", "slow", "--body-command", "sleep 30", "--body-timeout", "1s", "Slow", "static"])
        _ = try chime(["in", "1s", "--id", "missing", "--body-command", "/no/such/program", "Missing", "static"])
        let anchor = WallClock.system.now()
        var content = NotificationContent(title: "Chatty")
        content.bodyCommand = BodyCommand(arguments: ["seq", "1", "100000"], outputLimit: 10)
        try center().add(NotificationRequest(identifier: "chatty", content: content, trigger: .timeInterval(1, anchor: anchor)))
        let calls = recorder.waitForCalls(4)
        let bodies = Dictionary(calls.map { ($0.summary, $0.body) }, uniquingKeysWith: { a, _ in a })
        #expect(bodies["Failing"] == "static\n(body command failed: exit status 3)")
        #expect(bodies["Slow"] == "static\n(body command timed out after 1 s)")
        #expect(bodies["Missing"] == "static\n(body command could not start: no such file or directory)")
        #expect(bodies["Chatty"] == "1\n2\n3\n4\n5…")
    }

    @Test func aServerWithoutSoundGetsTheSoundFromALocalPlayerThatIsStoppedInTime() throws {
        // A stand-in player on PATH records how it was started, then outstays its time limit.
        let bin = scratch.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let record = scratch.appendingPathComponent("played")
        let player = bin.appendingPathComponent("paplay")
        try installExecutable("#!/bin/sh\necho \"$$ $*\" > '\(record.path)'\nexec /bin/sleep 60\n", at: player.path)
        let sounds = scratch.appendingPathComponent("share/sounds/freedesktop/stereo")
        try FileManager.default.createDirectory(at: sounds, withIntermediateDirectories: true)
        try Data("OggS".utf8).write(to: sounds.appendingPathComponent("bell.oga"))

        let recorder = try RecordingServer(address: bus.address, capabilities: ["body", "actions"])
        let daemon = try DaemonProcess(
            bus: bus, stateDirectory: state, arguments: ["--player-time-limit", "1s"],
            // Only the stand-in on PATH: a machine with a player chime prefers (pw-play) must not win.
            environment: ["PATH": bin.path, "XDG_DATA_DIRS": scratch.appendingPathComponent("share").path])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let settings = try center().notificationSettings()
        #expect(settings.sound == .localPlayer(name: "paplay", path: player.path))
        #expect(settings.actions == .enabled)
        #expect(settings.isAuthorized)

        _ = try chime(["in", "1s", "--sound", "bell", "Tea"])
        #expect(recorder.waitForCalls(1).count == 1)
        // The player writes its record once it runs: waited for, however busy the machine.
        var line = ""
        _ = waitUntil {
            line = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
            return line.hasSuffix("\n") || line.split(separator: " ").count == 2
        }
        let words = line.split(separator: " ").map(String.init)
        try #require(words.count == 2, "\(line)")
        #expect(words[1].trimmingCharacters(in: .whitespacesAndNewlines) == sounds.appendingPathComponent("bell.oga").path)
        // Stopped at its time limit and reaped (a zombie would still answer kill 0).
        let pid = try #require(Int32(words[0]))
        #expect(waitUntil { Glibc.kill(pid, 0) != 0 && errno == ESRCH })
    }

    @Test func chimeClosesAPopupTheServerLeavesUpPastItsExpiry() throws {
        let recorder = try RecordingServer(address: bus.address)  // it ignores expire_timeout
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        _ = try chime(["in", "1s", "--expire", "1s", "--id", "brief", "Brief"])
        let calls = recorder.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].expireTimeout == 1000)
        #expect(waitUntil { !recorder.closedIDs.isEmpty })
        #expect(recorder.closedIDs == [1])
    }

    @Test func anAlarmHeldForAServerSurvivesADaemonRestart() throws {
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        _ = try chime(["in", "1s", "--id", "held", "Held"])
        // Due with no server: held (and said so), still pending.
        #expect(try waitUntil { try runChime(["list"], environment: bus.environment()).stdout.contains("held: no notification server") })
        #expect(try center().pendingNotificationRequests().map(\.request.identifier) == ["held"])
        daemon.kill()
        daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let calls = recorder.waitForCalls(1)
        try #require(calls.count == 1)
        #expect(calls[0].summary == "Held")
        #expect(calls[0].body.hasPrefix("<b>Late: due at "))
        #expect(try waitUntil { try center().pendingNotificationRequests().isEmpty })
    }
}
