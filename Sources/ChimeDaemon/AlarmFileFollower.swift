// The daemon follows the alarm file: loaded at start, read again on SIGHUP, on
// every change inotify reports, and on ReloadAlarmFile. A reload adds the new
// alarms, replaces the changed ones and cancels the removed ones, and touches
// nothing else: not the file's unchanged alarms (their next fire, snooze and
// history stay), and never an alarm added from the command line or over D-Bus.
// A file with errors changes nothing; its diagnostics wait in the status.
//
// The daemon never reads the file itself: its reader child does (FileReader.swift), and the loop
// takes what it sends as it comes, a step of at most a few milliseconds at a time, so a followed
// 16 MiB calendar holds no alarm and no answer. A reading is one `ReaderRun`: the alarms the
// store holds are read (a slice at a time, as 16-byte digests), then each record the reader sends
// is compared with them and stored when new or changed, then what the file no longer has is
// looked for and taken out, each in steps. A reader that dies or runs past its time limit is
// charged to what it said it was doing (the file, a calendar, an alarm) and run again; a second
// time leaves that out until it changes. Asked to read again meanwhile, it reads once more after.
//
// A change that inotify reports only in files of calendar folders (a vdir's event, one of
// chime-eds's files of an EDS calendar) is read as a part: the alarm file and only those files,
// and only what those files gave may go (each alarm is known with the file that gave it, as a
// 64-bit name of its path, `ReaderRecord.source`). What only a whole reading settles (an
// identifier another file gives too, a twin's name, alarms known from the store alone after a
// start) reads all.
//
// A part of the daemon: it owns the path, the watch, the settle deadline, the file's status, the
// reading under way and the alarms as the store holds them, and the store's `file_alarms` table
// (its face: `AlarmFileStore`). It starts its reader through the children (`startStreaming`);
// asks the schedule to store, take out and queue what changed (`storeFromFile`,
// `removeFromFile`, `replaced`), whose an identifier is (`origin`), whether an alarm stays out
// (`quarantinedFromFile`), what the reader must leave out (`readerRefusals`), and to note a
// reader's crash (`chargeReader`); others may ask it to `reload` (told when it is over), for its
// `status`, and tell it that alarms were removed (`alarmsRemoved`: one of the file's left out for
// a clashing identifier may fit now). It tells (`events`) when its first reading is over.
import ChimeCenter
import ICalendar
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

/// What the follower keeps of each alarm of the file the store holds: enough to tell a changed
/// one, and whether a calendar gave it (16 bytes and a flag, not its definition).
struct KnownFileAlarm {
    var digest: DefinitionDigest
    var fromCalendar: Bool
    /// The calendar file that gave it (`ReaderRecord.source`; 0: the alarm file), and whether it
    /// counted as scheduled or off, as the last reading that sent it said (nil: read from the
    /// store, not yet sent by a reading of this daemon).
    var source: UInt64? = nil
    var enabled: Bool? = nil
}

/// One reading of the file by the reader child, and its application a step at a time.
final class ReaderRun {
    let reason: String
    var request: AlarmFileReader.Request
    var child: Child?
    var stream = FrameStream()
    /// The child's standard output reached its end.
    var endOfOutput = false
    /// The child ended (reaped or stopped at its time limit).
    var ended: Child?
    /// What the child said it was doing last.
    var stage: ReaderStage?
    var summary: ReaderSummary?
    var sawEnd = false
    /// The stream broke its own rules (the child is stopped).
    var broken: String?
    /// Runs of this reload so far (a crash is read again, up to a bound).
    var attempt = 1
    /// The alarms of the file the run has seen, and what applying them did.
    var seen: Set<String> = []
    var outcome = ReloadOutcome()
    var conflicts: [String] = []
    var scheduled = 0
    var disabled = 0
    /// What is left to take out once every record is in (nil: not yet known).
    var removals: [String]?
    /// Where the look for what the file no longer has got to (nil: not started, or done).
    var scan: Dictionary<String, KnownFileAlarm>.Index?
    var found: [String] = []
    /// Why the run is over without applying (nil while it runs or when it applied).
    var done = false
    /// What rings here (looked at each step), and the answers the reading gave those alarms.
    var ringing: Set<String> = []
    var answeredElsewhere: [String: Instant] = [:]
    /// What the events say was answered, of the alarms answered here (`.earliest`: nothing).
    var answersRead: [String: Instant] = [:]
    /// A reading of only the calendar files that changed: their sources (nil: all is read). Its
    /// counts are then changes to the last ones, and only alarms these files gave can go.
    let part: Set<UInt64>?
    /// The part met what only a whole reading can settle (an identifier another file gave).
    var wantsWhole = false
    /// A whole reading: the alarms kept without a known source (all is read whole until none is).
    var unknownSources = 0
    /// A whole reading: the identifiers that have a twin (`AlarmFileFollower.twinned`).
    var twinned: Set<String> = []

    init(reason: String, request: AlarmFileReader.Request) {
        self.reason = reason
        self.request = request
        part = request.only.isEmpty ? nil : Set(request.only.map(ReaderRecord.source(of:)))
    }
}

final class AlarmFileFollower: LoopPart {
    /// The alarm file followed (nil: none, `--no-config`). Set before `start`.
    var path: String?
    let store: any AlarmFileStore
    let schedule: any FollowerSchedule
    private let children: any ProgramRunner
    let clock: WallClock
    let logger: Logger
    private var watcher: ConfigWatcher?
    /// When to read the alarm file after an edit.
    private var reloadAt: Instant?
    /// What `chime config status` shows.
    var status: AlarmFileStatus {
        var status = reported
        status.reading = run != nil
        status.conflicts += calendars.syncNotes
        status.calendars = eds.notes
        return status
    }
    /// The calendars of Evolution Data Server, each kept in step with a folder by a child.
    private(set) lazy var eds = EDSCalendars(children: children, clock: clock, logger: logger, changed: { [unowned self] in
        events.calendarsChanged()
    }, ready: { [unowned self] in
        // A calendar's first pass is over: its folder is watched from now, and read once, whole.
        watchFollowed()
        owedWhole = true
        reloadAt = clock.now()
    })
    /// The calendars the file follows, as its last reading said.
    var followedPaths: [String] = []

    /// Watches the followed calendars, but the folders chime-eds is filling for the first time: a
    /// calendar of 100,000 events would otherwise have the whole folder read again for each few
    /// events it writes, and the watch's queue hold the loop; each is read once it is ready.
    func watchFollowed() {
        watcher?.followed = followedPaths.filter { !eds.isFilling($0) }
    }
    /// Where chime-eds keeps EDS's calendars (the daemon's state directory's `eds`); nil: the default.
    var edsRoot: String?
    /// The part that writes the person's calendars, which this part reads (`OwnCalendars`).
    let calendars: any CalendarWriting
    var reported = AlarmFileStatus(path: "")
    /// The file's alarms as the store holds them, by identifier (nil: not yet read from the store;
    /// read a slice at a time as a reload starts).
    var known: [String: KnownFileAlarm]?
    /// Where reading the known alarms from the store got to.
    private var knownAfter: String?
    /// The file's `[[timer]]` presets, as last read without errors (`ListTimerPresets`, `StartTimer`).
    private(set) var timerPresets: [TimerPreset] = []
    /// The calendars chime writes to (`[[calendar]]` with `write = true`) and those it only syncs,
    /// as last read without errors.
    private var followedForSync: [ReaderSummary.WireWritable] = []
    /// The calendars chime writes to or syncs.
    var followed: [ReaderSummary.WireWritable] { followedForSync }
    /// The calendar `chime at` puts alarms into unless told otherwise (`[defaults] calendar`).
    private(set) var defaultCalendar: String?
    /// The reading under way, if any.
    private var run: ReaderRun?
    /// Asked again while a reading was under way: why (one more reading follows it), and of which
    /// calendar files only (nil: all).
    private var again: String?
    private var againFiles: Set<String>?
    /// Who waits for the reading under way, and who for the one after it.
    private var waiting: [(AlarmFileStatus) -> Void] = []
    private var waitingAgain: [(AlarmFileStatus) -> Void] = []
    struct Events {
        /// The first reading is over (applied or not): once.
        var firstReadOver: () -> Void = {}
        /// The alarms ringing now (their calendars' answers are looked for in a reading).
        var ringingNow: () -> [String] = { [] }
        /// The calendars chime writes to or syncs changed.
        var calendarsChanged: () -> Void = {}
        /// A reading gave alarms that ring here an answer made elsewhere (their calendar's
        /// acknowledgment): what to do with their rings is the presenter's.
        var answeredElsewhere: (_ answers: [String: Instant]) -> Void = { _ in }
    }
    var events = Events()
    private var firstReadPending = true
    /// The program that reads (the daemon's own: `chime daemon --read-alarm-file`).
    var readerProgram = "/proc/self/exe"

    init(path: String?, store: any AlarmFileStore, schedule: any FollowerSchedule, calendars: any CalendarWriting, children: any ProgramRunner,
         clock: WallClock, logger: Logger) {
        self.path = path
        self.store = store
        self.schedule = schedule
        self.calendars = calendars
        self.children = children
        self.clock = clock
        self.logger = logger
    }

    /// How long one step of applying may work before it commits (the commit, a few milliseconds
    /// more, writes what the step did): a step holds the loop well under 10 ms.
    static let stepBudget = TimeSpan.milliseconds(2)
    /// The most of the reader's output waiting to be applied before the follower stops reading it
    /// (the reader then waits): what the daemon holds of a big calendar at once.
    static let bufferLimit = 8 << 20
    /// How long the reader may take (a 16 MiB calendar takes a few seconds).
    static var readerTimeLimit: TimeSpan {
        #if DEBUG
        if let seconds = Sys.environment("CHIME_TEST_READER_TIME_LIMIT").flatMap(Int64.init) { return .seconds(seconds) }
        #endif
        return .seconds(120)
    }
    /// Runs of one reload after crashes before it gives up (each crash charges a file or alarm).
    static let attempts = 6

    /// Whether a reading is under way.
    var isReading: Bool { run != nil }

    /// The daemon stops: its reader too, if one runs.
    func stopReading() {
        run?.child?.kill()
        eds.stopAll()
    }

    var descriptors: [Int32] {
        var fds = watcher.map { [$0.fd] + ($0.addingFD.map { [$0] } ?? []) } ?? []
        // Read on while under the bound, or while a frame bigger than it is still coming in.
        if let run, let child = run.child, child.output >= 0, run.stream.pendingBytes < Self.bufferLimit || !run.stream.hasFrame {
            fds.append(child.output)
        }
        return fds + eds.descriptors
    }

    var deadline: Instant? {
        // Work waiting: due already (any instant in the past wakes the loop at once).
        if let run, hasWork(run) { return .epoch }
        return [reloadAt, eds.deadline].compactMap { $0 }.min()
    }

    func readable(_ fd: Int32) {
        if let watcher, fd == watcher.fd {
            touched()
            return
        }
        if let watcher, fd == watcher.addingFD {
            if watcher.added() { reloadAt = clock.now() + Self.settleTime }
            return
        }
        if eds.readable(fd) { return }
        guard let run, let child = run.child, fd == child.output else { return }
        // What is there now, a bounded amount: applied in steps from the deadline.
        var read = 0
        while read < 128 << 10, run.stream.pendingBytes < Self.bufferLimit || !run.stream.hasFrame {
            guard let chunk = child.readStreamed(upTo: 64 << 10) else { break }
            if chunk.isEmpty {
                run.endOfOutput = true
                break
            }
            run.stream.append(chunk)
            read += chunk.count
        }
    }

    func deadlineReached(now: Instant) {
        traced("a step of the reading") { if let run, hasWork(run) { advance(run) } }
        traced("a reading started") { reloadIfSettled(now: now) }
        eds.due(now: now)
    }

    /// CHIME_TRACE: what of the follower's work held the loop over 10 ms.
    private func traced(_ what: String, _ body: () -> Void) {
        guard logger.logLevel <= .debug else { return body() }
        let start = Sys.monotonicNanoseconds()
        let cpu = Sys.threadCPUNanoseconds()
        let phase = run.map { $0.removals != nil ? "removing" : $0.scan != nil ? "scanning" : known == nil ? "loading the known" : "applying" } ?? "idle"
        body()
        let took = Sys.monotonicNanoseconds() - start
        if took > 10_000_000 {
            logger.debug("the alarm file's follower: \(what) (\(phase)) took \(took / 1_000_000) ms, \((Sys.threadCPUNanoseconds() - cpu) / 1_000_000) ms of it working")
        }
    }

    /// After a command-line alarm is cancelled, a file alarm left out for its identifier may fit now.
    func alarmsRemoved() {
        if !reported.conflicts.isEmpty {
            owedWhole = true
            reloadAt = clock.now()
        }
    }

    /// How long after an inotify event the file is read: an editor's write, rename and
    /// chmod arrive as several events within a few milliseconds, and are read once.
    static let settleTime = TimeSpan.milliseconds(50)

    /// Starts following `configPath`, if set: the watch, then the first reading.
    func start(now: Instant) {
        guard let path else {
            return
        }
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

    /// Reads the alarm file when the settle time after an edit has passed: only the calendar files
    /// that changed when nothing else did (a change in a folder of 100,000 events is one file).
    private func reloadIfSettled(now: Instant) {
        guard let at = reloadAt, at <= now else { return }
        reloadAt = nil
        let changes = watcher?.takeChanges() ?? ConfigWatcher.Changes(whole: true)
        let whole = changes.whole || owedWhole || changes.files.isEmpty
        reload(now: now, reason: "the file changed", only: whole ? nil : changes.files)
    }

    /// Something only a whole reading settles happened since the last one (a calendar's first
    /// pass, an alarm removed that one of the file's may replace).
    private var owedWhole = true
    /// Whether every alarm a calendar gave is known with the file that gave it: else a part
    /// cannot say what its files no longer give, and all is read.
    private var sourcesKnown = false
    /// The most files a part reads (more, and all is read).
    static let mostFilesInPart = 2000
    /// The calendars' identifiers that may have a twin: a second event of the same UID is named
    /// `ID@HASH`, and which of the two keeps `ID` only a whole reading says; a part that takes one of
    /// these out reads all again.
    var twinned: Set<String> = []

    /// The identifier a twin was named after (`ID@` and eight hex digits), or nil.
    static func twinBase(_ identifier: String) -> String? {
        let bytes = identifier.utf8
        guard bytes.count > 9 else { return nil }
        let tail = bytes.suffix(9)
        guard tail.first == UInt8(ascii: "@"), tail.dropFirst().allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        return String(identifier.dropLast(9))
    }

    /// Reads the file (in the reader child) and applies it, or keeps the last good set and says
    /// why; `then` gets the status once that is over. Asked while a reading is under way, it reads
    /// once more after it.
    func reload(now: Instant, reason: String, only: Set<String>? = nil, then: ((AlarmFileStatus) -> Void)? = nil) {
        guard let path else {
            then?(status)
            return
        }
        reloadAt = nil
        if run != nil {
            // One more reading after this one: of the files that changed, or (asked once) of all.
            againFiles = again == nil ? only : (againFiles.flatMap { files in only.map { files.union($0) } })
            again = reason
            if let then { waitingAgain.append(then) }
            return
        }
        // A part is read only where it can be applied as one.
        var only = only
        if let files = only, !sourcesKnown || known == nil || owedWhole || files.count > Self.mostFilesInPart { only = nil }
        if only == nil { owedWhole = false }
        if let then { waiting.append(then) }
        // The watches follow what the file is now (a symlink made or re-pointed since the last
        // event, a directory that appeared): set before reading, so no later change is missed.
        watcher?.refresh()
        reported.path = path
        reported.checked = now
        // Gone (not: cannot be looked at, which the reader reports).
        let gone: Bool
        do { gone = try Sys.status(path) == nil } catch { gone = false }
        if gone {
            reported.exists = false
            let kept = knownCount()
            if kept == 0 {
                // No file and nothing from one: nothing to say.
                reported.problems = []
            } else {
                let problem = "\(path): the file is gone; its \(kept) alarm(s) keep running until it is back (an empty file removes them)"
                reported.problems = [problem]
                logger.warning("\(problem)")
            }
            return over()
        }
        reported.exists = true
        // A file that crashed the reader twice is left out until it changes.
        if let refusal = schedule.readRefusal(.alarmFile(path)) {
            reported.problems = ["\(path): \(refusal); the alarms from its last good version keep running"]
            logger.error("\(reported.problems[0])")
            return over()
        }
        var request = AlarmFileReader.Request(path: path, now: now)
        if let only, let known {
            request.only = only.sorted()
            let sources = Set(only.map(ReaderRecord.source(of:)))
            request.calendarAlarmsBefore = known.values.count { $0.fromCalendar && !sources.contains($0.source ?? 0) }
        }
        let run = ReaderRun(reason: reason, request: request)
        self.run = run
        startReader(run)
    }

    /// How many alarms of the file the store holds.
    private func knownCount() -> Int {
        if let known { return known.count }
        return (try? store.fileAlarmCount()) ?? 0
    }

    private func startReader(_ run: ReaderRun) {
        guard let path else { return }
        let refusals = schedule.readerRefusals()
        run.request.refused = refusals.calendars
        run.request.noNext = refusals.alarms
        run.request.away = schedule.commandAway
        run.request.edsRoot = edsRoot
        var environment = childEnvironment
        var program = readerProgram
        #if DEBUG
        for name in ["CHIME_TEST_CRASH_READING", "CHIME_TEST_HANG_READING", "CHIME_TEST_HANG_UNTIL", "CHIME_TEST_CRASH_FIRING"] {
            if let value = Sys.environment(name) { environment[name] = value }
        }
        // A crash a test asks for is not one to explain: no backtracer (which may outlive the
        // crashed reader and hold the test's output open).
        if environment["CHIME_TEST_CRASH_READING"] != nil || environment["CHIME_TEST_CRASH_FIRING"] != nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        // Test builds only: another program in the reader's place (one that writes nonsense).
        if let other = Sys.environment("CHIME_TEST_READER_PROGRAM") { program = other }
        #endif
        let arguments = [program, "daemon", "--read-alarm-file", path] + run.request.arguments
        do {
            run.child = try children.startStreaming(arguments, environment: environment, timeLimit: Self.readerTimeLimit) { [weak self, weak run] child in
                guard let self, let run, self.run === run else { return }
                run.ended = child
            }
        } catch {
            reported.problems = ["\(path): cannot read the file: \(error)"]
            logger.error("\(reported.problems[0])")
            self.run = nil
            over()
        }
    }

    /// Whether the run has something to do now (rather than wait for its reader).
    private func hasWork(_ run: ReaderRun) -> Bool {
        if known == nil { return true }
        if run.removals != nil || run.scan != nil { return true }
        if run.stream.hasFrame { return true }  // (part of one: the loop waits for the rest)
        return run.endOfOutput && run.ended != nil
    }

    /// One step: reads the known alarms from the store, or applies what the reader sent, or takes
    /// out what the file no longer has, for at most `stepBudget`; then ends the run once all is in.
    private func advance(_ run: ReaderRun) {
        let stepEnd = clock.now() + Self.stepBudget
        if known == nil {
            loadKnown(until: stepEnd)
            return
        }
        if let removals = run.removals {
            removeStep(run, removals, until: stepEnd)
            return
        }
        if run.scan != nil {
            scanStep(run, until: stepEnd)
            return
        }
        applyStep(run, until: stepEnd)
        guard run.endOfOutput, !run.done else { return }
        if run.broken == nil, run.stream.hasFrame { return }  // more to apply, at the next step
        if run.broken == nil, run.stream.pendingBytes > 0 { run.broken = "half a frame and stopped" }
        // (The output ended before the child was reaped: the loop waits for SIGCHLD.)
        guard let child = run.ended else { return }
        if run.sawEnd, run.broken == nil, child.succeeded, let summary = run.summary {
            if !summary.diagnostics.isEmpty { return finishInvalid(run, summary) }
            // What is left was in the file before and is not now: looked for a step at a time.
            run.scan = known?.startIndex
            if run.scan == nil { run.removals = [] }
            return
        }
        readerFailed(run, child)
    }

    /// Reads a slice of the store's file definitions into `known`.
    private func loadKnown(until stepEnd: Instant) {
        // Room for all of them at once: grown as they come, the table is copied at each doubling
        // (35 ms at 65,000 of a big calendar's).
        if knownAfter == nil, pendingKnown.isEmpty { pendingKnown.reserveCapacity(min(knownCount(), 1 << 20)) }
        var loading: [String: KnownFileAlarm] = [:]
        var after = knownAfter
        var finished = false
        while !finished, clock.now() < stepEnd {
            var count = 0
            do {
                try store.fileDefinitions(after: after, limit: 100) { identifier, definition in
                    loading[identifier] = DefinitionDigest.known(definition)
                    after = identifier
                    count += 1
                }
            } catch {
                logger.error("\(error)")
            }
            if count < 100 { finished = true }
        }
        knownAfter = after
        pendingKnown.merge(loading) { $1 }
        if finished {
            known = pendingKnown
            pendingKnown = [:]
            knownAfter = nil
        }
    }

    private var pendingKnown: [String: KnownFileAlarm] = [:]

    /// Looks through the known alarms, a step at a time, for those the file no longer has. While a
    /// calendar cannot be read, the alarms calendars gave are kept (which calendar gave one is not
    /// recorded: all of them wait, rather than one being lost).
    /// A part looks only among the alarms its files gave (but those of a file it could not read).
    private func scanStep(_ run: ReaderRun, until stepEnd: Instant) {
        guard let known, var index = run.scan, let summary = run.summary else { return }
        let keepCalendars = !summary.unread.isEmpty
        let unread = run.part == nil ? [] : Set(summary.unread.map(ReaderRecord.source(of:)))
        var count = 0
        while index != known.endIndex {
            if count & 255 == 255, clock.now() >= stepEnd { break }
            count += 1
            let (identifier, alarm) = known[index]
            if let part = run.part {
                if alarm.fromCalendar, let source = alarm.source, part.contains(source), !unread.contains(source), !run.seen.contains(identifier) {
                    run.found.append(identifier)
                }
            } else if !run.seen.contains(identifier), !(keepCalendars && alarm.fromCalendar) {
                run.found.append(identifier)
            } else if alarm.fromCalendar, (alarm.source ?? 0) == 0 {
                run.unknownSources += 1
            }
            index = known.index(after: index)
        }
        if index == known.endIndex {
            run.scan = nil
            run.removals = run.found
            run.found = []
        } else {
            run.scan = index
        }
    }

    /// Takes out, a step at a time, the alarms the file no longer has.
    private func removeStep(_ run: ReaderRun, _ removals: [String], until stepEnd: Instant) {
        var rest = removals[...]
        var requeued: [(identifier: String, next: Instant?, hasReminders: Bool)] = []
        do throws(StoreError) {
            try store.write(.firing) { () throws(StoreError) in
                var count = 0
                while let identifier = rest.first {
                    if count & 15 == 15, clock.now() >= stepEnd { break }
                    count += 1
                    try schedule.removeFromFile(identifier)
                    try store.setFileDefinition(identifier, nil)
                    if run.part != nil {
                        if let was = known?[identifier]?.enabled { if was { run.scheduled -= 1 } else { run.disabled -= 1 } }
                        if twinned.contains(identifier) { run.wantsWhole = true }
                    }
                    known?[identifier] = nil
                    requeued.append((identifier, nil, false))
                    run.outcome.removed += 1
                    rest = rest.dropFirst()
                }
            }
        } catch {
            reported.problems = ["\(run.request.path): could not apply the file: \(error)"]
            logger.error("could not apply the alarm file: \(error)")
            schedule.replaced(requeued)
            return finish(run, applied: false)
        }
        schedule.replaced(requeued)
        run.removals = Array(rest)
        if rest.isEmpty { finish(run, applied: true) }
    }

    /// The file has errors: nothing of it is applied, and the status says why.
    private func finishInvalid(_ run: ReaderRun, _ summary: ReaderSummary) {
        reported.problems = summary.diagnostics
        logger.error("the alarm file has \(summary.diagnostics.count) error(s); the alarms from its last good version keep running",
                     metadata: ["reason": "\(run.reason)"])
        for diagnostic in summary.diagnostics { logger.error("\(diagnostic)") }
        finish(run, applied: false)
    }

    /// The reader died, ran past its time limit, or wrote what it should not: charged to what it
    /// was doing, and read again (the charged file or alarm left out after a second time).
    private func readerFailed(_ run: ReaderRun, _ child: Child) {
        let path = run.request.path
        let how = run.broken.map { "wrote \($0)" } ?? (child.timedOut ? "ran past its time limit" : child.ending)
        let retry: Bool
        switch run.broken == nil ? run.stage : nil {  // (a reader that wrote nonsense is not the file's doing)
        case .alarms? where !run.request.careful:
            logger.warning("the alarm file's reader stopped (\(how)) while computing first fires; reading again, naming each alarm")
            run.request.careful = true
            retry = true
        case .alarmFile?, .calendar?, .alarm?:
            let stage = run.stage!
            let crashes = schedule.chargeReader(stage, path: path)
            let what: String = switch stage {
            case .calendar(let calendar): calendar
            case .alarm(let identifier): "alarm '\(identifier)'"
            default: path
            }
            if crashes >= 2 {
                logger.error("quarantined: the alarm file's reader stopped twice (\(how)) while reading \(what); it is left out until it changes")
            } else {
                logger.warning("the alarm file's reader stopped (\(how)) while reading \(what); reading again, and leaving it out if that happens twice")
            }
            retry = true
        default:
            retry = false
        }
        if retry, run.attempt < Self.attempts, self.run === run {
            let next = ReaderRun(reason: run.reason, request: run.request)
            next.attempt = run.attempt + 1
            self.run = next
            startReader(next)
            return
        }
        reported.problems = ["\(path): cannot read the file: its reader stopped (\(how)); the alarms from its last good version keep running"]
        logger.error("\(reported.problems[0])")
        finish(run, applied: false)
    }

    /// The run is over: the status says what it did, whoever waited is told, and a reading asked
    /// for meanwhile starts.
    private func finish(_ run: ReaderRun, applied: Bool) {
        run.done = true
        run.child?.kill()
        self.run = nil
        if applied, let summary = run.summary {
            // (Its steps were committed without waiting for the disk: what the machine's power
            // takes with it is read from the file again at the next start.)
            run.outcome.applied = true
            if followedForSync != summary.writable || defaultCalendar != summary.defaultCalendar { events.calendarsChanged() }
            followedForSync = summary.writable
            defaultCalendar = summary.defaultCalendar
            calendars.readingApplied(followed: followedForSync, answersRead: run.answersRead, intoCalendars: summary.intoCalendars ?? [])
            if !run.answeredElsewhere.isEmpty { events.answeredElsewhere(run.answeredElsewhere) }
            timerPresets = summary.timers.map { TimerPreset(name: $0.name, duration: TimeSpan(nanoseconds: $0.nanoseconds), content: $0.content, line: $0.line) }
            reported.problems = []
            reported.loaded = run.request.now
            if run.part == nil {
                reported.alarms = run.scheduled
                reported.disabled = run.disabled
                reported.conflicts = run.conflicts + summary.notes
                sourcesKnown = run.unknownSources == 0
                twinned = run.twinned
            } else {
                // What the files read say now, beside what the rest said at the last readings.
                reported.alarms += run.scheduled
                reported.disabled += run.disabled
                let read = run.request.only.map { $0 + ":" }
                let said = run.conflicts + summary.notes
                reported.conflicts = reported.conflicts.filter { note in !said.contains(note) && !read.contains { note.hasPrefix($0) } } + said
            }
            if run.wantsWhole {
                owedWhole = true
                reloadAt = clock.now()
            }
            // Its holiday calendars, working days and time away: every alarm is planned again when
            // they changed.
            schedule.setFileDaysOff(summary.daysOff, now: clock.now())
            var metadata: Logger.Metadata = [
                "reason": "\(run.reason)", "path": "\(run.request.path)", "read": "\(run.part == nil ? "all" : "\(run.request.only.count) calendar file(s)")",
                "ms": "\((clock.now() - run.request.now).milliseconds)",
            ]
            if run.part != nil {
                // Which (the first few, by name): a part that read more than what changed is seen.
                let names = run.request.only.prefix(3).map { $0.split(separator: "/").last.map(String.init) ?? $0 }
                metadata["files"] = "\(names.joined(separator: ","))\(run.request.only.count > 3 ? ",…" : "")"
            }
            logger.info("alarm file loaded: \(run.outcome)", metadata: metadata)
            for conflict in run.conflicts { logger.warning("\(conflict)") }
        }
        over()
    }

    /// Tells whoever waited, and starts the reading asked for meanwhile.
    private func over() {
        let told = waiting
        waiting = []
        for then in told { then(status) }
        if firstReadPending {
            firstReadPending = false
            events.firstReadOver()
        }
        if let reason = again {
            let files = againFiles
            again = nil
            againFiles = nil
            waiting = waitingAgain
            waitingAgain = []
            reload(now: clock.now(), reason: reason, only: files)
        }
    }

    /// A file alarm without when it was loaded or where it sits in the file: what a reload
    /// compares. (An egg-timer rule counts from its first load, not from each reload; a phrase
    /// means what it meant when first read: its definition is the phrase, not the rule it became.)
    static func normalized(_ alarm: ConfigAlarm) -> ConfigAlarm {
        var alarm = alarm
        alarm.request.trigger.anchor = .epoch
        if alarm.request.trigger.said != nil { alarm.request.trigger.keepOnlyWhatWasSaid() }
        alarm.line = 0
        return alarm
    }

    /// Only an interval rule or a phrase counts from when it was read; any other rule's next fire
    /// does not depend on it, so such an alarm is stored normalized, from the same JSON as its
    /// definition.
    static func countsFromAnchor(_ request: NotificationRequest) -> Bool {
        if case .interval = request.trigger.rule { return true }
        return request.trigger.said != nil
    }
}

extension AlarmFileFollower: CalendarFollowing {
    func readAgain(reason: String, then: @escaping () -> Void) {
        reload(now: clock.now(), reason: reason) { _ in then() }
    }

    func isCalendarAlarm(_ identifier: String) -> Bool { known?[identifier]?.fromCalendar == true }

    var calendarAlarms: [String] { known.map { $0.filter(\.value.fromCalendar).map(\.key) } ?? [] }
}
