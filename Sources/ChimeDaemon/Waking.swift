// Waking the machine from suspend for `--wake` alarms, without root at run time, in the first
// way this system allows:
//  1. the kernel: a timerfd on CLOCK_REALTIME_ALARM, which the daemon may create when it has
//     CAP_WAKE_ALARM (systemd ≥ 254 gives local sessions' user managers the capability, so a user
//     unit with AmbientCapabilities=CAP_WAKE_ALARM has it; or a file capability on chime-commands,
//     the program that runs the daemon, where NoNewPrivileges does not forbid it);
//  2. systemd's user manager (≥ 254, which may wake the system for its user timers): a transient
//     timer with WakeSystem=true, started over D-Bus (StartTransientUnit), whose service does
//     nothing: waking is all it is for (the daemon's own timer fires the alarm);
//  3. neither: said when such an alarm is set and in `chime status`, with what would make it work.
//
// Only the earliest `--wake` alarm is armed, `Waking.lead` before it (resume takes a few
// seconds), and re-armed whenever that changes. Nothing here waits: systemd's user manager is
// asked with pending calls (one at a time, each with a deadline), so a manager that never
// answers holds up no alarm; the alarm then cannot wake the machine, and the log says why.
//
// Staying awake is this part's too: logind's block lock (through the sleep part) from
// `stayAwakeBefore` a wake alarm until it is answered.
//
// Other parts may: `arrange(for:)` the earliest wake alarm (before every wait of the loop);
// `keepAwake(for:content:)` a shown wake alarm and `release(_:)` it when answered; read `method`
// (nil while systemd is being asked) and `whenMethodKnown`; the status texts.
import ChimeCenter
import DBus
import Logging
import Posix
import Timekeeping
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

final class Waking: LoopPart {
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
    /// How long systemd's user manager may take to answer.
    static let systemdTimeout = TimeSpan.seconds(5)
    /// How long before a wake alarm logind's block lock is taken.
    static let stayAwakeBefore = TimeSpan.seconds(300)
    /// How long a shown wake alarm that does not ring keeps the machine awake, unanswered.
    static let stayAwakeAfter = TimeSpan.seconds(300)

    /// How this daemon can wake the machine (nil: systemd's user manager is being asked).
    private(set) var method: WakeMethod?
    /// The CLOCK_REALTIME_ALARM timer (kernel method), polled only to drain its expirations.
    /// The kernel's wake alarm (nil: this daemon may not have one).
    private let alarm: TimerDescriptor?
    private let connection: Connection
    private let sleep: (any SleepFace)?
    private let clock: WallClock
    private let logger: Logger
    /// The wake time armed now (nil: none).
    private(set) var armed: Instant?
    /// The wake time wanted (the earliest wake alarm's, less the lead).
    private var wanted: Instant?
    /// The earliest wake alarm, as last given.
    private var nextAlarm: (identifier: String, time: Instant, title: String)?
    /// The transient timer unit standing for `armed` (systemd method).
    private var unit: String?
    /// Whether units left by an earlier daemon were looked for.
    private var sweptOldUnits = false
    /// The call to systemd in flight, what it arms when it succeeds, and when it is given up.
    private var systemdCall: (call: PendingCall, arms: Instant??, deadline: Instant)?
    /// Run once the method is known.
    private var methodWaiters: [() -> Void] = []
    /// What to say if systemd's user manager never says its version: why, and what would work.
    private var unanswered: WakeMethod?
    /// Wake alarms shown and not yet answered: until when the machine is kept awake for each.
    private var awakeFor: [String: (until: Instant, title: String)] = [:]

    init(connection: Connection, sleep: (any SleepFace)?, clock: WallClock, logger: Logger) {
        self.connection = connection
        self.sleep = sleep
        self.clock = clock
        self.logger = logger
        do {
            alarm = try TimerDescriptor(clock: CLOCK_REALTIME_ALARM)
            method = .kernel
            // The capability is needed only to create that timer: the players and body commands
            // this daemon starts inherit none of a unit's AmbientCapabilities=.
            do { try Sys.clearAmbientCapabilities() } catch { logger.warning("cannot clear the ambient capabilities: \(error)") }
            return
        } catch {
            alarm = nil
            let why = error.errno == .notPermitted ? "the daemon lacks CAP_WAKE_ALARM" : "the kernel has no wake alarm (\(error.reason))"
            askSystemdVersion(capabilityReason: why)
        }
    }

    /// Runs `body` once the way to wake is known (at once when it is).
    func whenMethodKnown(_ body: @escaping () -> Void) {
        if method != nil { return body() }
        methodWaiters.append(body)
    }

    private func learnt(_ method: WakeMethod) {
        self.method = method
        let waiting = methodWaiters
        methodWaiters.removeAll()
        for body in waiting { body() }
        reconcile()
    }

    /// Whether systemd's user manager can set waking timers, and if not, what to say.
    private func askSystemdVersion(capabilityReason why: String) {
        let give = "give the daemon CAP_WAKE_ALARM: " + Self.capabilityRemedy(executable: Self.executable, noNewPrivileges: Sys.noNewPrivileges)
        let noManager = WakeMethod.unavailable(reason: "\(why), and no systemd user manager is on the session bus", remedy: give)
        unanswered = .unavailable(reason: "\(why), and systemd's user manager did not answer within \(Self.systemdTimeout)", remedy: give)
        callSystemd(Self.systemdPath, "org.freedesktop.DBus.Properties", "Get",
                    [.string(Self.systemdManager.rawValue), .string("Version")], arms: nil) { [weak self] answer in
            guard let self else { return }
            guard let reply = try? answer?.get().arguments() else { return self.learnt(noManager) }
            guard case .variant(.string(let text))? = reply.first else {
                return self.learnt(.unavailable(reason: "\(why), and systemd's user manager did not say its version", remedy: give))
            }
            let version = Int(text.prefix { $0.isNumber }) ?? 0
            guard version >= Self.firstWakingSystemd else {
                return self.learnt(.unavailable(
                    reason: "\(why), and systemd \(version)'s user manager cannot wake the system (WakeSystem= for users needs systemd \(Self.firstWakingSystemd))",
                    remedy: Self.oldSystemdRemedy(executable: Self.executable, noNewPrivileges: Sys.noNewPrivileges)))
            }
            self.learnt(.systemd(version: version))
        }
    }

    /// The program that runs the daemon, where a file capability must go: `chime daemon` replaces
    /// itself with chime-commands, and a capability on `chime` does not cross that exec.
    static var executable: String { Sys.linkTarget("/proc/self/exe") ?? "chime-commands" }

    /// What gives the daemon CAP_WAKE_ALARM where it runs. A file capability on the program that runs
    /// it, unless it may gain no privileges (chime.service's NoNewPrivileges=yes, under which file
    /// capabilities are never honoured): then only the unit's AmbientCapabilities= can, and only where
    /// the user manager holds the capability to pass on.
    static func capabilityRemedy(executable: String, noNewPrivileges: Bool) -> String {
        let unit = "AmbientCapabilities=CAP_WAKE_ALARM in a drop-in for chime.service (systemctl --user edit chime), "
            + "which works where the user manager holds the capability to pass on (systemd \(firstWakingSystemd) and later give it to local sessions)"
        if noNewPrivileges {
            return unit + "; a file capability is never honoured under NoNewPrivileges=yes"
        }
        return "setcap cap_wake_alarm+ep \(executable) (the program that runs the daemon), once, as root; under chime.service, " + unit
    }

    /// What to do where systemd's user manager is too old to wake the machine (and so has no
    /// capability to pass on either).
    static func oldSystemdRemedy(executable: String, noNewPrivileges: Bool) -> String {
        let setcap = "as root once: setcap cap_wake_alarm+ep \(executable)"
        if noNewPrivileges {
            return setcap + " and NoNewPrivileges=no in a drop-in for chime.service (systemctl --user edit chime), or systemd \(firstWakingSystemd) or later"
        }
        return setcap + ", or systemd \(firstWakingSystemd) or later"
    }

    /// Arms the wake for the earliest wake alarm (`lead` before it), or disarms it (nil), and holds
    /// logind's block lock while one is near or shown unanswered. Run before every wait of the loop.
    func arrange(for alarm: (identifier: String, time: Instant, title: String)?, now: Instant) {
        nextAlarm = alarm
        // One wake time per alarm, even when it has passed (an alarm set less than `lead` ahead: the
        // machine is awake, and the kernel's timer goes off at once, harmlessly): a time computed
        // from now would change on every turn of the loop and re-arm the timer each time.
        wanted = alarm.map { $0.time - Self.lead }
        reconcile()
        awakeFor = awakeFor.filter { $0.value.until > now }
        guard let sleep else { return }
        var reason: String?
        if let next = alarm, next.time - now <= Self.stayAwakeBefore {
            reason = "alarm \u{201C}\(next.title)\u{201D} at \(clockText(next.time))"
        } else if let hold = awakeFor.values.min(by: { $0.until < $1.until }) {
            reason = "alarm \u{201C}\(hold.title)\u{201D} until it is answered"
        }
        sleep.holdBlock(reason)
    }

    /// Brings what is armed to what is wanted, one step at a time (a systemd call in flight is
    /// waited for: its answer calls this again).
    private func reconcile() {
        guard wanted != armed, systemdCall == nil, let method else { return }
        switch method {
        case .kernel:
            guard let alarm else { return }
            do {
                // Disarmed with a relative zero (no flags), so /proc's fdinfo tells the two apart.
                if let wanted { try alarm.arm(seconds: wanted.seconds, nanoseconds: wanted.nanosecond) } else { try alarm.disarm() }
            } catch {
                logger.warning("cannot arm the wake alarm: \(error)")
                return
            }
            armedNow(wanted)
        case .systemd:
            startTransientTimer()
        case .unavailable:
            armed = wanted
        }
    }

    private func armedNow(_ time: Instant?) {
        armed = time
        if let time {
            logger.info("the machine wakes at \(time.seconds) s since the epoch for an alarm", metadata: ["wake": "\(method?.name ?? "none")"])
        } else {
            logger.info("no wake alarm left: nothing wakes the machine", metadata: ["wake": "\(method?.name ?? "none")"])
        }
    }

    /// A shown wake alarm keeps the machine awake until it is answered, rings out, or (not ringing)
    /// `stayAwakeAfter` passes.
    func keepAwake(for identifier: String, content: NotificationContent) {
        guard wakes(content) else { return }
        let span = content.rings ? content.ring ?? .zero : Self.stayAwakeAfter
        awakeFor[identifier] = (clock.now() + span, content.title)
    }

    /// Whether the machine wakes for an alarm: asked to (`--wake`), or on a phone one with a sound
    /// not told otherwise (`wake = false`, `--no-wake`).
    func wakes(_ content: NotificationContent) -> Bool {
        content.wake || (handset && content.sound != nil && !content.stayAsleep)
    }

    /// This machine is a phone (hostnamed's `Chassis` is `handset`): it suspends itself when idle,
    /// and an alarm that does not wake it never rings. Learnt at start (`Chassis.swift`).
    var handset = false

    /// The alarm was answered (or rang out): it keeps the machine awake no longer.
    func release(_ identifier: String) { awakeFor[identifier] = nil }

    // MARK: - The loop

    var descriptors: [Int32] { alarm.map { [$0.fd] } ?? [] }

    func readable(_ fd: Int32) {
        // Drained; the loop's own timer fires the alarm.
        _ = try? alarm?.read()
        logger.info("the wake alarm went off: the machine is awake for an alarm")
    }

    var deadline: Instant? {
        var times = awakeFor.values.map(\.until)
        // When to take the lock that keeps the machine awake.
        if let next = nextAlarm, next.time - Self.stayAwakeBefore > clock.now() { times.append(next.time - Self.stayAwakeBefore) }
        if let systemdCall { times.append(systemdCall.deadline) }
        return times.min()
    }

    func deadlineReached(now: Instant) {
        if let (call, arms, deadline) = systemdCall, deadline <= now {
            call.cancel()
            systemdCall = nil
            logger.warning("systemd's user manager did not answer \(call.call.member) within \(Self.systemdTimeout)")
            if method == nil {
                learnt(unanswered ?? .unavailable(reason: "systemd's user manager did not answer", remedy: "restart the daemon"))
            } else if let arms {
                armed = arms  // not tried again for the same time: the next alarm tries anew
                reconcile()
            }
        }
    }

    // MARK: - systemd

    /// One call to the user manager at a time; `answered` gets its reply (nil: given up on).
    private func callSystemd(_ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [Value],
                             arms: Instant??, answered: @escaping (Result<Message, any Error>?) -> Void) {
        do {
            let message = try Message.methodCall(destination: Self.systemd1, path: path, interface: interface, member: member,
                                                 arguments: arguments)
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.systemdTimeout.milliseconds)))
            systemdCall = (call, arms, clock.now() + Self.systemdTimeout)
            try call.onCompletion { [weak self, weak call] answer in
                guard let self, let call, self.systemdCall?.call === call else { return }
                self.systemdCall = nil
                answered(answer)
                self.reconcile()
            }
        } catch {
            systemdCall = nil
            answered(.failure(error))
        }
    }

    /// Sends a call whose answer nobody waits for (stopping a unit: the job runs on its own).
    private func tellSystemd(_ member: MemberName, _ arguments: [Value]) {
        do {
            _ = try connection.send(try Message.methodCall(destination: Self.systemd1, path: Self.systemdPath,
                                                          interface: Self.systemdManager, member: member, arguments: arguments))
        } catch {
            logger.info("could not ask systemd's user manager to \(member): \(error)")
        }
    }

    private func startTransientTimer() {
        if !sweptOldUnits {
            sweptOldUnits = true
            callSystemd(Self.systemdPath, Self.systemdManager, "ListUnitsByPatterns",
                        [.strings([]), .strings([Self.unitPrefix + "*.timer"])], arms: nil) { [weak self] answer in
                guard let self, case .array(_, let units)? = (try? answer?.get().arguments())?.first else { return }
                for case .structure(let fields) in units {
                    if case .string(let name)? = fields.first, name != self.unit { self.tellSystemd("StopUnit", [.string(name), .string("replace")]) }
                }
            }
            return
        }
        if let unit { tellSystemd("StopUnit", [.string(unit), .string("replace")]) }
        unit = nil
        guard let wakeAt = wanted else { return armedNow(nil) }
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
            .structure([.string(name + ".service"), .array(element: .structure([.string, .variant]), service)]),
        ])
        callSystemd(Self.systemdPath, Self.systemdManager, "StartTransientUnit",
                    [.string(name + ".timer"), .string("replace"), .array(element: .structure([.string, .variant]), properties), auxiliary],
                    arms: .some(wakeAt)) { [weak self] answer in
            guard let self else { return }
            switch answer {
            case .success?:
                self.unit = name + ".timer"
            case .failure(let error as DBusError)? where error.name.rawValue == "org.freedesktop.systemd1.UnitExists":
                self.unit = name + ".timer"  // set by an earlier daemon for the same time
            case .failure(let error)?:
                self.logger.warning("systemd's user manager did not take the wake timer: \(error)")
            case nil:
                break
            }
            self.armedNow(wakeAt)
        }
    }

    /// `2026-11-23 06:59:30 UTC`: OnCalendar= for one instant.
    static func calendarUTC(_ instant: Instant) -> String {
        let c = Zone.utc.civil(at: instant.seconds)
        return "\(c.year)-\(pad2(c.month))-\(pad2(c.day)) \(pad2(c.hour)):\(pad2(c.minute)):\(pad2(c.second)) UTC"
    }

    // MARK: - Status

    /// What `chime status` says of waking.
    var status: String {
        guard let method else { return "not known yet: systemd's user manager is being asked" }
        var text = (handset ? "a phone: every alarm with a sound wakes it (wake = false, --no-wake: not that one); " : "") + method.description
        if case .unavailable = method { return text }
        if let next = nextAlarm, armed != nil {
            text += "; next: \u{201C}\(next.title)\u{201D} at \(clockText(next.time)) (the machine wakes \(Self.lead) before)"
        }
        return text
    }

    /// What `chime status` says of keeping the machine awake for wake alarms.
    var stayAwakeStatus: String {
        guard let sleep, sleep.following else {
            return "not possible: no logind answers on the system bus"
        }
        if let reason = sleep.blockReason { return "holding logind's block lock: \(reason)" }
        if let refusal = sleep.blockRefusal { return "logind refused the lock (\(refusal))" }
        return "not now (a block lock is taken \(Self.stayAwakeBefore) before a --wake alarm and held until it is answered)"
    }
}

/// "16:35": a time on a clock (the alarm's own zone, or the system's).
func clockText(_ time: Instant, in zone: Zone = .system()) -> String {
    let civil = zone.civil(at: time.seconds)
    return pad2(civil.hour) + ":" + pad2(civil.minute)
}
