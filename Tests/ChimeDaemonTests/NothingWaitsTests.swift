import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// Nothing the daemon asks of another process can hold an alarm: a `gsettings` that never exits
/// (GNOME's do-not-disturb), a systemd user manager that never answers (waking), a mako that never
/// lists its modes. Beside each, a stream of alarms reaches the server on time, and the pending list
/// answers at once.
@Suite struct NothingWaitsTests: OnAPrivateBus {
    let bus: PrivateBus
    let helpers: URL

    init() throws {
        bus = try PrivateBus()
        helpers = bus.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: helpers, withIntermediateDirectories: true)
    }

    /// A `gsettings` that notes it was asked, then never exits.
    func installHungGSettings() throws -> URL {
        let log = helpers.appendingPathComponent("gsettings.log")
        let script = "#!/bin/sh\necho \"$*\" >> '\(log.path)'\nexec sleep 600\n"
        try installExecutable(script, at: helpers.appendingPathComponent("gsettings").path)
        return log
    }

    var pathWithHelpers: [String: String] {
        ["PATH": helpers.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    /// Adds `count` one-off alarms `NAME-i`, due `start` from now and `gap` apart, with
    /// `content` changed by `change`; returns each one's due instant.
    func stream(_ center: UserNotificationCenter, _ name: String, count: Int, start: TimeSpan, gap: TimeSpan,
                change: (inout NotificationContent) -> Void = { _ in }) throws -> [String: Instant] {
        let first = WallClock.system.now() + start
        var due: [String: Instant] = [:]
        for i in 0..<count {
            let at = first + gap * Int64(i)
            var content = NotificationContent(title: "\(name)-\(i)")
            change(&content)
            _ = try center.add(NotificationRequest(identifier: "\(name)-\(i)", content: content,
                                                   trigger: Trigger(rule: .instant(at), repeats: false, timeZone: "UTC", anchor: at)))
            due["\(name)-\(i)"] = at
        }
        return due
    }

    /// How late each alarm reached the server, in milliseconds, sorted.
    func lateness(_ recorder: RecordingServer, _ due: [String: Instant]) -> [Double] {
        recorder.calls.compactMap { call -> Double? in
            guard let at = due[call.summary] else { return nil }
            return (call.receivedAt.timeIntervalSince1970 - Double(at.nanosecondsSinceEpoch) / 1e9) * 1000
        }.sorted()
    }

    /// How long the pending list takes to answer, in milliseconds, `runs` times, sorted.
    func listTimes(_ center: UserNotificationCenter, runs: Int) throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<runs {
            let started = Date()
            _ = try center.pendingSummaries()
            times.append(Date().timeIntervalSince(started) * 1000)
            usleep(100_000)
        }
        return times.sorted()
    }

    /// How many processes whose parent is `pid` are alive (not zombies).
    func liveChildren(of pid: Int32) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { entry in
            guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[0] != "Z" && Int32(fields[1]) == pid
        }.count
    }

    func describe(_ values: [Double]) -> String {
        guard !values.isEmpty else { return "none" }
        return "median \(String(format: "%.2f", values[values.count / 2])) ms, max \(String(format: "%.2f", values.last!)) ms (\(values.count))"
    }

    /// GNOME Shell (by its name), with a `gsettings` that never exits and a systemd user manager
    /// whose jobs never answer (the daemon without CAP_WAKE_ALARM, so it asks systemd to wake the
    /// machine): every alarm of the stream is on time, the list answers at once, and `chime status`
    /// still answers, saying what could not be read.
    @Test func aHungGSettingsAndAHungSystemdHoldUpNoAlarm() throws {
        let gsettingsLog = try installHungGSettings()
        let recorder = try RecordingServer(address: bus.address, serverName: "gnome-shell")
        let systemd = try SystemdStandIn(address: bus.address, version: "255.4-1")
        systemd.hangs = true
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: pathWithHelpers, wrapper: WakeTests.withoutWakeAlarm)
        defer { daemon.stop(); systemd.stop(); recorder.stop(); bus.stop() }
        let center = try center()
        // A wake alarm first: the daemon asks systemd for a timer, which never answers.
        _ = try stream(center, "wake", count: 1, start: .seconds(600), gap: .zero) { $0.wake = true }
        #expect(waitUntil(30) { !systemd.unanswered.isEmpty }, "the daemon asked the stuck manager")
        let due = try stream(center, "tea", count: 20, start: .milliseconds(2500), gap: .milliseconds(150))
        let lists = try listTimes(center, runs: 10)
        #expect(waitUntil { lateness(recorder, due).count == 20 }, "\(daemon.log)")
        let late = lateness(recorder, due)
        print("measured: hung gsettings and systemd: 20 alarms reached the server \(describe(late)) late; the pending list answered in \(describe(lists))")
        #expect(late.count == 20)
        #expect((late.first ?? -1) >= 0, "no alarm early")
        // The old daemon waited up to 1 s for gsettings and 5 s for systemd on its loop: an alarm or
        // a list held by either is a second late. The bounds say that, with room for a busy machine;
        // how late alarms are is make bench's to measure.
        #expect(late[late.count / 2] < 250, "alarms on time: \(late)")
        #expect((late.last ?? 1000) < 900, "\(late)")
        #expect(lists[lists.count / 2] < 500, "the pending list answers at once: \(lists)")
        let asked = (try? String(contentsOf: gsettingsLog, encoding: .utf8)) ?? ""
        #expect(asked.contains("get org.gnome.desktop.notifications show-banners"), "the daemon read GNOME's do-not-disturb: \(asked)")
        #expect(systemd.unanswered.contains("ListUnitsByPatterns") || systemd.unanswered.contains("StartTransientUnit"))

        // chime status waits for what it must say (a fresh do-not-disturb, within its 1 s) and not
        // for systemd: a status that waited on the hung manager would end only when the daemon gave
        // up on it, which the daemon says in its log. Once the daemon has given up on every call it
        // made and waited on (the wake alarm's ListUnitsByPatterns, then StartTransientUnit, each
        // after 5 s; not tried again for the same time; StopUnit is never waited on), any such line
        // during the status is the status's. (The state, not the time: beside busy jobs a status
        // that waited for nothing took 5.9 s.)
        let gaveUp = "systemd's user manager did not answer"
        func givenUp() -> Int { daemon.log.components(separatedBy: gaveUp).count - 1 }
        #expect(waitUntil { givenUp() > 0 && givenUp() == systemd.unanswered.filter { $0 != "StopUnit" }.count },
                "\(systemd.unanswered) \(daemon.log)")
        let before = givenUp()
        let started = Date()
        let status = try runChime(["status"], environment: bus.environment())
        print("measured: chime status answered in \(Int(Date().timeIntervalSince(started) * 1000)) ms with gsettings hung")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("unknown: GNOME Shell's show-banners could not be read (gsettings)"), "\(status.stdout)")
        #expect(givenUp() == before, "the status waited on systemd: \(daemon.log)")
        // Each hung gsettings is stopped at its time limit: at most the one read now runs.
        #expect(liveChildren(of: daemon.pid) <= 1, "\(liveChildren(of: daemon.pid)) children alive")
    }

    /// mako 1.7 (modes listed, never announced), whose ListModes never answers: alarms that care about
    /// do-not-disturb (every one that is not critical) are not held by the question.
    @Test func aHungMakoHoldsUpNoAlarm() throws {
        let recorder = try RecordingServer(address: bus.address, serverName: "mako", makoModes: nil)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let center = try center()
        let due = try stream(center, "egg", count: 20, start: .milliseconds(2500), gap: .milliseconds(150)) { $0.doNotDisturb = .defer }
        let lists = try listTimes(center, runs: 10)
        #expect(waitUntil { lateness(recorder, due).count == 20 }, "\(daemon.log)")
        let late = lateness(recorder, due)
        print("measured: hung mako: 20 alarms reached the server \(describe(late)) late; the pending list answered in \(describe(lists))")
        // mako is given a second to answer: an alarm or a list held by the question is a second late.
        #expect(late[late.count / 2] < 250, "alarms on time: \(late)")
        #expect((late.last ?? 1000) < 900, "\(late)")
        #expect(lists[lists.count / 2] < 500, "\(lists)")
        #expect(daemon.log.contains("mako did not answer when asked"), "\(daemon.log)")
        // Once mako answers again, its do-not-disturb is read: an alarm that defers is held.
        recorder.makoModes = ["do-not-disturb"]
        let held = try stream(center, "quiet", count: 1, start: .seconds(3), gap: .zero) { $0.doNotDisturb = .defer }
        #expect(try waitUntil(30) { try center.pendingSummaries().first { $0.identifier == "quiet-0" }?.state == .held })
        #expect(lateness(recorder, held).isEmpty, "deferred, not shown")
    }
}
