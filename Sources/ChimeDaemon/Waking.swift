// Waking the machine from suspend for `--wake` alarms, without root at run time, in the first
// way this system allows:
//  1. the kernel: a timerfd on CLOCK_REALTIME_ALARM, which the daemon may create when it has
//     CAP_WAKE_ALARM (systemd ≥ 254 gives local sessions' user managers the capability, so a user
//     unit with AmbientCapabilities=CAP_WAKE_ALARM has it; or a file capability on the binary);
//  2. systemd's user manager (≥ 254, which may wake the system for its user timers): a transient
//     timer with WakeSystem=true, started over D-Bus (StartTransientUnit), whose service does
//     nothing: waking is all it is for (the daemon's own timer fires the alarm);
//  3. neither: said when such an alarm is set and in `chime status`, with what would make it work.
//
// Only the earliest `--wake` alarm is armed, `WakeArranger.lead` before it (resume takes a few
// seconds), and re-armed whenever that changes.
import ChimeCenter
import DBus
import Logging
import Posix
import Timekeeping
internal import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// How this daemon can wake the machine.
public enum WakeMethod: Sendable, Equatable {
    /// A CLOCK_REALTIME_ALARM timer (the daemon has CAP_WAKE_ALARM).
    case kernel
    /// Transient timers with WakeSystem= in systemd's user manager of this version.
    case systemd(version: Int)
    /// Neither: why, and what would make it work.
    case unavailable(reason: String, remedy: String)

    /// One line for `chime status` and the warning when a `--wake` alarm is set.
    public var description: String {
        switch self {
        case .kernel: "yes, by the kernel's RTC alarm (the daemon has CAP_WAKE_ALARM)"
        case .systemd(let version): "yes, through systemd's user manager (systemd \(version): a transient timer with WakeSystem=true)"
        case .unavailable(let reason, let remedy): "no: \(reason); \(remedy)"
        }
    }

    /// The short name `Status` carries (`kernel`, `systemd`, `none`).
    public var name: String {
        switch self {
        case .kernel: "kernel"
        case .systemd: "systemd"
        case .unavailable: "none"
        }
    }
}

final class WakeArranger {
    static let systemd1: BusName = "org.freedesktop.systemd1"
    static let systemdPath: ObjectPath = "/org/freedesktop/systemd1"
    static let systemdManager: InterfaceName = "org.freedesktop.systemd1.Manager"
    /// The first systemd whose user manager may set WakeSystem= timers.
    static let firstWakingSystemd = 254
    /// How long before a wake alarm the machine is woken: resume, the network and the
    /// notification server take a few seconds.
    static let lead = TimeSpan.seconds(30)
    /// Transient units are named with this and the wake time.
    static let unitPrefix = "chime-wake-"

    let method: WakeMethod
    /// The CLOCK_REALTIME_ALARM timer (kernel method), polled only to drain its expirations.
    let fd: Int32
    private let connection: Connection
    private let logger: Logger
    /// The wake time armed now (nil: none).
    private(set) var armed: Instant?
    /// The transient timer unit standing for `armed` (systemd method).
    private var unit: String?
    /// Whether units left by an earlier daemon were looked for.
    private var sweptOldUnits = false

    init(connection: Connection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        let fd = timerfd_create(CLOCK_REALTIME_ALARM, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        if fd >= 0 {
            self.fd = fd
            method = .kernel
            return
        }
        let why = errno == EPERM ? "the daemon lacks CAP_WAKE_ALARM" : "the kernel has no wake alarm (\(SystemError.last("timerfd_create").reason))"
        self.fd = -1
        method = Self.askSystemd(connection, capabilityReason: why)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether systemd's user manager can set waking timers, and if not, what to say.
    private static func askSystemd(_ connection: Connection, capabilityReason why: String) -> WakeMethod {
        // What makes the kernel way work: the capability, from the user unit (whose manager has
        // it from systemd 254 on) or as a file capability.
        let give = "give the daemon CAP_WAKE_ALARM: AmbientCapabilities=CAP_WAKE_ALARM in the [Service] section of chime.service "
            + "(systemctl --user edit chime), or as root once: setcap cap_wake_alarm+ep $(command -v chime)"
        let version: Int
        do {
            let reply = try connection.call(
                destination: systemd1, path: systemdPath, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string(systemdManager.rawValue), .string("Version")], timeout: .milliseconds(2000))
            guard case .variant(.string(let text))? = reply.first else {
                return .unavailable(reason: "\(why), and systemd's user manager did not say its version", remedy: give)
            }
            version = Int(text.prefix { $0.isNumber }) ?? 0
        } catch {
            return .unavailable(reason: "\(why), and no systemd user manager is on the session bus", remedy: give)
        }
        guard version >= firstWakingSystemd else {
            return .unavailable(
                reason: "\(why), and systemd \(version)'s user manager cannot wake the system (WakeSystem= for users needs systemd \(firstWakingSystemd))",
                remedy: "as root once: setcap cap_wake_alarm+ep $(command -v chime), or systemd \(firstWakingSystemd) or later")
        }
        return .systemd(version: version)
    }

    /// Arms the wake for the earliest wake alarm (`lead` before it), or disarms it (nil).
    func arrange(for alarm: Instant?) {
        // One wake time per alarm, even when it has passed (an alarm set less than `lead` ahead: the
        // machine is awake, and the kernel's timer goes off at once, harmlessly): a time computed
        // from now would change on every turn of the loop and re-arm the timer each time.
        let wakeAt = alarm.map { $0 - Self.lead }
        guard wakeAt != armed else { return }
        switch method {
        case .kernel:
            var spec = itimerspec()
            if let wakeAt {
                spec.it_value.tv_sec = time_t(max(wakeAt.seconds, 1))
                spec.it_value.tv_nsec = Int(wakeAt.nanosecond)
            }
            // Disarmed with a relative zero (no flags), so /proc's fdinfo tells the two apart.
            guard timerfd_settime(fd, wakeAt == nil ? 0 : Int32(TFD_TIMER_ABSTIME), &spec, nil) == 0 else {
                logger.warning("cannot arm the wake alarm: \(SystemError.last("timerfd_settime"))")
                return
            }
        case .systemd:
            startTransientTimer(at: wakeAt)
        case .unavailable:
            break
        }
        armed = wakeAt
        if let wakeAt {
            logger.info("the machine wakes at \(wakeAt.seconds) s since the epoch for an alarm", metadata: ["wake": "\(method.name)"])
        } else {
            logger.info("no wake alarm left: nothing wakes the machine", metadata: ["wake": "\(method.name)"])
        }
    }

    /// Drains the kernel timer after it woke the machine (the loop's own timer fires the alarm).
    func read() {
        var expirations: UInt64 = 0
        _ = Glibc.read(fd, &expirations, 8)
    }

    // MARK: - systemd

    private func startTransientTimer(at wakeAt: Instant?) {
        if !sweptOldUnits {
            sweptOldUnits = true
            for name in leftUnits() where name != unit { stop(name) }
        }
        if let unit { stop(unit) }
        unit = nil
        guard let wakeAt else { return }
        let name = Self.unitPrefix + "\(wakeAt.seconds)"
        let when = Self.calendarUTC(wakeAt)
        let properties: [Value] = [
            .structure([.string("Description"), .variant(.string("chime: wake the machine for an alarm (\(when))"))]),
            .structure([.string("TimersCalendar"), .variant(.array(element: .structure([.string, .string]),
                                                                    [.structure([.string("OnCalendar"), .string(when)])]))]),
            .structure([.string("WakeSystem"), .variant(.boolean(true))]),
            .structure([.string("RemainAfterElapse"), .variant(.boolean(false))]),
            .structure([.string("AccuracyUSec"), .variant(.uint64(1_000_000))]),
        ]
        // What the timer starts: nothing, quickly; waking is its whole job.
        let service: [Value] = [
            .structure([.string("Description"), .variant(.string("chime: the machine is awake for an alarm"))]),
            .structure([.string("ExecStart"), .variant(.array(element: .structure([.string, .array(.string), .boolean]),
                                                              [.structure([.string("/bin/true"), .strings(["/bin/true"]), .boolean(false)])]))]),
        ]
        let auxiliary: Value = .array(element: .structure([.string, .array(.structure([.string, .variant]))]), [
            .structure([.string(Self.unitPrefix + "\(wakeAt.seconds).service"),
                        .array(element: .structure([.string, .variant]), service)]),
        ])
        do {
            _ = try connection.call(
                destination: Self.systemd1, path: Self.systemdPath, interface: Self.systemdManager, member: "StartTransientUnit",
                arguments: [.string(name + ".timer"), .string("replace"), .array(element: .structure([.string, .variant]), properties), auxiliary],
                timeout: .milliseconds(5000))
            unit = name + ".timer"
        } catch let error as DBusError where error.name.rawValue == "org.freedesktop.systemd1.UnitExists" {
            unit = name + ".timer"  // set by an earlier daemon for the same time
        } catch {
            logger.warning("systemd's user manager did not take the wake timer: \(error)")
        }
    }

    /// `2026-11-23 06:59:30 UTC`: OnCalendar= for one instant.
    static func calendarUTC(_ instant: Instant) -> String {
        let c = Zone.utc.civil(at: instant.seconds)
        return "\(c.year)-\(pad2(c.month))-\(pad2(c.day)) \(pad2(c.hour)):\(pad2(c.minute)):\(pad2(c.second)) UTC"
    }

    /// Wake timers an earlier daemon left in the user manager.
    private func leftUnits() -> [String] {
        guard let reply = try? connection.call(
            destination: Self.systemd1, path: Self.systemdPath, interface: Self.systemdManager, member: "ListUnitsByPatterns",
            arguments: [.strings([]), .strings([Self.unitPrefix + "*.timer"])], timeout: .milliseconds(2000)),
            case .array(_, let units)? = reply.first
        else { return [] }
        return units.compactMap { unit in
            guard case .structure(let fields) = unit, case .string(let name)? = fields.first else { return nil }
            return name
        }
    }

    private func stop(_ name: String) {
        do {
            _ = try connection.call(destination: Self.systemd1, path: Self.systemdPath, interface: Self.systemdManager, member: "StopUnit",
                                    arguments: [.string(name), .string("replace")], timeout: .milliseconds(5000))
        } catch {
            logger.info("could not stop the wake timer \(name): \(error)")
        }
    }
}

extension SchedulerDaemon {
    /// How long before a wake alarm logind's block lock is taken.
    static let stayAwakeBefore = TimeSpan.seconds(300)
    /// How long a shown wake alarm that does not ring keeps the machine awake, unanswered.
    static let stayAwakeAfter = TimeSpan.seconds(300)

    /// Arms the wake for the earliest wake alarm, and holds the block lock while one is near or
    /// shown unanswered (run before every wait of the loop: one indexed query).
    func arrangeWake(now: Instant) {
        guard let waker else { return }
        do { nextWakeAlarm = try store.nextWake() } catch { logger.error("\(error)") }
        waker.arrange(for: nextWakeAlarm?.time)
        awakeFor = awakeFor.filter { $0.value.until > now }
        guard let sleepFollower else { return }
        var reason: String?
        if let next = nextWakeAlarm, next.time - now <= Self.stayAwakeBefore {
            reason = "alarm \u{201C}\(next.title)\u{201D} at \(clockText(next.time))"
        } else if let hold = awakeFor.values.min(by: { $0.until < $1.until }) {
            reason = "alarm \u{201C}\(hold.title)\u{201D} until it is answered"
        }
        sleepFollower.holdBlock(reason)
    }

    /// A shown wake alarm keeps the machine awake until it is answered, rings out, or (not ringing)
    /// `stayAwakeAfter` passes.
    func keepAwake(for identifier: String, content: NotificationContent) {
        guard content.wake else { return }
        let span = content.rings ? content.ring ?? .zero : Self.stayAwakeAfter
        awakeFor[identifier] = (clock.now() + span, content.title)
    }

    /// What `chime status` says of waking.
    var wakeStatus: String {
        guard let waker else { return "" }
        var text = waker.method.description
        if case .unavailable = waker.method { return text }
        if let next = nextWakeAlarm, waker.armed != nil {
            text += "; next: \u{201C}\(next.title)\u{201D} at \(clockText(next.time)) (the machine wakes \(WakeArranger.lead) before)"
        }
        return text
    }

    /// What `chime status` says of keeping the machine awake for wake alarms.
    var stayAwakeStatus: String {
        guard let sleepFollower, sleepFollower.following else {
            return "not possible: no logind answers on the system bus"
        }
        if let reason = sleepFollower.blockReason { return "holding logind's block lock: \(reason)" }
        if let refusal = sleepFollower.blockRefusal { return "logind refused the lock (\(refusal))" }
        return "not now (a block lock is taken \(Self.stayAwakeBefore) before a --wake alarm and held until it is answered)"
    }
}
