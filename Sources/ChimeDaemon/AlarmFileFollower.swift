// The daemon follows the alarm file: loaded at start, read again on SIGHUP, on
// every change inotify reports, and on ReloadAlarmFile. A reload adds the new
// alarms, replaces the changed ones and cancels the removed ones, and touches
// nothing else: not the file's unchanged alarms (their next fire, snooze and
// history stay), and never an alarm added from the command line or over D-Bus.
// A file with errors changes nothing; its diagnostics wait in the status.
//
// A part of the daemon: it owns the path, the watch, the settle deadline, the file's status and
// the alarms as last applied, and the store's `file_alarms` table (its face: `AlarmFileStore`).
// It asks the schedule to store, take out and queue what changed (`storeFromFile`,
// `removeFromFile`, `replaced`), whose an identifier is (`origin`), whether an alarm stays out
// (`quarantinedFromFile`), and to keep the record while a first fire is computed (`firing`);
// others may ask it to `reload`, for its `status`, and tell it that alarms were removed
// (`alarmsRemoved`: one of the file's left out for a clashing identifier may fit now).
import ChimeCenter
import ChimeConfig
import FoundationEssentials
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What one reload did.
public struct ReloadOutcome: Hashable, Sendable, CustomStringConvertible {
    public var added = 0
    public var changed = 0
    public var removed = 0
    public var unchanged = 0
    /// False when the file had errors (or the store failed): nothing was applied.
    public var applied = false

    public var description: String {
        applied ? "\(added) added, \(changed) changed, \(removed) removed, \(unchanged) unchanged" : "not applied"
    }
}

/// A file alarm as last applied (normalized) with its definition.
struct AppliedAlarm {
    var alarm: ConfigAlarm
    var definition: String
}

final class AlarmFileFollower: LoopPart {
    /// The alarm file followed (nil: none, `--no-config`). Set before `start`.
    var path: String?
    private let store: any AlarmFileStore
    let schedule: Schedule
    let clock: WallClock
    let logger: Logger
    private var watcher: ConfigWatcher?
    /// When to read the alarm file after an edit.
    private var reloadAt: Instant?
    /// What `chime config status` shows.
    private(set) var status = AlarmFileStatus(path: "")
    /// The file's alarms as last applied, by identifier.
    private var appliedAlarms: [String: AppliedAlarm] = [:]
    /// The file's `[[timer]]` presets, as last read without errors (`ListTimerPresets`, `StartTimer`).
    private(set) var timerPresets: [TimerPreset] = []
    /// Calendar alarms kept at the last reload because a calendar could not be read then (their
    /// definitions, by identifier): still the file's, compared again at the next.
    private var keptFromUnread: [String: String] = [:]

    init(path: String?, store: any AlarmFileStore, schedule: Schedule, clock: WallClock, logger: Logger) {
        self.path = path
        self.store = store
        self.schedule = schedule
        self.clock = clock
        self.logger = logger
    }

    var descriptors: [Int32] { watcher.map { [$0.fd] } ?? [] }
    var deadline: Instant? { reloadAt }
    func readable(_ fd: Int32) { touched() }
    func deadlineReached(now: Instant) { reloadIfSettled(now: now) }

    /// After a command-line alarm is cancelled, a file alarm left out for its identifier may fit now.
    func alarmsRemoved() {
        if !status.conflicts.isEmpty { reloadAt = clock.now() }
    }

    /// How long after an inotify event the file is read: an editor's write, rename and
    /// chmod arrive as several events within a few milliseconds, and are read once.
    static let settleTime = TimeSpan.milliseconds(50)

    /// Starts following `configPath`, if set: the watch, then the first load.
    func start(now: Instant) {
        guard let path else { return }
        do throws(DaemonError) {
            watcher = try ConfigWatcher(path: path)
        } catch {
            logger.warning("\(error); edits will be read on SIGHUP only")
        }
        reload(now: now, reason: "start-up")
    }

    /// An inotify event: read the file once the burst of events is over.
    private func touched() {
        guard let watcher, watcher.read() else { return }
        reloadAt = clock.now() + Self.settleTime
    }

    /// Reads the alarm file when the settle time after an edit has passed.
    private func reloadIfSettled(now: Instant) {
        guard let at = reloadAt, at <= now else { return }
        reloadAt = nil
        reload(now: now, reason: "the file changed")
    }

    /// Reads the file and applies it, or keeps the last good set and reports why.
    @discardableResult
    func reload(now: Instant, reason: String) -> ReloadOutcome {
        guard let path else { return ReloadOutcome() }
        reloadAt = nil
        // The watches follow what the file is now (a symlink made or re-pointed since the last
        // event, a directory that appeared): set before reading, so no later change is missed.
        watcher?.refresh()
        status.path = path
        status.checked = now
        // Gone (not: cannot be looked at, which the read below reports).
        let gone: Bool
        do { gone = try Sys.status(path) == nil } catch { gone = false }
        if gone {
            status.exists = false
            let kept = (try? store.fileDefinitions().count) ?? 0
            if kept == 0 {
                // No file and nothing from one: nothing to say.
                status.problems = []
                return ReloadOutcome(applied: true)
            }
            let problem = "\(path): the file is gone; its \(kept) alarm(s) keep running until it is back (an empty file removes them)"
            status.problems = [problem]
            logger.warning("\(problem)")
            return ReloadOutcome()
        }
        status.exists = true
        // Read with the marker set: a file, or a calendar it follows, that crashes the daemon as it
        // is read is left out at the next start but one, until it changes.
        if let refusal = schedule.readRefusal(.alarmFile(path)) {
            status.problems = ["\(path): \(refusal); the alarms from its last good version keep running"]
            logger.error("\(status.problems[0])")
            return ReloadOutcome()
        }
        let schedule = self.schedule
        let reading = CalendarReading(refusal: { schedule.readRefusal(.calendar($0)) },
                                      around: { path, body in schedule.reading(.calendar(path), body) })
        let file = schedule.reading(.alarmFile(path)) { AlarmConfig.load(path: path, anchor: now, calendars: reading) }
        // The calendars it follows are watched too (a calendar server's sync rewrites them).
        watcher?.followed = file.calendars.filter(\.enabled).map(\.path)
        let loaded = clock.now()
        guard file.isValid else {
            status.problems = file.diagnostics.map(\.description)
            logger.error("the alarm file has \(file.diagnostics.count) error(s); the alarms from its last good version keep running",
                         metadata: ["reason": "\(reason)"])
            for diagnostic in file.diagnostics { logger.error("\(diagnostic)") }
            return ReloadOutcome()
        }
        let outcome = apply(file, now: now)
        timerPresets = file.timers
        if outcome.applied {
            status.problems = []
            status.loaded = now
            logger.info("alarm file loaded: \(outcome)", metadata: [
                "reason": "\(reason)", "path": "\(path)",
                "read_ms": "\((loaded - now).milliseconds)", "applied_ms": "\((clock.now() - loaded).milliseconds)",
            ])
        }
        for conflict in status.conflicts { logger.warning("\(conflict)") }
        return outcome
    }

    /// A file alarm without when it was loaded or where it sits in the file: what a reload
    /// compares. (An egg-timer rule counts from its first load, not from each reload.)
    static func normalized(_ alarm: ConfigAlarm) -> ConfigAlarm {
        var alarm = alarm
        alarm.request.trigger.anchor = .epoch
        alarm.line = 0
        return alarm
    }

    /// The normalized alarm as stored: whether it is enabled, then its request as JSON.
    static func definition(of normalized: ConfigAlarm) -> (definition: String, json: String)? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(normalized.request) else { return nil }
        let json = String(decoding: data, as: UTF8.self)
        return ((normalized.enabled ? "enabled " : "disabled ") + json, json)
    }

    /// Only an interval rule counts from its anchor; any other rule's next fire does not depend on
    /// it, so such an alarm is stored normalized, from the same JSON as its definition.
    static func countsFromAnchor(_ request: NotificationRequest) -> Bool {
        if case .interval = request.trigger.rule { return true }
        return false
    }

    /// Applies a valid file in one store transaction; the queue follows once it commits.
    private func apply(_ file: AlarmFile, now: Instant) -> ReloadOutcome {
        var outcome = ReloadOutcome()
        var conflicts: [String] = []
        var requeued: [(String, Instant?)] = []
        var scheduled = 0
        var disabled = 0
        var nowApplied: [String: AppliedAlarm] = [:]
        var kept: [String: String] = [:]
        do throws(StoreError) {
            // After the first reload, memory holds what the store holds (it changes only with the store).
            var recorded = appliedAlarms.isEmpty ? try store.fileDefinitions() : appliedAlarms.mapValues(\.definition)
            recorded.merge(keptFromUnread) { current, _ in current }
            try store.write { () throws(StoreError) in
                for alarm in file.alarms {
                    let id = alarm.id
                    let normalized = Self.normalized(alarm)
                    // An alarm as it was at the last reload keeps its definition: only changed ones are encoded.
                    var json: String?
                    let definition: String
                    if let known = appliedAlarms[id], known.alarm == normalized {
                        definition = known.definition
                    } else {
                        guard let encoded = Self.definition(of: normalized) else { continue }
                        (definition, json) = encoded
                    }
                    nowApplied[id] = AppliedAlarm(alarm: normalized, definition: definition)
                    if alarm.enabled { scheduled += 1 } else { disabled += 1 }
                    let before = recorded.removeValue(forKey: id)
                    if before == definition {
                        outcome.unchanged += 1
                        continue
                    }
                    if before == nil, try schedule.origin(of: id) == .commandLine {
                        conflicts.append("\(file.path):\(alarm.line): alarm '\(id)' is not scheduled: an alarm added from the command line has that id (chime cancel \(id), or give this one another id)")
                        if alarm.enabled { scheduled -= 1 } else { disabled -= 1 }
                        nowApplied[id] = nil
                        continue
                    }
                    // An alarm the daemon crashed on twice while adding it is left out (quarantined).
                    // It stays out until its definition changes: then it gets a fresh chance.
                    if try schedule.quarantinedFromFile(id, definition: definition) {
                        conflicts.append("\(file.path):\(alarm.line): alarm '\(id)' is quarantined: the daemon crashed twice while scheduling it; it stays out until you change it")
                        if alarm.enabled { scheduled -= 1 } else { disabled -= 1 }
                        nowApplied[id] = nil
                        continue
                    }
                    // Computing its first fire is work on this one alarm: on the record, so a crash
                    // in it costs this alarm alone. (Only new and changed alarms get here.)
                    let next = alarm.enabled ? schedule.firing(id) { alarm.request.trigger.nextFire(after: now) } : nil
                    // Disabled, or a one-off whose time has passed: nothing to schedule.
                    if Self.countsFromAnchor(alarm.request) {
                        try schedule.storeFromFile(alarm.request, next: next, json: nil)
                    } else {
                        try schedule.storeFromFile(normalized.request, next: next, json: json)
                    }
                    try store.setFileDefinition(id, definition)
                    requeued.append((id, next))
                    if before == nil { outcome.added += 1 } else { outcome.changed += 1 }
                }
                // What is left was in the file before and is not now. While a calendar cannot be
                // read, the alarms calendars gave are kept (which calendar gave one is not recorded:
                // all of them wait, rather than one being lost).
                for (id, definition) in recorded where !file.unreadCalendars.isEmpty && definition.contains("\"\(CalendarImport.uidKey)\"") {
                    kept[id] = definition
                    recorded[id] = nil
                }
                for id in recorded.keys {
                    try schedule.removeFromFile(id)
                    try store.setFileDefinition(id, nil)
                    requeued.append((id, nil))
                    outcome.removed += 1
                }
            }
        } catch {
            status.problems = ["\(file.path): could not apply the file: \(error)"]
            logger.error("could not apply the alarm file: \(error)")
            return ReloadOutcome()
        }
        for (id, next) in requeued { schedule.replaced(id, next: next) }
        appliedAlarms = nowApplied
        keptFromUnread = kept
        status.alarms = scheduled
        status.disabled = disabled
        status.conflicts = conflicts + file.calendarNotes
        outcome.applied = true
        return outcome
    }
}
