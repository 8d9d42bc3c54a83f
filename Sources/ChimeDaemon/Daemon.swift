// `chime daemon`: one poll loop on one thread. The daemon is the wiring of its parts (each a
// `LoopPart` in its own file, owning its state); the loop sleeps on the bus, a wall-clock timer
// armed to the earliest of the parts' deadlines, the signals and the parts' descriptors.
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
import Timekeeping
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

/// The scheduler daemon: the wiring of its parts. Each part owns its state and shows the loop what
/// to poll and when it is due (`LoopPart`); the daemon builds them, tells each what the others
/// need from it, and its loop waits for the earliest of their deadlines. No part reads or writes
/// another's stored state.
///
/// The parts, and what each may ask of the others:
/// - `Schedule`: the queue of next occurrences, the store behind it, catching up, adding and
///   removing, the firing marker. Asks the presenter to show what is due.
/// - `Presenter`: an occurrence on its way to the screen (calls in flight, retries, held and
///   deferred occurrences, body commands, close deadlines) and the server's answers. Asks the
///   schedule, the session, do-not-disturb, the children, ringing and waking.
/// - `ServerSession`: the notification server's presence, capabilities and name.
/// - `DoNotDisturb`: the server's do-not-disturb (asks the session who the server is; runs
///   `gsettings` through the children).
/// - `ChildProcesses`: every program the daemon runs (body commands, players, gsettings).
/// - `Ringing`: sounds and rings until answered (starts players through the children).
/// - `SleepFollower`: logind's sleep signal, the delay lock, block locks.
/// - `Waking`: waking the machine for `--wake` alarms and keeping it awake (holds block locks
///   through the sleep part).
/// - `AlarmFileFollower`: the alarm file (asks the schedule to store and queue what changed).
/// - `ZoneFollower`: the system's time zone.
/// - `PopupLedger`: which popups are known to be up (shown this run, or still in dunst's view
///   after a restart); asks the session who the server is.
/// - `SchedulerService`: the D-Bus interface, which asks the parts.
/// The daemon itself keeps only the bus, the wall-clock timer and the signals.
public final class SchedulerDaemon {
    let connection: Connection
    let store: Store
    var logger: Logger
    /// Where "now" comes from (the system's clock; a test's).
    let clock: WallClock
    let timer: WallClockTimer
    let signals: SignalSource
    var stopping = false

    // MARK: Parts
    let schedule: Schedule
    let presenter: Presenter
    let session: ServerSession
    let doNotDisturb: DoNotDisturb
    let children: ChildProcesses
    let speaker: Speaker
    let ringing: Ringing
    let sleep: SleepFollower?
    let waking: Waking
    let zone: ZoneFollower
    let ledger: PopupLedger
    /// The alarm file (set by `follow(alarmFile:)` before `run()`).
    private(set) var alarmFile: AlarmFileFollower
    /// Every part, for the loop, in the order their deadlines are served.
    private var parts: [any LoopPart] {
        [session, doNotDisturb, children, speaker, ringing, waking] + (sleep.map { [$0] } ?? []) + [zone, ledger, alarmFile, schedule, presenter]
    }
    var client: NotificationClient { session.client }
    /// The exported interface.
    var service: SchedulerService?

    /// How long a sound player may run.
    public var playerTimeLimit: TimeSpan {
        get { speaker.playerTimeLimit }
        set { speaker.playerTimeLimit = newValue }
    }

    /// The alarm file the daemon follows (nil: none). Set before `run()`.
    public var configPath: String? {
        get { alarmFile.path }
        set { alarmFile = AlarmFileFollower(path: newValue, store: store, schedule: schedule, clock: clock, logger: logger) }
    }

    /// Takes the daemon's bus name, before anything else is opened: of two daemons started at
    /// once, the one that gets the name runs and the other says so, without touching the store.
    public static func claimBusName(on connection: Connection) throws {
        guard try connection.requestName(SchedulerInterface.busName) == .primaryOwner else {
            throw DaemonError("another chime daemon is already running for this user (\(SchedulerInterface.busName) is taken)")
        }
    }

    /// Connects the daemon to `connection` (which already owns the bus name) and its state in `store`.
    /// `soundServer`: whether chime plays sounds itself through the sound server (false: the player
    /// programs only, as `chime daemon --no-sound-server` asks).
    public init(connection: Connection, store: Store, logger: Logger, clock: WallClock = .system, soundServer: Bool = true) throws {
        self.connection = connection
        self.store = store
        self.logger = logger
        self.clock = clock
        let marker: FiringMarker
        do {
            timer = try WallClockTimer()
            signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
            marker = try FiringMarker(directory: store.directory)
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
        let announce = SchedulerSignals(connection: connection)
        let client = NotificationClient(connection: connection, timeout: .milliseconds(Int32(ServerSession.timeout.milliseconds)))
        schedule = Schedule(store: store, marker: marker, signals: announce, clock: clock, logger: logger)
        session = ServerSession(client: client, clock: clock, logger: logger)
        children = ChildProcesses(clock: clock, logger: logger)
        doNotDisturb = DoNotDisturb(connection: connection, session: session, children: children, clock: clock, logger: logger)
        speaker = Speaker(store: store, children: children, clock: clock, logger: logger, useSoundServer: soundServer)
        ringing = Ringing(store: store, speaker: speaker, client: client, clock: clock, logger: logger)
        sleep = SleepFollower(clock: clock, logger: logger)
        waking = Waking(connection: connection, sleep: sleep, clock: clock, logger: logger)
        ledger = PopupLedger(connection: connection, store: store, session: session, clock: clock, logger: logger)
        presenter = Presenter(store: store, schedule: schedule, session: session, doNotDisturb: doNotDisturb, children: children,
                              ringing: ringing, waking: waking, ledger: ledger, signals: announce, clock: clock, logger: logger)
        zone = ZoneFollower(clock: clock, logger: logger)
        alarmFile = AlarmFileFollower(path: nil, store: store, schedule: schedule, clock: clock, logger: logger)
        for warning in store.warnings { logger.warning("\(warning)") }

        let service = SchedulerService(daemon: self)
        self.service = service
        connection.export(service.object(), at: SchedulerInterface.path)
        connectParts(announce)
        try client.subscribe { [weak self] event in self?.presenter.handle(event) }
        try doNotDisturb.follow()
        try session.start()
        // Popups shown by a server that has since left (while the daemon was down) are gone.
        do {
            let gone = try store.forgetDelivered(notShownBy: session.present ? session.owner : nil)
            if !gone.isEmpty { logger.info("\(gone.count) popup(s) shown by a notification server that has left are gone") }
        } catch {
            logger.error("\(error)")
        }
        // Timers wake us within 1 µs of their time instead of the default 50 µs slack.
        do { try Sys.setTimerSlack(nanoseconds: 1) } catch { logger.warning("\(error); timers may wake up to 50 µs late") }
    }

    /// What the parts tell each other, through the daemon.
    private func connectParts(_ announce: SchedulerSignals) {
        schedule.events.deliver = { [unowned self] request, due, timeliness, now in
            presenter.deliver(request, due: due, timeliness: timeliness, now: now)
        }
        schedule.events.inFlight = { [unowned self] identifier, due in presenter.isInFlight(identifier, due: due) }
        schedule.events.remind = { [unowned self] request, occurrence, lead in presenter.remind(request, occurrence: occurrence, lead: lead) }
        schedule.events.forget = { [unowned self] identifiers, removed in
            presenter.forget(identifiers, removed: removed)
            if removed { alarmFile.alarmsRemoved() }
        }
        session.events.ownerChanged = { [unowned self] old, new in
            presenter.serverOwnerChanged(from: old, to: new)
        }
        session.events.gone = { [unowned self] in presenter.holdAwaitingCapabilities() }
        session.events.capabilities = { [unowned self] known in presenter.capabilitiesKnown(known) }
        session.events.capabilitiesFailed = { [unowned self] reason in presenter.capabilitiesFailed(reason) }
        // Who the server is tells how to read its do-not-disturb (read once now, then followed) and
        // whether it can say which popups it closed while the daemon was not running (dunst).
        session.events.identified = { [unowned self] _ in
            doNotDisturb.refresh()
            ledger.reconcile()
        }
        ledger.closedMeanwhile = { [unowned self] popup in
            ringing.stop(serverID: popup.serverID, because: "its popup was closed while the daemon was not running")
            waking.release(popup.identifier)
        }
        ringing.resent = { [unowned self] serverID in ledger.shown(serverID) }
        doNotDisturb.onRead = { [unowned self] state in presenter.doNotDisturbRead(state) }
        ringing.rangOut = { [unowned self] identifier, due, serverID, snoozes in
            waking.release(identifier)
            announce.emit("RangOut", [.string(identifier), .int64(due.seconds), .boolean(snoozes)])
            if snoozes, let delivered = (try? store.delivered(identifier: identifier)) ?? nil, delivered.serverID == serverID {
                schedule.firing(identifier) { schedule.snooze(delivered) }
                try? client.requestClose(serverID)
            }
        }
        zone.changed = { [unowned self] in schedule.rescheduleAll(after: clock.now()) }
        speaker.previewEnded = { play, how, note in
            announce.emit("SoundEnded", [.uint32(UInt32(clamping: play)), .string(how), .string(note)])
        }
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        // A crash while firing (or computing) one request is charged before anything fires again.
        schedule.chargeCrash()
        // The file first: an alarm changed while the daemon was down is not caught up in its old form.
        alarmFile.start(now: clock.now())
        zone.start()
        startFollowingSleep()
        do {
            try schedule.catchUp(now: clock.now())
            // Occurrences held for a server, or waiting to be tried again, before the daemon stopped.
            presenter.restore(held: try store.held(), retrying: try store.retrying())
        } catch {
            throw DaemonError("\(error)")
        }
        ringing.resume()
        speaker.resume()
        logger.info("chime daemon ready", metadata: ["pending": "\(schedule.queue.count)"])
        while !stopping {
            connection.dispatchPending()
            sleep?.beforeWait()
            if stopping { break }
            prepareParts(now: clock.now())
            let parts = self.parts
            do { try armTimer(parts) } catch { throw DaemonError("cannot arm the daemon's timer: \(error)") }
            guard let busFD = connection.fileDescriptor else { throw DaemonError(Self.busGone) }
            var sources = PollSet()
            sources.add(.bus, fd: busFD, writable: connection.hasMessagesToSend)
            sources.add(.timer, fd: timer.fd)
            sources.add(.signals, fd: signals.fd)
            for (index, part) in parts.enumerated() {
                let writing = part.writing
                for fd in part.descriptors { sources.add(.part(index, fd), fd: fd, writable: writing.contains(fd)) }
            }
            do { try sources.wait() } catch { throw DaemonError("\(error)") }

            for case .part(let index, let fd) in sources.ready { parts[index].readable(fd) }
            if sources.isReady(.signals) { handleSignals() }
            if sources.isReady(.timer), timer.read() == .clockChanged { wallClockJumped() }
            for part in self.parts {
                let now = clock.now()
                if let due = part.deadline, due <= now { part.deadlineReached(now: now) }
            }
            if sources.isReady(.bus) || connection.hasMessagesToSend {
                guard connection.processAvailable() else { throw DaemonError(Self.busGone) }
            }
        }
        connection.flush()
        logger.info("chime daemon stopped")
    }

    /// What the parts need to know of each other before the loop waits: the earliest wake alarm
    /// (one indexed query), the next alarm, whether alarms are deferred.
    private func prepareParts(now: Instant) {
        var nextWake: (identifier: String, time: Instant, title: String)?
        do { nextWake = try store.nextWake() } catch { logger.error("\(error)") }
        waking.arrange(for: nextWake, now: now)
        doNotDisturb.expectAlarm(at: schedule.deadline)
        doNotDisturb.recheck(presenter.deferredCount > 0)
        // What changed in the pending alarms during this turn, in one signal (the app follows it).
        schedule.announceChanges()
        if let ringingNow = ringing.takeChange() { schedule.signals.emit("RingingChanged", [.strings(ringingNow)]) }
    }

    /// Follows logind's PrepareForSleep where there is a system bus: before a sleep the store is made
    /// durable and the delay lock let go; after it, what fell due is caught up at once.
    func startFollowingSleep() {
        guard let sleep else { return }
        sleep.onSleep = { [unowned self] starting in
            if starting {
                schedule.logging { () throws(StoreError) in try store.makeDurable() }
            } else {
                schedule.rescheduleAll(after: clock.now())
            }
        }
        sleep.start()
    }

    /// What `chime status` says of sleep.
    var sleepStatus: String {
        guard let sleep, sleep.connection != nil else {
            return "not followed: no system bus; what falls due during a sleep is still caught up at resume (the clock tells)"
        }
        return sleep.following
            ? "followed: logind's delay lock is held, let go once the alarms are on disk"
            : "not followed: logind gives no sleep lock; what falls due during a sleep is still caught up at resume (the clock tells)"
    }

    /// The kernel said the wall clock was set (the timer's TFD_TIMER_CANCEL_ON_SET): every alarm's
    /// next time is computed again from the new now.
    func wallClockJumped() {
        logger.info("the wall clock changed; re-evaluating every alarm")
        schedule.rescheduleAll(after: clock.now())
    }

    /// Why the daemon stops when the session bus goes away. It does not reconnect: a session bus
    /// that went away means the session ended (or its dbus-daemon died), and the next one has a new
    /// address and starts the daemon again (systemd's Restart=on-failure, or D-Bus activation).
    /// Nothing is lost meanwhile: what was not shown is still pending, held or retrying in the store.
    static let busGone = "the session bus went away (the session ended, or its dbus-daemon stopped); "
        + "alarms not yet shown are kept in the store and are shown, marked late or missed, when the daemon runs again"

    /// Arms the timer for the earliest of the parts' deadlines.
    private func armTimer(_ parts: [any LoopPart]) throws(SystemError) {
        let earliest = parts.compactMap(\.deadline).min()
        if let earliest { try timer.arm(at: earliest) } else { try timer.disarm() }
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
                    alarmFile.reload(now: clock.now(), reason: "SIGHUP")
                }
            case SIGCHLD:
                children.reap()
            default:
                break
            }
        }
    }
}

func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
