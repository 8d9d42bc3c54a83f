// The schedule: the queue of next occurrences, the store behind it, catching up after a stop or a
// jump, adding and removing, and the firing marker that lets a crash while firing one request cost
// only that one. It owns the queue, the reminders, the marker and the suspects, and the store's
// `pending`, `paused`, `disabled` and `crashes` tables (its face: `ScheduleStore`).
//
// What it asks of the others (through `events`, wired by the daemon): show an occurrence that is
// due, whether one is being shown now or detached (held, retried), forget what was held or retried
// for alarms that changed or went; it emits its own signals. What others may ask of it: `firing`,
// `load`, `stored`, `scheduledTime`, `advance`, `requeue`, `finished`, `replaced`, `firedCleanly`,
// `snooze`, `add`, `addAll`, `remove`, `removeAll`, `disable`, `enable`, `skip`, `pause`, `resume`,
// `pausedTimers`, `catchUp`, `rescheduleAll`, `sleepStarting`, `nextWake`; for the alarm file:
// `origin`, `quarantinedFromFile`, `storeFromFile`, `removeFromFile`.
import ChimeCenter
import DBus
import FoundationEssentials
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why the scheduler refused a call (the service turns each into a documented D-Bus error).
enum SchedulerError: Error {
    case invalid(RequestError)
    case fromAlarmFile([String])
    case unknown([String])
    case store(StoreError)
    case noAlarmFile
    /// What is asked of a popup that is not showing (the whole message).
    case notShowing(String)

    /// Identifiers as a one-line message shows them: quoted, escaped, at most ten.
    static func list(_ identifiers: [String]) -> String {
        identifiers.prefix(10).map(quotedForMessage).joined(separator: ", ") + (identifiers.count > 10 ? " and \(identifiers.count - 10) more" : "")
    }
}

/// The daemon's signals on its interface, one typed method each (`SchedulerSignal` names them,
/// and `SchedulerCallTests` holds them to the interface's XML). Parts that announce hold this.
struct SchedulerSignals {
    let connection: Connection

    private func emit(_ signal: SchedulerSignal, _ arguments: [Value]) {
        try? connection.emit(path: SchedulerInterface.path, interface: SchedulerInterface.interface, member: signal.member, arguments: arguments)
    }

    func fired(_ identifier: String, due: Instant, _ timeliness: Timeliness) {
        emit(.fired, [.string(identifier), .int64(due.seconds), .string(timeliness.rawValue)])
    }
    func missed(_ identifier: String, due: Instant) { emit(.missed, [.string(identifier), .int64(due.seconds)]) }
    func rangOut(_ identifier: String, due: Instant, snoozed: Bool) {
        emit(.rangOut, [.string(identifier), .int64(due.seconds), .boolean(snoozed)])
    }
    func reminded(_ identifier: String, occurrence: Instant, lead: TimeSpan) {
        emit(.reminded, [.string(identifier), .int64(occurrence.seconds), .int64(lead.seconds)])
    }
    func answered(_ identifier: String, action: String) { emit(.answered, [.string(identifier), .string(action)]) }
    func dismissed(_ identifier: String) { emit(.dismissed, [.string(identifier)]) }
    /// What changed among the pending alarms (none: read everything again).
    func pendingChanged(_ identifiers: [String]) { emit(.pendingChanged, [.strings(identifiers)]) }
    func ringingChanged(_ identifiers: [String]) { emit(.ringingChanged, [.strings(identifiers)]) }
    /// The calendars chime writes to or syncs changed, or one's sync started or stopped failing.
    func calendarsChanged() { emit(.calendarsChanged, []) }
    func soundEnded(play: Int, how: String, note: String) {
        emit(.soundEnded, [.uint32(UInt32(clamping: play)), .string(how), .string(note)])
    }
}

/// Days off as the store keeps them (JSON).
struct StoredDaysOff: Codable {
    var holidays: [Int64: String] = [:]
    var workingDays: [Int] = [1, 2, 3, 4, 5]
    var away: [ReaderSummary.WireAway] = []

    init(_ off: DaysOff) {
        holidays = off.holidays
        workingDays = off.workingWeekdays.sorted()
        away = off.away.map { .init(from: $0.from.nanosecondsSinceEpoch, until: $0.until.nanosecondsSinceEpoch, alarms: $0.alarms?.sorted()) }
    }

    var daysOff: DaysOff {
        DaysOff(holidays: holidays, workingDays: Set(workingDays), away: away.map {
            DaysOff.Away(from: Instant(nanosecondsSinceEpoch: $0.from), until: Instant(nanosecondsSinceEpoch: $0.until), alarms: $0.alarms.map(Set.init))
        })
    }

    var json: String { String(decoding: AlarmFileReader.json(self), as: UTF8.self) }
}

final class Schedule: LoopPart {
    /// What the schedule asks of the other parts.
    struct Events {
        /// Show an occurrence (the presenter).
        var deliver: (_ request: NotificationRequest, _ due: Instant, _ timeliness: Timeliness, _ now: Instant) -> Void = { _, _, _, _ in }
        /// Whether this occurrence is on its way to the screen now.
        var inFlight: (_ identifier: String, _ due: Instant) -> Bool = { _, _ in false }
        /// These alarms were replaced, or (`removed`) cancelled: what was held or retried for them goes.
        var forget: (_ identifiers: [String], _ removed: Bool) -> Void = { _, _ in }
        /// Show a reminder `lead` before an occurrence (the presenter).
        var remind: (_ request: NotificationRequest, _ occurrence: Instant, _ lead: TimeSpan) -> Void = { _, _, _ in }
        /// Whether an occurrence of this alarm is held for a server or waiting to be tried again
        /// (the presenter's): a one-off that has one stays pending until it is shown.
        var isDetached: (_ identifier: String) throws(StoreError) -> Bool = { _ in false }
    }

    private let store: any ScheduleStore
    let clock: WallClock
    let logger: Logger
    let signals: SchedulerSignals
    var events = Events()
    /// The next occurrence of every pending alarm.
    private(set) var queue = OccurrenceQueue()
    /// The next reminder of every pending alarm that has reminders (`--remind`). Planned from the
    /// request whenever the alarm is queued; not stored: a reminder due while the daemon was down,
    /// or the machine slept, is not shown late (its alarm is, as any missed occurrence).
    private(set) var reminders = OccurrenceQueue()
    /// Which request is being fired, on disk, so a crash costs at most that request.
    private let marker: FiringMarker
    /// Requests the daemon crashed while firing before (cleared once they fire cleanly).
    private var suspects: Set<String> = []

    init(store: any ScheduleStore, marker: FiringMarker, signals: SchedulerSignals, clock: WallClock, logger: Logger) {
        self.store = store
        self.marker = marker
        self.signals = signals
        self.clock = clock
        self.logger = logger
        marker.failed = { [logger] error in
            logger.warning("cannot write the firing marker (\(error)); a crash now would not be charged to its alarm")
        }
    }

    // MARK: - Days off

    /// The days off and time away every plan reads: the alarm file's holiday calendars, working
    /// days and time away, and the time away set by command (`chime off`).
    private(set) var daysOff = DaysOff.none

    /// What `request`'s plan reads of the days off (the time away that is for it).
    func off(for request: NotificationRequest) -> DaysOff { daysOff.forAlarm(request.identifier) }

    /// The next time `request` fires after `time`, days off and time away read.
    func nextFire(_ request: NotificationRequest, after time: Instant) -> Instant? {
        request.nextFire(after: time, off: off(for: request))
    }

    /// Why a request with no planned occurrence is refused: it has none, or only in time away.
    func neverFires(_ request: NotificationRequest, after now: Instant) -> RequestError {
        if request.trigger.nextFire(after: now) != nil, let away = daysOff.forAlarm(request.identifier).away.last {
            let zone = Zone.system()
            return RequestError(.rule, "it rings only while alarms are off (until \(DaysOff.until(away.until, in: zone, thisYear: zone.civil(at: now.seconds).year))); chime on ends that",
                                kind: .neverFires)
        }
        return RequestError(.rule, request.trigger.neverFiresDescription, kind: .neverFires)
    }

    /// The alarm file's days off, and the time away set by command.
    private(set) var fileDaysOff = DaysOff.none
    private(set) var commandAway: [DaysOff.Away] = []

    /// Reads the days off the store keeps: at start, before anything is planned.
    func loadDaysOff() {
        let decoder = JSONDecoder()
        if let json = try? store.daysOffRecord("file"), let stored = try? decoder.decode(StoredDaysOff.self, from: Data(json.utf8)) {
            fileDaysOff = stored.daysOff
        }
        if let json = try? store.daysOffRecord("away"), let stored = try? decoder.decode(StoredDaysOff.self, from: Data(json.utf8)) {
            commandAway = stored.daysOff.away
        }
        daysOff = fileDaysOff.with(away: fileDaysOff.away + commandAway)
    }

    /// The alarm file's days off, as it was read now.
    func setFileDaysOff(_ new: DaysOff, now: Instant) {
        guard new != fileDaysOff else { return }
        fileDaysOff = new
        logging { () throws(StoreError) in try store.setDaysOffRecord("file", StoredDaysOff(new).json) }
        replan(fileDaysOff.with(away: fileDaysOff.away + commandAway), now: now)
    }

    /// The time away set by command (`chime off`, `chime on`); stretches that have ended are let go.
    func setCommandAway(_ stretches: [DaysOff.Away], now: Instant) throws(StoreError) {
        let kept = stretches.filter { $0.until > now }
        try store.setDaysOffRecord("away", StoredDaysOff(DaysOff.none.with(away: kept)).json)
        commandAway = kept.sorted { $0.from < $1.from }
        replan(fileDaysOff.with(away: fileDaysOff.away + commandAway), now: now)
    }

    /// The occurrences of the next year (at most 20) that a day off moves or leaves out, or time
    /// away silences (`chime show`).
    func occurrencesOff(_ identifier: String) throws(SchedulerError) -> [(original: Instant, fate: OccurrenceFate)] {
        try refuseUnknown([identifier])
        guard let request = load(identifier) else { throw .unknown([identifier]) }
        let now = clock.now()
        return request.trigger.changes(after: now, through: now + .seconds(366 * 86_400), off: off(for: request), limit: 20)
    }

    /// Every stretch of time away, and whether the alarm file set it.
    var away: [(stretch: DaysOff.Away, fromFile: Bool)] {
        (fileDaysOff.away.map { ($0, true) } + commandAway.map { ($0, false) }).sorted { $0.0.from < $1.0.from }
    }

    /// Sets time away (`chime off`): for the alarms it names, which must be pending, or for all.
    func setAway(_ stretch: DaysOff.Away) throws(SchedulerError) {
        let now = clock.now()
        if let alarms = stretch.alarms { try refuseUnknown(alarms.sorted()) }
        guard stretch.until > now else {
            throw .invalid(RequestError(key: "until", "has passed already; time away ends ahead"))
        }
        guard stretch.from < stretch.until, stretch.until - stretch.from <= DaysOff.maximumAway else {
            throw .invalid(RequestError(key: "until", "must come after from, and at most two years after it"))
        }
        guard commandAway.count < DaysOff.maximumStretches else {
            throw .invalid(RequestError(key: "until", "\(commandAway.count) stretches of time away are set already; chime on ends them"))
        }
        do { try setCommandAway(commandAway + [stretch], now: now) } catch { throw .store(error) }
        changedAll()
    }

    /// Ends time away set by command (`chime on`): every stretch, or the named alarms' part in the
    /// stretches that name them. Answers the stretches that changed, as they were.
    func endAway(_ identifiers: [String]) throws(SchedulerError) -> [DaysOff.Away] {
        let now = clock.now()
        var kept: [DaysOff.Away] = []
        var ended: [DaysOff.Away] = []
        if identifiers.isEmpty {
            ended = commandAway
        } else {
            let named = Set(identifiers)
            for id in identifiers where !commandAway.contains(where: { $0.alarms?.contains(id) == true }) {
                if let all = commandAway.first(where: { $0.alarms == nil }) {
                    let zone = Zone.system()
                    throw .invalid(RequestError(.id, "\(quotedForMessage(id)) is off with every alarm (until \(DaysOff.until(all.until, in: zone, thisYear: zone.civil(at: now.seconds).year))); chime on without an id ends that"))
                }
                try refuseUnknown([id])
                throw .invalid(RequestError(.id, "\(quotedForMessage(id)) is not off by chime off"))
            }
            for stretch in commandAway {
                guard let alarms = stretch.alarms, !alarms.isDisjoint(with: named) else {
                    kept.append(stretch)
                    continue
                }
                ended.append(stretch)
                let left = alarms.subtracting(named)
                if !left.isEmpty { kept.append(DaysOff.Away(from: stretch.from, until: stretch.until, alarms: left)) }
            }
        }
        do { try setCommandAway(kept, now: now) } catch { throw .store(error) }
        changedAll()
        return ended
    }

    /// New days off: every alarm's next occurrence is planned again when they change what a plan
    /// reads (as after a change of zone: what fell due meanwhile is caught up, not skipped).
    private func replan(_ new: DaysOff, now: Instant) {
        guard new != daysOff else { return }
        daysOff = new
        rescheduleAll(after: now)
    }

    // MARK: - The loop

    var deadline: Instant? {
        switch (queue.earliest()?.time, reminders.earliest()?.time) {
        case (let a?, let b?): min(a, b)
        case (let a, let b): a ?? b
        }
    }

    func deadlineReached(now: Instant) { fireDue() }

    /// Logs a store failure; the daemon goes on with what it has in memory.
    func logging(_ body: () throws(StoreError) -> Void) {
        do { try body() } catch { logger.error("\(error)") }
    }


    // MARK: - Firing one request at a time, on the record

    /// Runs the work of firing `identifier` with the marker set, so a crash inside it is
    /// charged to this request at the next start (and a second one quarantines it).
    @discardableResult
    func firing<Result, Failure: Error>(_ identifier: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        mark(identifier)
        defer { marker.clear() }
        return try body()
    }

    /// Notes on disk that the work now done is for `identifier` (cleared by `firing` when it is done).
    private func mark(_ identifier: String) {
        marker.set(identifier)
        #if DEBUG
        // Test builds only: tests make the work on one request (or the reading of one file) crash,
        // to prove a crash costs only that. Release builds have no such switch.
        if let victim = Sys.environment("CHIME_TEST_CRASH_FIRING"), victim == identifier {
            fatalError("CHIME_TEST_CRASH_FIRING: crashing while working on \(identifier)")
        }
        if let victim = Sys.environment("CHIME_TEST_CRASH_READING"), let subject = ReadSubject(marker: identifier),
            victim == subject.path ?? subject.described
        {
            fatalError("CHIME_TEST_CRASH_READING: crashing while working on \(subject.described)")
        }
        #endif
    }

    // MARK: - Reading other people's files, on the record

    /// What the marker names while work that is not an alarm's firing is done: a tab (which no
    /// alarm identifier holds), what is worked on, and its path or alarm.
    enum ReadSubject {
        case alarmFile(String)
        case calendar(String)
        /// An alarm's ring, resumed at start (its sound opened again).
        case ring(String)

        var marker: String {
            switch self {
            case .alarmFile(let path): "\tthe alarm file \(path)"
            case .calendar(let path): "\tthe calendar \(path)"
            case .ring(let identifier): "\tthe ring of \(identifier)"
            }
        }

        init?(marker: String) {
            if marker.hasPrefix("\tthe alarm file ") { self = .alarmFile(String(marker.dropFirst(16))) }
            else if marker.hasPrefix("\tthe calendar ") { self = .calendar(String(marker.dropFirst(14))) }
            else if marker.hasPrefix("\tthe ring of ") { self = .ring(String(marker.dropFirst(13))) }
            else { return nil }
        }

        /// The file read (nil for a ring).
        var path: String? {
            switch self {
            case .alarmFile(let path), .calendar(let path): path
            case .ring: nil
            }
        }

        /// How it is named in the log.
        var described: String {
            switch self {
            case .alarmFile(let path), .calendar(let path): path
            case .ring(let identifier): "the ring of \(identifier)"
            }
        }
    }

    /// What was being read when the marker was set last, for `reading` to put back.
    private var readingNow: [String] = []
    /// Files the daemon crashed while reading before (cleared once read cleanly).
    private var readSuspects: Set<String> = []

    /// Reads `subject` with the marker set, so a crash inside is charged to that file at the next
    /// start, and a second one quarantines it until it changes. Nested reads (a calendar the alarm
    /// file follows) are charged to the innermost.
    func reading<Result>(_ subject: ReadSubject, _ body: () -> Result) -> Result {
        let name = subject.marker
        mark(name)
        readingNow.append(name)
        defer {
            readingNow.removeLast()
            if let outer = readingNow.last { marker.set(outer) } else { marker.clear() }
            if readSuspects.remove(name) != nil { logging { () throws(StoreError) in try store.clearCrashes(name) } }
        }
        return body()
    }

    /// Why `subject` is not read (the daemon crashed twice reading it as it is now), or nil.
    /// Changed since, it is read again. A ring is not resumed after one crash while resuming it
    /// (its popup stays up; nothing is worth a second crash at start); the count is cleared then,
    /// so a later ring of the same alarm resumes after a restart as any does.
    func readRefusal(_ subject: ReadSubject) -> String? {
        let name = subject.marker
        guard let path = subject.path else {
            guard let crashes = try? store.crashCount(name), crashes >= 1 else { return nil }
            logging { () throws(StoreError) in try store.clearCrashes(name) }
            return "not rung again after a restart: the daemon stopped while resuming it at the last start"
        }
        guard let crashes = try? store.crashCount(name), crashes >= 2 else { return nil }
        let now = Sys.version(path) ?? "gone"
        let noted = try? store.suspectDefinition(name)
        if let noted, noted != now {
            logging { () throws(StoreError) in try store.clearCrashes(name) }
            return nil
        }
        return "not read: chime's reader stopped twice reading it (it crashed, or ran past its time limit); it is read again once it changes"
    }


    /// After it fired cleanly, a request the daemon once crashed on is no longer a suspect.
    func firedCleanly(_ identifier: String) {
        guard suspects.remove(identifier) != nil else { return }
        logging { () throws(StoreError) in try store.clearCrashes(identifier) }
    }

    /// At start, before the alarm file or anything else: charges the request that was in flight
    /// when the daemon last died; one in flight at two crashes is quarantined (kept, never fired,
    /// shown by `chime list`; an alarm-file alarm that never got stored is left out of the file's
    /// set, and `chime status` says so).
    func chargeCrash() {
        guard let identifier = marker.inFlight() else { return }
        marker.clear()
        if let subject = ReadSubject(marker: identifier) {
            // A file that crashed the daemon while it was read: noted as it is now, so a changed
            // version is read again.
            logging { () throws(StoreError) in
                let crashes = try store.recordCrash(whileFiring: identifier)
                guard let path = subject.path else {
                    logger.error("the daemon stopped while resuming \(subject.described) at start; it is not rung again (its popup stays)")
                    return
                }
                try store.setSuspectDefinition(identifier, Sys.version(path) ?? "gone")
                if crashes >= 2 {
                    logger.error("quarantined: the daemon crashed twice while reading \(path); it is not read until it changes")
                } else {
                    readSuspects.insert(identifier)
                    logger.warning("the daemon stopped while reading \(path); it is read again, and left out if that happens twice")
                }
            }
            return
        }
        logging { () throws(StoreError) in
            let crashes = try store.recordCrash(whileFiring: identifier)
            if crashes >= 2 {
                try store.quarantine(identifier, reason: "the daemon crashed twice while firing it; kept, not fired (chime cancel \(identifier) removes it)")
                logger.error("quarantined: the daemon crashed twice while firing this alarm", metadata: ["alarm.id": "\(identifier)"])
            } else {
                suspects.insert(identifier)
                logger.warning("the daemon stopped while firing this alarm; it fires again, and is quarantined if that happens twice",
                               metadata: ["alarm.id": "\(identifier)"])
            }
        }
    }

    /// Reads a request to fire it. One whose stored form no longer validates is quarantined.
    func load(_ identifier: String) -> NotificationRequest? {
        let loaded: LoadedRequest?
        do { loaded = try store.loadRequest(identifier) } catch {
            logger.error("\(error)")
            return nil
        }
        switch loaded {
        case .valid(let request)?: return request
        case .invalid(let reason)?:
            logger.error("quarantined: \(reason)", metadata: ["alarm.id": "\(identifier)"])
            logging { () throws(StoreError) in try store.quarantine(identifier, reason: reason) }
            queue.cancel(identifier)
            reminders.cancel(identifier)
            changed(identifier)
            return nil
        case nil: return nil
        }
    }

    /// How many alarms are queued to fire.
    var queuedCount: Int { queue.count }
    /// When `identifier` is queued to fire next (nil: it is not).
    func queuedTime(of identifier: String) -> Instant? { queue.time(of: identifier) }

    /// The earliest wake alarm that will fire (an indexed query or two), for waking; on a phone
    /// (`handset`) every alarm with a sound wakes it unless told not to.
    func nextWake(handset: Bool) -> (identifier: String, time: Instant, title: String)? {
        do { return try store.nextWake(handset: handset) } catch {
            logger.error("\(error)")
            return nil
        }
    }

    /// The machine is about to sleep: everything committed is made durable first.
    func sleepStarting() {
        logging { () throws(StoreError) in try store.makeDurable() }
    }

    /// A pending alarm's request as stored, read without firing it (nil: not pending).
    func stored(_ identifier: String) throws(StoreError) -> LoadedRequest? { try store.loadRequest(identifier) }

    /// Pending timers that are paused, with the time each has left.
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)] { try store.pausedTimers() }

    /// The stored state of one alarm (nil: not pending).
    func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime? {
        try store.scheduledTime(of: identifier)
    }

    /// An occurrence of `identifier` was shown or given up on: a one-off with no next occurrence
    /// and nothing else detached (`detached`, the presenter's word) leaves the pending list.
    /// Call inside a store transaction; the presenter requeues once it commits.
    func finished(_ identifier: String, detached: Bool) throws(StoreError) {
        if try store.scheduledTime(of: identifier)?.nextFire == nil, !detached {
            _ = try store.remove([identifier])
        }
    }

    // MARK: - The alarm file's alarms

    /// Where an alarm came from (nil: not pending).
    func origin(of identifier: String) throws(StoreError) -> AlarmOrigin? { try store.origin(of: identifier) }

    /// Where a pending alarm under `identifier` came from, and whether anything else is kept under it.
    func presence(of identifier: String) throws(StoreError) -> (origin: AlarmOrigin?, state: Bool) { try store.presence(of: identifier) }

    /// Whether an alarm of the file, now defined as `definition`, stays out: the daemon crashed
    /// twice while scheduling it, and it has not changed since (a changed one gets a fresh chance).
    func quarantinedFromFile(_ identifier: String, definition: String) throws(StoreError) -> Bool {
        guard try store.crashCount(identifier) >= 2 else { return false }
        let noted = try store.suspectDefinition(identifier)
        if noted == nil { try store.setSuspectDefinition(identifier, definition) }
        if noted == nil || noted == definition { return true }
        try store.clearCrashes(identifier)
        return false
    }

    /// Stores an alarm of the file, as its reader gave it, at its next fire, or (nil) takes it out
    /// of the pending list. Call inside a store transaction; `replaced` queues it once that commits.
    /// `fresh`: the store holds nothing under its identifier yet.
    func storeFromFile(_ record: ReaderRecord, next: Instant?, fresh: Bool) throws(StoreError) {
        if let next {
            try store.add(record, nextFire: next, fresh: fresh)
        } else if !fresh {
            _ = try store.remove([record.identifier])
        }
    }

    /// What the alarm file's reader is told to leave out: calendars it crashed on twice (as they
    /// are now), with why, and alarms whose first fire crashed it twice.
    func readerRefusals() -> (calendars: [String: String], alarms: [String: String]) {
        var calendars: [String: String] = [:]
        var alarms: [String: String] = [:]
        for name in (try? store.suspects(crashedAtLeast: 2)) ?? [] {
            if let subject = ReadSubject(marker: name) {
                if case .calendar(let path) = subject, let refusal = readRefusal(subject) { calendars[path] = refusal }
            } else {
                // With the digest of the definition it was left out with (none noted yet: "").
                let noted = (try? store.suspectDefinition(name)) ?? nil
                alarms[name] = noted.map { DefinitionDigest.stored(DefinitionDigest($0), fromCalendar: false) } ?? ""
            }
        }
        return (calendars, alarms)
    }

    /// The alarm file's reader died (or ran past its time limit) at `stage`: charged as a crash of
    /// the daemon there once was. Returns how often that has happened, as it is now.
    @discardableResult
    func chargeReader(_ stage: ReaderStage, path: String) -> Int {
        let name: String
        let version: String?
        switch stage {
        case .alarmFile: (name, version) = (ReadSubject.alarmFile(path).marker, Sys.version(path) ?? "gone")
        case .calendar(let calendar): (name, version) = (ReadSubject.calendar(calendar).marker, Sys.version(calendar) ?? "gone")
        case .alarm(let identifier): (name, version) = (identifier, nil)
        case .alarms: return 0
        }
        var crashes = 0
        logging { () throws(StoreError) in
            crashes = try store.recordCrash(whileFiring: name)
            if let version { try store.setSuspectDefinition(name, version) }
        }
        return crashes
    }

    /// An alarm left the file: out of the pending list unless one with its identifier was added
    /// from the command line since.
    func removeFromFile(_ identifier: String) throws(StoreError) {
        if try store.origin(of: identifier) == .file { _ = try store.remove([identifier]) }
    }

    // MARK: - Catching up

    /// On start (`now`): charges a crash while firing, then queues every request from its
    /// stored next occurrence; one that passed while the daemon was down is shown once,
    /// marked missed, within its grace period, and older ones are recorded.
    /// With `holdingFile` (the alarm file is being read), an overdue alarm of the file waits for
    /// `catchUpHeld`: one changed while the daemon was down is not caught up in its old form.
    func catchUp(now: Instant, holdingFile: Bool = false) throws(StoreError) {
        var overdue: [ScheduledTime] = []
        let remindful = try store.identifiersWithReminders()
        for time in try store.scheduledTimes() where time.quarantine == nil {
            guard let next = time.nextFire else { continue }
            if next > now { queue.schedule(time.identifier, at: next) } else { overdue.append(time) }
            if remindful.contains(time.identifier), !time.disabled, !time.paused { planReminder(time.identifier, now: now) }
        }
        for time in overdue {
            if holdingFile, try store.isFileAlarm(time.identifier) {
                heldForFile.append(time.identifier)
                continue
            }
            firing(time.identifier) { catchUp(time, now: now) }
        }
    }

    /// Overdue alarms of the file, held at start until the file is read.
    private var heldForFile: [String] = []

    /// The alarm file was read (and applied, or not): its overdue alarms are caught up as they are
    /// now (one the file changed was queued anew as it was applied).
    /// Those `keeping` names stay held (alarms of a synced calendar, until its sync ran).
    func catchUpHeld(now: Instant, keeping: (String) -> Bool = { _ in false }, timeliness: Timeliness = .missed) {
        let held = heldForFile
        heldForFile = held.filter(keeping)
        for identifier in held where !keeping(identifier) {
            guard let time = try? store.scheduledTime(of: identifier), time.quarantine == nil, let next = time.nextFire else { continue }
            if next > now { queue.schedule(identifier, at: next) } else { firing(identifier) { catchUp(time, now: now, timeliness: timeliness) } }
        }
    }

    /// Catches one request up to `now`: its occurrences that passed, the latest shown as
    /// `timeliness` (`.missed` after the daemon was down, `.late` after a sleep or a jump) when
    /// within its grace, every other one recorded missed.
    private func catchUp(_ time: ScheduledTime, now: Instant, timeliness: Timeliness = .missed) {
        guard let first = time.nextFire, let request = load(time.identifier) else { return }
        // Missed while down: find the latest occurrence that passed.
        var latest = first
        var older: [Instant] = []
        var steps = 0
        while let next = nextFire(request, after: latest), next <= now, steps < 100_000 {
            if older.count < 100 { older.append(latest) }
            latest = next
            steps += 1
        }
        logging { () throws(StoreError) in
            try store.write { () throws(StoreError) in
                try store.recordMissed(older.map { MissedOccurrence(identifier: request.identifier, due: $0, recorded: now) })
                // The store's next fire is the occurrence that rings now, so showing it (or holding it)
                // moves the alarm on from there, not from the first one it missed.
                if latest != first { try store.setNextFire(request.identifier, latest) }
            }
        }
        if now - latest <= request.content.grace ?? AlarmDefaults.grace {
            events.deliver(request, latest, timeliness, now)
        } else {
            logging { () throws(StoreError) in
                var next: Instant?
                try store.write { () throws(StoreError) in
                    try store.recordMissed([MissedOccurrence(identifier: request.identifier, due: latest, recorded: now)])
                    next = try advance(request, past: latest, now: now)
                }
                requeue(request.identifier, next)
            }
            signals.missed(request.identifier, due: latest)
        }
    }

    /// After a clock jump, a resume from sleep (which the kernel reports to the timer as a clock
    /// change) or a change of zone: every request's next occurrence is computed again. What fell due
    /// between the old plan and now (the machine slept, or the clock jumped ahead) is not skipped: it
    /// is caught up as at start, one ring for the latest occurrence, marked late (or recorded missed
    /// past its grace), the older ones recorded missed.
    /// Overdue alarms `holding` names wait for `catchUpHeld` (alarms of a synced calendar, whose
    /// sync may bring what the other machines answered meanwhile).
    func rescheduleAll(after now: Instant, holding: (String) -> Bool = { _ in false }) {
        queue = OccurrenceQueue()
        reminders = OccurrenceQueue()
        changedAll()
        var overdue: [ScheduledTime] = []
        logging { () throws(StoreError) in
            let times = try store.scheduledTimes()
            try store.write { () throws(StoreError) in
                for time in times where time.quarantine == nil && !time.disabled && !time.paused {
                    if let next = time.nextFire, next <= now {
                        // One already on its way to the server moves on when the server answers.
                        if !events.inFlight(time.identifier, next) { overdue.append(time) }
                        continue
                    }
                    guard let request = try store.request(withIdentifier: time.identifier) else { continue }
                    // A wall-clock rule plans from the new now (after a jump back, today's 16:35 is
                    // still ahead) but never rings an occurrence it already rang; a timer keeps
                    // counting from when it was set.
                    let base: Instant = switch request.trigger.rule {
                    case .calendar, .recurrence: max(time.lastFired ?? .earliest, now - .seconds(1))
                    case .interval, .instant: max(time.lastFired ?? request.trigger.anchor, now - .seconds(1))
                    }
                    // Computing the next fire is work on one request: on the record, like firing it.
                    mark(time.identifier)
                    let next = nextFire(request, after: base)
                    marker.clear()
                    try store.setNextFire(time.identifier, next)
                    if let next { queue.schedule(time.identifier, at: next) }
                    if next != nil, !request.trigger.leads.isEmpty { planReminder(request, now: now) }
                }
            }
        }
        for time in overdue {
            if holding(time.identifier) {
                if !heldForFile.contains(time.identifier) { heldForFile.append(time.identifier) }
                continue
            }
            firing(time.identifier) { catchUp(time, now: now, timeliness: .late) }
        }
    }

    // MARK: - Due

    func fireDue() {
        let now = clock.now()
        for (identifier, due) in reminders.popDue(now) {
            firing(identifier) {
                guard let request = load(identifier) else { return }
                // The reminder due now: the occurrence it is for, and how long before it.
                if let reminder = request.trigger.nextReminder(after: due - TimeSpan(nanoseconds: 1), off: off(for: request)), reminder.at == due {
                    events.remind(request, reminder.occurrence, reminder.lead)
                }
                planReminder(request, now: due)
            }
        }
        for (identifier, due) in queue.popDue(now) {
            firing(identifier) {
                guard let request = load(identifier) else {
                    logger.debug("due at \(due), but no longer stored", metadata: ["alarm.id": "\(identifier)"])
                    return
                }
                logger.debug("due at \(due)", metadata: ["alarm.id": "\(identifier)"])
                events.deliver(request, due, .onTime, now)
            }
        }
    }

    /// Moves `request` past its occurrence at `due` in the store: to its next
    /// occurrence, or out of the pending list when a one-off is done (and none of its occurrences is
    /// held or waiting to be retried).
    /// Call inside a store transaction; the queue follows once it commits.
    @discardableResult
    func advance(_ request: NotificationRequest, past due: Instant, now: Instant) throws(StoreError) -> Instant? {
        let next = nextFire(request, after: max(due, now - .seconds(1)))
        if next == nil, try !events.isDetached(request.identifier) {
            // A one-off that has fired leaves the pending list, as on iOS.
            try store.remove([request.identifier])
        } else {
            try store.setNextFire(request.identifier, next, handled: due)
        }
        return next
    }

    /// `hasReminders`, when the caller knows it, saves asking the store.
    func requeue(_ identifier: String, _ next: Instant?, hasReminders: Bool? = nil) {
        if let next { queue.schedule(identifier, at: next) } else { queue.cancel(identifier) }
        if next == nil {
            reminders.cancel(identifier)
        } else if hasReminders ?? ((try? store.hasReminders(identifier)) == true) {
            planReminder(identifier, now: clock.now())
        } else {
            reminders.cancel(identifier)
        }
        changed(identifier)
    }

    /// Queues the alarm's next reminder after `now`, or none.
    func planReminder(_ identifier: String, now: Instant) {
        guard let request = load(identifier) else { return reminders.cancel(identifier) }
        planReminder(request, now: now)
    }

    func planReminder(_ request: NotificationRequest, now: Instant) {
        if let reminder = request.trigger.nextReminder(after: now, off: off(for: request)) {
            reminders.schedule(request.identifier, at: reminder.at)
        } else {
            reminders.cancel(request.identifier)
        }
    }

    // MARK: - Announcing changes

    /// Alarms whose pending state changed since the last announcement.
    private var changedSinceAnnounced: Set<String> = []
    /// Everything may have changed (a re-plan of every alarm).
    private var everythingChanged = false
    /// More than this many in one turn of the loop are announced as "everything".
    static let announceLimit = 1000

    func changed(_ identifier: String) {
        guard !everythingChanged else { return }
        changedSinceAnnounced.insert(identifier)
        if changedSinceAnnounced.count > Self.announceLimit { changedAll() }
    }

    func changedAll() {
        everythingChanged = true
        changedSinceAnnounced.removeAll()
    }

    /// Emits `PendingChanged` once for what changed in this turn of the loop (called before it waits):
    /// the identifiers, or none for "read everything again".
    func announceChanges() {
        guard everythingChanged || !changedSinceAnnounced.isEmpty else { return }
        signals.pendingChanged(everythingChanged ? [] : changedSinceAnnounced.sorted())
        everythingChanged = false
        changedSinceAnnounced.removeAll()
    }

    /// `identifier` was stored anew (added, or changed in the alarm file): queued at its next time,
    /// and what was held or retried for its old form is forgotten.
    func replaced(_ identifier: String, next: Instant?, hasReminders: Bool? = nil) {
        requeue(identifier, next, hasReminders: hasReminders)
        events.forget([identifier], false)
    }

    /// Room in the queue for a calendar's `count` alarms, about to be read. Most may be queued
    /// already (a calendar read again after an edit): room is made for as many as the larger of
    /// the two, never for both, so an edit does not make the loop copy what it holds.
    func makeRoom(_ count: Int) {
        queue.reserveCapacity(max(queue.count, min(count, 1 << 20)))
    }

    /// `replaced` for many (a step of the alarm file's reading): the presenter forgets them at once.
    func replaced(_ alarms: [(identifier: String, next: Instant?, hasReminders: Bool)]) {
        guard !alarms.isEmpty else { return }
        for alarm in alarms { requeue(alarm.identifier, alarm.next, hasReminders: alarm.hasReminders) }
        events.forget(alarms.map(\.identifier), false)
    }

    // MARK: - Adding and removing

    /// Adds a request durably and schedules it; returns its identifier and first occurrence.
    /// A request without an identifier gets a new one that no other request has: only a
    /// caller that names an identifier replaces.
    func add(_ incoming: IncomingRequest) throws(SchedulerError) -> (identifier: String, next: Instant) {
        // Validated where it came in (NotificationRequest.fromDBus); its first occurrence is
        // computed again for the moment it is stored.
        var request = incoming.request
        let now = clock.now()
        guard let next = nextFire(request, after: now) else {
            throw .invalid(neverFires(request, after: now))
        }
        if incoming.identifierGiven { try refuseFileAlarms([request.identifier]) }
        do {
            try store.write { () throws(StoreError) in
                if !incoming.identifierGiven { request.identifier = try newIdentifier(for: request) }
                try store.add(request, nextFire: next)
            }
        } catch {
            throw .store(error)
        }
        suspects.remove(request.identifier)
        replaced(request.identifier, next: next)
        logger.debug("added; next at \(next)", metadata: ["alarm.id": "\(request.identifier)"])
        return (request.identifier, next)
    }

    /// Adds many requests at once, all or none (`chime import`): each is checked as `add` checks
    /// one, and all are stored in one transaction. Answers their identifiers, in order.
    func addAll(_ incoming: [IncomingRequest]) throws(SchedulerError) -> [(identifier: String, next: Instant)] {
        let now = clock.now()
        var planned: [(request: NotificationRequest, identifierGiven: Bool, next: Instant)] = []
        for (index, item) in incoming.enumerated() {
            guard let next = nextFire(item.request, after: now) else {
                var refusal = neverFires(item.request, after: now)
                refusal.message = "request \(index + 1): " + refusal.message
                refusal.key = "requests"
                throw .invalid(refusal)
            }
            planned.append((item.request, item.identifierGiven, next))
        }
        try refuseFileAlarms(planned.filter(\.identifierGiven).map(\.request.identifier))
        var added: [(identifier: String, next: Instant)] = []
        do {
            try store.write { () throws(StoreError) in
                for item in planned {
                    var request = item.request
                    if !item.identifierGiven { request.identifier = try newIdentifier(for: request) }
                    try store.add(request, nextFire: item.next)
                    added.append((request.identifier, item.next))
                }
            }
        } catch {
            throw .store(error)
        }
        for (id, next) in added {
            suspects.remove(id)
            replaced(id, next: next)
        }
        return added
    }

    /// A new identifier for `request`: its label's slug (or "timer" for an interval, "alarm"
    /// otherwise) and a number from a sequence kept in the store, skipping any in use.
    func newIdentifier(for request: NotificationRequest) throws(StoreError) -> String {
        var prefix = String(slug(request.content.label).prefix(40))
        if prefix.isEmpty {
            if case .interval = request.trigger.rule { prefix = "timer" } else { prefix = "alarm" }
        }
        while true {
            let candidate = "\(prefix)-\(try store.nextSequenceNumber())"
            if try !store.identifierInUse(candidate) { return candidate }
        }
    }

    /// Removes pending requests; returns those that were pending.
    func remove(_ identifiers: [String]) throws(SchedulerError) -> [String] {
        try refuseFileAlarms(identifiers)
        let removed: [String]
        do { removed = try store.remove(identifiers) } catch { throw .store(error) }
        takenOff(identifiers, gone: true)
        return removed
    }

    /// Removes every request added from the command line or over D-Bus (the alarm file's stay).
    func removeAll() throws(SchedulerError) -> [String] {
        let removed: [String]
        do { removed = try store.removeAll() } catch { throw .store(error) }
        takenOff(removed, gone: true)
        return removed
    }

    /// These alarms leave the queue (removed, switched off or paused): announced, and what was
    /// held, retried or ringing for them is forgotten. `gone`: removed, so no longer a suspect either.
    private func takenOff(_ identifiers: [String], gone: Bool) {
        for id in identifiers {
            queue.cancel(id)
            reminders.cancel(id)
            if gone { suspects.remove(id) }
            changed(id)
        }
        events.forget(identifiers, true)
    }

    // MARK: - On and off

    /// Switches alarms off: kept and listed, never fired (what waited to be shown of them goes, and
    /// a ring stops). The alarm file's are switched off in the file (`enabled = false`).
    func disable(_ identifiers: [String]) throws(SchedulerError) -> [String] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refusePaused(identifiers)
        do {
            try store.write { () throws(StoreError) in
                for id in identifiers { try store.setDisabled(id, true) }
            }
        } catch {
            throw .store(error)
        }
        takenOff(identifiers, gone: false)
        return identifiers
    }

    /// Switches alarms back on, each planned from now; one with no occurrence left (a one-off whose
    /// time passed while it was off) stays off, and the call is refused as never firing.
    func enable(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refusePaused(identifiers)
        let now = clock.now()
        var planned: [(identifier: String, next: Instant)] = []
        for id in identifiers {
            guard let request = load(id) else { throw .unknown([id]) }  // quarantined meanwhile
            guard let next = nextFire(request, after: now) else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) has no occurrence left to switch on for; it stays off",
                                            kind: .neverFires))
            }
            planned.append((id, next))
        }
        do {
            try store.write { () throws(StoreError) in
                for (id, next) in planned {
                    try store.setDisabled(id, false)
                    try store.setNextFire(id, next)
                }
            }
        } catch {
            throw .store(error)
        }
        for (id, next) in planned { requeue(id, next) }
        return planned
    }

    /// Skips an alarm's next occurrence (`undo`: brings back the one skipped last that is still
    /// ahead). Answers the occurrence skipped or brought back, and the alarm's next one after.
    /// Skipping the last occurrence an alarm has is refused: that is cancelling it.
    func skip(_ identifier: String, undo: Bool) throws(SchedulerError) -> (changed: Instant, next: Instant?) {
        try refuseUnknown([identifier])
        try refusePaused([identifier])
        if (try? store.scheduledTime(of: identifier))??.disabled == true {
            throw .invalid(RequestError(.id, "\(quotedForMessage(identifier)) is switched off; chime enable \(identifier) first"))
        }
        guard var request = load(identifier) else { throw .unknown([identifier]) }
        let now = clock.now()
        // Skips that have passed mean nothing any more.
        request.trigger.skipped.removeAll { $0 <= now }
        let changed: Instant
        if undo {
            guard let last = request.trigger.skipped.popLast() else {
                throw .invalid(RequestError(.skipped, "\(quotedForMessage(identifier)) has no skipped occurrence ahead to bring back"))
            }
            changed = last
        } else {
            guard let next = nextFire(request, after: now) else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(identifier)) has no occurrence ahead to skip", kind: .neverFires))
            }
            guard request.trigger.skipped.count < RequestBounds.skippedCount.upperBound else {
                throw .invalid(RequestError(.skipped, "\(quotedForMessage(identifier)) has \(request.trigger.skipped.count) skipped occurrences ahead already"))
            }
            request.trigger.skipped.append(next)
            changed = next
        }
        return (changed, try storeSkips(request, now: now))
    }

    /// Skips one occurrence (the notice's Skip this one), or brings it back (`undo`): the alarm's
    /// next occurrence after.
    @discardableResult
    func skip(_ identifier: String, occurrence: Instant, undo: Bool) throws(SchedulerError) -> Instant? {
        try refuseUnknown([identifier])
        guard var request = load(identifier) else { throw .unknown([identifier]) }
        let now = clock.now()
        request.trigger.skipped.removeAll { $0 <= now }
        if undo {
            guard let index = request.trigger.skipped.lastIndex(of: occurrence) else {
                throw .invalid(RequestError(.skipped, "that occurrence of \(quotedForMessage(identifier)) is not skipped"))
            }
            request.trigger.skipped.remove(at: index)
        } else {
            guard occurrence > now else { throw .invalid(RequestError(.skipped, "that occurrence of \(quotedForMessage(identifier)) has passed")) }
            guard !request.trigger.skipped.contains(occurrence) else { return nextFire(request, after: now) }
            guard request.trigger.skipped.count < RequestBounds.skippedCount.upperBound else {
                throw .invalid(RequestError(.skipped, "\(quotedForMessage(identifier)) has \(request.trigger.skipped.count) skipped occurrences ahead already"))
            }
            request.trigger.skipped.append(occurrence)
        }
        return try storeSkips(request, now: now)
    }

    /// Stores a request whose skips changed, and plans it from `now`.
    private func storeSkips(_ request: NotificationRequest, now: Instant) throws(SchedulerError) -> Instant? {
        let identifier = request.identifier
        let next = nextFire(request, after: now)
        if next == nil {
            throw .invalid(RequestError(.rule, "that is the last occurrence \(quotedForMessage(identifier)) has; chime cancel \(identifier) removes it",
                                        kind: .neverFires))
        }
        do {
            try store.write { () throws(StoreError) in try store.update(request, nextFire: next) }
        } catch {
            throw .store(error)
        }
        requeue(identifier, next)
        return next
    }

    /// A paused timer is resumed (or cancelled), not switched off or on.
    private func refusePaused(_ identifiers: [String]) throws(SchedulerError) {
        for id in identifiers where (try? store.scheduledTime(of: id))??.paused == true {
            throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is a paused timer: resume it (chime resume \(id)) or cancel it"))
        }
    }

    // MARK: - Pausing timers

    /// Pauses timers: each keeps the time it had left (in the store, across restarts) and is not
    /// planned until resumed. Only a timer (a rule that counts elapsed time) can be paused, and only
    /// while its next time is ahead.
    func pause(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        let now = clock.now()
        var paused: [(identifier: String, remaining: TimeSpan)] = []
        for id in identifiers {
            guard let request = load(id) else { throw .unknown([id]) }
            guard case .interval = request.trigger.rule else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is not a timer; an alarm at a clock time is switched off instead (chime disable \(id))"))
            }
            let time: ScheduledTime?
            do { time = try store.scheduledTime(of: id) } catch { throw .store(error) }
            guard let time, !time.paused, !time.disabled, let next = time.nextFire else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) has no time ahead to pause (it is paused, off, or waiting to be shown)"))
            }
            paused.append((id, max(next - now, .zero)))
        }
        do {
            try store.write { () throws(StoreError) in
                for (id, remaining) in paused { try store.setPaused(id, remaining: remaining) }
            }
        } catch {
            throw .store(error)
        }
        takenOff(paused.map(\.identifier), gone: false)
        return paused
    }

    /// Resumes paused timers: each fires once the time it had left has passed again from now (a
    /// repeating one then keeps its interval from there).
    func resume(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        let now = clock.now()
        let left: [String: TimeSpan]
        do { left = Dictionary(try store.pausedTimers().map { ($0.identifier, $0.remaining) }, uniquingKeysWith: { a, _ in a }) } catch {
            throw .store(error)
        }
        var resumed: [(request: NotificationRequest, next: Instant)] = []
        for id in identifiers {
            guard let remaining = left[id] else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is not paused"))
            }
            guard var request = load(id), case .interval(let span, _) = request.trigger.rule else { throw .unknown([id]) }
            let next = now + remaining
            // The timer counts from a new start, so every later re-plan (a clock jump, a restart)
            // finds the same next time.
            request.trigger.anchor = next - span
            resumed.append((request, next))
        }
        do {
            try store.write { () throws(StoreError) in
                for (request, next) in resumed { try store.add(request, nextFire: next) }  // the pause goes with it
            }
        } catch {
            throw .store(error)
        }
        for (request, next) in resumed { requeue(request.identifier, next) }
        return resumed.map { ($0.request.identifier, $0.next) }
    }

    /// Refuses identifiers that are not pending.
    private func refuseUnknown(_ identifiers: [String]) throws(SchedulerError) {
        var unknown: [String] = []
        do {
            for id in identifiers where try store.scheduledTime(of: id) == nil { unknown.append(id) }
        } catch {
            throw .store(error)
        }
        if !unknown.isEmpty { throw .unknown(unknown) }
    }

    /// The alarm file's alarms are changed in the file: a call that would change one is refused.
    func refuseFileAlarms(_ identifiers: [String]) throws(SchedulerError) {
        var owned: [String] = []
        do {
            for id in identifiers where try store.isFileAlarm(id) { owned.append(id) }
        } catch {
            throw .store(error)
        }
        if !owned.isEmpty { throw .fromAlarmFile(owned) }
    }

    /// Snooze: the alarm rings again after its snooze time (or `span`, when one was chosen), then a
    /// repeating one keeps its rule.
    @discardableResult
    func snooze(_ delivered: DeliveredNotification, for span: TimeSpan? = nil) -> Instant {
        let snooze = span ?? delivered.content.snooze ?? AlarmDefaults.snooze
        let at = clock.now() + snooze
        logging { () throws(StoreError) in
            if try store.scheduledTime(of: delivered.identifier) != nil {
                try store.setNextFire(delivered.identifier, at)
            } else {
                // A snoozed one-off is pending again until its snooze rings.
                var content = delivered.content
                content.subtitle = ""
                let again = NotificationRequest(
                    identifier: delivered.identifier, content: content,
                    trigger: Trigger(rule: .instant(at), repeats: false, timeZone: nil, anchor: at))
                // (A calendar's one-off stays the calendar's: its reading then gives it with the snooze.)
                let fromFile = try store.isFileAlarm(delivered.identifier) || delivered.content.userInfo[CalendarImport.uidKey] != nil
                try store.add(again, nextFire: at, origin: fromFile ? .file : .commandLine)
            }
            queue.schedule(delivered.identifier, at: at)
            changed(delivered.identifier)
            logger.info("snoozed for \(snooze)", metadata: ["alarm.id": "\(delivered.identifier)"])
        }
        return at
    }
}

extension Trigger {
    /// Why a trigger that validated has no occurrence left (the clock moved on since).
    var neverFiresDescription: String { "it has no occurrence left" }
}
