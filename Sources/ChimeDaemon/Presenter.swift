// Presentation: an occurrence on its way to the screen. Held while no server runs (or while
// do-not-disturb defers it), its body command run first, sent to the server as a pending call,
// recorded, retried when the server fails, its popup closed past its expiry; and what the server
// tells us back (closed, Snooze, Dismiss), a ring that ran out, and answers from the app. It owns
// the calls in flight, the held, deferred and retried occurrences, the body commands running, the
// close deadlines, and the store's `held` and `retrying` tables (its face: `PresenterStore`).
//
// What it asks of the others: the schedule (firing on the record, loading a request, moving it on,
// finishing a one-off, snoozing), the session (is a server there, its capabilities), do-not-disturb
// (its reading), the children (body commands), ringing (start, stop, ring out), waking (keep
// awake, release), the ledger (what shows; a popup shown or closed). What others may ask of it:
// `deliver`, `remind`, `restore`, `isInFlight`, `isDetached`, `forget`, `serverOwnerChanged`,
// `holdAwaitingCapabilities`, `capabilitiesKnown`, `capabilitiesFailed`, `doNotDisturbRead`,
// `handle` (the server's signals), `ringRanOut`, `closedMeanwhile`, `answer`, `close`,
// `deferredCount`.
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

final class Presenter: LoopPart {
    private let store: any PresenterStore
    let schedule: any PresenterSchedule
    /// The notification server (the session; the simulator's server).
    let session: any ServerFace
    let doNotDisturb: any DoNotDisturbFace
    let children: any ProgramStarter
    let ringing: any RingingFace
    let waking: any AwakeFace
    let ledger: any PresenterLedger
    let signals: SchedulerSignals
    let clock: WallClock
    let logger: Logger

    /// Occurrences due while no server was there (or deferred), shown when one appears.
    private var waiting: [(identifier: String, due: Instant)] = []
    /// Occurrences whose body command runs, by the command's process id.
    private var preparing: [pid_t: Occurrence] = [:]
    /// Notifications chime closes itself when their expiry passes (servers may ignore it).
    private var closeDeadlines: [(time: Instant, identifier: String, serverID: UInt32)] = []
    /// Alarms held until do-not-disturb ends (`--dnd defer`); they wait with the held ones.
    private var deferred: Set<String> = []
    /// Notify calls waiting for the server's answer.
    private var presenting: [Presentation] = []
    /// Occurrences waiting for the server's capabilities before they can be rendered.
    private var awaitingCapabilities: [(Occurrence, NotificationContent)] = []
    /// Occurrences the server failed to show, to be tried again (the `retrying` table, in memory).
    private var retries: [Retry] = []
    /// How long after its expiry chime closes a popup the server left up.
    static let closeSlack = TimeSpan.milliseconds(500)

    /// What presenting tells the other parts (wired by the daemon).
    struct Events {
        /// An alarm was answered here (Dismiss, its popup closed by the person, or Snooze until a
        /// time): its occurrence, and the snooze.
        var answered: (_ identifier: String, _ content: NotificationContent, _ due: Instant, _ snoozedUntil: Instant?) -> Void = { _, _, _, _ in }
        /// Skips (or brings back) an occurrence of an alarm that lives in a calendar chime writes
        /// to, in its event, and tells `then`; false: it lives in none (the schedule skips it).
        var skipInCalendar: (_ identifier: String, _ occurrence: Instant, _ undo: Bool,
                             _ then: @escaping (Result<Void, SchedulerError>) -> Void) -> Bool = { _, _, _, _ in false }
        /// A reminder or the notice before an alarm was shown (a phone vibrates once).
        var reminderShown: (_ insist: Bool) -> Void = { _ in }
    }
    var events = Events()

    init(store: any PresenterStore, schedule: any PresenterSchedule, session: any ServerFace, doNotDisturb: any DoNotDisturbFace,
         children: any ProgramStarter, ringing: any RingingFace, waking: any AwakeFace, ledger: any PresenterLedger, signals: SchedulerSignals, clock: WallClock, logger: Logger) {
        self.store = store
        self.schedule = schedule
        self.session = session
        self.doNotDisturb = doNotDisturb
        self.children = children
        self.ringing = ringing
        self.waking = waking
        self.ledger = ledger
        self.signals = signals
        self.clock = clock
        self.logger = logger
    }

    // MARK: - The loop

    /// The earliest of: a call to give up on, a retry, a popup to close.
    var deadline: Instant? {
        var earliest: Instant?
        func consider(_ time: Instant) { earliest = min(earliest ?? time, time) }
        for presentation in presenting { consider(presentation.deadline) }
        for retry in retries { consider(retry.nextTry) }
        for entry in closeDeadlines { consider(entry.time) }
        return earliest
    }

    func deadlineReached(now: Instant) {
        expireCalls(now: now)
        retryDue(now: clock.now())
        closeExpired()
    }

    // MARK: - What the others ask

    /// How many alarms wait for do-not-disturb to end.
    var deferredCount: Int { deferred.count }

    /// At start: the occurrences held for a server, or waiting to be tried again, when the daemon
    /// stopped (its own tables).
    func restore() throws(StoreError) {
        let held = try store.held()
        for (identifier, due) in held where !waiting.contains(where: { $0 == (identifier, due) }) { waiting.append((identifier, due)) }
        retries = try store.retrying()
        if session.present, !waiting.isEmpty { showHeld() }
    }

    /// Whether an occurrence of `identifier` is held for a server or waiting to be retried (the
    /// schedule keeps a one-off pending until it is shown).
    func isDetached(_ identifier: String) throws(StoreError) -> Bool { try store.isDetached(identifier) }

    /// Whether this occurrence is being shown now: its body command runs, it waits for the
    /// server's capabilities, or its Notify is unanswered.
    func isInFlight(_ identifier: String, due: Instant) -> Bool {
        func same(_ occurrence: Occurrence) -> Bool { occurrence.request.identifier == identifier && occurrence.due == due }
        return presenting.contains { same($0.occurrence) } || preparing.values.contains { same($0) }
            || awaitingCapabilities.contains { same($0.0) }
    }

    /// Whether this occurrence is the presenter's: on its way (`isInFlight`), held for a server,
    /// or waiting to be tried again.
    func has(_ identifier: String, due: Instant) -> Bool {
        isInFlight(identifier, due: due) || waiting.contains { $0 == (identifier, due) }
            || retries.contains { $0.identifier == identifier && $0.due == due }
    }

    /// These alarms were replaced or cancelled: their held and retried occurrences go (the store's
    /// rows went with the alarm), and a cancelled one stops ringing.
    func forget(_ identifiers: [String], removed: Bool) {
        let gone = Set(identifiers)
        waiting.removeAll { gone.contains($0.identifier) }
        retries.removeAll { gone.contains($0.identifier) }
        guard removed else { return }
        awaitingCapabilities.removeAll { gone.contains($0.0.request.identifier) }
        // A popup already asked for comes down as soon as the server says which it is.
        for presentation in presenting where gone.contains(presentation.occurrence.request.identifier) { presentation.cancelled = true }
        for id in identifiers {
            ringing.stop(id, because: "it was cancelled")
            deferred.remove(id)
        }
    }

    /// The server said what it can do: what waited for it is shown.
    func capabilitiesKnown(_ known: [Capability]) {
        let ready = awaitingCapabilities
        awaitingCapabilities.removeAll()
        for (occurrence, content) in ready {
            schedule.firing(occurrence.request.identifier) { present(occurrence, content: content, capabilities: known) }
        }
    }

    /// The server could not say what it can do: what waited for it failed (and is retried).
    func capabilitiesFailed(_ reason: String) {
        let ready = awaitingCapabilities
        awaitingCapabilities.removeAll()
        for (occurrence, content) in ready {
            schedule.firing(occurrence.request.identifier) { failed(occurrence, content: content, reason: reason) }
        }
    }

    /// Do-not-disturb was read: deferred alarms are shown once it has ended.
    func doNotDisturbRead(_ state: DoNotDisturbState) {
        if state.on != true, !deferred.isEmpty {
            deferred.removeAll()
            if !waiting.isEmpty { showHeld() }
        }
    }

    /// One occurrence on its way to the screen.
    struct Occurrence {
        var request: NotificationRequest
        var due: Instant
        var timeliness: Timeliness
        /// Where it waits when it is not shown at once.
        var detached: Detached
    }

    /// Where an occurrence lives until it is shown: nowhere else (the request still points at it),
    /// held for a server, or waiting to be tried again. A detached occurrence's request has already
    /// moved on to its next time.
    enum Detached: Equatable {
        case no
        case held
        case retrying(attempt: Int)
    }

    /// A Notify on its way: the call, what it shows, and when the daemon stops waiting for it.
    final class Presentation {
        let call: any NotifyCall
        var occurrence: Occurrence
        let content: NotificationContent
        let deadline: Instant
        let capabilities: [Capability]
        /// Sent again with an invisible change, after the server refused it as a duplicate.
        let varied: Bool
        /// Its alarm was cancelled while the server had not answered: its popup is taken down.
        var cancelled = false

        init(call: any NotifyCall, occurrence: Occurrence, content: NotificationContent, deadline: Instant, capabilities: [Capability],
             varied: Bool) {
            self.call = call
            self.occurrence = occurrence
            self.content = content
            self.deadline = deadline
            self.capabilities = capabilities
            self.varied = varied
        }
    }

    /// The first wait before a failed occurrence is tried again; it doubles up to `lastRetryWait`.
    static let firstRetryWait = TimeSpan.seconds(1)
    static let lastRetryWait = TimeSpan.seconds(60)

    /// Shows one occurrence: holds it while no server runs, runs its body command first if it has one.
    func deliver(_ request: NotificationRequest, due: Instant, timeliness: Timeliness, now: Instant, detached: Detached = .no) {
        let identifier = request.identifier
        let occurrence = Occurrence(request: request, due: due, timeliness: timeliness, detached: detached)
        if !session.present {
            logger.warning("no notification server; holding the alarm until one appears", metadata: ["alarm.id": "\(identifier)"])
            hold(occurrence, now: now)
            return
        }
        var content = request.content
        switch content.doNotDisturbAction(doNotDisturb.current) {
        case nil: break
        case .show(let urgency)?:
            logger.info("do-not-disturb is on; the alarm breaks through as \(urgency.name)", metadata: ["alarm.id": "\(identifier)"])
            content.urgency = urgency
        case .hold?:
            logger.info("do-not-disturb is on; the alarm waits until it ends", metadata: ["alarm.id": "\(identifier)"])
            deferred.insert(identifier)
            hold(occurrence, now: now)
            return
        case .silence?:
            logger.info("do-not-disturb is on; the alarm is recorded without a popup", metadata: ["alarm.id": "\(identifier)"])
            shown(occurrence, content: content, serverID: 0, server: "", capabilities: [], silent: true)
            return
        }
        switch timeliness {
        case .onTime: break
        case .late: content.subtitle = Self.joined(tr("Late: due at %s", clockText(due, in: request.trigger.zone)), content.subtitle)
        case .missed: content.subtitle = Self.joined(tr("Missed at %s", clockText(due, in: request.trigger.zone)), content.subtitle)
        }
        if let command = content.bodyCommand {
            do throws(SpawnError) {
                let pid = try children.start(command.arguments, captureOutput: true, outputLimit: command.outputLimit,
                                             timeLimit: command.timeLimit) { [unowned self] child in
                    preparing[child.pid] = nil
                    schedule.firing(identifier) { bodyCommandFinished(child, occurrence, content) }
                }
                preparing[pid] = occurrence
                return  // shown when the command finishes
            } catch {
                logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
                content.body = Self.withNote(content.body, tr("body command could not start: %s", error.reason.lowercased()))
            }
        }
        show(occurrence, content: content)
    }

    /// Keeps an occurrence for when a server appears (durably) and moves the request on.
    func hold(_ occurrence: Occurrence, now: Instant) {
        let identifier = occurrence.request.identifier
        if !waiting.contains(where: { $0 == (identifier, occurrence.due) }) { waiting.append((identifier, occurrence.due)) }
        guard occurrence.detached != .held else { return }
        schedule.logging { () throws(StoreError) in
            var next: Instant??
            try store.write(.firing) { () throws(StoreError) in
                try store.hold(identifier, due: occurrence.due)
                if case .retrying = occurrence.detached { try store.releaseRetrying(identifier, due: occurrence.due) }
                next = try moveOn(occurrence, now: now)
            }
            if case .some(let next) = next { schedule.requeue(identifier, next) }
        }
    }

    /// Reminder popups on their way (kept until the server answers).
    var remindersSent: [any NotifyCall] = []

    /// A notice or reminder on screen, by its server id: the occurrence its Skip this one is for.
    struct NoticePopup {
        var request: NotificationRequest
        var occurrence: Instant
        var lead: TimeSpan
        var skipped = false
        /// The notice (`--notice`), rather than a reminder (`--remind`).
        var isNotice: Bool { request.trigger.notice == lead }
    }

    /// The notices and reminders shown (at most `noticeLimit`: the oldest are let go).
    var notices: [UInt32: NoticePopup] = [:]
    var noticeOrder: [UInt32] = []
    static let noticeLimit = 256

    static func joined(_ note: String, _ subtitle: String) -> String {
        subtitle.isEmpty ? note : note + " · " + subtitle
    }

    /// The static body and a short note on why it is not the command's output.
    static func withNote(_ body: String, _ note: String) -> String {
        body.isEmpty ? "(\(note))" : body + "\n(\(note))"
    }

    /// For an occurrence the request still points at: moves the request past it (as `advance`), unless
    /// the request was replaced or cancelled meanwhile. Nil: nothing moved (the queue stays as it is).
    func moveOn(_ occurrence: Occurrence, now: Instant) throws(StoreError) -> Instant?? {
        guard occurrence.detached == .no else { return .none }
        let identifier = occurrence.request.identifier
        guard let stored = try schedule.scheduledTime(of: identifier), stored.nextFire == occurrence.due else { return .none }
        return .some(try schedule.advance(occurrence.request, past: occurrence.due, now: now))
    }

    // MARK: - Presenting: Notify as a pending call

    /// Sends one occurrence to the server without waiting: its answer (or its silence) is handled
    /// in the loop, so a slow or hung server holds up no other alarm and no client.
    func show(_ occurrence: Occurrence, content: NotificationContent) {
        guard let capabilities = session.capabilities else {
            logger.debug("waits for the server's capabilities", metadata: ["alarm.id": "\(occurrence.request.identifier)"])
            awaitingCapabilities.append((occurrence, content))
            session.ask()
            return
        }
        present(occurrence, content: content, capabilities: capabilities)
    }

    func present(_ occurrence: Occurrence, content: NotificationContent, capabilities serverCapabilities: [Capability], varied: Bool = false) {
        let identifier = occurrence.request.identifier
        // Phosh's lock screen shows a popup's body, and the buttons its desktop entry allows, but
        // no time of the popup's own: a ringing alarm without a body there says when it was due
        // (and its label where the title is another).
        var content = content
        if content.rings, content.body.isEmpty, session.information?.vendor == "Phosh" {
            content.body = clockText(occurrence.due) + (content.label.isEmpty || content.label == content.title ? "" : " · " + content.label)
        }
        // Where chime plays sounds itself, the popup carries none for the server to play.
        let capabilities = ringing.soundCapabilities(serverCapabilities)
        let previous = (try? ledger.popup(of: identifier)) ?? 0
        // The subtitle carries "Late"/"Missed"; rendering folds it into the text the server shows.
        var shownContent = content
        // A ringing alarm's popup stays up while it rings, where the server allows it.
        if content.rings, shownContent.expiry == .serverDefault { shownContent.expiry = .never }
        let rendered = render(shownContent, for: capabilities, replacesID: previous)
        do {
            let call = try session.beginNotify(varied ? rendered.notification.variedInvisibly() : rendered.notification)
            let presentation = Presentation(call: call, occurrence: occurrence, content: content,
                                            deadline: clock.now() + ServerSession.timeout, capabilities: capabilities, varied: varied)
            presenting.append(presentation)
            logger.debug("sent Notify (replacing \(previous))", metadata: ["alarm.id": "\(identifier)"])
            try call.whenAnswered { [weak self, weak presentation] answer in
                // A call the daemon gave up on (and let go of) has nothing left to answer.
                guard let self, let presentation else { return }
                self.notifyAnswered(presentation, answer)
            }
        } catch {
            failed(occurrence, content: content, reason: "could not send Notify: \(error)")
        }
    }

    /// The server answered a Notify (or the bus did for it).
    func notifyAnswered(_ presentation: Presentation, _ answer: Result<ShownPopup, any Error>) {
        guard presenting.contains(where: { $0 === presentation }) else { return }  // given up on already
        presenting.removeAll { $0 === presentation }
        if presentation.cancelled {
            if case .success(let popup) = answer { session.requestClose(popup.id) }
            return
        }
        let occurrence = presentation.occurrence
        schedule.firing(occurrence.request.identifier) {
            do {
                // The answer comes from the server's own connection: the popup lives as long as it does.
                let popup = try answer.get()
                shown(occurrence, content: presentation.content, serverID: popup.id, server: popup.server, capabilities: presentation.capabilities)
            } catch where NotificationClient.isDuplicateRefusal(error) && !presentation.varied {
                // Plasma refuses a notification identical to the one it showed within the last
                // second (two alarms with the same title at the same minute): at once, again, with a
                // change nobody sees.
                logger.info("the server refused the alarm as a duplicate of the one before; sending it again",
                            metadata: ["alarm.id": "\(occurrence.request.identifier)"])
                present(occurrence, content: presentation.content, capabilities: presentation.capabilities, varied: true)
            } catch let error as NoNotificationServerError {
                logger.warning("\(error); holding the alarm", metadata: ["alarm.id": "\(occurrence.request.identifier)"])
                session.markGone()
                hold(occurrence, now: clock.now())
            } catch {
                failed(occurrence, content: presentation.content, reason: ServerSession.describe(error))
            }
        }
    }

    /// Gives up on calls the server has not answered by their deadline: each is a failure, retried.
    func expireCalls(now: Instant) {
        for presentation in presenting where presentation.deadline <= now {
            presentation.call.cancel()
            presenting.removeAll { $0 === presentation }
            if presentation.cancelled { continue }
            schedule.firing(presentation.occurrence.request.identifier) {
                failed(presentation.occurrence, content: presentation.content,
                       reason: "the notification server did not answer within \(ServerSession.timeout)")
            }
        }
    }

    /// Records a shown occurrence, moves its request on, plays its sound.
    /// `silent`: recorded during do-not-disturb without a popup (`--dnd silent`): no sound either.
    func shown(_ occurrence: Occurrence, content: NotificationContent, serverID: UInt32, server: String, capabilities: [Capability],
               silent: Bool = false) {
        let identifier = occurrence.request.identifier
        let now = clock.now()
        // One popup an alarm: another of its popups still up (two of its occurrences sent before
        // either was answered, so neither replaced the other) comes down, or its buttons would
        // answer nothing.
        let before = try? ledger.popup(of: identifier)
        if let before, before != serverID, before != 0, serverID != 0 { session.requestClose(before) }
        schedule.logging { () throws(StoreError) in
            var next: Instant??
            try store.write(.firing) { () throws(StoreError) in
                try ledger.record(DeliveredNotification(identifier: identifier, serverID: serverID, date: now, content: content),
                                          server: server)
                switch occurrence.detached {
                case .no:
                    next = try moveOn(occurrence, now: now)
                case .held, .retrying:
                    if occurrence.detached == .held {
                        try store.release(identifier, due: occurrence.due)
                    } else {
                        try store.releaseRetrying(identifier, due: occurrence.due)
                    }
                    try schedule.handledDetached(identifier, due: occurrence.due)
                    // A one-off shown late is done now.
                    try schedule.finished(identifier, detached: try store.isDetached(identifier))
                }
            }
            if case .some(let next) = next { schedule.requeue(identifier, next) }
        }
        // Said before the crash record is cleared (a write of its own): shown and in the store, it
        // is announced, whatever stops the daemon after.
        signals.fired(identifier, due: occurrence.due, occurrence.timeliness)
        schedule.firedCleanly(identifier)
        if !silent { ledger.shown(serverID) }
        logger.info("fired", metadata: ["alarm.id": "\(identifier)", "notification.id": "\(serverID)",
                                        "timeliness": "\(occurrence.timeliness.rawValue)"])
        if silent { return }
        let timer = if case .interval(_, false) = occurrence.request.trigger.rule { true } else { false }
        ringing.start(identifier, serverID: serverID, due: occurrence.due, content: content, capabilities: capabilities, timer: timer)
        waking.keepAwake(for: identifier, content: content)
        if case .after(let span) = content.expiry {
            closeDeadlines.append((clock.now() + span + Self.closeSlack, identifier, serverID))
        }
    }

    /// The server failed to show an occurrence: it is tried again, 1 s then doubling to a minute,
    /// while it is within its grace; after that it is recorded as missed, with the reason. Never
    /// deleted: each step is in the store before the loop goes on.
    func failed(_ occurrence: Occurrence, content: NotificationContent, reason: String) {
        let identifier = occurrence.request.identifier
        let now = clock.now()
        var attempt = 1
        if case .retrying(let before) = occurrence.detached { attempt = before + 1 }
        let grace = occurrence.request.content.grace ?? AlarmDefaults.grace
        schedule.logging { () throws(StoreError) in
            var next: Instant??
            if now - occurrence.due > grace {
                try store.write(.firing) { () throws(StoreError) in
                    try store.recordMissed([MissedOccurrence(identifier: identifier, due: occurrence.due, recorded: now,
                                                             reason: "the notification server failed to show it \(attempt) time(s): \(reason)")])
                    if case .retrying = occurrence.detached { try store.releaseRetrying(identifier, due: occurrence.due) }
                    if occurrence.detached == .held { try store.release(identifier, due: occurrence.due) }
                    next = try moveOn(occurrence, now: now)
                    if occurrence.detached != .no {
                        try schedule.handledDetached(identifier, due: occurrence.due)
                        try schedule.finished(identifier, detached: try store.isDetached(identifier))
                    }
                }
                if case .some(let next) = next { schedule.requeue(identifier, next) }
                signals.missed(identifier, due: occurrence.due)
                logger.error("gave up showing the alarm after \(attempt) attempt(s), past its grace: \(reason)",
                             metadata: ["alarm.id": "\(identifier)"])
                return
            }
            let wait = min(Self.firstRetryWait * (Int64(1) << Int64(min(attempt - 1, 16))), Self.lastRetryWait)
            let retry = Retry(identifier: identifier, due: occurrence.due, attempt: attempt, nextTry: now + wait, reason: reason)
            try store.write(.firing) { () throws(StoreError) in
                try store.setRetrying(retry)
                if occurrence.detached == .held { try store.release(identifier, due: occurrence.due) }
                next = try moveOn(occurrence, now: now)
            }
            if case .some(let next) = next { schedule.requeue(identifier, next) }
            retries.removeAll { $0.identifier == identifier && $0.due == occurrence.due }
            retries.append(retry)
            logger.warning("could not show the alarm (attempt \(attempt)): \(reason); trying again in \(wait)",
                           metadata: ["alarm.id": "\(identifier)"])
        }
    }

    /// Tries again the occurrences whose time to retry has come.
    func retryDue(now: Instant) {
        let due = retries.filter { $0.nextTry <= now }
        guard !due.isEmpty else { return }
        retries.removeAll { $0.nextTry <= now }
        for retry in due {
            schedule.firing(retry.identifier) {
                guard let request = schedule.load(retry.identifier) else {
                    schedule.logging { () throws(StoreError) in try store.releaseRetrying(retry.identifier, due: retry.due) }
                    return
                }
                deliver(request, due: retry.due, timeliness: .late, now: now, detached: .retrying(attempt: retry.attempt))
            }
        }
    }

    /// The body command ended: its output (or why there is none) becomes the body, and the
    /// occurrence is shown.
    func bodyCommandFinished(_ child: Child, _ occurrence: Occurrence, _ content: NotificationContent) {
        var content = content
        guard (try? schedule.scheduledTime(of: occurrence.request.identifier)) != nil else {
            logger.info("cancelled while its body command ran", metadata: ["alarm.id": "\(occurrence.request.identifier)"])
            return
        }
        if child.timedOut {
            content.body = Self.withNote(content.body, tr("body command timed out after %s s", "\(content.bodyCommand?.timeLimit.seconds ?? 0)"))
        } else if !child.succeeded {
            content.body = Self.withNote(content.body, tr("body command failed: %s", child.ending))
        } else {
            var text = String(decoding: child.collected.filter { $0 != 0 }, as: UTF8.self)
            while text.last?.isNewline == true { text.removeLast() }
            if child.truncated { text += "…" }
            // Output is plain text, even where the static body is markup.
            if !text.isEmpty { content.body = content.bodyIsMarkup ? escapeMarkup(text) : text }
        }
        show(occurrence, content: content)
    }

    /// Closes popups whose expiry passed but which the server left up.
    func closeExpired() {
        guard !closeDeadlines.isEmpty else { return }
        let now = clock.now()
        let due = closeDeadlines.filter { $0.time <= now }
        closeDeadlines.removeAll { $0.time <= now }
        for entry in due where (try? ledger.popup(of: entry.identifier)) == entry.serverID {
            // An alarm still ringing when its popup expires was not answered.
            if ringing.isRinging(entry.identifier, on: entry.serverID) { ringing.ringOut(entry.identifier) }
            logger.info("closing an expired popup the server left up", metadata: ["alarm.id": "\(entry.identifier)"])
            session.requestClose(entry.serverID)
        }
    }

    /// The notification server changed hands: the one that left took its popups with it; what
    /// waited for its answers is held (no server) or asked of the new one.
    func serverOwnerChanged(from old: String, to owner: String) {
        // The notices it showed went with it; the next server numbers its popups afresh.
        notices.removeAll()
        noticeOrder.removeAll()
        if !old.isEmpty {
            schedule.logging { () throws(StoreError) in
                let gone = try ledger.forget(shownBy: old)
                if !gone.isEmpty { logger.info("the notification server left the bus; \(gone.count) popup(s) it showed are gone") }
            }
        }
        doNotDisturb.serverChanged()
        if session.present {
            if !waiting.isEmpty { showHeld() }
        } else {
            holdAwaitingCapabilities()
        }
    }

    /// No server to ask: occurrences waiting for its capabilities are held for the next one.
    func holdAwaitingCapabilities() {
        let ready = awaitingCapabilities
        awaitingCapabilities.removeAll()
        for (occurrence, _) in ready { schedule.firing(occurrence.request.identifier) { hold(occurrence, now: clock.now()) } }
    }

    /// Shows every occurrence held for a server, marked late.
    func showHeld() {
        var held = waiting
        waiting.removeAll()
        let now = clock.now()
        // One popup an alarm: of the occurrences an alarm held, the latest is shown and the older
        // ones recorded missed (shown together, their popups would not replace each other, and the
        // buttons of all but the last would answer nothing).
        var latest: [String: Instant] = [:]
        for (identifier, due) in held { latest[identifier] = max(latest[identifier] ?? due, due) }
        let older = held.filter { latest[$0.identifier] != $0.due }
        held.removeAll { latest[$0.identifier] != $0.due }
        for (identifier, due) in older {
            schedule.logging { () throws(StoreError) in
                try store.write(.firing) { () throws(StoreError) in
                    try store.release(identifier, due: due)
                    try store.recordMissed([MissedOccurrence(identifier: identifier, due: due, recorded: now,
                                                             reason: "due while no notification server ran; a later occurrence was shown")])
                }
                signals.missed(identifier, due: due)
            }
        }
        logger.info("a notification server is here; showing \(held.count) held alarm(s)")
        for (identifier, due) in held {
            schedule.firing(identifier) {
                guard let request = schedule.load(identifier) else {
                    schedule.logging { () throws(StoreError) in try store.release(identifier, due: due) }
                    return
                }
                deliver(request, due: due, timeliness: .late, now: now, detached: .held)
            }
        }
    }

    /// The schedule is about to move the alarm's next time in the store (a snooze of an earlier
    /// popup, a skip), where an occurrence on its way to the server (its Notify unanswered, its body
    /// command running, or waiting for the server's capabilities) is kept until it is shown: that
    /// occurrence is held instead (`held`), so a crash before the server answers still shows it at
    /// the next start, once. Call inside the schedule's store transaction.
    func holdInFlight(_ identifier: String) throws(StoreError) {
        guard let due = try schedule.scheduledTime(of: identifier)?.nextFire else { return }
        func ours(_ occurrence: Occurrence) -> Bool {
            occurrence.request.identifier == identifier && occurrence.due == due && occurrence.detached == .no
        }
        guard presenting.contains(where: { ours($0.occurrence) }) || preparing.values.contains(where: ours)
            || awaitingCapabilities.contains(where: { ours($0.0) }) else { return }
        try store.write(.firing) { () throws(StoreError) in try store.hold(identifier, due: due) }
        for presentation in presenting where ours(presentation.occurrence) { presentation.occurrence.detached = .held }
        for (pid, occurrence) in preparing where ours(occurrence) { preparing[pid]?.detached = .held }
        for index in awaitingCapabilities.indices where ours(awaitingCapabilities[index].0) { awaitingCapabilities[index].0.detached = .held }
    }

    /// A ring ended unanswered (ringing recorded it): the alarm is answered as its popup's Snooze
    /// would answer it when it snoozes itself, and taken down; otherwise its popup stays.
    func ringRanOut(_ identifier: String, due: Instant, serverID: UInt32, snoozes: Bool) {
        waking.release(identifier)
        signals.rangOut(identifier, due: due, snoozed: snoozes)
        guard snoozes, let delivered = (try? ledger.delivered(identifier: identifier)) ?? nil, delivered.serverID == serverID else { return }
        schedule.firing(identifier) { schedule.snooze(delivered) }
        session.requestClose(serverID)
    }

    /// A popup shown before this run was found closed meanwhile (the ledger forgot it).
    func closedMeanwhile(_ popup: DeliveredNotification) {
        ringing.stop(serverID: popup.serverID, because: "its popup was closed while the daemon was not running")
        waking.release(popup.identifier)
    }

    /// Does what a button of a delivered alarm's popup does (`snooze`, `dismiss`, or one of the
    /// alarm's own actions), as if pressed: the app's ringing page's Snooze and Stop.
    func answer(_ identifier: String, action: String) throws(SchedulerError) {
        let delivered = try showing(identifier)
        var own: [String] = []
        if case .valid(let request)? = try? schedule.stored(identifier) { own = request.content.actions.map(\.identifier) }
        guard action == NotificationAction.snooze.identifier || action == NotificationAction.dismiss.identifier || own.contains(action) else {
            throw .invalid(RequestError(key: "action", "\(quotedForMessage(action)) is not snooze, dismiss or one of the alarm's buttons"))
        }
        handle(.actionInvoked(id: delivered.serverID, key: action))
    }

    /// Snoozes a delivered alarm for `span` instead of its own snooze time (`chime snooze ID --for`):
    /// as its Snooze button, otherwise.
    func snooze(_ identifier: String, for span: TimeSpan) throws(SchedulerError) {
        answered(serverID: try showing(identifier).serverID, key: NotificationAction.snooze.identifier, snoozeFor: span)
    }

    /// The popup `identifier` shows, which an answer is for.
    private func showing(_ identifier: String) throws(SchedulerError) -> DeliveredNotification {
        let delivered: DeliveredNotification?
        do { delivered = try ledger.delivered(identifier: identifier) } catch { throw .store(error) }
        guard let delivered else { throw .notShowing("\(quotedForMessage(identifier)) is not showing") }
        return delivered
    }

    /// Takes these alarms' popups down and forgets them (`CloseDelivered`): all, or none when one
    /// is not showing.
    func close(_ identifiers: [String]) throws(SchedulerError) {
        let delivered: [(identifier: String, serverID: UInt32)]
        do { delivered = try ledger.popups() } catch { throw .store(error) }
        let unknown = identifiers.filter { id in !delivered.contains { $0.identifier == id } }
        if !unknown.isEmpty { throw .notShowing("not delivered: \(SchedulerError.list(unknown))") }
        let serverIDs = delivered.filter { identifiers.contains($0.identifier) }.map(\.serverID)
        do { try ledger.remove(identifiers) } catch { throw .store(error) }
        for id in serverIDs { session.requestClose(id) }
    }

    /// Alarms that ring while their calendar was read again, with what it says was answered: one
    /// whose ringing occurrence that answer reaches (acknowledged, or snoozed, on another machine)
    /// stops, and its popup goes.
    func answeredElsewhere(_ answers: [String: Instant]) {
        for (identifier, acknowledged) in answers {
            guard let ring = ringing.ring(of: identifier), acknowledged >= ring.due else { continue }
            ringing.stop(identifier, because: "it was answered on another machine (its calendar says so)")
            waking.release(identifier)
            schedule.logging { () throws(StoreError) in try ledger.remove([identifier]) }
            signals.answered(identifier, action: "answered-elsewhere")
            session.requestClose(ring.serverID)
        }
    }

    /// What the notification server says about a popup of ours: closed, or an action pressed.
    func handle(_ event: NotificationEvent) {
        switch event {
        case .closed(let id, _) where notices[id] != nil:
            forgetNotice(id)
        case .closed(let id, let reason):
            let ringingDue = ringing.identifier(ringingOn: id).flatMap { ringing.ring(of: $0)?.due }
            if reason == .expired, let identifier = ringing.identifier(ringingOn: id) {
                ringing.ringOut(identifier)  // the server took it down unanswered
            } else {
                ringing.stop(serverID: id, because: "its popup was closed")
            }
            if let delivered = try? ledger.delivered(serverID: id) {
                waking.release(delivered.identifier)
                schedule.logging { () throws(StoreError) in try ledger.remove([delivered.identifier]) }
                if reason == .dismissed {
                    signals.dismissed(delivered.identifier)
                    events.answered(delivered.identifier, delivered.content, ringingDue ?? delivered.date, nil)
                }
            }
        case .actionInvoked(let id, let key):
            if let popup = notices[id] { noticeAnswered(id, key: key, popup) } else { answered(serverID: id, key: key) }
        case .activationToken:
            break
        }
    }

    /// A button of the popup `serverID` was pressed (or the same asked for on D-Bus).
    private func answered(serverID id: UInt32, key: String, snoozeFor span: TimeSpan? = nil) {
        let ringingDue = ringing.identifier(ringingOn: id).flatMap { ringing.ring(of: $0)?.due }
        // The answer: the sound stops before anything else is done.
        ringing.stop(serverID: id, because: "\(key) was pressed")
        guard let delivered = try? ledger.delivered(serverID: id) else { return }
        waking.release(delivered.identifier)
        // For the program that set it (the UserNotifications library's delegate).
        signals.answered(delivered.identifier, action: key)
        if key == NotificationAction.snooze.identifier {
            let until = schedule.firing(delivered.identifier) { schedule.snooze(delivered, for: span) }
            events.answered(delivered.identifier, delivered.content, ringingDue ?? delivered.date, until)
        } else if key == NotificationAction.dismiss.identifier {
            events.answered(delivered.identifier, delivered.content, ringingDue ?? delivered.date, nil)
        }
        // Snooze and dismiss both take this ring down; a repeating alarm rings again at its next time.
        session.requestClose(id)
    }
}
