// The person's own calendars that chime writes to (`[[calendar]]` with `write = true`) and those it
// syncs: alarms put into them (`chime at --calendar`, the alarm file's `[[alarm]] calendar`),
// answers that travel in them (RFC 9074's acknowledgment, Thunderbird's snooze), alarms switched
// off and skipped there, and their syncs (`CalendarSync`).
//
// A part of the daemon, beside the alarm file's follower, which reads the calendars: this part
// writes them (each file whole or not at all), then asks the follower to read them again. It owns
// the syncs, the answers made here that their calendars do not say yet, and the store's
// `kept_here` and `placed_from_file` tables (its face: `OwnCalendarsStore`). It asks the schedule
// for an alarm's request and queued time, the follower (`CalendarFollowing`) to read the calendars
// again and which alarms came from them; the follower asks it (`CalendarWriting`) while it applies
// a reading. It tells (`events`) when the calendars it follows change and asks what rings.
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

/// What the calendars' writer asks of the follower that reads them.
protocol CalendarFollowing: AnyObject {
    /// Reads the calendars again (after a write), then `then`.
    func readAgain(reason: String, then: @escaping () -> Void)
    /// Whether alarm `identifier` came from a calendar, as the last reading said.
    func isCalendarAlarm(_ identifier: String) -> Bool
    /// The alarms that came from calendars (none before the first reading).
    var calendarAlarms: [String] { get }
}

/// What the follower asks of the calendars' writer while it applies a reading.
protocol CalendarWriting: AnyObject {
    /// Whether an answer to `identifier` made here waits for its calendar to say it.
    func answeredHere(_ identifier: String) -> Bool
    /// What its calendar cannot carry of an alarm this machine put there (`KeptHere`).
    func keptHere(_ identifier: String) -> (request: NotificationRequest, settings: [String])?
    /// A reading was applied: the calendars the file follows, what their events say was answered of
    /// the alarms answered here, and the file's alarms that live in calendars.
    func readingApplied(followed: [ReaderSummary.WireWritable], answersRead: [String: Instant], intoCalendars: [ReaderSummary.WireIntoCalendar])
    /// The syncs' notes for `chime config status`.
    var syncNotes: [String] { get }
}

final class OwnCalendars: LoopPart, CalendarWriting {
    let store: any OwnCalendarsStore
    let schedule: any CalendarsSchedule
    let clock: WallClock
    let logger: Logger
    /// The follower, which reads what this part writes (set by the daemon's wiring).
    weak var reading: (any CalendarFollowing)?
    /// The calendars chime writes to or syncs, as the alarm file's last reading said.
    private(set) var followed: [ReaderSummary.WireWritable] = []
    /// The calendars chime writes to.
    var writable: [ReaderSummary.WireWritable] { followed.filter(\.write) }
    /// The answers made here that their calendars do not say yet (in memory): written again when a
    /// sync brought back an older copy (a conflict the server's side won), until the calendar says
    /// them (or a later answer).
    private var answersMadeHere: [String: (content: NotificationContent, at: Instant, due: Instant, snoozedUntil: Instant?)] = [:]
    /// What calendars cannot carry of the alarms this machine put into them, by identifier (nil:
    /// not yet read from the store): laid over the calendar's alarm as it is applied.
    private var keptHereCache: [String: (request: NotificationRequest, settings: [String])]?
    struct Events {
        /// The alarms ringing now (a calendar's alarm ringing syncs its calendars every few seconds).
        var ringingNow: () -> [String] = { [] }
        /// A calendar's sync started or stopped failing.
        var syncFailingChanged: () -> Void = {}
    }
    var events = Events()
    /// The syncs of the calendars chime writes to.
    private(set) lazy var sync = CalendarSync(children: children, clock: clock, logger: logger, urgency: { [unowned self] now in
        syncUrgency(now: now, ringing: events.ringingNow())
    }, failingChanged: { [unowned self] in events.syncFailingChanged() })
    private let children: any ProgramRunner

    init(store: any OwnCalendarsStore, schedule: any CalendarsSchedule, children: any ProgramRunner, clock: WallClock, logger: Logger) {
        self.store = store
        self.schedule = schedule
        self.children = children
        self.clock = clock
        self.logger = logger
    }

    var deadline: Instant? { sync.deadline }

    func deadlineReached(now: Instant) { sync.due(now: now) }

    /// Reads the calendars again, then `then` (the follower, asked).
    private func reload(reason: String, then: @escaping () -> Void) {
        guard let reading else { return then() }
        reading.readAgain(reason: reason, then: then)
    }

    // MARK: What the follower asks

    func answeredHere(_ identifier: String) -> Bool { answersMadeHere[identifier] != nil }

    func keptHere(_ identifier: String) -> (request: NotificationRequest, settings: [String])? { keptHereNow()[identifier] }

    func readingApplied(followed: [ReaderSummary.WireWritable], answersRead: [String: Instant], intoCalendars: [ReaderSummary.WireIntoCalendar]) {
        self.followed = followed
        sync.configure(followed, now: clock.now())
        sync.recheck()
        reassertAnswers(answersRead)
        placeFileAlarms(intoCalendars)
    }

    var syncNotes: [String] { sync.notes }

    /// Why the sync of the calendar `name` fails (nil: it does not).
    func syncFailure(_ name: String) -> String? { sync.failure(name) }
}

// MARK: - Writing into the person's own calendars

extension OwnCalendars {
    /// Puts `incoming` into the calendar chime writes to that it names, as an event (one file, as a
    /// vdir holds events, written whole or not at all), and reads the calendars again, so the alarm
    /// is the calendar's as soon as `then` is told: its identifier and first time.
    func addToCalendar(_ incoming: IncomingRequest, then: @escaping (Result<(identifier: String, next: Instant), SchedulerError>) -> Void) {
        guard let name = incoming.calendar else { return then(.failure(.invalid(RequestError(.calendar, "names no calendar")))) }
        guard let calendar = writable.first(where: { $0.name == name }) else {
            let known = writable.map(\.name)
            let which = known.isEmpty ? "the alarm file has no [[calendar]] with write = true"
                : "the calendars chime writes to are " + known.map { "'\($0)'" }.joined(separator: ", ")
            return then(.failure(.invalid(RequestError(.calendar, "no calendar chime writes to is named \(quotedForMessage(name)); \(which)"))))
        }
        var request = incoming.request
        let now = clock.now()
        do throws(SchedulerError) {
            if !incoming.identifierGiven {
                do { request.identifier = try schedule.newIdentifier(for: request) } catch { throw .store(error) }
            } else if let origin = (try? schedule.origin(of: request.identifier)) ?? nil, origin == .commandLine {
                throw .invalid(RequestError(.id, "\(quotedForMessage(request.identifier)) is an alarm this machine keeps; give the calendar's alarm another id"))
            }
            guard let next = schedule.nextFire(request, after: now) else { throw .invalid(schedule.neverFires(request, after: now)) }
            try place(request, in: calendar, now: now)
            sync.soon(name)
            let identifier = request.identifier
            reload(reason: "chime wrote to the calendar \(name)") { then(.success((identifier, next))) }
        } catch {
            then(.failure(error))
        }
    }

    /// Writes `request` into `calendar` as its event (`disabled`: switched off there), and keeps
    /// here what the calendar cannot carry of it (`chime show` says so).
    func place(_ request: NotificationRequest, in calendar: ReaderSummary.WireWritable, now: Instant, disabled: Bool = false) throws(SchedulerError) {
        let path = try Self.write(request, into: calendar, now: now, disabled: disabled)
        logger.info("wrote \(path)", metadata: ["alarm.id": "\(request.identifier)", "calendar": "\(calendar.name)"])
        let kept = KeptHere.settings(of: request, now: now)
        do {
            try store.setKeptHere(request.identifier, request: kept.isEmpty ? nil : RequestJSON.encode(request), settings: kept.joined(separator: ","))
        } catch {
            throw .store(error)
        }
        var known = keptHereNow()
        known[request.identifier] = kept.isEmpty ? nil : (request, kept)
        keptHereCache = known
    }

    /// The file's alarms that live in calendars (`[[alarm]] calendar`): each put into its calendar
    /// when it is not there as the file says it now (the calendar's reading then gives the alarm);
    /// those this machine put there that the file no longer has are taken out again.
    func placeFileAlarms(_ alarms: [ReaderSummary.WireIntoCalendar]) {
        let placed = (try? store.placedFromFile()) ?? [:]
        guard !alarms.isEmpty || !placed.isEmpty else { return }
        let now = clock.now()
        for alarm in alarms {
            guard let calendar = writable.first(where: { $0.name == alarm.calendar }),
                let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(alarm.json.utf8))
            else { continue }
            let path = calendar.path + "/" + Self.fileName(uid: request.content.userInfo[CalendarImport.uidKey] ?? "\(request.identifier)@chime")
            if placed[alarm.identifier] == alarm.digest, (try? Sys.status(path)) != nil { continue }
            do throws(SchedulerError) {
                try place(request, in: calendar, now: now, disabled: !alarm.enabled)
                try? store.setPlacedFromFile(alarm.identifier, digest: alarm.digest)
                sync.soon(calendar.name)
            } catch {
                logger.error("the alarm file's '\(alarm.identifier)' could not be put into the calendar \(calendar.name): \(error)")
            }
        }
        let kept = Set(alarms.map(\.identifier))
        for (identifier, _) in placed where !kept.contains(identifier) {
            for calendar in writable {
                let path = calendar.path + "/" + Self.fileName(uid: "\(identifier)@chime")
                guard (try? Sys.status(path)) != nil else { continue }
                do {
                    try Sys.removeFile(path)
                    try Sys.syncDirectory(calendar.path)
                    logger.info("removed \(path): the alarm file no longer has it", metadata: ["alarm.id": "\(identifier)"])
                    sync.soon(calendar.name)
                } catch {
                    logger.error("cannot remove \(path): \(error.reason)")
                }
            }
            try? store.setPlacedFromFile(identifier, digest: nil)
        }
    }

    /// The event file of `request` in `calendar`: `UID.ics` (the UID's letters and digits, others
    /// as hex), written atomically. Answers its path.
    static func write(_ request: NotificationRequest, into calendar: ReaderSummary.WireWritable, now: Instant,
                      disabled: Bool = false) throws(SchedulerError) -> String {
        let uid = request.content.userInfo[CalendarImport.uidKey] ?? "\(request.identifier)@chime"
        let path = calendar.path + "/" + fileName(uid: uid)
        do {
            try Sys.makeDirectory(calendar.path)
            let bytes = Array(CalendarExport.calendar([request], now: now).utf8)
            let uidText = request.content.userInfo[CalendarImport.uidKey] ?? "\(request.identifier)@chime"
            try Sys.writeFileAtomically(path, disabled ? CalendarEdit.settingDisabled(bytes, uid: uidText, true) ?? bytes : bytes)
        } catch {
            throw .invalid(RequestError(.calendar, "cannot write \(path): \(error.reason)"))
        }
        return path
    }

    /// A file name for an event's UID: what is safe in a name as it is, the rest as two hex digits
    /// after `%`; a name longer than 150 bytes is its first 100 and a hash of the whole UID. The
    /// same name chime-eds gives an event of GNOME's calendars (chime-eds/Mirror.swift), so an
    /// answer finds its event's file at once, whatever the UID.
    static func fileName(uid: String) -> String {
        var name = ""
        for byte in uid.utf8 {
            let safe = (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x40
            if safe { name.append(Character(UnicodeScalar(byte))) } else { name += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
        }
        if name.hasPrefix(".") { name = "%2E" + name.dropFirst() }
        if name.utf8.count > 150 {
            // FNV-1a, 64 bits, in hex.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in uid.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            name = String(name.prefix(100)) + "-" + String(hash, radix: 16)
        }
        return name + ".ics"
    }
}

extension OwnCalendars {
    /// The event file a calendar alarm lives in, when it is in a calendar chime writes to: `UID.ics`
    /// as chime and vdirsyncer name one, else the file of that calendar that holds its UID.
    func calendarFile(of request: NotificationRequest) -> (calendar: ReaderSummary.WireWritable, path: String)? {
        calendarFile(of: request.content)
    }

    /// (Only an alarm a calendar chime writes to gave, which says which one: an alarm of any other
    /// calendar costs no look through the person's calendars.)
    func calendarFile(of content: NotificationContent) -> (calendar: ReaderSummary.WireWritable, path: String)? {
        guard let uid = content.userInfo[CalendarImport.uidKey], let name = content.userInfo[CalendarImport.calendarKey],
            let calendar = writable.first(where: { $0.name == name })
        else { return nil }
        func holds(_ path: String) -> Bool {
            guard let bytes = try? Sys.readFile(path, limit: HolidayCalendar.maximumFileSize) else { return false }
            return (try? ICalendar.Parser.parse(bytes: bytes))?.contains { $0.children("VEVENT").contains { $0.first("UID")?.text == uid } } ?? false
        }
        let named = calendar.path + "/" + Self.fileName(uid: uid)
        if holds(named) { return (calendar, named) }
        for entry in Sys.directoryEntries(calendar.path).prefix(AlarmConfig.maximumCalendarFiles) where entry.hasSuffix(".ics") && !entry.hasPrefix(".") {
            let path = calendar.path + "/" + entry
            if holds(path) { return (calendar, path) }
        }
        return nil
    }

    /// Cancels alarms of calendars chime writes to by removing their events (their files), and reads
    /// the calendars again; `then` gets those removed once they are gone from the pending list.
    func removeFromCalendars(_ requests: [NotificationRequest], then: @escaping (Result<[String], SchedulerError>) -> Void) {
        var removed: [String] = []
        for request in requests {
            guard let (calendar, path) = calendarFile(of: request) else { continue }
            do {
                try Sys.removeFile(path)
                try Sys.syncDirectory(calendar.path)
            } catch {
                return then(.failure(.invalid(RequestError(.id, "cannot remove \(path): \(error.reason)"))))
            }
            logger.info("removed \(path)", metadata: ["alarm.id": "\(request.identifier)", "calendar": "\(calendar.name)"])
            if keptHereNow()[request.identifier] != nil {
                try? store.setKeptHere(request.identifier, request: nil, settings: "")
                keptHereCache?[request.identifier] = nil
            }
            sync.soon(calendar.name)
            removed.append(request.identifier)
        }
        reload(reason: "chime removed events from its calendars") { then(.success(removed)) }
    }
}

// MARK: - Answers that travel

extension OwnCalendars {
    /// An alarm of a calendar chime writes to was answered here (Dismiss, its popup closed, Snooze):
    /// its event says so, as RFC 9074 and Thunderbird write it (`CalendarAnswers`), in a file
    /// written whole or not at all, synced at once, so the person's other machines stop ringing
    /// (and ring again at the snooze). An alarm of any other calendar, or of none, is left alone.
    func answered(_ identifier: String, content: NotificationContent, due: Instant, snoozedUntil: Instant?) {
        // To the second above: a ring at 07:00:00.4 answered at 07:00:00.6 is answered at 07:00:01.
        let at = Instant(seconds: (max(clock.now(), due) + TimeSpan(nanoseconds: 999_999_999)).seconds)
        write(identifier, content: content, answeredAt: at, due: due, snoozedUntil: snoozedUntil)
    }

    /// Writes an answer made here into the alarm's event (again, when a sync brought back a copy
    /// without it).
    private func write(_ identifier: String, content: NotificationContent, answeredAt at: Instant, due: Instant, snoozedUntil: Instant?) {
        guard let uid = content.userInfo[CalendarImport.uidKey], let (calendar, path) = calendarFile(of: content) else { return }
        answersMadeHere[identifier] = (content, at, due, snoozedUntil)
        // The occurrence's start, for Thunderbird's snooze of one occurrence of a repeating event.
        var occurrence = due
        if let request = schedule.load(identifier), request.trigger.offsets.count == 1 { occurrence = due - request.trigger.offsets[0] }
        do throws(SystemError) {
            let bytes = try Sys.readFile(path, limit: HolidayCalendar.maximumFileSize)
            guard bytes.count <= HolidayCalendar.maximumFileSize,
                let answered = CalendarAnswers.answering(bytes, uid: uid, at: at, snoozeUntil: snoozedUntil, occurrence: occurrence)
            else {
                logger.warning("cannot write the answer into \(path): it is too large or no longer holds the event", metadata: ["alarm.id": "\(identifier)"])
                return
            }
            try Sys.writeFileAtomically(path, answered)
        } catch {
            logger.warning("cannot write the answer into \(path): \(error.reason); the other machines keep ringing", metadata: ["alarm.id": "\(identifier)"])
            return
        }
        logger.info(snoozedUntil == nil ? "answered in its calendar" : "snoozed in its calendar", metadata: ["alarm.id": "\(identifier)", "calendar": "\(calendar.name)"])
        sync.soon(calendar.name)
        sync.recheck()
    }

    /// After a reading: an answer made here that its calendar does not say (a sync brought back an
    /// older copy) is written again; one the calendar says (or passed by a later one) is done. Those
    /// a day old are let go.
    /// (`said`: what the reading's events say was answered, of the alarms answered here that it
    /// changed; one it did not change still says what it said.)
    private func reassertAnswers(_ said: [String: Instant]) {
        let now = clock.now()
        for (identifier, answer) in answersMadeHere {
            if answer.at < now - .seconds(86_400) {
                answersMadeHere[identifier] = nil
                continue
            }
            guard let acknowledged = said[identifier] else { continue }
            if acknowledged >= answer.at {
                answersMadeHere[identifier] = nil
                continue
            }
            logger.info("its calendar came back without the answer made here; writing it again", metadata: ["alarm.id": "\(identifier)"])
            write(identifier, content: answer.content, answeredAt: answer.at, due: answer.due, snoozedUntil: answer.snoozedUntil.flatMap { $0 > now ? $0 : nil })
        }
    }

    /// What rings changed: a calendar's alarm ringing syncs its calendars every few seconds.
    func ringingChanged() { sync.recheck() }

    /// Whether the calendars' syncs are to be quick (`CalendarSync.urgency`): one of their alarms
    /// rings, or is due within a minute; else from a minute before the next is due. (Which
    /// calendar an alarm came from is not kept: all the synced calendars are quick then.)
    func syncUrgency(now: Instant, ringing: [String]) -> (quick: Bool, from: Instant?) {
        guard let reading else { return (false, nil) }
        if ringing.contains(where: reading.isCalendarAlarm) { return (true, nil) }
        var earliest: Instant?
        for identifier in reading.calendarAlarms {
            if let time = schedule.queuedTime(of: identifier) { earliest = min(earliest ?? time, time) }
        }
        guard let from = earliest.map({ $0 - CalendarSync.quickLead }) else { return (false, nil) }
        return (from <= now, from)
    }

    /// How long late occurrences wait at start and at resume for the calendars' syncs.
    static let syncWait = TimeSpan.seconds(10)

    /// Whether `identifier` is an alarm of a calendar, while some calendar has a sync command: its
    /// late occurrences wait for the syncs (`afterSyncing`).
    func waitsForSync(_ identifier: String) -> Bool {
        sync.isConfigured && reading?.isCalendarAlarm(identifier) == true
    }

    /// At start and at resume: every calendar syncs at once, and what the syncs brought is read,
    /// then `then` (at most `syncWait` later: a failing or hanging sync costs that, never an
    /// alarm), so an occurrence answered on another machine meanwhile does not ring late here.
    func afterSyncing(_ then: @escaping () -> Void) {
        guard sync.isConfigured else { return then() }
        let limit = clock.now() + Self.syncWait
        sync.syncAll(limit: limit) { [weak self] synced in
            guard let self, synced else {
                self?.logger.warning("the calendars' syncs did not end within \(Self.syncWait); late alarms ring from the local copy")
                return then()
            }
            self.reload(reason: "the calendars were synced") { then() }
        }
    }
}

// MARK: - Switching off and skipping, in the calendar

extension OwnCalendars {
    /// Where an alarm of a calendar chime writes to lives: its calendar, file and event UID.
    struct CalendarEvent {
        var identifier: String
        var calendar: ReaderSummary.WireWritable
        var path: String
        var uid: String
    }

    /// Where alarm `identifier` lives, when it is in a calendar chime writes to: found by its
    /// request, or (one switched off is not stored) among the calendars' events, by chime's
    /// identifier (X-CHIME-ID) or the one its UID gives.
    func calendarEvent(_ identifier: String) -> CalendarEvent? {
        guard !writable.isEmpty else { return nil }
        if let request = schedule.load(identifier) {
            guard (try? schedule.origin(of: identifier)) == .file, let uid = request.content.userInfo[CalendarImport.uidKey],
                let (calendar, path) = calendarFile(of: request.content)
            else { return nil }
            return CalendarEvent(identifier: identifier, calendar: calendar, path: path, uid: uid)
        }
        for calendar in writable {
            for entry in Sys.directoryEntries(calendar.path).prefix(AlarmConfig.maximumCalendarFiles) where entry.hasSuffix(".ics") && !entry.hasPrefix(".") {
                let path = calendar.path + "/" + entry
                guard let bytes = try? Sys.readFile(path, limit: HolidayCalendar.maximumFileSize), bytes.count <= HolidayCalendar.maximumFileSize,
                    let calendars = try? ICalendar.Parser.parse(bytes: bytes)
                else { continue }
                for item in calendars.flatMap({ $0.children("VEVENT") + $0.children("VTODO") }) where item.first("RECURRENCE-ID") == nil {
                    guard let uid = item.first("UID")?.text else { continue }
                    let named = item.first(CalendarImport.Own.id)?.text ?? CalendarImport.identifier(uid: uid, instance: nil)
                    if named == identifier { return CalendarEvent(identifier: identifier, calendar: calendar, path: path, uid: uid) }
                }
            }
        }
        return nil
    }

    /// Changes the events with `edit` (each file written whole or not at all; an edit that finds
    /// nothing to change is an error), syncs their calendars, and reads the calendars again: then
    /// `then` is told, with the pending list as the calendars now say.
    func editEvents(_ events: [CalendarEvent], reason: String, _ edit: (CalendarEvent, [UInt8]) -> [UInt8]?,
                    then: @escaping (Result<Void, SchedulerError>) -> Void) {
        for event in events {
            do throws(SystemError) {
                let bytes = try Sys.readFile(event.path, limit: HolidayCalendar.maximumFileSize)
                guard bytes.count <= HolidayCalendar.maximumFileSize, let changed = edit(event, bytes) else {
                    return then(.failure(.invalid(RequestError(.id, "\(quotedForMessage(event.identifier)): its event in \(event.path) could not be changed"))))
                }
                try Sys.writeFileAtomically(event.path, changed)
            } catch {
                return then(.failure(.invalid(RequestError(.id, "cannot write \(event.path): \(error.reason)"))))
            }
            logger.info("\(reason) in its calendar", metadata: ["alarm.id": "\(event.identifier)", "calendar": "\(event.calendar.name)"])
            sync.soon(event.calendar.name)
        }
        reload(reason: "chime changed events of its calendars") { then(.success(())) }
    }

    /// Switches alarms of the calendars off (or on) in their events (`X-CHIME-DISABLED`), for every
    /// machine that follows the calendar.
    func setEnabled(_ events: [CalendarEvent], _ on: Bool, then: @escaping (Result<Void, SchedulerError>) -> Void) {
        editEvents(events, reason: on ? "switched on" : "switched off", { event, bytes in
            CalendarEdit.settingDisabled(bytes, uid: event.uid, !on)
        }, then: then)
    }

    /// The offset from an occurrence's start to when its alarm fires (one offset: else none).
    func offset(of identifier: String) -> TimeSpan {
        guard let request = schedule.load(identifier), request.trigger.offsets.count == 1 else { return .zero }
        return request.trigger.offsets[0]
    }

    /// Skips the occurrence of a calendar's alarm that fires at `occurrence` (an EXDATE of its
    /// event's occurrence, gone on every machine and in every calendar program), or brings it back.
    func skip(_ event: CalendarEvent, occurrence: Instant, undo: Bool, then: @escaping (Result<Void, SchedulerError>) -> Void) {
        let start = occurrence - offset(of: event.identifier)
        editEvents([event], reason: undo ? "skip undone" : "skipped \(Zone.system().iso8601(occurrence))", { event, bytes in
            CalendarEdit.skipping(bytes, uid: event.uid, start: start, undo: undo)
        }, then: then)
    }

    /// The latest occurrence ahead of `now` that the event excludes (for `chime skip --undo`), as
    /// its alarm would fire.
    func skippedAhead(_ event: CalendarEvent, now: Instant) -> Instant? {
        guard let bytes = try? Sys.readFile(event.path, limit: HolidayCalendar.maximumFileSize),
            let calendars = try? ICalendar.Parser.parse(bytes: bytes)
        else { return nil }
        // (Typed step by step: as one expression it took the type checker 2.3 s.)
        let items: [ICalendar.Component] = calendars.flatMap { (calendar: ICalendar.Component) -> [ICalendar.Component] in
            calendar.children("VEVENT") + calendar.children("VTODO")
        }
        guard let item = items.first(where: { $0.first("UID")?.text == event.uid && $0.first("RECURRENCE-ID") == nil }) else { return nil }
        let offset = offset(of: event.identifier)
        let times = item.all("EXDATE").flatMap { property -> [Instant] in
            property.value.split(separator: ",").compactMap { value in
                var line = ContentLine(name: "DTSTART", value: String(value))
                if let tzid = property.parameters["TZID"] { line.parameters["TZID"] = tzid }
                if let kind = property.parameters["VALUE"] { line.parameters["VALUE"] = kind }
                return (try? Recurrence(lines: [line])).map { Instant(seconds: $0.startInstant(floatingZone: Zone.system())) + offset }
            }
        }
        return times.filter { $0 > now }.max()
    }
}

extension OwnCalendars {
    /// What calendars cannot carry of this machine's alarms in them, read from the store once.
    func keptHereNow() -> [String: (request: NotificationRequest, settings: [String])] {
        if let keptHereCache { return keptHereCache }
        var read: [String: (request: NotificationRequest, settings: [String])] = [:]
        for (identifier, kept) in (try? store.keptHere()) ?? [:] {
            guard let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(kept.request.utf8)) else { continue }
            read[identifier] = (request, kept.settings.split(separator: ",").map(String.init))
        }
        keptHereCache = read
        return read
    }
}
