// What the D-Bus service may ask of the daemon's parts: the one interface between the daemon's
// face and its insides. The service holds a `SchedulerParts`, never the daemon or a part, so what
// a caller on the bus can reach is this list and nothing else. `DaemonParts` answers each question
// by asking the part that owns the answer; the status and the settings are reports drawn from
// several parts, gathered here once each part has its answer.
import ChimeCenter
import ChimeConfig
import Notifications
import Sound
import Timekeeping

protocol SchedulerParts: AnyObject {
    func now() -> Instant

    // MARK: The alarms (the schedule)
    func add(_ request: IncomingRequest) throws(SchedulerError) -> (identifier: String, next: Instant)
    /// Of these alarms, those that live in calendars chime writes to.
    func calendarAlarms(_ identifiers: [String]) -> [NotificationRequest]
    /// Removes alarms from the calendars they live in: answered once they are gone.
    func removeFromCalendars(_ requests: [NotificationRequest], then: @escaping (Result<[String], SchedulerError>) -> Void)
    /// Adds into a calendar chime writes to: answered once written and read back.
    func addToCalendar(_ request: IncomingRequest, then: @escaping (Result<(identifier: String, next: Instant), SchedulerError>) -> Void)
    func addAll(_ requests: [IncomingRequest]) throws(SchedulerError) -> [(identifier: String, next: Instant)]
    func remove(_ identifiers: [String]) throws(SchedulerError) -> [String]
    func removeAll() throws(SchedulerError) -> [String]
    func disable(_ identifiers: [String]) throws(SchedulerError) -> [String]
    /// Switches alarms off (or on) where some live in calendars chime writes to: in their events, for
    /// every machine (the rest here first); answered once read back. false: none lives in one.
    func setEnabledInCalendars(_ identifiers: [String], _ on: Bool,
                               then: @escaping (Result<[(identifier: String, next: Instant?)], SchedulerError>) -> Void) -> Bool
    /// Skips (or brings back) an occurrence of an alarm that lives in a calendar chime writes to, in
    /// its event; answered once read back. false: it lives in none.
    func skipInCalendar(_ identifier: String, undo: Bool, then: @escaping (Result<(changed: Instant, next: Instant?), SchedulerError>) -> Void) -> Bool
    func enable(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)]
    func skip(_ identifier: String, undo: Bool) throws(SchedulerError) -> (changed: Instant, next: Instant?)
    func pause(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)]
    func resume(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)]
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)]
    /// What days off and time away do to an alarm's occurrences of the next year.
    func occurrencesOff(_ identifier: String) throws(SchedulerError) -> [(original: Instant, fate: OccurrenceFate)]
    /// Time away, and whether the alarm file set it.
    var away: [(stretch: DaysOff.Away, fromFile: Bool)] { get }
    func setAway(_ stretch: DaysOff.Away) throws(SchedulerError)
    func endAway(_ identifiers: [String]) throws(SchedulerError) -> [DaysOff.Away]
    /// One alarm as stored (nil: not pending).
    func stored(_ identifier: String) throws(StoreError) -> LoadedRequest?
    /// Every pending alarm, one at a time as read (a listing is never held whole).
    func forEachPending(_ body: (PendingSummary) throws -> Void) throws
    func missed() throws(StoreError) -> [MissedOccurrence]
    /// The alarms with a skipped occurrence ahead, each with the earliest.
    func skippedAhead() throws(StoreError) -> [(identifier: String, occurrence: Instant)]

    // MARK: Popups (the presenter, the ledger, ringing)
    func answer(_ identifier: String, action: String) throws(SchedulerError)
    /// Snoozes a delivered alarm for `span` (not its own snooze time).
    func snooze(_ identifier: String, for span: TimeSpan) throws(SchedulerError)
    func close(_ identifiers: [String]) throws(SchedulerError)
    /// The delivered alarms, once the ledger knows what it can of popups shown before a restart.
    func delivered(_ reply: @escaping (Result<[DeliveredSummary], StoreError>) -> Void)
    var ringing: [(identifier: String, due: Instant, until: Instant, title: String)] { get }

    // MARK: Sounds (the speaker)
    /// Runs `body` once it is known how sounds are played.
    func whenSoundSettled(_ body: @escaping () -> Void)
    func preview(_ sound: Sound, volume: Int, fade: TimeSpan, for duration: TimeSpan?) throws(PreviewError)
        -> (play: Int, length: TimeSpan, way: String)
    func stopPreview(_ play: Int)

    // MARK: The alarm file
    var alarmFilePath: String? { get }
    var timerPresets: [TimerPreset] { get }
    /// The calendars chime writes to or syncs, which `chime at` puts alarms into unless told
    /// otherwise, and why a sync fails ("").
    var calendars: [(name: String, write: Bool, syncs: Bool, isDefault: Bool, failing: String)] { get }
    /// The alarm file's `[defaults] calendar`.
    var defaultCalendar: String? { get }
    var alarmFileStatus: AlarmFileStatus { get }
    func reloadAlarmFile(reason: String, then: @escaping (AlarmFileStatus) -> Void)

    // MARK: Reports from several parts, answered in the loop once each part has its answer
    func status(_ reply: @escaping (Result<DaemonStatus, StoreError>) -> Void)
    func settings(_ reply: @escaping (NotificationSettings) -> Void)
}

/// The daemon's parts as the service may ask them.
final class DaemonParts: SchedulerParts {
    private let clock: WallClock
    private let listing: any ListingStore
    private let schedule: Schedule
    private let presenter: Presenter
    private let ledger: PopupLedger
    private let ringingPart: Ringing
    private let speaker: Speaker
    private let session: ServerSession
    private let doNotDisturb: DoNotDisturb
    private let waking: Waking
    private let sleep: SleepFollower?
    private let alarmFile: AlarmFileFollower
    private let ownCalendars: OwnCalendars

    init(clock: WallClock, listing: any ListingStore, schedule: Schedule, presenter: Presenter, ledger: PopupLedger, ringing: Ringing,
         speaker: Speaker, session: ServerSession, doNotDisturb: DoNotDisturb, waking: Waking, sleep: SleepFollower?,
         alarmFile: AlarmFileFollower, ownCalendars: OwnCalendars) {
        self.clock = clock
        self.listing = listing
        self.schedule = schedule
        self.presenter = presenter
        self.ledger = ledger
        self.ringingPart = ringing
        self.speaker = speaker
        self.session = session
        self.doNotDisturb = doNotDisturb
        self.waking = waking
        self.sleep = sleep
        self.alarmFile = alarmFile
        self.ownCalendars = ownCalendars
    }

    func now() -> Instant { clock.now() }

    func add(_ request: IncomingRequest) throws(SchedulerError) -> (identifier: String, next: Instant) { try schedule.add(request) }
    func addToCalendar(_ request: IncomingRequest, then: @escaping (Result<(identifier: String, next: Instant), SchedulerError>) -> Void) {
        ownCalendars.addToCalendar(request, then: then)
    }
    func calendarAlarms(_ identifiers: [String]) -> [NotificationRequest] {
        guard !ownCalendars.writable.isEmpty else { return [] }
        return identifiers.compactMap { id in
            guard (try? schedule.origin(of: id)) == .file, let request = schedule.load(id), ownCalendars.calendarFile(of: request) != nil else { return nil }
            return request
        }
    }
    func removeFromCalendars(_ requests: [NotificationRequest], then: @escaping (Result<[String], SchedulerError>) -> Void) {
        ownCalendars.removeFromCalendars(requests, then: then)
    }
    func addAll(_ requests: [IncomingRequest]) throws(SchedulerError) -> [(identifier: String, next: Instant)] { try schedule.addAll(requests) }
    func remove(_ identifiers: [String]) throws(SchedulerError) -> [String] { try schedule.remove(identifiers) }
    func removeAll() throws(SchedulerError) -> [String] { try schedule.removeAll() }
    func disable(_ identifiers: [String]) throws(SchedulerError) -> [String] { try schedule.disable(identifiers) }
    func enable(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] { try schedule.enable(identifiers) }
    func setEnabledInCalendars(_ identifiers: [String], _ on: Bool,
                               then: @escaping (Result<[(identifier: String, next: Instant?)], SchedulerError>) -> Void) -> Bool {
        let events = identifiers.compactMap(ownCalendars.calendarEvent)
        guard !events.isEmpty else { return false }
        let rest = identifiers.filter { id in !events.contains { $0.identifier == id } }
        // The others first: a refusal among them leaves every calendar as it was.
        var done: [(identifier: String, next: Instant?)]
        do throws(SchedulerError) {
            done = on ? try schedule.enable(rest).map { ($0.identifier, $0.next) } : try schedule.disable(rest).map { ($0, nil) }
        } catch {
            then(.failure(error))
            return true
        }
        ownCalendars.setEnabled(events, on) { [schedule] result in
            if case .failure(let error) = result { return then(.failure(error)) }
            for event in events { done.append((event.identifier, on ? ((try? schedule.scheduledTime(of: event.identifier)) ?? nil)?.nextFire : nil)) }
            then(.success(done))
        }
        return true
    }
    func skipInCalendar(_ identifier: String, undo: Bool, then: @escaping (Result<(changed: Instant, next: Instant?), SchedulerError>) -> Void) -> Bool {
        guard let event = ownCalendars.calendarEvent(identifier) else { return false }
        let now = clock.now()
        guard let request = schedule.load(identifier) else {
            then(.failure(.invalid(RequestError(.id, "\(quotedForMessage(identifier)) is switched off; chime enable \(identifier) first"))))
            return true
        }
        let occurrence: Instant
        if undo {
            guard let back = ownCalendars.skippedAhead(event, now: now) else {
                then(.failure(.invalid(RequestError(.skipped, "\(quotedForMessage(identifier)) has no skipped occurrence ahead to bring back"))))
                return true
            }
            occurrence = back
        } else {
            guard let next = schedule.nextFire(request, after: now) else {
                then(.failure(.invalid(RequestError(.rule, "\(quotedForMessage(identifier)) has no occurrence ahead to skip", kind: .neverFires))))
                return true
            }
            guard schedule.nextFire(request, after: next) != nil else {
                then(.failure(.invalid(RequestError(.rule, "that is the last occurrence \(quotedForMessage(identifier)) has; chime cancel \(identifier) removes it",
                                                    kind: .neverFires))))
                return true
            }
            occurrence = next
        }
        ownCalendars.skip(event, occurrence: occurrence, undo: undo) { [schedule] result in
            switch result {
            case .success: then(.success((occurrence, ((try? schedule.scheduledTime(of: identifier)) ?? nil)?.nextFire)))
            case .failure(let error): then(.failure(error))
            }
        }
        return true
    }
    func skip(_ identifier: String, undo: Bool) throws(SchedulerError) -> (changed: Instant, next: Instant?) {
        try schedule.skip(identifier, undo: undo)
    }
    func pause(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)] { try schedule.pause(identifiers) }
    func resume(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] { try schedule.resume(identifiers) }
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)] { try schedule.pausedTimers() }
    func occurrencesOff(_ identifier: String) throws(SchedulerError) -> [(original: Instant, fate: OccurrenceFate)] {
        try schedule.occurrencesOff(identifier)
    }
    var away: [(stretch: DaysOff.Away, fromFile: Bool)] { schedule.away }
    func setAway(_ stretch: DaysOff.Away) throws(SchedulerError) { try schedule.setAway(stretch) }
    func endAway(_ identifiers: [String]) throws(SchedulerError) -> [DaysOff.Away] { try schedule.endAway(identifiers) }
    func stored(_ identifier: String) throws(StoreError) -> LoadedRequest? { try schedule.stored(identifier) }
    func forEachPending(_ body: (PendingSummary) throws -> Void) throws { try listing.forEachPendingSummary(body) }
    func missed() throws(StoreError) -> [MissedOccurrence] { try listing.missedOccurrences() }
    func skippedAhead() throws(StoreError) -> [(identifier: String, occurrence: Instant)] { try listing.skippedAhead(of: clock.now()) }

    func answer(_ identifier: String, action: String) throws(SchedulerError) { try presenter.answer(identifier, action: action) }
    func snooze(_ identifier: String, for span: TimeSpan) throws(SchedulerError) { try presenter.snooze(identifier, for: span) }
    func close(_ identifiers: [String]) throws(SchedulerError) { try presenter.close(identifiers) }
    func delivered(_ reply: @escaping (Result<[DeliveredSummary], StoreError>) -> Void) { ledger.list(reply) }
    var ringing: [(identifier: String, due: Instant, until: Instant, title: String)] { ringingPart.current }

    func whenSoundSettled(_ body: @escaping () -> Void) { speaker.whenSettled(body) }
    func preview(_ sound: Sound, volume: Int, fade: TimeSpan, for duration: TimeSpan?) throws(PreviewError)
        -> (play: Int, length: TimeSpan, way: String) {
        let started = try speaker.preview(sound, volume: volume, fade: fade, for: duration)
        return (started.play, started.length, speaker.previewWay)
    }
    func stopPreview(_ play: Int) { speaker.stopPreview(play) }

    var alarmFilePath: String? { alarmFile.path }
    var timerPresets: [TimerPreset] { alarmFile.timerPresets }
    var calendars: [(name: String, write: Bool, syncs: Bool, isDefault: Bool, failing: String)] {
        alarmFile.followed.map {
            ($0.name, $0.write, $0.sync != nil || $0.eds != nil, $0.write && $0.name == alarmFile.defaultCalendar,
             ($0.eds != nil ? alarmFile.eds.failure(folder: $0.path) : ownCalendars.syncFailure($0.name)) ?? "")
        }
    }
    var defaultCalendar: String? { alarmFile.defaultCalendar }
    var alarmFileStatus: AlarmFileStatus { alarmFile.status }
    /// Reads the alarm file again; `then` gets its status once that reading is over.
    func reloadAlarmFile(reason: String, then: @escaping (AlarmFileStatus) -> Void) {
        alarmFile.reload(now: clock.now(), reason: reason, then: then)
    }

    /// Once the way to wake is known (systemd's user manager may still be asked), how sounds are
    /// played is settled, and do-not-disturb was read afresh (within its own deadline).
    func status(_ reply: @escaping (Result<DaemonStatus, StoreError>) -> Void) {
        waking.whenMethodKnown { [weak self] in
            self?.speaker.whenSettled {
                self?.doNotDisturb.refresh { state in
                    guard let self else { return }
                    reply(Result { () throws(StoreError) in
                        DaemonStatus(version: SchedulerInterface.version, pending: self.listing.pendingCount,
                                     quarantined: try self.listing.quarantined(), store: self.listing.path,
                                     storeWarnings: self.listing.warnings, sleep: SleepFollower.status(self.sleep),
                                     wake: self.waking.status, wakeMethod: self.waking.method?.name ?? "none",
                                     stayAwake: self.waking.stayAwakeStatus,
                                     doNotDisturb: self.doNotDisturb.statusText(state, deferred: self.presenter.deferredCount),
                                     sound: self.speaker.statusText)
                    })
                }
            }
        }
    }

    /// Once the server has said what it can do and who it is (or failed to, or none runs), with
    /// its do-not-disturb read afresh: never by waiting on it here.
    func settings(_ reply: @escaping (NotificationSettings) -> Void) {
        session.ask()
        session.whenAnswered { [weak self] in
            guard let self else { return }
            guard session.present else { return reply(NotificationSettings(deniedBecause: NoNotificationServerError.message)) }
            guard let capabilities = session.capabilities, let information = session.information else {
                return reply(NotificationSettings(deniedBecause: session.failure ?? "the notification server did not answer"))
            }
            speaker.whenSettled { [weak self] in
                guard let self else { return }
                var settings = NotificationSettings(capabilities: capabilities, server: information, player: speaker.player)
                if let name = speaker.soundServerName { settings.sound = .soundServer(name) }
                guard settings.isAuthorized else { return reply(settings) }
                doNotDisturb.refresh { state in
                    settings.doNotDisturb = state.on
                    settings.doNotDisturbSource = state.description
                    reply(settings)
                }
            }
        }
    }
}
