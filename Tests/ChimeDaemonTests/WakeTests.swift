import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping
@testable import ChimeDaemon

/// `--wake` alarms: the kernel's CLOCK_REALTIME_ALARM where the daemon has CAP_WAKE_ALARM (the tests
/// run as root, so it has), systemd's user manager where it has not (a stand-in: no user manager
/// runs here), a plain warning where neither can; and logind's block lock before and while one rings.
/// Nothing here changes the machine's clock or suspends it: this machine has no RTC, and the armed
/// timer is read back from /proc, not waited for.
@Suite struct WakeTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }

    /// The program that runs the daemon, beside the chime the tests run.
    static let commands = URL(fileURLWithPath: chimeBinaryPath()).deletingLastPathComponent().appendingPathComponent("chime-commands").path

    /// Runs the daemon without CAP_WAKE_ALARM (dropped from its bounding set, so not even root has it).
    static let withoutWakeAlarm = ["/usr/bin/setpriv", "--bounding-set", "-wake_alarm", "--inh-caps", "-wake_alarm"]

    /// The daemon's timerfds on CLOCK_REALTIME_ALARM (clock 8), with the seconds left on each (0 when
    /// disarmed, which the daemon does with a relative zero: `settime flags: 00`; the kernel goes on
    /// showing an alarm timer's last expiry after it is disarmed).
    func alarmTimers(of pid: Int32) -> [Double] {
        let directory = "/proc/\(pid)/fd"
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return fds.compactMap { fd in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)")) == "anon_inode:[timerfd]",
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                info.contains("clockid: 8")
            else { return nil }
            // it_value: (seconds, nanoseconds) left
            let lines = info.split(separator: "\n")
            if lines.contains("settime flags: 00") { return 0 }
            guard let line = lines.first(where: { $0.hasPrefix("it_value:") }) else { return nil }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Double($0) }
            return numbers.count == 2 ? numbers[0] + numbers[1] / 1e9 : nil
        }
    }


    @Test func withTheCapabilityTheKernelWakesTheMachineHalfAMinuteEarly() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); bus.stop() }
        #expect(waitUntil { alarmTimers(of: daemon.pid) == [0] }, "one wake timer, not armed: \(alarmTimers(of: daemon.pid))")
        let set = try runChime(["in", "10m", "--wake", "--id", "up", "Get up"], environment: bus.environment())
        #expect(set.status == 0)
        #expect(set.stderr == "", "no warning where the machine can be woken")
        // Armed for 9m30s from now.
        #expect(waitUntil { alarmTimers(of: daemon.pid).first.map { abs($0 - 570) < 3 } ?? false }, "\(alarmTimers(of: daemon.pid))")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Wake:           yes, by the kernel's RTC alarm (the daemon has CAP_WAKE_ALARM); next: “Get up” at "),
                "\(status.stdout)")
        // An earlier wake alarm takes over; cancelling both disarms.
        _ = try runChime(["in", "5m", "--wake", "--id", "nap", "Nap"], environment: bus.environment())
        #expect(waitUntil { alarmTimers(of: daemon.pid).first.map { abs($0 - 270) < 3 } ?? false })
        _ = try runChime(["cancel", "up", "nap"], environment: bus.environment())
        #expect(waitUntil { alarmTimers(of: daemon.pid) == [0] })
        // A wake alarm less than the lead ahead is armed once (its wake time has passed: the timer
        // goes off at once), not again on every turn of the loop.
        // (20 s: inside the 30 s lead, and far enough ahead that it is cancelled before it fires.)
        _ = try runChime(["in", "20s", "--wake", "--id", "soon", "Soon"], environment: bus.environment())
        #expect(waitUntil(30) { daemon.log.components(separatedBy: "the machine wakes at").count - 1 >= 3 }, "\(daemon.log)")
        usleep(700_000)  // and not again
        #expect(daemon.log.components(separatedBy: "the machine wakes at").count - 1 == 3, "\(daemon.log)")
        _ = try runChime(["cancel", "soon"], environment: bus.environment())
        #expect(waitUntil { alarmTimers(of: daemon.pid) == [0] })
        // An alarm without --wake arms nothing.
        _ = try runChime(["in", "5m", "--id", "plain", "Plain"], environment: bus.environment())
        usleep(200_000)
        #expect(alarmTimers(of: daemon.pid) == [0])
    }

    @Test func withoutTheCapabilityOrSystemdTheUserIsToldWhyAndWhatToDo() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, wrapper: Self.withoutWakeAlarm)
        defer { daemon.stop(); bus.stop() }
        #expect(alarmTimers(of: daemon.pid).isEmpty)
        let set = try runChime(["at", "07:00", "--days", "mon-fri", "--wake", "--id", "up", "Get up"], environment: bus.environment())
        #expect(set.status == 0, "the alarm is still set")
        // The capability goes on the program that runs the daemon (chime daemon hands itself to it).
        #expect(set.stderr == "chime: warning: this alarm cannot wake the machine: the daemon lacks CAP_WAKE_ALARM, and no systemd user "
                + "manager is on the session bus; give the daemon CAP_WAKE_ALARM: setcap cap_wake_alarm+ep \(Self.commands) "
                + "(the program that runs the daemon), once, as root; under chime.service, AmbientCapabilities=CAP_WAKE_ALARM in a drop-in for chime.service "
                + "(systemctl --user edit chime), which works where the user manager holds the capability to pass on (systemd 254 and later "
                + "give it to local sessions). It is set, and rings if the machine is awake\n", "\(set.stderr)")
        #expect(try center().pendingSummaries().map(\.identifier) == ["up"])
        let status = try runChime(["status", "--json"], environment: bus.environment())
        #expect(status.stdout.contains(#""wakeMethod":"none""#), "\(status.stdout)")
        // The alarm file's wake alarms: said by `chime config check`.
        let file = bus.directory.appendingPathComponent("alarms.toml")
        try "[[alarm]]\nlabel = \"Get up\"\nwhen = \"07:00\"\nwake = true\n".write(to: file, atomically: true, encoding: .utf8)
        let check = try runChime(["config", "check", file.path], environment: bus.environment())
        #expect(check.status == 0)
        #expect(check.stderr.hasPrefix("chime: warning: get-up (wake = true) cannot wake the machine: the daemon lacks CAP_WAKE_ALARM"),
                "\(check.stderr)")
        #expect(check.stderr.hasSuffix(". It rings if the machine is awake\n"))
    }

    @Test func aSystemdThatCanWakeGetsATransientTimer() throws {
        let systemd = try SystemdStandIn(address: bus.address, version: "255.4-1")
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, wrapper: Self.withoutWakeAlarm)
        defer { daemon.stop(); systemd.stop(); bus.stop() }
        let set = try runChime(["in", "10m", "--wake", "--id", "up", "Get up"], environment: bus.environment())
        #expect(set.status == 0)
        #expect(set.stderr == "")
        #expect(systemd.wait { !$0.started.isEmpty })
        let unit = try #require(systemd.started.first)
        let pending = try #require(try center().pendingSummaries().first?.nextFire)
        let wakeAt = pending.seconds - 30
        #expect(unit.name == "chime-wake-\(wakeAt).timer")
        #expect(unit.mode == "replace")
        #expect(unit.properties["WakeSystem"] == .boolean(true))
        #expect(unit.properties["RemainAfterElapse"] == .boolean(false))
        let c = Zone.utc.civil(at: wakeAt)
        let calendar = String(format: "%04d-%02d-%02d %02d:%02d:%02d UTC", c.year, c.month, c.day, c.hour, c.minute, c.second)
        #expect(unit.properties["TimersCalendar"] == .array(element: .structure([.string, .string]),
                                                             [.structure([.string("OnCalendar"), .string(calendar)])]))
        #expect(unit.auxiliary.map(\.name) == ["chime-wake-\(wakeAt).service"])
        #expect(unit.auxiliary.first?.properties["ExecStart"] == .array(element: .structure([.string, .array(.string), .boolean]),
                                                                        [.structure([.string("/bin/true"), .strings(["/bin/true"]), .boolean(false)])]))
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Wake:           yes, through systemd's user manager (systemd 255"), "\(status.stdout)")
        // Cancelled: the timer is stopped.
        _ = try runChime(["cancel", "up"], environment: bus.environment())
        #expect(systemd.wait { $0.stopped.contains(unit.name) })
    }

    @Test func aSystemdTooOldToWakeIsNamed() throws {
        let systemd = try SystemdStandIn(address: bus.address, version: "252.39-1~deb12u2")
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, wrapper: Self.withoutWakeAlarm)
        defer { daemon.stop(); systemd.stop(); bus.stop() }
        let set = try runChime(["in", "10m", "--wake", "Get up"], environment: bus.environment())
        #expect(set.status == 0)
        #expect(set.stderr.hasPrefix("chime: warning: this alarm cannot wake the machine: the daemon lacks CAP_WAKE_ALARM, and systemd 252's "
                                     + "user manager cannot wake the system (WakeSystem= for users needs systemd 254); as root once: "
                                     + "setcap cap_wake_alarm+ep \(Self.commands), or systemd 254 or later."), "\(set.stderr)")
        usleep(200_000)
        #expect(systemd.started.isEmpty)
    }

    /// As chime.service runs it (NoNewPrivileges=yes), a file capability is never honoured: the advice
    /// is the unit's AmbientCapabilities=, or, where the user manager is too old to hold the capability,
    /// the file capability with NoNewPrivileges=no.
    @Test func underNoNewPrivilegesTheAdviceIsTheUnits() throws {
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, wrapper: Self.withoutWakeAlarm + ["--no-new-privs"])
        defer { daemon.stop(); bus.stop() }
        let set = try runChime(["in", "10m", "--wake", "Get up"], environment: bus.environment())
        #expect(set.status == 0)
        #expect(set.stderr.contains("give the daemon CAP_WAKE_ALARM: AmbientCapabilities=CAP_WAKE_ALARM in a drop-in for chime.service "
                                    + "(systemctl --user edit chime), which works where the user manager holds the capability to pass on "
                                    + "(systemd 254 and later give it to local sessions); a file capability is never honoured under "
                                    + "NoNewPrivileges=yes."), "\(set.stderr)")
        #expect(!set.stderr.contains("setcap"))
        daemon.stop()
        let systemd = try SystemdStandIn(address: bus.address, version: "252.39-1~deb12u2")
        defer { systemd.stop() }
        let again = try DaemonProcess(bus: bus, stateDirectory: state, wrapper: Self.withoutWakeAlarm + ["--no-new-privs"])
        defer { again.stop() }
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("as root once: setcap cap_wake_alarm+ep \(Self.commands) and NoNewPrivileges=no in a drop-in for "
                                       + "chime.service (systemctl --user edit chime), or systemd 254 or later"), "\(status.stdout)")
    }

    /// On a phone (hostnamed's stand-in says `handset`), every alarm with a sound wakes it, unless
    /// told not to; one without a sound does not; `chime status` says why.
    @Test func onAPhoneEveryAlarmWithASoundWakesIt() throws {
        let logind = try LogindStandIn()
        defer { logind.stop() }
        try logind.hostnamed(chassis: "handset")
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: logind.environment)
        defer { daemon.stop(); bus.stop() }
        #expect(waitUntil { daemon.log.contains("this machine is a phone (chassis handset)") }, "\(daemon.log)")
        // Without a sound, or told not to: nothing armed.
        _ = try runChime(["in", "5m", "--id", "quiet", "No sound"], environment: bus.environment())
        _ = try runChime(["in", "3m", "--sound", "bell", "--no-wake", "--id", "nap", "Nap"], environment: bus.environment())
        let shown = try runChime(["show", "nap"], environment: bus.environment()).stdout
        #expect(shown.contains("no, not even on a phone (--no-wake)"), "kept as said: \(shown)")
        usleep(300_000)
        #expect(alarmTimers(of: daemon.pid) == [0], "\(alarmTimers(of: daemon.pid))")
        // With a sound, not a word about waking: armed half a minute before it.
        let set = try runChime(["in", "10m", "--sound", "bell", "--id", "up", "Get up"], environment: bus.environment())
        #expect(set.status == 0 && set.stderr == "", "\(set.stderr)")
        #expect(waitUntil { alarmTimers(of: daemon.pid).first.map { abs($0 - 570) < 3 } ?? false }, "\(alarmTimers(of: daemon.pid))")
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Wake:           a phone: every alarm with a sound wakes it (wake = false, --no-wake: not that one); yes, by the kernel's RTC alarm"),
                "\(status.stdout)")
        _ = try runChime(["cancel", "up"], environment: bus.environment())
        #expect(waitUntil { alarmTimers(of: daemon.pid) == [0] })
    }

    /// Without hostnamed, the files it reads say what the machine is.
    @Test func theChassisFromTheFilesHostnamedReads() throws {
        let directory = try makeTemporaryDirectory("chime-chassis")
        defer { try? FileManager.default.removeItem(at: directory) }
        let info = directory.appendingPathComponent("machine-info").path, tree = directory.appendingPathComponent("chassis-type").path
        #expect(Chassis.fromFiles(machineInfo: info, deviceTree: tree) == nil)
        try Data("handset\0".utf8).write(to: URL(fileURLWithPath: tree))
        #expect(Chassis.fromFiles(machineInfo: info, deviceTree: tree) == "handset")
        // The administrator's word first.
        try Data("PRETTY_HOSTNAME=\"Phone\"\n  CHASSIS=\"tablet\"\n".utf8).write(to: URL(fileURLWithPath: info))
        #expect(Chassis.fromFiles(machineInfo: info, deviceTree: tree) == "tablet")
    }

    /// logind's block lock: taken when a wake alarm is near, held while it is shown and unanswered,
    /// let go at the answer (logind stands in from python3-dbusmock, on a private system bus).
    @Test func theMachineStaysAwakeForAWakeAlarmUntilItIsAnswered() throws {
        let logind = try LogindStandIn()
        defer { logind.stop() }
        func inhibitors() throws -> String { try logind.inhibitors() }
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: logind.environment)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        // Far off: no lock.
        _ = try runChime(["in", "1h", "--wake", "--id", "later", "Later"], environment: bus.environment())
        usleep(300_000)
        #expect(try !inhibitors().contains("'block'"))
        // Within five minutes: the lock, naming the alarm.
        _ = try runChime(["in", "2m", "--wake", "--id", "soon", "Soon"], environment: bus.environment())
        #expect(try waitUntil { try inhibitors().contains("('sleep', 'chime', 'alarm “Soon” at ") }, "\((try? inhibitors()) ?? "")")
        #expect(try inhibitors().contains("'block'"))
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("Stay awake:     holding logind's block lock: alarm “Soon” at "), "\(status.stdout)")
        _ = try runChime(["cancel", "soon"], environment: bus.environment())
        #expect(try waitUntil { try !inhibitors().contains("'block'") }, "\((try? inhibitors()) ?? "")")
        // Shown: held until it is answered.
        _ = try runChime(["in", "1s", "--wake", "--id", "now", "Now"], environment: bus.environment())
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(call.summary == "Now")
        #expect(try waitUntil { try inhibitors().contains("'alarm “Now” until it is answered', 'block'") }, "\((try? inhibitors()) ?? "")")
        let id = try #require(try waitForValue { try center().deliveredNotifications().first?.serverID })
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try !inhibitors().contains("'block'") }, "\((try? inhibitors()) ?? "")")
        // The delay lock stays throughout.
        #expect(try inhibitors().contains("recording alarms before sleep"))
    }
}
