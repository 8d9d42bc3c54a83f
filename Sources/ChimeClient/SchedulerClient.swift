// The client of the scheduler daemon: `UserNotificationCenter`, every method of
// `org.chime.Scheduler1` typed, and its errors, typed too (`SchedulerError`, the daemon's refusals
// among them as `SchedulerRefusal`: its D-Bus error names stay in here and in the service that
// answers with them). The wire's vocabulary
// (the calls, the records, the interface's names) is ChimeCenter's, which the daemon speaks too.
import ChimeCenter
import DBus
import Timekeeping

/// What the daemon refused, as its client says it: the callers match these, and its D-Bus error
/// names stay inside the client (SchedulerInterface, and the service that answers with them).
public enum SchedulerRefusal: Hashable, Sendable {
    /// A key is unknown, of the wrong type, or outside its bound.
    case invalidRequest
    /// The request is valid but would never fire.
    case neverFires
    /// No pending (or delivered) alarm has that identifier.
    case unknownIdentifier
    /// The daemon could not write or read its store.
    case storeFailed
    /// The identifier belongs to an alarm in the alarm file.
    case fromAlarmFile
    /// Nothing here can play the sound.
    case cannotPlay
    /// The daemon follows no alarm file.
    case noAlarmFile

    /// The refusal the daemon answered with, by its D-Bus error name; nil: not one of the daemon's.
    init?(_ name: ErrorName) {
        switch name {
        case SchedulerInterface.invalidRequest: self = .invalidRequest
        case SchedulerInterface.neverFires: self = .neverFires
        case SchedulerInterface.unknownIdentifier: self = .unknownIdentifier
        case SchedulerInterface.storeFailed: self = .storeFailed
        case SchedulerInterface.fromAlarmFile: self = .fromAlarmFile
        case SchedulerInterface.cannotPlay: self = .cannotPlay
        case SchedulerInterface.noAlarmFile: self = .noAlarmFile
        default: return nil
        }
    }
}

/// Every way a call to the daemon fails: what `UserNotificationCenter` throws, typed, so that a
/// caller matches cases, never D-Bus error names.
///
/// ```swift
/// do { try center.answer(id, action: "dismiss") }
/// catch .refused(.unknownIdentifier, let error) { print("not ringing: \(error.message)") }
/// ```
public enum SchedulerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No daemon answers on the session bus (and none could be started by D-Bus activation).
    case noScheduler(NoSchedulerError)
    /// The daemon took the call but did not answer in time, or left the bus while it ran.
    case notAnswering(SchedulerNotAnsweringError)
    /// The daemon refused the call: why, in its message (`error.message`).
    case refused(SchedulerRefusal, DBusError)
    /// The bus failed the call (this process's connection, a policy, a daemon of another version
    /// without the method), or the daemon's answer could not be read.
    case failed(DBusError)
    /// The call was not sent: a value in it cannot travel on D-Bus (a string with a NUL, a
    /// signature past D-Bus's limits), refused here before libdbus would abort on it. The text
    /// says what and why ("cannot send argument 1[title]: …").
    case unsendable(String)

    /// A bus error as the caller should see it: no daemon, a daemon not answering, its refusal, or
    /// the bus's own failure.
    public init(_ error: DBusError) {
        if error.name == .serviceUnknown || error.name == .nameHasNoOwner {
            self = .noScheduler(NoSchedulerError(underlying: error))
        } else if error.name == .noReply || error.name == .timeout {
            // (Disconnected is this process's own bus connection closing: the bus, not the daemon.)
            self = .notAnswering(SchedulerNotAnsweringError(underlying: error))
        } else if let refusal = SchedulerRefusal(error.name) {
            self = .refused(refusal, error)
        } else {
            self = .failed(error)
        }
    }

    /// An error of making a call, or of its reply, typed.
    init(sending error: any Error) {
        switch error {
        case let error as SchedulerError: self = error
        case let error as DBusError: self.init(error)
        case let error as InvalidValueError: self = .unsendable("cannot send \(error.location): \(error.reason)")
        case let error as InvalidNameError: self = .unsendable("cannot send \(error)")
        default: self = .failed(DBusError(name: .failed, message: "the call could not be made: \(error)"))
        }
    }

    /// An error of reading the daemon's answer, typed.
    init(reading error: any Error) {
        switch error {
        case let error as DBusError: self.init(error)
        default: self = .failed(DBusError(name: .failed, message: "the daemon's answer could not be read: \(error)"))
        }
    }

    /// What the daemon refused; nil when it did not refuse.
    public var refusal: SchedulerRefusal? {
        if case .refused(let refusal, _) = self { refusal } else { nil }
    }

    /// One line for a person: the advice for no daemon or no answer, else the message alone.
    public var message: String {
        switch self {
        case .noScheduler(let error): error.description
        case .notAnswering(let error): error.description
        case .refused(_, let error), .failed(let error): error.message
        case .unsendable(let text): text
        }
    }

    /// The message, with the D-Bus error's name and call where the daemon or the bus answered.
    public var description: String {
        switch self {
        case .refused(_, let error), .failed(let error): error.description
        case .noScheduler, .notAnswering, .unsendable: message
        }
    }
}

/// No scheduler daemon answers on the session bus.
public struct NoSchedulerError: Hashable, Sendable, CustomStringConvertible {
    public var underlying: DBusError
    public init(underlying: DBusError) { self.underlying = underlying }
    public var description: String {
        "the chime daemon is not running; start it with `chime daemon &` (or `systemctl --user start chime`)"
    }
}

/// The chime daemon took the call but did not answer in time, or left the bus while it ran.
public struct SchedulerNotAnsweringError: Hashable, Sendable, CustomStringConvertible {
    public var underlying: DBusError
    public init(underlying: DBusError) { self.underlying = underlying }
    /// The daemon left the bus (crashed, or was stopped) rather than being slow.
    public var daemonLeft: Bool {
        // The bus answers for a peer that disconnected with NoReply and this wording.
        underlying.message.contains("disconnected from message bus")
    }

    public var description: String {
        daemonLeft
            ? "the chime daemon left the bus during the call (\(underlying.message)); it may have crashed: see its log, and try again"
            : "the chime daemon did not answer in time (\(underlying.message)); see its log, or restart it: systemctl --user restart chime"
    }
}

/// A client of the scheduler daemon over `org.chime.Scheduler1`: every method of the
/// interface, typed (the CLI is one client; any program that speaks D-Bus can be another).
///
/// ```swift
/// let center = UserNotificationCenter(connection: try Connection(.session))
/// let (id, next) = try center.add(NotificationRequest(identifier: "", content: NotificationContent(title: "Wait!"),
///                                                     trigger: .timeInterval(.minutes(5), anchor: WallClock.system.now())))
/// ```
public final class UserNotificationCenter {
    public let connection: Connection
    /// How long a call may wait for the daemon's answer.
    public let timeout: TimeSpan

    /// `timeout`: 30 s for the command line (a busy daemon answers late rather than never); an app
    /// whose window must not freeze waits less.
    public init(connection: Connection, timeout: TimeSpan = .seconds(30)) {
        self.connection = connection
        self.timeout = timeout
    }

    /// Makes a call and waits for its answer (up to `timeout`), read as the call says.
    public func perform<Answer>(_ call: SchedulerCall<Answer>) throws(SchedulerError) -> Answer {
        let reply: [Value]
        do {
            reply = try connection.call(
                destination: SchedulerInterface.busName, path: SchedulerInterface.path,
                interface: SchedulerInterface.interface, member: call.member, arguments: call.arguments,
                timeout: .milliseconds(Int32(clamping: timeout.milliseconds)))
        } catch {
            throw SchedulerError(sending: error)
        }
        do { return try call.answer(from: reply) } catch { throw SchedulerError(reading: error) }
    }

    /// Makes a call without waiting: `completion` runs from the connection's dispatch with the
    /// answer read as the call says, or the error. For an event loop that dispatches the connection
    /// (the app's); it may cancel the returned call at a deadline of its own (libdbus times a pending
    /// call out only where the loop drives its timeouts).
    public func send<Answer>(_ call: SchedulerCall<Answer>, completion: @escaping (Result<Answer, SchedulerError>) -> Void) throws(SchedulerError)
        -> PendingCall
    {
        do {
            let message = try Message.methodCall(
                destination: SchedulerInterface.busName, path: SchedulerInterface.path,
                interface: SchedulerInterface.interface, member: call.member, arguments: call.arguments)
            let pending = try connection.send(message, timeout: .milliseconds(Int32(clamping: timeout.milliseconds)))
            try pending.onCompletion { result in
                let reply: [Value]
                do { reply = try result.get().arguments() } catch { return completion(.failure(SchedulerError(sending: error))) }
                do { completion(.success(try call.answer(from: reply))) } catch { completion(.failure(SchedulerError(reading: error))) }
            }
            connection.flush()
            return pending
        } catch {
            throw SchedulerError(sending: error)
        }
    }

    // MARK: - The methods, blocking (each is `perform` of its `Scheduler1` call)

    /// What the daemon's notification server can do, as the daemon sees it
    /// (including the local sound player it would use).
    public func notificationSettings() throws(SchedulerError) -> NotificationSettings { try perform(Scheduler1.settings) }

    /// Adds a request (replacing a pending one only when `request.identifier` names it; an
    /// empty identifier asks the daemon for a new, unique one). Acknowledged only once it is
    /// on disk. Returns the identifier and the first occurrence.
    @discardableResult
    public func add(_ request: NotificationRequest) throws(SchedulerError) -> (identifier: String, nextFire: Instant) { try perform(Scheduler1.add(request)) }

    /// Adds a request into a calendar chime writes to (`[[calendar]]` with `write = true`, by its
    /// name): an event there, read back as the calendar's alarm once written.
    public func add(_ request: NotificationRequest, calendar: String) throws(SchedulerError) -> (identifier: String, nextFire: Instant) {
        try perform(Scheduler1.add(request, calendar: calendar))
    }

    /// Adds a request into the alarm file's `[defaults] calendar` when it names one (else here).
    public func add(_ request: NotificationRequest, intoDefaultCalendar: Bool) throws(SchedulerError) -> (identifier: String, nextFire: Instant) {
        try perform(Scheduler1.add(request, intoDefaultCalendar: intoDefaultCalendar))
    }

    /// Adds many requests, all or none (each with its identifier replaces one pending under it):
    /// their identifiers and first occurrences, in order.
    public func addAll(_ requests: [NotificationRequest]) throws(SchedulerError) -> [(identifier: String, nextFire: Instant)] {
        try perform(Scheduler1.addAll(requests))
    }

    /// One pending request in full.
    public func request(withIdentifier identifier: String) throws(SchedulerError) -> NotificationRequest { try perform(Scheduler1.get(identifier)) }

    /// Pending requests in full, soonest first (`ListPending`, then `Get` for each;
    /// quarantined ones are left out, as they will not fire).
    public func pendingNotificationRequests() throws(SchedulerError) -> [PendingRequest] {
        // One that fired (or was cancelled) between the listing and its reading is no longer pending.
        var requests: [PendingRequest] = []
        for summary in try pendingSummaries() where summary.state != .quarantined {
            do {
                requests.append(PendingRequest(request: try request(withIdentifier: summary.identifier), nextFire: summary.nextFire))
            } catch .refused(.unknownIdentifier, _) {
                continue
            }
        }
        return requests
    }

    /// Pending alarms in brief, soonest first.
    public func pendingSummaries() throws(SchedulerError) -> [PendingSummary] {
        do {
            return try perform(Scheduler1.listPendingFile)
        } catch .refused, .failed {
            // A daemon before 0.3 (no ListPendingFile), or a bus that passes no descriptors: the
            // list in the reply itself.
            return try perform(Scheduler1.listPending)
        }
    }

    /// Removes pending requests; returns the identifiers that were pending.
    @discardableResult
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) throws(SchedulerError) -> [String] {
        try perform(Scheduler1.remove(identifiers))
    }

    /// Skips an alarm's next occurrence, or (`undo`) brings back the one skipped last: the
    /// occurrence skipped or brought back, and the alarm's next one.
    public func skip(_ identifier: String, undo: Bool = false) throws(SchedulerError) -> (occurrence: Instant, next: Instant?) {
        try perform(Scheduler1.skip(identifier, undo: undo))
    }

    /// Switches pending alarms off: kept and listed, never fired. Returns those switched off.
    @discardableResult
    public func disable(_ identifiers: [String]) throws(SchedulerError) -> [String] { try perform(Scheduler1.disable(identifiers)) }

    /// Switches alarms back on: each is planned from now. Returns each with its next fire.
    @discardableResult
    public func enable(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, nextFire: Instant)] { try perform(Scheduler1.enable(identifiers)) }

    /// Pauses timers: each keeps the time it had left (across restarts too). Returns each with that time.
    @discardableResult
    public func pause(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)] { try perform(Scheduler1.pause(identifiers)) }

    /// Resumes paused timers: each fires when its time left has passed again. Returns each with its next fire.
    @discardableResult
    public func resume(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, nextFire: Instant)] { try perform(Scheduler1.resume(identifiers)) }

    /// Does what a button of a delivered alarm's popup does (`snooze`, `dismiss`, or one of its own actions).
    public func answer(_ identifier: String, action: String) throws(SchedulerError) { try perform(Scheduler1.answer(identifier, action: action)) }
    /// Snoozes a delivered alarm for `span` instead of its own snooze time.
    public func snooze(_ identifier: String, for span: TimeSpan) throws(SchedulerError) { try perform(Scheduler1.snooze(identifier, for: span)) }

    /// Plays a sound once as an alarm with it would (`default`, a sound-theme name, or an absolute path).
    public func previewSound(_ sound: String) throws(SchedulerError) { try perform(Scheduler1.previewSound(sound)) }

    /// Plays a sound as an alarm with these options would (`PlaySound`): once, or looping for
    /// `duration`. Returns its number (for `stopSound` and the `SoundEnded` signal), how long it
    /// lasts, and the way it plays ("the sound server (...)", or a player program's name).
    public func playSound(_ sound: String, volume: Int? = nil, fade: TimeSpan? = nil, for duration: TimeSpan? = nil) throws(SchedulerError)
        -> (play: UInt32, length: TimeSpan, way: String)
    {
        try perform(Scheduler1.playSound(sound, volume: volume, fade: fade, for: duration))
    }

    /// Stops a sound `playSound` started (one that already ended is no error).
    public func stopSound(_ play: UInt32) throws(SchedulerError) { try perform(Scheduler1.stopSound(play)) }

    /// Calls `handler` with each `SoundEnded` signal: the play, how it ended, and a note ("" or why
    /// nothing was heard).
    public func followSoundEnded(_ handler: @escaping (_ play: UInt32, _ how: String, _ note: String) -> Void) throws(SchedulerError) -> SubscriptionToken {
        try follow(.soundEnded) { message in
            let arguments = message.arguments()
            guard arguments.count == 3, case .uint32(let play) = arguments[0], case .string(let how) = arguments[1],
                case .string(let note) = arguments[2]
            else { return }
            handler(play, how, note)
        }
    }

    /// The alarms ringing now, soonest due first.
    /// What days off and time away do to an alarm's occurrences of the next year (at most 20).
    public func occurrencesOff(_ identifier: String) throws(SchedulerError) -> [(original: Instant, fate: OccurrenceFate)] {
        try perform(Scheduler1.occurrencesOff(identifier))
    }

    /// The alarms with a skipped occurrence ahead, each with the earliest.
    public func skippedAhead() throws(SchedulerError) -> [(identifier: String, occurrence: Instant)] { try perform(Scheduler1.listSkipped) }

    /// Every stretch of time away, and whether the alarm file set it.
    public func away() throws(SchedulerError) -> [(away: DaysOff.Away, fromFile: Bool)] { try perform(Scheduler1.listAway) }

    /// Sets time away for the alarms named (every alarm: none), from `from` (nil: now) until `until`.
    public func setAway(from: Instant?, until: Instant, identifiers: [String] = []) throws(SchedulerError) {
        try perform(Scheduler1.setAway(from: from, until: until, identifiers: identifiers))
    }

    /// Ends time away set by command; answers the stretches that changed.
    @discardableResult
    public func endAway(_ identifiers: [String] = []) throws(SchedulerError) -> [DaysOff.Away] { try perform(Scheduler1.endAway(identifiers)) }

    public func ringing() throws(SchedulerError) -> [(identifier: String, due: Instant, until: Instant, title: String)] { try perform(Scheduler1.listRinging) }

    /// The alarm file's timer presets.
    public func timerPresets() throws(SchedulerError) -> [(name: String, duration: TimeSpan, title: String)] { try perform(Scheduler1.listTimerPresets) }

    /// Starts the alarm file's timer preset `name`; returns the new timer's identifier and when it fires.
    @discardableResult
    public func startTimer(_ name: String) throws(SchedulerError) -> (identifier: String, nextFire: Instant) { try perform(Scheduler1.startTimer(name)) }

    /// Every paused timer with the time it has left.
    public func pausedTimers() throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)] { try perform(Scheduler1.listPaused) }

    /// Removes every pending request added from the command line or over D-Bus (the alarm
    /// file's alarms are changed in the file); returns their identifiers.
    @discardableResult
    public func removeAllPendingNotificationRequests() throws(SchedulerError) -> [String] { try perform(Scheduler1.removeAll) }

    /// The daemon's own state: its version, store, and quarantined alarms.
    public func daemonStatus() throws(SchedulerError) -> DaemonStatus { try perform(Scheduler1.status) }

    /// The alarm file the daemon follows, and what it made of it.
    public func alarmFileStatus() throws(SchedulerError) -> AlarmFileStatus { try perform(Scheduler1.alarmFileStatus) }

    /// Has the daemon read the alarm file again now (as on SIGHUP or an edit).
    public func reloadAlarmFile() throws(SchedulerError) -> AlarmFileStatus { try perform(Scheduler1.reloadAlarmFile) }

    /// Notifications the server is showing (or showed), oldest first.
    public func deliveredNotifications() throws(SchedulerError) -> [DeliveredSummary] { try perform(Scheduler1.listDelivered) }

    /// Closes delivered notifications.
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) throws(SchedulerError) { try perform(Scheduler1.closeDelivered(identifiers)) }

    /// Occurrences that passed while nothing could show them.
    public func missedOccurrences() throws(SchedulerError) -> [MissedOccurrence] { try perform(Scheduler1.listMissed) }
}

extension UserNotificationCenter {
    /// Calls `handler` with each of the daemon's `signal`s, as it is dispatched on this center's connection.
    public func follow(_ signal: SchedulerSignal, _ handler: @escaping (Message) -> Void) throws(SchedulerError) -> SubscriptionToken {
        do { return try connection.subscribe(signal.matchRule, handler: handler) } catch { throw SchedulerError(sending: error) }
    }
}
