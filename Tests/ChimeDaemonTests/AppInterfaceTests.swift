import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// What the desktop app asks of the daemon beyond the command line's calls: the ringing alarms
/// (`ListRinging`, `RingingChanged`) and answering one (`Answer`, the ringing page's Snooze and
/// Stop), a sound's preview (`PreviewSound`), and the alarm file's timer presets
/// (`ListTimerPresets`, `StartTimer`). The real daemon, a recording server, a recording player.
@Suite struct AppInterfaceTests: OnAPrivateBus {
    let bus: PrivateBus
    let player: RecordingPlayer

    init() throws {
        bus = try PrivateBus()
        player = try RecordingPlayer(in: bus)
        // A player that notes what it was asked to play, then plays (sleeps) for 20 s.
        try player.install("echo \"$$ $*\" >> \"$LOG\"\nexec sleep 20")
    }

    func daemon(arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(bus: bus, stateDirectory: state, arguments: arguments, environment: player.environment)
    }

    func plays() -> [String] { player.lines() }

    /// Signals of the scheduler, as (member, first argument's strings), on a connection of their own.
    final class Signals: @unchecked Sendable {
        let connection: Connection
        private let lock = NSLock()
        private var seen: [(member: String, arguments: [Value])] = []

        init(_ bus: PrivateBus) throws {
            connection = try bus.connect()
            for member: MemberName in ["RingingChanged", "Answered"] {
                _ = try connection.subscribe(MatchRule(interface: "org.chime.Scheduler1", member: member)) { [unowned self] message in
                    lock.withLock { seen.append((message.member?.rawValue ?? "", message.arguments())) }
                }
            }
        }

        var all: [(member: String, arguments: [Value])] { lock.withLock { seen } }

        func ringing() -> [[String]] {
            all.filter { $0.member == "RingingChanged" }.map { $0.arguments.first?.arrayElements?.compactMap(\.stringValue) ?? [] }
        }

        func waitFor(_ timeout: TimeInterval = 30, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline, !condition() { _ = connection.run(until: .now + .milliseconds(20)) { true } }
            return condition()
        }
    }

    @Test func theRingingPageSeesARingAndStopsIt() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let signals = try Signals(bus)
        let center = try center()
        #expect(try center.ringing().isEmpty)
        #expect(try runChime(["in", "1s", "--sound", "bell", "--id", "get-up", "Get up"], environment: bus.environment()).status == 0)
        #expect(signals.waitFor { signals.ringing().contains(["get-up"]) }, "\(signals.ringing())")
        let ringing = try center.ringing()
        #expect(ringing.map(\.identifier) == ["get-up"])
        #expect(ringing.first?.title == "Get up")
        if let ring = ringing.first { #expect(ring.until.seconds - ring.due.seconds >= 299, "the default ring: 5 minutes") }
        // (The player notes its start when its shell gets to run: on a busy machine, after the signal.)
        #expect(waitUntil { plays().count == 1 }, "\(plays())")
        let id = try #require(try waitForValue { try center.deliveredNotifications().first { $0.identifier == "get-up" }?.serverID })

        // Stop, as the ringing page's button: the sound stops, the popup goes, Answered is emitted.
        try center.answer("get-up", action: "dismiss")
        #expect(signals.waitFor { signals.ringing().last == [] }, "\(signals.ringing())")
        #expect(try center.ringing().isEmpty)
        #expect(signals.waitFor { signals.all.contains { $0.member == "Answered" && $0.arguments.map(\.stringValue) == ["get-up", "dismiss"] } })
        #expect(signals.waitFor { recorder.closedIDs.contains(id) })
        let pid = try #require(plays().first?.split(separator: " ").first.flatMap { Int32($0) })
        #expect(signals.waitFor(30) { kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true },
                "the player was stopped")
        // A one-off that was answered is gone; it was answered, not missed.
        #expect(try center.missedOccurrences().isEmpty)

        // What is not showing cannot be answered, and only the popup's own buttons can be pressed.
        #expect(throws: SchedulerError.self) { try center.answer("get-up", action: "dismiss") }
        let error = #expect(throws: SchedulerError.self) { try center.answer("nothing", action: "snooze") }
        #expect(error?.refusal == .unknownIdentifier)
    }

    @Test func snoozeFromTheRingingPageBringsTheAlarmBack() throws {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let signals = try Signals(bus)
        let center = try center()
        #expect(try runChime(["in", "1s", "--sound", "bell", "--snooze", "2s", "--id", "nap", "Nap"], environment: bus.environment()).status == 0)
        #expect(signals.waitFor { signals.ringing().contains(["nap"]) })
        let error = #expect(throws: SchedulerError.self) { try center.answer("nap", action: "reboot") }
        #expect(error?.refusal == .invalidRequest)
        #expect(error?.message.contains("is not snooze, dismiss or one of the alarm's buttons") == true, "\(String(describing: error))")
        let pressed = Date()
        try center.answer("nap", action: "snooze")
        // Its ring ended (seen in the signals' history: on a busy machine the next ring, 2 s on, may
        // already have begun when the test looks).
        #expect(signals.waitFor { signals.ringing().drop { $0 != ["nap"] }.contains([]) }, "\(signals.ringing())")
        // Back after its 2 s snooze, ringing again.
        #expect(signals.waitFor(30) { signals.ringing().filter { $0 == ["nap"] }.count == 2 }, "\(signals.ringing())")
        #expect(Date().timeIntervalSince(pressed) >= 1.5)
        #expect(recorder.calls.count == 2)
    }

    @Test func aPreviewPlaysOnceAndSaysWhyItCannot() throws {
        let daemon = try daemon()
        defer { daemon.stop(); bus.stop() }
        let center = try center()
        try center.previewSound("default")
        #expect(waitUntil { plays().count == 1 })
        #expect(plays().first?.hasSuffix("-i alarm-clock-elapsed") == true, "\(plays())")
        // A second preview stops the first.
        let first = try #require(plays().first?.split(separator: " ").first.flatMap { Int32($0) })
        try center.previewSound("bell")
        #expect(waitUntil { plays().count == 2 })
        #expect(plays().last?.hasSuffix("-i bell") == true)
        #expect(waitUntil { (try? String(contentsOfFile: "/proc/\(first)/stat", encoding: .utf8)).map { $0.contains(") Z ") } ?? true })
        try center.previewSound("/usr/share/sounds/x.oga")
        #expect(waitUntil { plays().last?.hasSuffix("-f /usr/share/sounds/x.oga") == true })
        for bad in ["", "a/b", "bell\u{1}", String(repeating: "x", count: 256), "relative/path.oga"] {
            let error = #expect(throws: SchedulerError.self, "\(bad)") { try center.previewSound(bad) }
            #expect(error?.refusal == .invalidRequest, "\(bad): \(String(describing: error))")
        }
    }

    @Test func aValueThatCannotTravelIsRefusedBeforeItIsSent() throws {
        // (libdbus would abort the process on a NUL in a string: the client says so instead, and
        // nothing reaches the bus. No daemon runs: no answer is needed to refuse it.)
        defer { bus.stop() }
        let error = #expect(throws: SchedulerError.self) { try center().answer("get\u{0}up", action: "dismiss") }
        guard case .unsendable(let text)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(text.hasPrefix("cannot send ") && text.contains("NUL"), "\(text)")
    }

    @Test func withoutAPlayerThePreviewSaysSo() throws {
        // Only what the daemon needs on its PATH: no sound player.
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: ["PATH": bus.directory.path])
        defer { daemon.stop(); bus.stop() }
        let error = #expect(throws: SchedulerError.self) { try center().previewSound("bell") }
        #expect(error?.refusal == .cannotPlay)
        #expect(error?.message.contains("no sound server and no player program") == true, "\(String(describing: error))")
    }

    @Test func theAlarmFilesTimerPresetsAreListedAndStarted() throws {
        let config = bus.directory.appendingPathComponent("alarms.toml")
        try """
            [[timer]]
            name = "eggs"
            duration = "5m"
            title = "Eggs are done"
            sound = "bell"

            [[timer]]
            name = "tea"
            duration = "3m30s"
            title = "Tea"
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try daemon(arguments: ["--config", config.path])
        defer { daemon.stop(); bus.stop() }
        let center = try center()
        let presets = try center.timerPresets()
        #expect(presets.map(\.name) == ["eggs", "tea"])
        #expect(presets.map(\.duration) == [.seconds(300), .seconds(210)])
        #expect(presets.map(\.title) == ["Eggs are done", "Tea"])
        let before = Date().timeIntervalSince1970
        let started = try center.startTimer("eggs")
        #expect(abs(Double(started.nextFire.seconds) - before - 300) < 3)
        let summary = try #require(try center.pendingSummaries().first { $0.identifier == started.identifier })
        #expect(summary.rule == "in 5m")
        #expect(summary.label == "eggs")
        #expect(summary.sound == "bell")
        #expect(started.identifier.hasPrefix("eggs-"), "\(started.identifier)")
        // As `chime timer eggs` would have set it: the same request.
        let request = try center.request(withIdentifier: started.identifier)
        #expect(request.content.ring == .seconds(300))
        #expect(request.content.category == "x-chime.timer")
        let error = #expect(throws: SchedulerError.self) { try center.startTimer("coffee") }
        #expect(error?.refusal == .unknownIdentifier)
        #expect(error?.message == "no timer \"coffee\" in the alarm file; there are: eggs, tea")
    }

    @Test func withoutAnAlarmFileThereAreNoPresets() throws {
        let daemon = try daemon(arguments: ["--no-config"])
        defer { daemon.stop(); bus.stop() }
        #expect(try center().timerPresets().isEmpty)
        let error = #expect(throws: SchedulerError.self) { try center().startTimer("eggs") }
        #expect(error?.refusal == .noAlarmFile)
    }
}
