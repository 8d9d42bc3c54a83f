// Syncing the person's own calendars through their own tool: each `[[calendar]]` with `write = true`
// may name a `sync` command (`vdirsyncer sync work`), which chime runs as a child (never waiting on
// the loop) right after it writes to the calendar, every `sync-interval`, and every few seconds from
// a minute before one of the calendars' alarms is due until it is answered (while it rings), so a
// Stop on another machine is heard here within seconds. What the sync brings
// in is read as any change of the calendar's files is (the follower watches them). A failing or
// hanging sync is a note in `chime status` and the log, never a lost alarm: the alarms already known
// keep ringing from the local copy. Owned by the calendars' writer (`OwnCalendars`), whose deadline it is.
import ChimeCenter
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

final class CalendarSync {
    private struct State {
        var calendar: ReaderSummary.WireWritable
        var next: Instant
        var running: pid_t?
        /// Asked again while one runs: one more after it.
        var again = false
        /// The last result: when it ended, and why it failed (nil: it did not).
        var ended: Instant?
        /// When the last sync started (or failed to).
        var started: Instant?
        var failure: String?
        var failingSince: Instant?
    }

    private var states: [String: State] = [:]
    private let children: any ProgramRunner
    private let clock: WallClock
    private let logger: Logger
    /// How long one sync may run before it is stopped.
    static let timeLimit = TimeSpan.seconds(120)
    /// Around a due alarm: from this long before it, a sync this long after the last one ended.
    static let quickLead = TimeSpan.seconds(60)
    static let quickGap = TimeSpan.seconds(2)

    /// Whether the calendars' alarms want quick syncs now (one of them rings, or is due within
    /// `quickLead`), and else from when (a minute before the next is due): asked when `recheck`
    /// was called, and at the times it answered (the follower's answer).
    private let urgency: (_ now: Instant) -> (quick: Bool, from: Instant?)
    /// A sync started or stopped failing (the follower's answer).
    private let failingChanged: () -> Void
    /// Syncing quickly now.
    private(set) var quick = false
    /// When to ask `urgency` again (nil: not before `recheck`), and whether at once.
    private var checkAt: Instant?
    private var checkNow = true

    init(children: any ProgramRunner, clock: WallClock, logger: Logger, urgency: @escaping (_ now: Instant) -> (quick: Bool, from: Instant?),
         failingChanged: @escaping () -> Void) {
        self.urgency = urgency
        self.failingChanged = failingChanged
        self.children = children
        self.clock = clock
        self.logger = logger
    }

    /// The calendars as the alarm file says them now: a new one (or a changed command) syncs at
    /// once, one gone is forgotten, the rest keep their times.
    func configure(_ calendars: [ReaderSummary.WireWritable], now: Instant) {
        var kept: [String: State] = [:]
        for calendar in calendars where calendar.sync != nil {
            if var state = states[calendar.name], state.calendar.sync == calendar.sync {
                state.calendar = calendar
                state.next = min(state.next, (state.ended ?? now) + TimeSpan(nanoseconds: calendar.syncInterval))
                kept[calendar.name] = state
            } else {
                kept[calendar.name] = State(calendar: calendar, next: now)
            }
        }
        states = kept
    }

    /// chime wrote to the calendar: it syncs now (or again right after the sync under way).
    func soon(_ name: String) {
        guard var state = states[name] else { return }
        if state.running != nil { state.again = true } else { state.next = clock.now() }
        states[name] = state
    }

    /// Who waits for every calendar's next sync to end (or for its limit): at start and at resume,
    /// late occurrences wait for what the other machines answered meanwhile.
    private var waiters: [(asked: Instant, limit: Instant, then: (_ synced: Bool) -> Void)] = []

    /// Whether any calendar has a sync command.
    var isConfigured: Bool { !states.isEmpty }

    /// Syncs every calendar now (or right after the sync under way) and tells `then` once each
    /// has ended (`true`), or at `limit` (`false`), whichever comes first; at once without syncs.
    func syncAll(limit: Instant, _ then: @escaping (_ synced: Bool) -> Void) {
        guard !states.isEmpty else { return then(true) }
        let now = clock.now()
        for name in states.keys { soon(name) }
        waiters.append((now, limit, then))
    }

    /// Tells the waiters whose syncs all ended, or whose limit passed.
    private func tellWaiters(now: Instant) {
        guard !waiters.isEmpty else { return }
        var kept: [(asked: Instant, limit: Instant, then: (_ synced: Bool) -> Void)] = []
        var told: [((Bool) -> Void, Bool)] = []
        for waiter in waiters {
            let synced = states.values.allSatisfy { $0.running == nil && ($0.started.map { $0 >= waiter.asked } ?? false) }
            if synced || waiter.limit <= now { told.append((waiter.then, synced)) } else { kept.append(waiter) }
        }
        waiters = kept
        for (then, synced) in told { then(synced) }
    }

    /// What the alarms want may have changed (a reading was applied, an alarm rang or was
    /// answered): `urgency` is asked again.
    func recheck() { checkNow = true }

    /// When a sync is next due, quick syncs read: the regular time, or `quickGap` after the last.
    private func nextTime(_ state: State) -> Instant {
        guard quick else { return state.next }
        return min(state.next, (state.ended ?? .earliest) + Self.quickGap)
    }

    /// When the next sync is due, or `urgency` is to be asked again (nil: neither).
    var deadline: Instant? {
        guard !states.isEmpty else { return nil }
        let next = states.values.filter { $0.running == nil }.map(nextTime).min()
        if checkNow { return .epoch }
        return [next, checkAt, waiters.map(\.limit).min()].compactMap { $0 }.min()
    }

    /// Starts the syncs that are due.
    func due(now: Instant) {
        guard !states.isEmpty else { return }
        tellWaiters(now: now)
        if checkNow || checkAt.map({ $0 <= now }) == true {
            checkNow = false
            let (wanted, from) = urgency(now)
            if wanted != quick { logger.info(wanted ? "syncing the calendars every few seconds: an alarm of theirs is due or ringing" : "syncing the calendars at their intervals again") }
            quick = wanted
            checkAt = wanted ? now + Self.quickGap : from.map { max($0, now + Self.quickGap) }
        }
        for (name, state) in states where state.running == nil && nextTime(state) <= now {
            start(name, now: now)
        }
    }

    private func start(_ name: String, now: Instant) {
        guard var state = states[name], let command = state.calendar.sync else { return }
        let wasFailing = state.failure != nil
        state.started = now
        do {
            state.running = try children.start(command, timeLimit: Self.timeLimit) { [weak self] child in
                self?.ended(name, child)
            }
            state.again = false
        } catch {
            state.failure = "\(error)"
            state.failingSince = state.failingSince ?? now
            state.next = now + TimeSpan(nanoseconds: state.calendar.syncInterval)
            state.ended = now
            logger.warning("sync of the calendar \(name): \(state.failure!)")
        }
        states[name] = state
        if state.running == nil { tellWaiters(now: now) }
        if wasFailing != (state.failure != nil) { failingChanged() }
    }

    private func ended(_ name: String, _ child: Child) {
        guard var state = states[name] else { return }
        let wasFailing = state.failure != nil
        let now = clock.now()
        state.running = nil
        state.ended = now
        let command = state.calendar.sync?.joined(separator: " ") ?? ""
        if child.timedOut {
            state.failure = "\(command) ran past \(Self.timeLimit) and was stopped"
        } else if let status = child.waitStatus, status != 0 {
            state.failure = status & 0x7F == 0 ? "\(command) exited with status \(status >> 8)" : "\(command) was killed by signal \(status & 0x7F)"
        } else {
            if state.failure != nil { logger.info("sync of the calendar \(name) works again") }
            state.failure = nil
            state.failingSince = nil
        }
        if let failure = state.failure {
            state.failingSince = state.failingSince ?? now
            logger.warning("sync of the calendar \(name): \(failure); its alarms ring from the local copy")
        }
        state.next = state.again ? now : now + TimeSpan(nanoseconds: state.calendar.syncInterval)
        state.again = false
        states[name] = state
        tellWaiters(now: now)
        if wasFailing != (state.failure != nil) { failingChanged() }
    }

    /// Why the calendar's sync fails, and since when (nil: it does not, or it has none).
    func failure(_ name: String) -> String? {
        guard let state = states[name], let failure = state.failure else { return nil }
        return failure + (state.failingSince.map { " (since " + Zone.system().iso8601($0) + ")" } ?? "")
    }

    /// What `chime status` says of the syncs that fail: one line each.
    var notes: [String] {
        states.keys.sorted().compactMap { name in
            guard let state = states[name], let failure = state.failure else { return nil }
            let since = state.failingSince.map { " since " + Zone.system().iso8601($0) } ?? ""
            return "calendar \(name): sync failing\(since): \(failure); its alarms ring from the local copy"
        }
    }
}
