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
    /// Sends one signal (on the bus; the simulator records it).
    let emit: (SchedulerSignal, [Value]) -> Void

    init(connection: Connection) {
        emit = { signal, arguments in
            try? connection.emit(path: SchedulerInterface.path, interface: SchedulerInterface.interface, member: signal.member, arguments: arguments)
        }
    }

    init(emit: @escaping (SchedulerSignal, [Value]) -> Void) { self.emit = emit }

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
        /// Whether the presenter has this occurrence: on its way to the screen, held for a server,
        /// or waiting to be tried again (it is shown from there, never planned again).
        var presenterHas: (_ identifier: String, _ due: Instant) -> Bool = { _, _ in false }
        /// The alarm's next time in the store is about to move (a snooze, a skip): an occurrence
        /// on its way at that time is kept by the presenter (held). Called inside the transaction.
        var keepInFlight: (_ identifier: String) throws(StoreError) -> Void = { _ throws(StoreError) in }
        /// These alarms were replaced, or (`removed`) cancelled: what was held or retried for them goes.
        var forget: (_ identifiers: [String], _ removed: Bool) -> Void = { _, _ in }
        /// Show a reminder `lead` before an occurrence (the presenter).
        var remind: (_ request: NotificationRequest, _ occurrence: Instant, _ lead: TimeSpan) -> Void = { _, _, _ in }
        /// Whether an occurrence of this alarm is held for a server or waiting to be tried again
        /// (the presenter's): a one-off that has one stays pending until it is shown.
        var isDetached: (_ identifier: String) throws(StoreError) -> Bool = { _ in false }
    }

    let store: any ScheduleStore
    let clock: WallClock
    let logger: Logger
    let signals: SchedulerSignals
    var events = Events()
    /// The next occurrence of every pending alarm.
    var queue = OccurrenceQueue()
    /// When logind said the machine was going to sleep, until it says it woke (nil: awake).
    var asleepSince: Instant?
    /// The next reminder of every pending alarm that has reminders (`--remind`). Planned from the
    /// request whenever the alarm is queued; not stored: a reminder due while the daemon was down,
    /// or the machine slept, is not shown late (its alarm is, as any missed occurrence).
    var reminders = OccurrenceQueue()
    /// Which request is being fired, on disk, so a crash costs at most that request.
    let marker: FiringMarker
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

    /// The time away set by command (`chime off`, `chime on`); stretches that ended over a day ago
    /// are let go. (One that ended lately is kept: a clock set back passes its time again, and what
    /// it silenced stays silent.)
    func setCommandAway(_ stretches: [DaysOff.Away], now: Instant) throws(StoreError) {
        let kept = stretches.filter { $0.until > now - Self.endedAwayKept }
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

    /// How long a stretch of time away set by command is kept after it ended.
    static let endedAwayKept = TimeSpan.seconds(86_400)

    /// Every stretch of time away (of those set by command, the ones not yet over), and whether the
    /// alarm file set it.
    var away: [(stretch: DaysOff.Away, fromFile: Bool)] {
        let now = clock.now()
        return (fileDaysOff.away.map { ($0, true) } + commandAway.filter { $0.until > now }.map { ($0, false) }).sorted { $0.0.from < $1.0.from }
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
        let ahead = commandAway.filter { $0.until > now }.count
        guard ahead < DaysOff.maximumStretches else {
            throw .invalid(RequestError(key: "until", "\(ahead) stretches of time away are set already; chime on ends them"))
        }
        // (Room for it among those kept after they ended: the oldest of those goes first.)
        var kept = commandAway
        while kept.count >= DaysOff.maximumStretches, let oldest = kept.filter({ $0.until <= now }).min(by: { $0.until < $1.until }) {
            kept.removeAll { $0 == oldest }
        }
        do { try setCommandAway(kept + [stretch], now: now) } catch { throw .store(error) }
        changedAll()
    }

    /// Ends time away set by command (`chime on`): every stretch, or the named alarms' part in the
    /// stretches that name them. Answers the stretches that changed, as they were.
    func endAway(_ identifiers: [String]) throws(SchedulerError) -> [DaysOff.Away] {
        let now = clock.now()
        var kept: [DaysOff.Away] = []
        var ended: [DaysOff.Away] = []
        if identifiers.isEmpty {
            ended = commandAway.filter { $0.until > now }
        } else {
            let named = Set(identifiers)
            let current = commandAway.filter { $0.until > now }
            for id in identifiers where !current.contains(where: { $0.alarms?.contains(id) == true }) {
                if let all = current.first(where: { $0.alarms == nil }) {
                    let zone = Zone.system()
                    throw .invalid(RequestError(.id, "\(quotedForMessage(id)) is off with every alarm (until \(DaysOff.until(all.until, in: zone, thisYear: zone.civil(at: now.seconds).year))); chime on without an id ends that"))
                }
                try refuseUnknown([id])
                throw .invalid(RequestError(.id, "\(quotedForMessage(id)) is not off by chime off"))
            }
            for stretch in commandAway {
                guard stretch.until > now, let alarms = stretch.alarms, !alarms.isDisjoint(with: named) else {
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
    func mark(_ identifier: String) {
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
    /// Overdue alarms of the file, held at start until the file is read (Schedule+CatchingUp.swift).
    var heldForFile: [String] = []

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

    /// The machine is about to sleep: everything committed is made durable first. Until `awoke`, an
    /// occurrence found overdue came due during the sleep (the wall-clock timer fires at resume,
    /// before logind says the machine woke): it is caught up, not rung on time.
    func sleepStarting() {
        asleepSince = clock.now()
        logging { () throws(StoreError) in try store.makeDurable() }
    }

    /// logind said the machine woke: the caller plans everything again from now (`rescheduleAll`).
    func awoke() { asleepSince = nil }

    /// A pending alarm's request as stored, read without firing it (nil: not pending).
    func stored(_ identifier: String) throws(StoreError) -> LoadedRequest? { try store.loadRequest(identifier) }

    /// Pending timers that are paused, with the time each has left.
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)] { try store.pausedTimers() }

    /// The stored state of one alarm (nil: not pending).
    func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime? {
        try store.scheduledTime(of: identifier)
    }

    /// A detached occurrence (held, or tried again) was shown or given up on: it is the latest the
    /// alarm handled, if none later was, so a clock set back does not plan it again. Call inside a
    /// store transaction.
    func handledDetached(_ identifier: String, due: Instant) throws(StoreError) {
        guard let time = try store.scheduledTime(of: identifier), time.quarantine == nil else { return }
        try store.setNextFire(identifier, time.nextFire, handled: due)
    }

    /// An occurrence of `identifier` was shown or given up on: a one-off with no next occurrence
    /// and nothing else detached (`detached`, the presenter's word) leaves the pending list.
    /// Call inside a store transaction; the presenter requeues once it commits.
    func finished(_ identifier: String, detached: Bool) throws(StoreError) {
        // A quarantined alarm has no next fire either, but is kept (and said) until it is changed.
        guard let time = try store.scheduledTime(of: identifier), time.quarantine == nil else { return }
        if time.nextFire == nil, !detached {
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
                try notePlanned(from: now)
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
    func takenOff(_ identifiers: [String], gone: Bool) {
        for id in identifiers {
            queue.cancel(id)
            reminders.cancel(id)
            if gone { suspects.remove(id) }
            changed(id)
        }
        events.forget(identifiers, true)
    }

}

extension Trigger {
    /// Why a trigger that validated has no occurrence left (the clock moved on since).
    var neverFiresDescription: String { "it has no occurrence left" }
}
