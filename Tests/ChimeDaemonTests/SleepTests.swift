import ChimeCenter
import ChimeClient
import Foundation
import Testing
import TestSupport

/// The daemon and logind: a delay lock held while it runs, let go when logind announces a sleep (once
/// the store is on disk), taken again at resume. logind cannot run here: python3-dbusmock's logind
/// template stands in for it, on a private bus given to the daemon as its system bus
/// (`DBUS_SYSTEM_BUS_ADDRESS`, which libdbus reads).
@Suite struct SleepTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }

    @Test func theDelayLockIsHeldLetGoBeforeSleepAndTakenAgainAfter() throws {
        let logind = try LogindStandIn()
        defer { logind.stop() }
        func inhibitors() throws -> String { try logind.inhibitors() }

        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: logind.environment)
        defer { daemon.stop(); bus.stop() }
        let lock = "'sleep', 'chime', 'recording alarms before sleep', 'delay'"
        #expect(try waitUntil { try inhibitors().contains(lock) }, "no delay lock")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Sleep:          followed: logind's delay lock is held"), "\(status.stdout)")

        try logind.prepareForSleep(true)
        #expect(try waitUntil { try !inhibitors().contains(lock) }, "the lock was not let go before sleep")
        try logind.prepareForSleep(false)
        #expect(try waitUntil { try inhibitors().contains(lock) }, "the lock was not taken again after resume")
        #expect(daemon.isRunning)
        // The daemon still answers, and says nothing went wrong.
        #expect(try center().pendingSummaries().isEmpty)
    }

    /// A whole night, end to end: the real daemon, a notification server, and logind's stand-in
    /// announcing the sleep and the resume. The daemon is stopped (SIGSTOP) while "asleep", as a
    /// suspended machine stops every process; alarms fall due meanwhile. At resume, within a second:
    /// the one-off is shown marked late, the every-two-seconds alarm rings once for all it missed
    /// (the rest on the missed list), and one past its one-second grace is recorded missed, not shown.
    ///
    /// The one-offs must come due while the daemon is stopped: they are set `margin` seconds ahead,
    /// and a machine so busy that setting them and going to sleep took longer plays the night again
    /// with a margin twice as long (on a new bus, with a new daemon) instead of failing.
    @Test func alarmsDueDuringASleepArriveOnceRightAfterResume() throws {
        for margin in [4, 8, 16, 32] {
            let night = try PrivateBus()
            defer { night.stop() }
            if try Self.night(on: night, margin: margin) { return }
            print("measured: setting the alarms and going to sleep took over \(margin) s; the night again with more time")
        }
        Issue.record("setting three alarms and going to sleep took over 32 s four times")
    }

    /// One night of `alarmsDueDuringASleepArriveOnceRightAfterResume`: false when the alarms came due
    /// before the daemon was asleep (nothing was checked).
    static func night(on bus: PrivateBus, margin: Int) throws -> Bool {
        let logind = try LogindStandIn()
        defer { logind.stop() }
        let recorder = try RecordingServer(address: bus.address)
        let state = bus.directory.appendingPathComponent("state").path
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: logind.environment)
        defer { daemon.stop(); recorder.stop() }
        #expect(try waitUntil { try logind.inhibitors().contains("'delay'") })
        func set(_ arguments: [String]) throws {
            let result = try runChime(arguments, environment: bus.environment())
            try #require(result.status == 0, "\(result.stderr)")
        }
        // Due no sooner than `margin` seconds from now (each is set after this moment).
        let setAt = Date()
        try set(["in", "\(margin)s", "--id", "tea", "Tea"])
        try set(["in", "\(margin)s", "--grace", "1s", "--id", "strict", "Strict"])
        try set(["at", "*:*:0/2", "--id", "tick", "Tick"])
        // Whatever rang before the sleep is not counted.
        usleep(300_000)
        let before = recorder.calls.count

        try logind.prepareForSleep(true)
        #expect(try waitUntil { try !logind.inhibitors().contains("'delay'") })
        kill(daemon.pid, SIGSTOP)
        let slept = Date()
        let due = setAt.addingTimeInterval(TimeInterval(margin))
        guard slept < due.addingTimeInterval(-0.2) else {
            kill(daemon.pid, SIGCONT)
            return false
        }
        // Asleep past the one-offs' time by 3 s (past the strict one's grace), and for three ticks at least.
        usleep(UInt32(max(6, due.timeIntervalSince(slept) + 3) * 1_000_000))
        try logind.prepareForSleep(false)
        let woke = Date()
        kill(daemon.pid, SIGCONT)
        _ = recorder.waitForCalls(before + 2)
        usleep(500_000)
        let after = Array(recorder.calls.dropFirst(before))
        let shown = after.map(\.summary)
        #expect(shown.filter { $0 == "Tea" }.count == 1, "\(shown)")
        // One late ring for the ticks missed (a tick falling due after the resume rings on time).
        let lateTicks = after.filter { $0.summary == "Tick" && $0.body.contains("Late: due at") }
        #expect(lateTicks.count == 1, "one ring for the missed ticks: \(after.map { $0.summary + "|" + $0.body })")
        #expect(after.filter { $0.summary == "Tick" }.count <= 2)
        #expect(!shown.contains("Strict"), "past its grace: recorded, not shown")
        for call in after where call.summary == "Tea" || lateTicks.contains(where: { $0.receivedAt == call.receivedAt }) {
            print("measured: \(call.summary) shown \(Int(call.receivedAt.timeIntervalSince(woke) * 1000)) ms after the resume")
            // At the resume, not at the next minute or a poll: within moments of it, however busy the
            // machine (the daemon was just continued from SIGSTOP).
            #expect(call.receivedAt.timeIntervalSince(woke) < 5, "\(call.summary) came \(call.receivedAt.timeIntervalSince(woke)) s after the resume")
            #expect(call.body.contains("Late: due at"), "\(call.body)")
        }
        let missed = try UserNotificationCenter(connection: try bus.connect()).missedOccurrences()
        #expect(missed.contains { $0.identifier == "strict" })
        // The ticks of the night, but the one that rang, are on the missed list.
        let ticks = missed.filter { $0.identifier == "tick" }
        #expect(ticks.count >= 2, "\(missed)")
        #expect(ticks.allSatisfy { $0.due.seconds >= Int64(slept.timeIntervalSince1970) - 1 })
        #expect(try waitUntil { try logind.inhibitors().contains("'delay'") })
        return true
    }

    /// Without a system bus the daemon runs as before, and says what it does about sleep.
    @Test func withoutASystemBusSleepIsSeenThroughTheClock() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state,
                                       environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(bus.directory.path)/no-such-bus"])
        defer { daemon.stop(); bus.stop() }
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Sleep:          not followed: no system bus; what falls due during a sleep is still caught up"),
                "\(status.stdout)")
        #expect(daemon.isRunning)
    }
}
