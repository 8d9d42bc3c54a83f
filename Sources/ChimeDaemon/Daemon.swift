// `chime daemon`: one poll loop on one thread. The daemon is the wiring of its parts (each a
// `LoopPart` in its own file, owning its state); the loop sleeps on the bus, a wall-clock timer
// armed to the earliest of the parts' deadlines, the signals and the parts' descriptors.
import ChimeCenter
import DBus
import Logging
import Sound
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
/// to poll and when it is due (`LoopPart`); the daemon builds them, gives each the parts it may ask
/// and its face of the store (`StoreFaces.swift`), connects what each tells the others in one
/// place (`connectParts`: every part that tells has `events`, and only this assigns them), and its
/// loop waits for the earliest of their deadlines. No part reads or writes another's stored state.
///
/// The parts, what each owns, and whom each may ask:
/// - `Schedule`: the queue of next occurrences and reminders, the firing marker, the suspects; the
///   `pending`, `paused`, `disabled` and `crashes` tables. Asks nobody; tells (`events`) what is due,
///   what to remind, what to forget, and asks whether an occurrence is in flight or detached.
/// - `Presenter`: an occurrence on its way to the screen (calls in flight, retries, held and
///   deferred occurrences, body commands, close deadlines), the answers to popups; the `held` and
///   `retrying` tables. Asks the schedule, the session, do-not-disturb, the children, ringing,
///   waking and the ledger.
/// - `ServerSession`: the notification server's presence, capabilities and name. Asks nobody.
/// - `DoNotDisturb`: the server's do-not-disturb. Asks the session and the children.
/// - `ChildProcesses`: every program the daemon runs. Asks nobody.
/// - `Speaker`: how sounds are played (each file decoded by a process of its own, Sound's
///   `DecodedSound`), previews, outputs raised by insist (`raised_outputs`). Asks the children.
/// - `Ringing`: rings until answered (`ringing`). Asks the speaker, the client and the ledger.
/// - `Vibration`: a phone's vibration and light through feedbackd, and its profile. Asks nobody;
///   ringing and the presenter tell it (through the daemon) what rings and what was shown.
/// - `PhoneCalls`: whether a phone call is in progress (GNOME Calls). Asks nobody; ringing hears of
///   a call's start and end through the daemon.
/// - `SleepFollower`: logind's sleep signal, the delay lock, block locks, the chassis. Asks nobody.
/// - `Waking`: the wake timer or systemd's transient timer, staying awake. Asks sleep.
/// - `AlarmFileFollower`: the alarm file and its calendars (`file_alarms`), read by its reader child
///   and applied in steps. Asks the schedule, the children and the calendars' writer.
/// - `OwnCalendars`: the person's calendars chime writes to: alarms put into them, answers that
///   travel in them, switching off and skipping there, their syncs (`kept_here`,
///   `placed_from_file`). Asks the schedule, the children and the follower (to read them again).
/// - `ZoneFollower`: the system's time zone. Asks nobody.
/// - `PopupLedger`: which popups are known to be up (`delivered`). Asks the session.
/// - `SchedulerService`: the D-Bus interface. Asks the parts through `SchedulerParts` only.
/// The daemon itself keeps only the bus, the wall-clock timer and the Unix signals.
///
/// One way for parts to hear each other: a part that tells has `events`, assigned here only
/// (`connectParts`); what the schedule, the presenter, ringing and the ledger tell each other is
/// `connectCore`, the same lines for the daemon and for the simulator (`Simulation.swift`), which
/// drives those four for real. One way for a part to ask another: through the face it holds of it,
/// narrowed to what it asks, never the part itself (only this wiring, the service's gateway
/// `DaemonParts` and the simulator hold parts as they are; `PartsTests` keeps it so). Where the
/// other side is the world (the server, the sound, do-not-disturb, the children, waking, sleep, the
/// signals), the face is in `PartFaces.swift`: the daemon hands it the real part, the simulator a
/// simulated world. The schedule and the ledger, real in the simulation too, show each asker its
/// own face (`InnerFaces.swift`: the presenter's, the follower's, the calendars', ringing's).
public final class SchedulerDaemon {
    private let connection: Connection
    private let logger: Logger
    /// Where "now" comes from (the system's clock; a test's).
    private let clock: WallClock
    private let timer: WallClockTimer
    private let signals: SignalSource
    private var stopping = false

    // MARK: Parts (private to the wiring)
    private let schedule: Schedule
    private let presenter: Presenter
    private let session: ServerSession
    private let doNotDisturb: DoNotDisturb
    private let children: ChildProcesses
    private let speaker: Speaker
    private let ringing: Ringing
    /// A phone's vibration and light, through feedbackd.
    private let vibration: Vibration
    /// Phone calls in progress (GNOME Calls).
    private let calls: PhoneCalls
    private let sleep: SleepFollower?
    private let waking: Waking
    private let zone: ZoneFollower
    private let ledger: PopupLedger
    private let alarmFile: AlarmFileFollower
    private let ownCalendars: OwnCalendars
    private let announce: SchedulerSignals
    /// Every part, for the loop, in the order their deadlines are served.
    private var parts: [any LoopPart] {
        [session, doNotDisturb, children, speaker, ringing, waking] + (sleep.map { [$0] } ?? []) + [zone, ledger, alarmFile, ownCalendars, schedule, presenter, vibration, calls]
    }
    /// The exported interface.
    let service: SchedulerService

    /// How long a sound player may run.
    public var playerTimeLimit: TimeSpan {
        get { speaker.playerTimeLimit }
        set { speaker.playerTimeLimit = newValue }
    }

    /// The alarm file the daemon follows (nil: none). Set before `run()`.
    public var configPath: String? {
        get { alarmFile.path }
        set { alarmFile.path = newValue }
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
        if marker.replacedLink { logger.warning("\(marker.path) was a symbolic link; removed it and made the marker anew") }
        announce = SchedulerSignals(connection: connection)
        let client = NotificationClient(connection: connection, timeout: .milliseconds(Int32(ServerSession.timeout.milliseconds)))
        schedule = Schedule(store: store, marker: marker, signals: announce, clock: clock, logger: logger)
        session = ServerSession(client: client, clock: clock, logger: logger)
        children = ChildProcesses(clock: clock, logger: logger)
        doNotDisturb = DoNotDisturb(connection: connection, session: session, children: children, clock: clock, logger: logger)
        speaker = Speaker(store: store, children: children, clock: clock, logger: logger, useSoundServer: soundServer)
        ledger = PopupLedger(connection: connection, store: store, session: session, clock: clock, logger: logger)
        ringing = Ringing(store: store, speaker: speaker, ledger: ledger, server: session, clock: clock, logger: logger)
        vibration = Vibration(connection: connection, clock: clock, logger: logger)
        calls = PhoneCalls(connection: connection, clock: clock, logger: logger)
        sleep = SleepFollower(clock: clock, logger: logger)
        waking = Waking(connection: connection, sleep: sleep, clock: clock, logger: logger)
        presenter = Presenter(store: store, schedule: schedule, session: session, doNotDisturb: doNotDisturb, children: children,
                              ringing: ringing, waking: waking, ledger: ledger, signals: announce, clock: clock, logger: logger)
        zone = ZoneFollower(clock: clock, logger: logger)
        ownCalendars = OwnCalendars(store: store, schedule: schedule, children: children, clock: clock, logger: logger)
        alarmFile = AlarmFileFollower(path: nil, store: store, schedule: schedule, calendars: ownCalendars, children: children, clock: clock, logger: logger)
        ownCalendars.reading = alarmFile
        alarmFile.edsRoot = store.directory + "/eds"
        for warning in store.warnings { logger.warning("\(warning)") }

        service = SchedulerService(connection: connection, parts: DaemonParts(
            clock: clock, listing: store, schedule: schedule, presenter: presenter, ledger: ledger, ringing: ringing, speaker: speaker,
            session: session, doNotDisturb: doNotDisturb, waking: waking, sleep: sleep, alarmFile: alarmFile,
            ownCalendars: ownCalendars))
        connection.export(service.object(), at: SchedulerInterface.path)
        connectParts()
        try client.subscribe { [weak self] event in self?.presenter.handle(event) }
        try doNotDisturb.follow()
        try session.start()
        // Popups shown by a server that has since left (while the daemon was down) are gone.
        ledger.forgetLeftServers(current: session.present ? session.owner : nil)
        // Timers wake us within 1 µs of their time instead of the default 50 µs slack.
        do { try Sys.setTimerSlack(nanoseconds: 1) } catch { logger.warning("\(error); timers may wake up to 50 µs late") }
    }

    /// What the parts tell each other: the one place their `events` are assigned. Each line hands
    /// one part's news to the part that acts on it; what to do is the receiving part's decision.
    private func connectParts() {
        Self.connectCore(schedule: schedule, presenter: presenter, ringing: ringing, ledger: ledger,
                         alarmsRemoved: { [unowned self] in alarmFile.alarmsRemoved() })
        speaker.events.ended = { [unowned self] play in ringing.soundEnded(play) }
        speaker.events.silent = { [unowned self] play, output in ringing.soundSilent(play, output) }
        session.events.ownerChanged = { [unowned self] old, new in presenter.serverOwnerChanged(from: old, to: new) }
        session.events.gone = { [unowned self] in presenter.holdAwaitingCapabilities() }
        session.events.capabilities = { [unowned self] known in presenter.capabilitiesKnown(known) }
        session.events.capabilitiesFailed = { [unowned self] reason in presenter.capabilitiesFailed(reason) }
        // Who the server is tells how to read its do-not-disturb (read once now, then followed) and
        // whether it can say which popups it closed while the daemon was not running (dunst).
        session.events.identified = { [unowned self] _ in
            doNotDisturb.refresh()
            ledger.reconcile()
        }
        doNotDisturb.events.read = { [unowned self] state in presenter.doNotDisturbRead(state) }
        // A phone's vibration and light (feedbackd), and its profile over chime's own sound.
        ringing.events.ringStarted = { [unowned self] identifier, timer, insist in vibration.ring(identifier, timer ? .timer : .alarm, insist: insist) }
        ringing.events.ringStopped = { [unowned self] identifier in vibration.end(identifier) }
        ringing.events.playedOnce = { [unowned self] timer, insist in vibration.once(timer ? .timer : .alarm, insist: insist) }
        ringing.events.soundAllowed = { [unowned self] insist in vibration.soundAllowed(insist: insist) }
        // During a phone call a ring is a quiet tone beside its vibration.
        ringing.events.inCall = { [unowned self] in calls.inCall }
        calls.events.changed = { [unowned self] inCall in ringing.callChanged(inCall) }
        presenter.events.reminderShown = { [unowned self] insist in vibration.once(.reminder, insist: insist) }
        speaker.events.previewEnded = { [announce] play, how, note in announce.soundEnded(play: play, how: how, note: note) }
        zone.events.changed = { [unowned self] in schedule.rescheduleAll(after: clock.now()) }
        // The file's overdue alarms waited for its first reading (one changed meanwhile is not caught
        // up in its old form).
        // A synced calendar's late alarms wait for its sync too: what was answered on another
        // machine meanwhile does not ring late here.
        alarmFile.events.firstReadOver = { [unowned self] in
            schedule.catchUpHeld(now: clock.now(), keeping: ownCalendars.waitsForSync)
            ownCalendars.afterSyncing { [unowned self] in schedule.catchUpHeld(now: clock.now()) }
        }
        // An answer to an alarm of the person's own calendar is written into it, for their other machines.
        presenter.events.answered = { [unowned self] identifier, content, due, snoozedUntil in
            ownCalendars.answered(identifier, content: content, due: due, snoozedUntil: snoozedUntil)
        }
        presenter.events.skipInCalendar = { [unowned self] identifier, occurrence, undo, then in
            guard let event = ownCalendars.calendarEvent(identifier) else { return false }
            ownCalendars.skip(event, occurrence: occurrence, undo: undo, then: then)
            return true
        }
        alarmFile.events.ringingNow = { [unowned self] in ringing.current.map(\.identifier) }
        ownCalendars.events.ringingNow = { [unowned self] in ringing.current.map(\.identifier) }
        ownCalendars.events.syncFailingChanged = { [announce] in announce.calendarsChanged() }
        alarmFile.events.answeredElsewhere = { [unowned self] answers in presenter.answeredElsewhere(answers) }
        alarmFile.events.calendarsChanged = { [announce] in announce.calendarsChanged() }
        sleep?.events.sleeping = { [unowned self] in schedule.sleepStarting() }
        sleep?.events.resumed = { [unowned self] in
            schedule.awoke()
            schedule.rescheduleAll(after: clock.now(), holding: ownCalendars.waitsForSync)
            ownCalendars.afterSyncing { [unowned self] in schedule.catchUpHeld(now: clock.now(), timeliness: .late) }
        }
    }

    /// What the schedule, the presenter, ringing and the ledger tell each other: the same lines for
    /// the daemon and for the simulator (`Simulation.swift`), which drives these four parts for real.
    static func connectCore(schedule: Schedule, presenter: Presenter, ringing: Ringing, ledger: PopupLedger,
                            alarmsRemoved: @escaping () -> Void) {
        schedule.events.deliver = { [unowned presenter] request, due, timeliness, now in
            presenter.deliver(request, due: due, timeliness: timeliness, now: now)
        }
        schedule.events.inFlight = { [unowned presenter] identifier, due in presenter.isInFlight(identifier, due: due) }
        schedule.events.presenterHas = { [unowned presenter] identifier, due in presenter.has(identifier, due: due) }
        schedule.events.keepInFlight = { [unowned presenter] identifier throws(StoreError) in try presenter.holdInFlight(identifier) }
        schedule.events.isDetached = { [unowned presenter] identifier throws(StoreError) in try presenter.isDetached(identifier) }
        schedule.events.remind = { [unowned presenter] request, occurrence, lead in presenter.remind(request, occurrence: occurrence, lead: lead) }
        schedule.events.forget = { [unowned presenter] identifiers, removed in
            presenter.forget(identifiers, removed: removed)
            if removed { alarmsRemoved() }
        }
        ledger.events.closedMeanwhile = { [unowned presenter] popup in presenter.closedMeanwhile(popup) }
        ringing.events.rangOut = { [unowned presenter] identifier, due, serverID, snoozes in
            presenter.ringRanOut(identifier, due: due, serverID: serverID, snoozes: snoozes)
        }
        ringing.events.resuming = { [unowned schedule] identifier, body in schedule.reading(.ring(identifier), body) }
        ringing.events.resumeRefusal = { [unowned schedule] identifier in schedule.readRefusal(.ring(identifier)) }
    }

    /// Whether this machine is a phone: hostnamed says (or, without it, the files it reads).
    private func learnChassis() {
        let learnt: (String?) -> Void = { [unowned self] said in
            let chassis = said.flatMap { $0.isEmpty ? nil : $0 } ?? Chassis.fromFiles()
            waking.handset = chassis == Chassis.handset
            if waking.handset { logger.info("this machine is a phone (chassis handset): every alarm with a sound wakes it unless told not to") }
        }
        if let sleep { sleep.askChassis(learnt) } else { learnt(nil) }
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        // A crash while firing (or computing) one request is charged before anything fires again.
        schedule.chargeCrash()
        // The days off as last known (the file's holiday calendars, time away): every plan reads them.
        schedule.loadDaysOff()
        // The file is read by its reader child while the loop runs; an overdue alarm of the file
        // waits for it, so one changed while the daemon was down is not caught up in its old form.
        alarmFile.start(now: clock.now())
        zone.start()
        sleep?.start()
        learnChassis()
        vibration.start()
        calls.start()
        do {
            try schedule.catchUp(now: clock.now(), holdingFile: alarmFile.isReading)
            // Occurrences held for a server, or waiting to be tried again, before the daemon stopped.
            try presenter.restore()
        } catch {
            throw DaemonError("\(error)")
        }
        // Outputs a killed ring left raised are put back first; a ring that resumes raises them again.
        speaker.resume()
        ringing.resume()
        logger.info("chime daemon ready", metadata: ["pending": "\(schedule.queuedCount)"])
        // CHIME_TRACE: a turn that held the loop over 10 ms is said, with what took the time.
        let tracingTurns = logger.logLevel <= .debug
        if tracingTurns {
            connection.methodCallObserver = { [logger] message, took in
                if took > 10_000_000 { logger.debug("\(message.member?.rawValue ?? "?") took \(took / 1_000_000) ms to answer") }
            }
        }
        var turnStarted: Int64 = 0
        var spent: [(String, Int64)] = []
        func timed(_ what: @autoclosure () -> String, _ body: () -> Void) {
            guard tracingTurns else { return body() }
            let start = Sys.monotonicNanoseconds()
            body()
            spent.append((what(), Sys.monotonicNanoseconds() - start))
        }
        while !stopping {
            timed("the bus's queue") { connection.dispatchPending() }
            sleep?.beforeWait()
            if stopping { break }
            timed("the parts prepared") { prepareParts(now: clock.now()) }
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
            if tracingTurns, turnStarted != 0 {
                let took = Sys.monotonicNanoseconds() - turnStarted
                if took > 10_000_000 {
                    logger.debug("a turn of the loop took \(took / 1_000_000) ms", metadata: [
                        "spent": "\(spent.filter { $0.1 >= 1_000_000 }.map { "\($0.0) \($0.1 / 1_000_000) ms" }.joined(separator: ", "))",
                    ])
                }
            }
            do { try sources.wait() } catch { throw DaemonError("\(error)") }
            if tracingTurns {
                turnStarted = Sys.monotonicNanoseconds()
                spent.removeAll(keepingCapacity: true)
            }

            for case .part(let index, let fd) in sources.ready { timed("\(type(of: parts[index])) read") { parts[index].readable(fd) } }
            if sources.isReady(.signals) { handleSignals() }
            if sources.isReady(.timer), timer.read() == .clockChanged { wallClockJumped() }
            for part in self.parts {
                let now = clock.now()
                if let due = part.deadline, due <= now { timed("\(type(of: part)) deadline") { part.deadlineReached(now: now) } }
            }
            if sources.isReady(.bus) || connection.hasMessagesToSend {
                var alive = true
                timed("the bus") { alive = connection.processAvailable() }
                guard alive else { throw DaemonError(Self.busGone) }
            }
        }
        // A reading under way is not left running (a reader stuck at a calendar would otherwise
        // outlive the daemon until its time limit).
        alarmFile.stopReading()
        SoundServer.keepSpareDecoder = false
        connection.flush()
        logger.info("chime daemon stopped")
    }

    /// What the parts need to know of each other before the loop waits: the earliest wake alarm
    /// (one indexed query), the next alarm, whether alarms are deferred; and what changed in the
    /// pending and the ringing alarms during this turn, in one signal each (the app follows them).
    private func prepareParts(now: Instant) {
        waking.arrange(for: schedule.nextWake(handset: waking.handset), now: now)
        doNotDisturb.expectAlarm(at: schedule.deadline)
        speaker.expectAlarm(at: schedule.deadline, now: now)
        doNotDisturb.recheck(presenter.deferredCount > 0)
        schedule.announceChanges()
        if let ringingNow = ringing.takeChange() {
            announce.ringingChanged(ringingNow)
            ownCalendars.ringingChanged()
        }
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
