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
        let system = try PrivateBus()
        defer { system.stop() }
        let logind = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                                      environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address, "PATH": "/usr/bin:/bin"],
                                      logDirectory: system.directory)
        defer { logind.stop() }
        func gdbus(_ arguments: [String]) throws -> CommandResult {
            try runProgram("/usr/bin/gdbus", (["call", "--address", system.address, "-d", "org.freedesktop.login1",
                                               "-o", "/org/freedesktop/login1", "-m"] + arguments).map { Array($0.utf8) },
                           environment: ["PATH": "/usr/bin:/bin"])
        }
        func inhibitors() throws -> String { try gdbus(["org.freedesktop.login1.Manager.ListInhibitors"]).stdout }
        func waitFor(_ condition: () throws -> Bool) rethrows -> Bool {
            for _ in 0..<100 {
                if try condition() { return true }
                usleep(50_000)
            }
            return try condition()
        }
        #expect(try waitFor { try gdbus(["org.freedesktop.login1.Manager.ListInhibitors"]).status == 0 }, "the logind stand-in did not start")

        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address])
        defer { daemon.stop(); bus.stop() }
        let lock = "'sleep', 'chime', 'recording alarms before sleep', 'delay'"
        #expect(try waitFor { try inhibitors().contains(lock) }, "no delay lock")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Sleep:          followed: logind's delay lock is held"), "\(status.stdout)")

        func prepareForSleep(_ starting: Bool) throws {
            let sent = try gdbus(["org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.login1.Manager", "PrepareForSleep", "b",
                                  "[<\(starting)>]"])
            try #require(sent.status == 0, "\(sent.stderr)")
        }
        try prepareForSleep(true)
        #expect(try waitFor { try !inhibitors().contains(lock) }, "the lock was not let go before sleep")
        try prepareForSleep(false)
        #expect(try waitFor { try inhibitors().contains(lock) }, "the lock was not taken again after resume")
        #expect(daemon.isRunning)
        // The daemon still answers, and says nothing went wrong.
        #expect(try center().pendingSummaries().isEmpty)
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
