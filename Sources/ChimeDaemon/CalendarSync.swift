// Syncing the person's own calendars through their own tool: each `[[calendar]]` with `write = true`
// may name a `sync` command (`vdirsyncer sync work`), which chime runs as a child (never waiting on
// the loop) right after it writes to the calendar and every `sync-interval`. What the sync brings
// in is read as any change of the calendar's files is (the follower watches them). A failing or
// hanging sync is a note in `chime status` and the log, never a lost alarm: the alarms already known
// keep ringing from the local copy. Owned by the alarm file's follower, whose deadline it shares.
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
        var failure: String?
        var failingSince: Instant?
    }

    private var states: [String: State] = [:]
    private let children: ChildProcesses
    private let clock: WallClock
    private let logger: Logger
    /// How long one sync may run before it is stopped.
    static let timeLimit = TimeSpan.seconds(120)

    init(children: ChildProcesses, clock: WallClock, logger: Logger) {
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

    /// When the next sync is due (nil: none).
    var deadline: Instant? { states.values.filter { $0.running == nil }.map(\.next).min() }

    /// Starts the syncs that are due.
    func due(now: Instant) {
        for (name, state) in states where state.running == nil && state.next <= now {
            start(name, now: now)
        }
    }

    private func start(_ name: String, now: Instant) {
        guard var state = states[name], let command = state.calendar.sync else { return }
        do {
            state.running = try children.start(command, timeLimit: Self.timeLimit) { [weak self] child in
                self?.ended(name, child)
            }
            state.again = false
        } catch {
            state.failure = "\(error)"
            state.failingSince = state.failingSince ?? now
            state.next = now + TimeSpan(nanoseconds: state.calendar.syncInterval)
            logger.warning("sync of the calendar \(name): \(state.failure!)")
        }
        states[name] = state
    }

    private func ended(_ name: String, _ child: Child) {
        guard var state = states[name] else { return }
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
