import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// An alarm rings until it is answered: the real daemon, a recording server, and a recording sound
/// player (a `canberra-gtk-play` on the daemon's PATH that notes each start and how it ended).
@Suite struct RingTests: OnAPrivateBus {
    let bus: PrivateBus
    /// The recording player.
    let player: RecordingPlayer

    init() throws {
        bus = try PrivateBus()
        player = try RecordingPlayer(in: bus)
    }

    /// Installs a player whose sound lasts `seconds`: it logs "start TIME PID", plays (sleeps), logs "end TIME PID".
    func installPlayer(soundSeconds seconds: Double) throws {
        try player.install("""
            echo "start $(date +%s.%N) $$" >> "$LOG"
            sleep \(seconds)
            echo "end $(date +%s.%N) $$" >> "$LOG"
            """)
    }

    /// The player's log: (event, time, pid) lines.
    func plays() -> [(event: String, time: Double, pid: Int32)] {
        player.lines().compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let time = Double(parts[1]), let pid = Int32(parts[2]) else { return nil }
            return (String(parts[0]), time, pid)
        }
    }

    func daemon() throws -> DaemonProcess {
        try DaemonProcess(bus: bus, stateDirectory: state, environment: player.environment)
    }


    /// Whether a process has ended (gone, or a zombie waiting for its parent).
    func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }

    func set(_ arguments: [String]) throws {
        let result = try runChime(arguments, environment: bus.environment())
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// Unanswered, the sound plays again each time it ends for the ring time, then stops; the ring
    /// is recorded, and the popup asked to stay meanwhile.
    @Test func unansweredTheSoundRepeatsForItsRingTimeThenIsRecorded() throws {
        try installPlayer(soundSeconds: 0.3)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let set = Date()
        try self.set(["in", "1s", "--sound", "bell", "--ring", "3s", "--id", "tea", "Tea"])
        #expect(recorder.waitForCalls(1).count == 1)
        let shownAt = try #require(recorder.calls.first).receivedAt
        #expect(recorder.calls.first?.expireTimeout == 0, "a ringing popup is sent to stay up")
        #expect(try waitUntil(30) { try center().missedOccurrences().contains { $0.identifier == "tea" } })
        usleep(1_500_000)
        let starts = plays().filter { $0.event == "start" }
        // Started at once, then again each time it ended (at most once a second) for 3 s: 3 plays.
        #expect((3...4).contains(starts.count), "\(plays())")
        // The first at once, not a second later as a repeat would be; the player's own timestamps
        // are taken once it runs, which a busy machine delays.
        if let first = starts.first { #expect(first.time - shownAt.timeIntervalSince1970 < 0.9) }
        let lastStart = try #require(starts.last).time
        #expect(lastStart - shownAt.timeIntervalSince1970 < 3.5, "no play starts after the ring time")
        let missed = try center().missedOccurrences().first { $0.identifier == "tea" }
        #expect(missed?.reason == "rang 3s unanswered", "\(String(describing: missed))")
        #expect(set.timeIntervalSinceNow > -10)
        // Nothing rings on.
        let count = plays().count
        usleep(1_200_000)
        #expect(plays().count == count)
    }

    /// Dismiss stops a long sound within half a second, and it does not play again.
    @Test func dismissStopsTheSoundWithinHalfASecond() throws {
        try installPlayer(soundSeconds: 20)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--id", "get-up", "Get up"])  // the default ring: 5 minutes
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(waitUntil { plays().contains { $0.event == "start" } }, "\(daemon.log)")
        let pid = try #require(plays().first?.pid)
        #expect(!hasEnded(pid))
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "get-up" }?.serverID })
        let pressed = Date()
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(waitUntil(30) { hasEnded(pid) })
        let stopped = Date().timeIntervalSince(pressed)
        print("measured: the sound stopped \(Int(stopped * 1000)) ms after Dismiss (the test looks every 20 ms)")
        // Stopped by the answer, not left to play its 20 s; how fast is make bench's to measure.
        #expect(stopped < 3, "the sound stopped \(stopped) s after Dismiss")
        #expect(waitUntil { recorder.closedIDs.contains(id) })
        usleep(1_500_000)  // and it does not play again
        #expect(plays().filter { $0.event == "start" }.count == 1)
        #expect(try center().missedOccurrences().isEmpty, "an answered alarm is not recorded as rung out")
        _ = call
    }

    /// Snooze stops it the same way, and the alarm comes back after its snooze time.
    @Test func snoozeStopsTheSoundAndComesBack() throws {
        try installPlayer(soundSeconds: 20)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--snooze", "2s", "--id", "nap", "Nap"])
        _ = recorder.waitForCalls(1)
        #expect(waitUntil { plays().contains { $0.event == "start" } })
        let pid = try #require(plays().first?.pid)
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "nap" }?.serverID })
        let pressed = Date()
        try recorder.invokeAction(id: id, key: "snooze")
        #expect(waitUntil(30) { hasEnded(pid) })
        // (A bound that tells the answer from the sound's own end, 20 s on, on a busy machine too.)
        #expect(Date().timeIntervalSince(pressed) < 15, "stopped by the answer, not left to play its 20 s")
        // Back after 2 s, ringing again.
        #expect(recorder.waitForCalls(2, timeout: 30).count == 2, "\(daemon.log)")
        #expect(waitUntil { plays().filter { $0.event == "start" }.count == 2 }, "\(plays()) \(daemon.log)")
    }

    /// --auto-snooze: rung out unanswered, the alarm takes its popup down and snoozes itself.
    @Test func autoSnoozeSnoozesAnAlarmNobodyAnswered() throws {
        try installPlayer(soundSeconds: 0.2)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--ring", "2s", "--auto-snooze", "--snooze", "1m", "--id", "late", "Late"])
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(try waitUntil(30) { try center().pendingSummaries().contains { $0.identifier == "late" } })
        let pending = try #require(try center().pendingSummaries().first { $0.identifier == "late" })
        let next = try #require(pending.nextFire)
        #expect(abs(next.seconds - (Int64(call.receivedAt.timeIntervalSince1970) + 62)) <= 2, "snoozed a minute from the end of the ring")
        #expect(waitUntil { !recorder.closedIDs.isEmpty })
        #expect(try center().missedOccurrences().first?.reason == "rang 2s unanswered; snoozed itself for 1m")
    }

    /// A server that plays sounds itself is sent the popup again in place while it rings, until Dismiss.
    @Test func aServerThatPlaysSoundsIsSentThePopupAgainInPlace() throws {
        let recorder = try RecordingServer(address: bus.address, capabilities: ["actions", "body", "persistence", "sound"])
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--id", "loud", "Loud"])
        let first = try #require(recorder.waitForCalls(1).first)
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "loud" }?.serverID })
        let again = recorder.waitForCalls(2)
        try #require(again.count == 2)
        #expect(again[1].replacesID == id)
        #expect(again[1].hints["sound-name"]?.stringValue == "bell")
        let gap = again[1].receivedAt.timeIntervalSince(first.receivedAt)
        #expect(gap > 4.5 && gap < 6, "sent again after \(gap) s")
        #expect(plays().isEmpty, "the local player stays quiet where the server plays")
        try recorder.invokeAction(id: id, key: "dismiss")
        usleep(6_000_000)
        #expect(recorder.calls.count == 2, "nothing sent after Dismiss")
    }

    /// A daemon killed with SIGKILL mid-ring and started again rings on for the rest of the ring time,
    /// once: the same popup (sent again in place, never a second one), the sound again within a
    /// moment of the start, nothing past the ring's end, and one record that it rang out.
    @Test func aRingSurvivesKillNineAndEndsOnTime() throws {
        try installPlayer(soundSeconds: 0.3)
        let recorder = try RecordingServer(address: bus.address)
        var daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--ring", "6s", "--id", "oven", "Oven"])
        let shown = try #require(recorder.waitForCalls(1).first)
        #expect(waitUntil { plays().filter { $0.event == "start" }.count >= 2 })
        daemon.kill()
        usleep(300_000)
        let playsBefore = plays().filter { $0.event == "start" }.count
        daemon = try self.daemon()
        let restarted = Date()
        #expect(waitUntil { plays().filter { $0.event == "start" }.count > playsBefore }, "\(daemon.log)")
        let resumedAt = try #require(plays().filter { $0.event == "start" }.last?.time)
        print("measured: the ring resumed \(Int((resumedAt - restarted.timeIntervalSince1970) * 1000)) ms after the daemon started again")
        #expect(resumedAt - restarted.timeIntervalSince1970 < 3, "the ring resumes as the daemon starts")
        // The popup sent again in place (so the server's answers come to the new daemon), never anew.
        let again = recorder.waitForCalls(2)
        #expect(again.count == 2)
        #expect(again.dropFirst().allSatisfy { $0.replacesID != 0 }, "\(again.map(\.replacesID))")
        // The ring ends at its time, counted from when it first rang.
        let rungOut = try #require(try waitForValue { try center().missedOccurrences().first { $0.identifier == "oven" } }, "\(daemon.log)")
        // Not before the ring's end, and at it: when the daemon recorded it (on its own clock, not
        // when this test, slowed by a busy machine, next looked).
        let ended = Date(timeIntervalSince1970: Double(rungOut.recorded.nanosecondsSinceEpoch) / 1e9)
        let ringEnd = shown.receivedAt.addingTimeInterval(6)
        #expect(ended.timeIntervalSince(ringEnd) > -1.2 && ended.timeIntervalSince(ringEnd) < 2.5,
                "ended \(ended.timeIntervalSince(ringEnd)) s from the ring's end: \(daemon.log)")
        let lastStart = try #require(plays().filter { $0.event == "start" }.last?.time)
        #expect(lastStart < ringEnd.timeIntervalSince1970 + 0.5, "no play starts after the ring time")
        #expect(try center().missedOccurrences().filter { $0.identifier == "oven" }.map(\.reason) == ["rang 6s unanswered"])
        // Once: restarted again after the ring ended, it does not ring anew.
        daemon.stop()
        daemon = try self.daemon()
        let startedAgain = Date().timeIntervalSince1970
        usleep(1_500_000)
        #expect(!plays().contains { $0.event == "start" && $0.time > startedAgain }, "\(plays())")
        #expect(recorder.calls.count == again.count)
    }

    /// A ring whose resuming at start crashed the daemon (a test build's switch stands in for a
    /// crash in its sound's decoder or its popup) is not resumed at the next start: its popup stays,
    /// `chime list --missed` says why, and everything else runs.
    @Test func aRingThatCrashedTheDaemonWhenResumedIsNotResumedAgain() throws {
        try installPlayer(soundSeconds: 0.3)
        let recorder = try RecordingServer(address: bus.address)
        var daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--ring", "60s", "--id", "oven", "Oven"])
        _ = recorder.waitForCalls(1)
        #expect(waitUntil { plays().contains { $0.event == "start" } })
        daemon.kill()
        // Started again, it dies resuming the ring.
        let crashing = try DaemonProcess(bus: bus, stateDirectory: state, waitForName: false,
                                         environment: player.environment.merging(["CHIME_TEST_CRASH_READING": "the ring of oven"]) { $1 })
        #expect(crashing.waitForExit(), "\(crashing.log)")
        #expect(crashing.log.contains("crashing while working on the ring of oven"), "\(crashing.log)")
        let playsBefore = plays().filter { $0.event == "start" }.count
        // The next start does not resume it, says why, and the rest runs: a plain alarm fires.
        daemon = try self.daemon()
        try set(["in", "1s", "--id", "plain", "Plain"])
        let calls = recorder.waitForCalls(2)
        #expect(calls.map(\.summary).contains("Plain"), "\(calls.map(\.summary)) \(daemon.log)")
        #expect(try waitUntil {
            try center().missedOccurrences().contains { $0.identifier == "oven" && ($0.reason ?? "").contains("not rung again after a restart") }
        }, "\(daemon.log)")
        #expect(daemon.log.contains("the daemon stopped while resuming the ring of oven at start"), "\(daemon.log)")
        #expect(plays().filter { $0.event == "start" }.count == playsBefore, "the ring was not resumed: \(plays())")
        #expect(try center().deliveredNotifications().contains { $0.identifier == "oven" }, "its popup stays")
        // And at a later start it is simply gone (the crash was charged once).
        daemon.stop()
        daemon = try self.daemon()
        usleep(500_000)
        #expect(plays().filter { $0.event == "start" }.count == playsBefore)
    }

    /// An answered alarm never rings again: dismissed, then the daemon killed and started again.
    @Test func anAnsweredRingStaysSilentAfterARestart() throws {
        try installPlayer(soundSeconds: 0.3)
        let recorder = try RecordingServer(address: bus.address)
        var daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        try set(["in", "1s", "--sound", "bell", "--ring", "30s", "--id", "kettle", "Kettle"])
        _ = recorder.waitForCalls(1)
        #expect(waitUntil { plays().contains { $0.event == "start" } })
        let id = try #require(try waitForValue { try center().deliveredNotifications().first { $0.identifier == "kettle" }?.serverID })
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(waitUntil { recorder.closedIDs.contains(id) })
        usleep(200_000)
        daemon.kill()
        usleep(300_000)
        let count = plays().filter { $0.event == "start" }.count
        daemon = try self.daemon()
        usleep(2_000_000)
        #expect(plays().filter { $0.event == "start" }.count == count, "\(plays())")
        #expect(recorder.calls.count == 1, "no popup sent again")
    }

    /// Answering from a terminal: `chime list --ringing` says what rings, `chime snooze ID --for`
    /// snoozes it for the time chosen, `chime stop` stops every ringing alarm (nothing ringing is
    /// not an error), an identifier that is not ringing is one (exit 6), a time that is not one a
    /// usage error (64).
    @Test func ringingAlarmsAreAnsweredFromATerminal() throws {
        try installPlayer(soundSeconds: 0.3)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        func chime(_ arguments: [String]) throws -> CommandResult { try runChime(arguments, environment: bus.environment()) }
        #expect(try chime(["stop"]).stdout == "nothing is ringing\n")
        #expect(try chime(["list", "--ringing"]).stdout == "nothing is ringing\n")
        try set(["in", "1s", "--sound", "bell", "--ring", "5m", "--id", "kettle", "Kettle"])
        try set(["in", "1s", "--sound", "bell", "--ring", "5m", "--id", "oven", "Oven"])
        #expect(try waitUntil { try center().ringing().count == 2 })
        let listed = try chime(["list", "--ringing"]).stdout
        #expect(listed.contains("kettle  ringing since ") && listed.contains("  Kettle  (until ") && listed.contains("oven  ringing since "), "\(listed)")

        // Snoozed for 2 minutes, not its own 10: pending again, at about now + 2 min.
        let asked = WallClock.system.now()
        let snoozed = try chime(["snooze", "kettle", "--for", "2m"])
        let answered = WallClock.system.now()
        #expect(snoozed.status == 0, "\(snoozed.stderr)")
        #expect(snoozed.stdout.hasPrefix("kettle: snoozed until "), "\(snoozed.stdout)")
        let next = try #require(try waitForValue { try center().pendingSummaries().first { $0.identifier == "kettle" }?.nextFire })
        // 2 minutes from when the daemon took it: between the asking and the answer, however slow.
        #expect(next >= asked + .seconds(120) && next <= answered + .seconds(120), "snoozed to \(next), asked \(asked), answered \(answered)")
        #expect(try waitUntil { try center().ringing().map(\.identifier) == ["oven"] })

        // Not ringing: exit 6, one line; not a time: a usage error.
        let absent = try chime(["stop", "nosuch"])
        #expect(absent.status == 6)
        #expect(absent.stderr == "chime: not ringing: \"nosuch\"; see chime list --ringing\n")
        let badTime = try chime(["snooze", "oven", "--until", "25:00"])
        #expect(badTime.status == 64, "\(badTime.stderr)")
        #expect(try chime(["snooze", "oven", "--for", "5m", "--until", "07:00"]).status == 64)

        // Stop with no identifier: everything ringing stops; the popups go.
        let stopped = try chime(["stop"])
        #expect(stopped.status == 0 && stopped.stdout == "oven: stopped\n", "\(stopped.stdout)\(stopped.stderr)")
        #expect(try waitUntil { try center().ringing().isEmpty })
        #expect(waitUntil { recorder.closedIDs.count >= 2 }, "closed: \(recorder.closedIDs)")
    }

    /// The command line refuses what cannot ring, each in one line naming the option.
    @Test func ringOptionsAreCheckedAtTheDoor() throws {
        defer { bus.stop() }
        let cases: [([String], String)] = [
            (["in", "5m", "--ring", "1m", "T"], "chime: --ring 1m: give --sound too (an alarm without a sound has nothing to ring)\n"),
            (["in", "5m", "--sound", "bell", "--ring", "2h", "T"], "chime: --ring 2h: must be 0s-1h, got 2h\n"),
            (["in", "5m", "--sound", "bell", "--ring", "0", "--auto-snooze", "T"],
             "chime: --auto-snooze: needs a sound that rings (a sound and a ring time above 0)\n"),
            (["in", "5m", "--dnd", "never", "T"], "chime: --dnd never: must be break-through, defer or silent\n"),
        ]
        for (arguments, message) in cases {
            let result = try runChime(arguments, environment: bus.environment())
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr == message, "\(arguments)")
        }
    }

    /// The sound's options are checked at every door: the command line (a usage error naming the
    /// option), D-Bus (`InvalidRequest` naming the key) and `chime sound play`.
    @Test func soundOptionsAreCheckedAtTheDoor() throws {
        defer { bus.stop() }
        let cases: [([String], String)] = [
            (["in", "5m", "--sound", "bell", "--volume", "0", "T"], "chime: --volume 0: must be 1-100 percent, got 0\n"),
            (["in", "5m", "--sound", "bell", "--volume", "150%", "T"], "chime: --volume 150%: must be 1-100 percent, got 150\n"),
            (["in", "5m", "--sound", "bell", "--volume", "loud", "T"], "chime: --volume loud: give a percentage such as 70 or 70%\n"),
            (["in", "5m", "--sound", "bell", "--volume=-5", "T"], "chime: --volume -5: give a percentage such as 70 or 70%\n"),
            (["in", "5m", "--volume", "70", "T"], "chime: --volume 70: give --sound too\n"),
            (["in", "5m", "--insist", "T"], "chime: --insist: give --sound too\n"),
            (["in", "5m", "--sound", "bell", "--fade", "soon", "T"], "chime: --fade soon: use a duration such as 5m or 90s\n"),
            (["in", "5m", "--sound", "bell", "--fade", "2h", "T"], "chime: --fade 2h: must be 0s-1h, got 2h\n"),
            (["in", "5m", "--sound", "bell", "--ring", "1m", "--fade", "2m", "T"],
             "chime: --fade 2m: must be at most the ring time (1m), got 2m: the ring would end before the sound is at its volume\n"),
            (["sound", "play", "bell", "--volume", "0"], "chime: --volume 0: give a percentage from 1 to 100, such as 70 or 70%\n"),
            (["sound", "play", "./no-such-file.oga"], "chime: ./no-such-file.oga: no readable sound file there\n"),
        ]
        for (arguments, message) in cases {
            let result = try runChime(arguments, environment: bus.environment())
            let expected: Int32 = arguments[0] == "sound" && message.contains("no readable") ? 66 : 64
            #expect(result.status == expected, "\(arguments): \(result.stderr)")
            #expect(result.stderr == message, "\(arguments)")
        }
        let daemon = try daemon()
        defer { daemon.stop() }
        let connection = try bus.connect()
        let refusals: [([(String, Value)], String)] = [
            ([("volume", .string("70"))], "volume: must be an integer (u or x), got s"),
            ([("volume", .uint32(101))], "volume: must be 1-100 percent, got 101"),
            ([("fade", .uint32(5)), ("volume", .uint32(50))], "volume: needs a sound"),
            ([("insist", .uint32(1)), ("sound", .string("bell"))], "insist: must be a boolean (b), got u"),
        ]
        for (extra, message) in refusals {
            let request = Value.vardict([("title", .string("T")), ("rule", .string("in 5m"))] + extra)
            #expect(throws: DBusError.self) {
                _ = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                        member: "Add", arguments: [request])
            }
            do {
                _ = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                        member: "Add", arguments: [request])
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.chime.Scheduler.Error.InvalidRequest")
                #expect(error.message == message, "\(extra)")
            }
        }
        for (options, message) in [([("volume", Value.uint32(0))], "volume: must be 1-100 percent, got 0"),
                                    ([("loud", Value.boolean(true))], "loud: unknown option (volume, fade and for are)"),
                                    ([("for", Value.string("1m"))], "for: must be an integer (u), got s")] {
            do {
                _ = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler", interface: "org.chime.Scheduler1",
                                        member: "PlaySound", arguments: [.string("bell"), .vardict(options)])
                Issue.record("PlaySound took \(options)")
            } catch let error as DBusError {
                #expect(error.message == message)
            }
        }
    }
}
