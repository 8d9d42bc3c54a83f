// The alarm file's follower applying what the reader sends: a step of frames in one transaction,
// each alarm compared with what the store holds and stored when new or changed (AlarmFileFollower.swift).
import ChimeCalendars
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

extension AlarmFileFollower {
    /// Applies the frames that arrived, in one store transaction, until the step's time is up; the
    /// queue follows once it commits.
    func applyStep(_ run: ReaderRun, until stepEnd: Instant) {
        run.ringing = Set(events.ringingNow())
        var requeued: [(identifier: String, next: Instant?, hasReminders: Bool)] = []
        // CHIME_TRACE: the slowest frame, and the commit, of a step that took long.
        let tracing = logger.logLevel <= .debug
        var slowest: (kind: String, took: Int64) = ("none", 0)
        var framesDone: Int64 = 0
        let started = tracing ? Sys.monotonicNanoseconds() : 0
        do throws(StoreError) {
            try store.write(.firing) { () throws(StoreError) in
                var count = 0
                var frameStart = started
                defer { if tracing { framesDone = Sys.monotonicNanoseconds() } }
                while run.broken == nil {
                    if count & 15 == 15, clock.now() >= stepEnd { break }
                    count += 1
                    let frame = run.stream.next()
                    defer {
                        if tracing {
                            let now = Sys.monotonicNanoseconds()
                            if now - frameStart > slowest.took { slowest = (Self.kind(frame), now - frameStart) }
                            frameStart = now
                        }
                    }
                    switch frame {
                    case .incomplete: return
                    case .malformed(let why): run.broken = why
                    case .frame(.stage, let payload):
                        guard let stage = ReaderStage(encoded: String(decoding: payload, as: UTF8.self)) else {
                            run.broken = "an unknown stage"
                            continue
                        }
                        run.stage = stage
                    case .frame(.summary, let payload):
                        guard run.summary == nil, let summary = try? JSONDecoder().decode(ReaderSummary.self, from: Data(payload)) else {
                            run.broken = "a summary it could not read"
                            continue
                        }
                        run.summary = summary
                        let room = min(summary.alarms, 1 << 20)
                        run.seen.reserveCapacity(room)
                        known?.reserveCapacity(room)
                        // The calendars it follows are watched too (a calendar server's sync rewrites them).
                        // EDS's calendars are followed from now.
                        if summary.diagnostics.isEmpty {
                            eds.configure(summary.eds ?? [], now: clock.now(), fresh: run.reason == "SIGHUP" || run.reason == "asked over D-Bus")
                        }
                        followedPaths = summary.followed
                        watchFollowed()
                    case .frame(.room, let payload):
                        guard run.summary != nil, let more = Int(String(decoding: payload, as: UTF8.self)), more >= 0 else {
                            run.broken = "a room frame it could not read"
                            continue
                        }
                        let room = min(run.seen.count + more, 1 << 20)
                        run.seen.reserveCapacity(room)
                        known?.reserveCapacity(room)
                        schedule.makeRoom(more)
                    case .frame(.calendars, let payload):
                        guard run.summary != nil, let calendars = try? JSONDecoder().decode(ReaderCalendars.self, from: Data(payload)) else {
                            run.broken = "calendar notes it could not read"
                            continue
                        }
                        run.summary?.notes += calendars.notes
                        run.summary?.unread += calendars.unread
                    case .frame(.record, let payload):
                        guard run.summary?.diagnostics.isEmpty == true, let record = FrameReader.record(payload) else {
                            run.broken = "a record it could not read"
                            continue
                        }
                        try apply(record, run, &requeued)
                    case .frame(.end, _):
                        run.sawEnd = true
                    }
                }
            }
        } catch {
            reported.problems = ["\(run.request.path): could not apply the file: \(error)"]
            logger.error("could not apply the alarm file: \(error)")
            run.broken = "\(error)"
        }
        if run.broken != nil { run.child?.kill() }
        let committed = tracing ? Sys.monotonicNanoseconds() : 0
        schedule.replaced(requeued)
        if tracing, Sys.monotonicNanoseconds() - started > 10_000_000 {
            logger.debug("""
                the alarm file's follower: slowest frame \(slowest.kind) \(slowest.took / 1_000) µs, commit \((committed - framesDone) / 1_000) µs, \
                requeueing \(requeued.count): \((Sys.monotonicNanoseconds() - committed) / 1_000) µs
                """)
        }
    }

    private static func kind(_ frame: FrameStream.Next) -> String {
        switch frame {
        case .frame(let kind, _): "\(kind)"
        case .incomplete: "incomplete"
        case .malformed: "malformed"
        }
    }

    /// Applies one alarm of the file (inside the step's transaction).
    private func apply(_ record: ReaderRecord, _ run: ReaderRun, _ requeued: inout [(identifier: String, next: Instant?, hasReminders: Bool)]) throws(StoreError) {
        var record = record
        let identifier = record.identifier
        guard run.seen.insert(identifier).inserted else { return }
        let before = known?[identifier]
        if run.part != nil, record.fromCalendar, let was = before?.source, was != record.source {
            // Another file gave this identifier (an event moved between files, a UID in two
            // calendars): only a whole reading says which wins.
            run.wantsWhole = true
            return
        }
        if record.fromCalendar, let base = Self.twinBase(identifier) {
            if run.part == nil { run.twinned.insert(base) } else { twinned.insert(base) }
        }
        if record.enabled { run.scheduled += 1 } else { run.disabled += 1 }
        // A part's counts are changes: what this alarm counted as before is taken off.
        if run.part != nil, let was = before?.enabled { if was { run.scheduled -= 1 } else { run.disabled -= 1 } }
        let digest = record.digest
        // One that rings here: what its calendar now says was answered (on another machine); one
        // answered here: whether its calendar says so (changed or not: a reading may have missed
        // the version with the answer). A few alarms: the rest are not decoded.
        if record.fromCalendar, run.ringing.contains(identifier) || calendars.answeredHere(identifier),
            let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(record.json.utf8))
        {
            let acknowledged = CalendarAnswers.of(request).acknowledged
            if let acknowledged, run.ringing.contains(identifier) { run.answeredElsewhere[identifier] = acknowledged }
            if calendars.answeredHere(identifier) { run.answersRead[identifier] = acknowledged ?? .earliest }
        }
        if before?.digest == digest {
            known?[identifier]?.source = record.source
            known?[identifier]?.enabled = record.enabled
            run.outcome.unchanged += 1
            return
        }
        // Whether anything is stored under its identifier: a command-line alarm (which keeps it), or
        // what a new request clears. Nothing, for most of a calendar's first reading.
        let presence = before == nil ? try schedule.presence(of: identifier) : (origin: AlarmOrigin.file, state: true)
        if presence.origin == .commandLine {
            run.conflicts.append("\(run.request.path):\(record.line): alarm '\(identifier)' is not scheduled: an alarm added from the command line has that id (chime cancel \(identifier), or give this one another id)")
            if record.enabled { run.scheduled -= 1 } else { run.disabled -= 1 }
            return
        }
        // An alarm the reader crashed on twice while computing its first fire is left out
        // (quarantined). It stays out until its definition changes: then it gets a fresh chance.
        // (Only those the reader was told to leave out can be: they are asked about, no other.)
        if run.request.noNext[identifier] != nil, try schedule.quarantinedFromFile(identifier, definition: record.definition) {
            run.conflicts.append("\(run.request.path):\(record.line): alarm '\(identifier)' is quarantined: the alarm file's reader crashed twice while scheduling it; it stays out until you change it")
            if record.enabled { run.scheduled -= 1 } else { run.disabled -= 1 }
            return
        }
        // What its calendar cannot carry, kept on this machine, laid over it.
        if record.fromCalendar, let kept = calendars.keptHere(identifier),
            let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(record.json.utf8))
        {
            record.json = RequestJSON.encode(KeptHere.laid(over: request, from: kept.request, settings: kept.settings))
        }
        // Disabled, or a one-off whose time has passed: nothing to schedule.
        let next = record.enabled ? record.next : nil
        try schedule.storeFromFile(record, next: next, fresh: presence.origin == nil && !presence.state)
        // Its digest, not its whole definition: the request is stored once, beside it.
        try store.setFileDefinition(identifier, DefinitionDigest.stored(digest, fromCalendar: record.fromCalendar))
        known?[identifier] = KnownFileAlarm(digest: digest, fromCalendar: record.fromCalendar, source: record.source, enabled: record.enabled)
        requeued.append((identifier, next, record.hasReminders))
        if before == nil { run.outcome.added += 1 } else { run.outcome.changed += 1 }
    }
}
