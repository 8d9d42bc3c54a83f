// `chime daemon`: one poll loop on one thread over named sources (PollSet.swift): the bus,
// a wall-clock timer, signals, the alarm file's directory and the children's output. What
// happens when an alarm is due is in Scheduling.swift (the queue, the store, catching up,
// quarantine) and Delivery.swift (showing it, retries); what the daemon asks the server
// besides Notify is ServerAnswers.swift; the D-Bus interface is SchedulerService.swift.
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
import Timekeeping
internal import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon could not start or stopped.
public struct DaemonError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// How an occurrence was shown.
public enum Timeliness: String, Sendable {
    case onTime = "on-time"
    /// Due while no notification server ran; shown when one appeared.
    case late
    /// Due while the daemon was not running (or the machine slept); shown on start, within the grace period.
    case missed
}

/// The scheduler daemon.
public final class SchedulerDaemon {
    /// How long after its due time a missed occurrence is still shown.
    public static let defaultGrace = TimeSpan.seconds(3600)
    /// How long Snooze waits unless the alarm says otherwise (`--snooze`).
    public static let defaultSnooze = TimeSpan.seconds(600)

    let connection: Connection
    let store: Store
    var logger: Logger
    /// Where "now" comes from (the system's clock; a test's).
    let clock: WallClock
    var queue = OccurrenceQueue()
    let timer: WallClockTimer
    let signals: SignalSource
    let client: NotificationClient
    var capabilities: [Capability]? = nil
    var serverPresent = false
    /// Occurrences due while no server was there, shown when one appears.
    var waiting: [(identifier: String, due: Instant)] = []
    var stopping = false
    /// Programs running: body commands and sound players, by process id.
    var children: [pid_t: Child] = [:]
    /// Occurrences waiting for their body command, by the command's process id.
    var preparing: [pid_t: Preparing] = [:]
    /// Notifications chime closes itself when their expiry passes (servers may ignore it).
    var closeDeadlines: [(time: Instant, identifier: String, serverID: UInt32)] = []
    /// The server's do-not-disturb as last read (DoNotDisturb.swift), and when.
    var doNotDisturb: DoNotDisturbState?
    var lastDoNotDisturbRead: Instant?
    /// Alarms held until do-not-disturb ends (`--dnd defer`); they wait with the held ones.
    var deferred: Set<String> = []
    var doNotDisturbSubscriptions: [SubscriptionToken] = []
    /// Alarms ringing until answered (Ringing.swift), by identifier.
    var ringing: [String: Ring] = [:]
    /// The local sound player for servers that do not play sounds.
    let player: (name: String, path: String)?
    /// How long a sound player may run.
    public var playerTimeLimit = TimeSpan.seconds(30)
    /// How long after its expiry chime closes a popup the server left up.
    static let closeSlack = TimeSpan.milliseconds(500)
    /// The alarm file the daemon follows (nil: none). Set before `run()`.
    public var configPath: String?
    var watcher: ConfigWatcher?
    /// Follows the system's time zone (/etc/localtime, re-pointed by timedatectl): a change re-plans
    /// every alarm, as a clock jump does. nil when it cannot be watched (then only a restart sees it).
    var zoneWatcher: ConfigWatcher?
    /// The system's zone as last planned with, to tell a real change from other events in /etc.
    var plannedZone = ""
    /// logind's sleep signal and the delay lock (nil: no system bus).
    var sleepFollower: SleepFollower?
    /// What wakes the machine for `--wake` alarms (Waking.swift).
    var waker: WakeArranger?
    /// The earliest wake alarm, as last read from the store.
    var nextWakeAlarm: (identifier: String, time: Instant, title: String)?
    /// Wake alarms shown and not yet answered: until when the machine is kept awake for each.
    var awakeFor: [String: (until: Instant, title: String)] = [:]
    /// When to read the alarm file after an edit.
    var reloadAt: Instant?
    var fileStatus = AlarmFileStatus(path: "")
    /// The file's alarms as last applied, by identifier.
    var appliedAlarms: [String: AppliedAlarm] = [:]
    /// Which request is being fired, on disk, so a crash costs at most that request.
    let marker: FiringMarker
    /// Requests the daemon crashed while firing before (cleared once they fire cleanly).
    var suspects: Set<String> = []
    /// The exported interface.
    var service: SchedulerService?
    /// Notify calls waiting for the server's answer.
    var presenting: [Presentation] = []
    /// Occurrences waiting for the server's capabilities before they can be rendered.
    var awaitingCapabilities: [(Occurrence, NotificationContent)] = []
    /// The GetCapabilities call in flight, and when the daemon stops waiting for it.
    var capabilitiesCall: (call: PendingCall, deadline: Instant)?
    /// Occurrences the server failed to show, to be tried again (the `retrying` table, in memory).
    var retries: [Retry] = []
    /// The server's name and version, once asked; and the call asking, with its deadline.
    var serverInformation: ServerInformation?
    var serverInformationCall: (call: PendingCall, deadline: Instant)?
    /// `Settings` calls waiting for the server's answers.
    var settingsWaiters: [Message] = []

    /// An occurrence whose body command is running.
    struct Preparing {
        var occurrence: Occurrence
        var content: NotificationContent
    }

    /// Takes the daemon's bus name, before anything else is opened: of two daemons started at
    /// once, the one that gets the name runs and the other says so, without touching the store.
    public static func claimBusName(on connection: Connection) throws {
        guard try connection.requestName(SchedulerInterface.busName) == .primaryOwner else {
            throw DaemonError("another chime daemon is already running for this user (\(SchedulerInterface.busName) is taken)")
        }
    }

    /// Connects the daemon to `connection` (which already owns the bus name) and its state in `store`.
    public init(connection: Connection, store: Store, logger: Logger, clock: WallClock = .system) throws {
        self.connection = connection
        self.store = store
        self.logger = logger
        self.clock = clock
        do {
            timer = try WallClockTimer()
            signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
            marker = try FiringMarker(directory: store.directory)
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
        client = NotificationClient(connection: connection, timeout: .milliseconds(10_000))
        player = findSoundPlayer()
        waker = WakeArranger(connection: connection, logger: logger)
        for warning in store.warnings { logger.warning("\(warning)") }

        let service = SchedulerService(daemon: self)
        self.service = service
        connection.export(service.object(), at: SchedulerInterface.path)
        try client.subscribe { [weak self] event in self?.handle(event) }
        try followDoNotDisturb()
        try connection.watchNameOwner(NotificationClient.busName) { [weak self] old, new in
            self?.serverOwnerChanged(from: old, to: new)
        }
        // Asking the bus who owns the name cannot hang; asking the server itself could, so its
        // capabilities are asked without waiting (the first alarm waits for the answer).
        let owner = try? connection.nameOwner(NotificationClient.busName)
        serverPresent = owner != nil
        if serverPresent {
            askCapabilities()
            askServerInformation()
        }
        // Popups shown by a server that has since left (while the daemon was down) are gone.
        do {
            let gone = try store.forgetDelivered(notShownBy: owner ?? nil)
            if !gone.isEmpty { logger.info("\(gone.count) popup(s) shown by a notification server that has left are gone") }
        } catch {
            logger.error("\(error)")
        }
        // Timers wake us within 1 µs of their time instead of the default 50 µs slack.
        _ = chime_set_timer_slack(1)
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        // A crash while firing (or computing) one request is charged before anything fires again.
        chargeCrash()
        // The file first: an alarm changed while the daemon was down is not caught up in its old form.
        startFollowingAlarmFile(now: clock.now())
        startFollowingTimeZone()
        startFollowingSleep()
        do { try catchUp(now: clock.now()) } catch { throw DaemonError("\(error)") }
        logger.info("chime daemon ready", metadata: ["pending": "\(queue.count)"])
        while !stopping {
            // Blocking calls (ours, and libdbus's during them) may have read messages into
            // libdbus's queue: dispatch those first, or poll would sleep on a quiet socket.
            connection.dispatchPending()
            if stopping { break }
            // Arranging the wake may call systemd's user manager (blocking): what arrives meanwhile
            // is dispatched before the wait, and may change what to arrange.
            arrangeWake(now: clock.now())
            while connection.hasMessagesToDispatch {
                connection.dispatchPending()
                arrangeWake(now: clock.now())
            }
            if stopping { break }
            armTimer()
            guard let busFD = connection.fileDescriptor else { throw DaemonError(Self.busGone) }
            var sources = PollSet()
            sources.add(.bus, fd: busFD, writable: connection.hasMessagesToSend)
            sources.add(.timer, fd: timer.fd)
            sources.add(.signals, fd: signals.fd)
            sources.add(.alarmFile, fd: watcher?.fd ?? -1)
            sources.add(.timeZone, fd: zoneWatcher?.fd ?? -1)
            sleepFollower?.connection.dispatchPending()
            sources.add(.systemBus, fd: sleepFollower?.connection.fileDescriptor ?? -1,
                        writable: sleepFollower?.connection.hasMessagesToSend ?? false)
            sources.add(.wakeTimer, fd: waker?.fd ?? -1)
            for (pid, child) in children where child.output >= 0 { sources.add(.childOutput(pid), fd: child.output) }
            do { try sources.wait() } catch { throw DaemonError("\(error)") }

            for case .childOutput(let pid) in sources.ready { children[pid]?.readOutput() }
            if sources.isReady(.signals) { handleSignals() }
            if sources.isReady(.alarmFile) { alarmFileTouched() }
            if sources.isReady(.timeZone) { timeZoneTouched() }
            if sources.isReady(.wakeTimer) {
                waker?.read()
                logger.info("the wake alarm went off: the machine is awake for an alarm")
            }
            if sources.isReady(.systemBus), let follower = sleepFollower, !follower.connection.processAvailable() {
                logger.warning("the system bus went away; sleep is seen only through the clock from now on")
                sleepFollower = nil
            }
            if sources.isReady(.timer) {
                switch timer.read() {
                case .clockChanged:
                    wallClockJumped()
                default: break
                }
                reloadIfSettled(now: clock.now())
                fireDue()
                expireCalls(now: clock.now())
                retryDue(now: clock.now())
                closeExpired()
                ringDue(now: clock.now())
                if let recheck = nextDoNotDisturbRecheck, recheck <= clock.now() { doNotDisturbMayHaveChanged() }
            }
            finishChildren()
            if sources.isReady(.bus) || connection.hasMessagesToSend {
                guard connection.processAvailable() else { throw DaemonError(Self.busGone) }
            }
        }
        connection.flush()
        logger.info("chime daemon stopped")
    }

    /// Follows logind's PrepareForSleep where there is a system bus: before a sleep the store is made
    /// durable and the delay lock let go; after it, what fell due is caught up at once.
    func startFollowingSleep() {
        guard let follower = SleepFollower(logger: logger) else { return }
        follower.onSleep = { [unowned self] starting in
            if starting {
                logging { () throws(StoreError) in try store.makeDurable() }
            } else {
                rescheduleAll(after: clock.now())
            }
        }
        follower.start()
        sleepFollower = follower
    }

    /// What `chime status` says of sleep.
    var sleepStatus: String {
        guard let sleepFollower else {
            return "not followed: no system bus; what falls due during a sleep is still caught up at resume (the clock tells)"
        }
        return sleepFollower.following
            ? "followed: logind's delay lock is held, let go once the alarms are on disk"
            : "not followed: logind gives no sleep lock; what falls due during a sleep is still caught up at resume (the clock tells)"
    }

    /// The kernel said the wall clock was set (the timer's TFD_TIMER_CANCEL_ON_SET): every alarm's
    /// next time is computed again from the new now.
    func wallClockJumped() {
        logger.info("the wall clock changed; re-evaluating every alarm")
        rescheduleAll(after: clock.now())
    }

    func startFollowingTimeZone() {
        #if DEBUG
        // Test builds only: a test points the daemon at a localtime of its own, since a test must
        // never change the machine's zone. Release builds have no such switch.
        if let path = getenv("CHIME_TEST_LOCALTIME").map({ String(cString: $0) }), !path.isEmpty { Zone.localtimePath = path }
        #endif
        plannedZone = Self.zoneFingerprint(now: clock.now())
        do {
            zoneWatcher = try ConfigWatcher(path: Zone.localtimePath)
        } catch {
            logger.warning("cannot follow the system time zone (\(error)); a change is seen at the next start")
        }
    }

    /// Something changed where the system's zone is named: when the zone is another one now, every
    /// alarm's next time is computed again (a wall-clock rule keeps its wall time in the new zone).
    func timeZoneTouched() {
        guard let zoneWatcher, zoneWatcher.read() else { return }
        zoneWatcher.refresh()
        let zone = Self.zoneFingerprint(now: clock.now())
        guard zone != plannedZone else { return }
        logger.info("the system time zone changed (\(plannedZone) → \(zone)); re-evaluating every alarm")
        plannedZone = zone
        rescheduleAll(after: clock.now())
    }

    /// The system's zone by name and by its offsets now and in half a year: a localtime that is a
    /// copied file (no name to compare) is told apart by what it does.
    static func zoneFingerprint(now: Instant) -> String {
        let zone = Zone.system()
        return "\(zone.identifier) \(zone.offset(at: now.seconds))/\(zone.offset(at: now.seconds + 182 * 86_400))"
    }

    /// Why the daemon stops when the session bus goes away. It does not reconnect: a session bus
    /// that went away means the session ended (or its dbus-daemon died), and the next one has a new
    /// address and starts the daemon again (systemd's Restart=on-failure, or D-Bus activation).
    /// Nothing is lost meanwhile: what was not shown is still pending, held or retrying in the store.
    static let busGone = "the session bus went away (the session ended, or its dbus-daemon stopped); "
        + "alarms not yet shown are kept in the store and are shown, marked late or missed, when the daemon runs again"

    /// Arms the timer for whatever comes first: an occurrence, a child's time limit, a popup to
    /// close, a read of the alarm file after an edit.
    func armTimer() {
        var earliest = queue.earliest()?.time
        func consider(_ time: Instant) { earliest = min(earliest ?? time, time) }
        if let reloadAt { consider(reloadAt) }
        for presentation in presenting { consider(presentation.deadline) }
        if let capabilitiesCall { consider(capabilitiesCall.deadline) }
        if let serverInformationCall { consider(serverInformationCall.deadline) }
        for retry in retries { consider(retry.nextTry) }
        for child in children.values where !child.finished { consider(child.deadline) }
        for entry in closeDeadlines { consider(entry.time) }
        if let ring = nextRingEvent { consider(ring) }
        // When to take the lock that keeps the machine awake, and when to let go of it.
        if let wake = nextWakeAlarm, wake.time - Self.stayAwakeBefore > clock.now() { consider(wake.time - Self.stayAwakeBefore) }
        for hold in awakeFor.values { consider(hold.until) }
        if let recheck = nextDoNotDisturbRecheck { consider(recheck) }
        if let earliest { timer.arm(at: earliest) } else { timer.disarm() }
    }

    func handleSignals() {
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                logger.info("stopping on signal \(signal)")
                stopping = true
            case SIGHUP:
                if configPath == nil {
                    logger.info("SIGHUP: no alarm file to read (started with --no-config)")
                } else {
                    reloadAlarmFile(now: clock.now(), reason: "SIGHUP")
                }
            case SIGCHLD:
                var status: Int32 = 0
                while true {
                    let pid = waitpid(-1, &status, WNOHANG)
                    if pid <= 0 { break }
                    children[pid]?.waitStatus = status
                }
            default:
                break
            }
        }
    }

    /// Logs a store failure; the daemon goes on with what it has in memory.
    func logging(_ body: () throws(StoreError) -> Void) {
        do { try body() } catch { logger.error("\(error)") }
    }

    func emit(_ member: MemberName, _ arguments: [Value]) {
        try? connection.emit(path: SchedulerInterface.path, interface: SchedulerInterface.interface, member: member, arguments: arguments)
    }
}

func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
