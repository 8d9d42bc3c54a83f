import DBus
import Timekeeping

/// The scheduler daemon's address on the session bus.
public enum SchedulerInterface {
    public static let busName: BusName = "org.chime.Scheduler"
    public static let path: ObjectPath = "/org/chime/Scheduler"
    public static let interface: InterfaceName = "org.chime.Scheduler1"
    // Error names the daemon answers with (docs/dbus-interface.md).
    /// A key is unknown, of the wrong type, or outside its bound; the message names it and the bound.
    public static let invalidRequest: ErrorName = "org.chime.Scheduler.Error.InvalidRequest"
    /// The request is valid but would never fire (a one-off in the past).
    public static let neverFires: ErrorName = "org.chime.Scheduler.Error.NeverFires"
    /// No pending (or delivered) alarm has that identifier.
    public static let unknownIdentifier: ErrorName = "org.chime.Scheduler.Error.UnknownIdentifier"
    /// The daemon could not write or read its store; nothing was changed.
    public static let storeFailed: ErrorName = "org.chime.Scheduler.Error.StoreFailed"
    /// The identifier belongs to an alarm in the alarm file: change it there.
    public static let fromAlarmFile: ErrorName = "org.chime.Scheduler.Error.FromAlarmFile"
    /// `PreviewSound` found nothing here that can play the sound (the message says why).
    public static let cannotPlay: ErrorName = "org.chime.Scheduler.Error.CannotPlay"
    /// The daemon follows no alarm file (started with --no-config).
    public static let noAlarmFile: ErrorName = "org.chime.Scheduler.Error.NoAlarmFile"
}

/// Where a pending alarm came from. The alarm file's alarms follow the file; a reload never
/// touches those added from the command line or over D-Bus.
public enum AlarmOrigin: String, Hashable, Sendable {
    case commandLine = "command-line"
    case file
}

/// A pending request with when it fires next (nil: never again).
public struct PendingRequest: Hashable, Sendable {
    public var request: NotificationRequest
    public var nextFire: Instant?
    public init(request: NotificationRequest, nextFire: Instant?) {
        self.request = request
        self.nextFire = nextFire
    }
}

/// Where a pending alarm stands.
public enum AlarmState: String, Hashable, Sendable {
    /// Waiting for its next occurrence.
    case scheduled
    /// An occurrence is waiting for a notification server to appear.
    case held
    /// The server failed to show an occurrence; it is tried again (the note says when and why).
    case retrying
    /// Kept but never fired: the daemon crashed twice while firing it, or its stored form no
    /// longer validates. `chime cancel` removes it.
    case quarantined
    /// Switched off (`chime disable`): kept and listed, never fired until switched on again.
    case disabled
    /// A timer paused (`chime pause`) with time left (the note says how much), until resumed.
    case paused
}

/// A pending alarm as `chime list` shows it (one element of `ListPending`).
public struct PendingSummary: Hashable, Sendable {
    public var identifier: String
    public var nextFire: Instant?
    public var title: String
    public var label: String
    public var timeZone: String?
    public var origin: AlarmOrigin
    public var state: AlarmState
    /// Why it is held or quarantined; "" otherwise.
    public var note: String
    /// Its rule as a person writes it for the request's `rule` key (`16:35 mon-fri`, `in 5m`,
    /// `every 25m`, a calendar expression in full where it has no short form), or "" for a one-off
    /// at an instant.
    public var rule: String
    /// Its sound as the request's `sound` or `sound-file` key has it (`default`, `bell`, a path); "" for none.
    public var sound: String

    public init(identifier: String, nextFire: Instant?, title: String, label: String, timeZone: String?,
                origin: AlarmOrigin = .commandLine, state: AlarmState = .scheduled, note: String = "",
                rule: String = "", sound: String = "") {
        self.rule = rule
        self.sound = sound
        self.identifier = identifier
        self.nextFire = nextFire
        self.title = title
        self.label = label
        self.timeZone = timeZone
        self.origin = origin
        self.state = state
        self.note = note
    }
}

/// No scheduler daemon answers on the session bus.
public struct NoSchedulerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var underlying: DBusError
    public var description: String {
        "the chime daemon is not running; start it with `chime daemon &` (or `systemctl --user start chime`)"
    }
}

/// The chime daemon took the call but did not answer in time, or left the bus while it ran.
public struct SchedulerNotAnsweringError: Error, Hashable, Sendable, CustomStringConvertible {
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

    private func call(_ member: MemberName, _ arguments: [Value] = []) throws -> [Value] {
        do {
            return try connection.call(
                destination: SchedulerInterface.busName, path: SchedulerInterface.path,
                interface: SchedulerInterface.interface, member: member, arguments: arguments,
                timeout: .milliseconds(Int32(clamping: timeout.milliseconds)))
        } catch {
            throw Self.named(error)
        }
    }

    /// A bus error as the caller should see it: no daemon, or a daemon not answering.
    private static func named(_ error: any Error) -> any Error {
        guard let error = error as? DBusError else { return error }
        if error.name == .serviceUnknown || error.name == .nameHasNoOwner { return NoSchedulerError(underlying: error) }
        // (Disconnected is this process's own bus connection closing: the bus, not the daemon.)
        if error.name == .noReply || error.name == .timeout { return SchedulerNotAnsweringError(underlying: error) }
        return error
    }

    /// Sends a call without waiting: `completion` runs from the connection's dispatch with the reply
    /// read by `read`, or the error. For an event loop that dispatches the connection (the app's);
    /// it may cancel the returned call at a deadline of its own (libdbus times a pending call out
    /// only where the loop drives its timeouts).
    public func send<T>(_ member: MemberName, _ arguments: [Value] = [], read: @escaping ([Value]) throws -> T,
                        completion: @escaping (Result<T, any Error>) -> Void) throws -> PendingCall {
        let message = try Message.methodCall(
            destination: SchedulerInterface.busName, path: SchedulerInterface.path,
            interface: SchedulerInterface.interface, member: member, arguments: arguments)
        let pending = try connection.send(message, timeout: .milliseconds(Int32(clamping: timeout.milliseconds)))
        try pending.onCompletion { result in
            completion(Result { try read(try result.get().arguments()) }.mapError(Self.named))
        }
        connection.flush()
        return pending
    }

    /// `ListPending`'s answer, read.
    public static func pendingSummaries(from reply: [Value]) throws -> [PendingSummary] {
        try (reply.first?.arrayElements ?? []).map { item throws(DBusError) in try PendingSummary(dbus: item) }
    }

    /// `Get`'s answer, read.
    public static func request(from reply: [Value]) throws -> NotificationRequest {
        guard let entries = reply.first?.dictionaryEntries else {
            throw DBusError(name: .invalidSignature, message: "Get answered without a dictionary")
        }
        do {
            return try NotificationRequest.fromStored(entries)
        } catch {
            throw DBusError(name: .invalidSignature, message: "Get answered a request chime cannot read: \(error)")
        }
    }

    /// `ListMissed`'s answer, read.
    public static func missed(from reply: [Value]) throws -> [MissedOccurrence] {
        try (reply.first?.arrayElements ?? []).map { item throws(DBusError) in try MissedOccurrence(dbus: item) }
    }

    /// `ListTimerPresets`' answer, read.
    public static func timerPresets(from reply: [Value]) -> [(name: String, duration: TimeSpan, title: String)] {
        (reply.first?.arrayElements ?? []).compactMap { item in
            guard case .structure(let f) = item, f.count == 3, let name = f[0].stringValue, case .int64(let seconds) = f[1],
                let title = f[2].stringValue else { return nil }
            return (name, .seconds(seconds), title)
        }
    }

    /// `ListPaused`'s answer, read.
    public static func pausedTimers(from reply: [Value]) -> [(identifier: String, remaining: TimeSpan)] {
        pairs(reply).map { ($0.0, .milliseconds($0.1)) }
    }

    /// `ListRinging`'s answer, read.
    public static func ringing(from reply: [Value]) -> [(identifier: String, due: Instant, until: Instant, title: String)] {
        (reply.first?.arrayElements ?? []).compactMap { item in
            guard case .structure(let f) = item, f.count == 4, let id = f[0].stringValue, case .int64(let due) = f[1],
                case .int64(let until) = f[2], let title = f[3].stringValue else { return nil }
            return (id, Instant(seconds: due), Instant(seconds: until), title)
        }
    }

    /// What the daemon's notification server can do, as the daemon sees it
    /// (including the local sound player it would use).
    public func notificationSettings() throws -> NotificationSettings {
        try NotificationSettings(dbus: try call("Settings").first)
    }

    /// Adds a request (replacing a pending one only when `request.identifier` names it; an
    /// empty identifier asks the daemon for a new, unique one). Acknowledged only once it is
    /// on disk. Returns the identifier and the first occurrence.
    @discardableResult
    public func add(_ request: NotificationRequest) throws -> (identifier: String, nextFire: Instant) {
        let reply = try call("Add", [request.dbusRequest])
        guard reply.count == 2, let id = reply[0].stringValue, case .int64(let next) = reply[1] else {
            throw DBusError(name: .invalidSignature, message: "Add answered \(reply.map(\.signature).joined())")
        }
        return (id, Instant(seconds: next))
    }

    /// Adds many requests, all or none (each with its identifier replaces one pending under it):
    /// their identifiers and first occurrences, in order.
    public func addAll(_ requests: [NotificationRequest]) throws -> [(identifier: String, nextFire: Instant)] {
        let reply = try call("AddAll", [.array(element: .dictionary(key: .string, value: .variant), requests.map(\.dbusRequest))])
        guard reply.count == 1, case .array(_, let items) = reply[0] else {
            throw DBusError(name: .invalidSignature, message: "AddAll answered \(reply.map(\.signature).joined())")
        }
        return items.compactMap { item in
            guard case .structure(let pair) = item, pair.count == 2, case .string(let id) = pair[0], case .int64(let next) = pair[1] else { return nil }
            return (id, Instant(seconds: next))
        }
    }

    /// One pending request in full.
    public func request(withIdentifier identifier: String) throws -> NotificationRequest {
        try Self.request(from: try call("Get", [.string(identifier)]))
    }

    /// Pending requests in full, soonest first (`ListPending`, then `Get` for each;
    /// quarantined ones are left out, as they will not fire).
    public func pendingNotificationRequests() throws -> [PendingRequest] {
        try pendingSummaries().filter { $0.state != .quarantined }.map {
            PendingRequest(request: try request(withIdentifier: $0.identifier), nextFire: $0.nextFire)
        }
    }

    /// Pending alarms in brief, soonest first.
    public func pendingSummaries() throws -> [PendingSummary] {
        try Self.pendingSummaries(from: try call("ListPending"))
    }

    /// Removes pending requests; returns the identifiers that were pending.
    @discardableResult
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) throws -> [String] {
        try call("Remove", [.strings(identifiers)]).first?.arrayElements?.compactMap(\.stringValue) ?? []
    }

    /// Switches pending alarms off: kept and listed, never fired. Returns those switched off.
    @discardableResult
    /// Skips an alarm's next occurrence, or (`undo`) brings back the one skipped last: the
    /// occurrence skipped or brought back, and the alarm's next one.
    public func skip(_ identifier: String, undo: Bool = false) throws -> (occurrence: Instant, next: Instant?) {
        let reply = try call("Skip", [.string(identifier), .boolean(undo)])
        guard reply.count == 2, case .int64(let occurrence) = reply[0], case .int64(let next) = reply[1] else {
            throw DBusError(name: .invalidSignature, message: "Skip answered \(reply.map(\.signature).joined())")
        }
        return (Instant(seconds: occurrence), next == 0 ? nil : Instant(seconds: next))
    }

    public func disable(_ identifiers: [String]) throws -> [String] {
        try call("Disable", [.strings(identifiers)]).first?.arrayElements?.compactMap(\.stringValue) ?? []
    }

    /// Switches alarms back on: each is planned from now. Returns each with its next fire.
    @discardableResult
    public func enable(_ identifiers: [String]) throws -> [(identifier: String, nextFire: Instant)] {
        Self.pairs(try call("Enable", [.strings(identifiers)])).map { ($0.0, Instant(seconds: $0.1)) }
    }

    /// Pauses timers: each keeps the time it had left (across restarts too). Returns each with that time.
    @discardableResult
    public func pause(_ identifiers: [String]) throws -> [(identifier: String, remaining: TimeSpan)] {
        Self.pairs(try call("Pause", [.strings(identifiers)])).map { ($0.0, .milliseconds($0.1)) }
    }

    /// Resumes paused timers: each fires when its time left has passed again. Returns each with its next fire.
    @discardableResult
    public func resume(_ identifiers: [String]) throws -> [(identifier: String, nextFire: Instant)] {
        Self.pairs(try call("Resume", [.strings(identifiers)])).map { ($0.0, Instant(seconds: $0.1)) }
    }

    /// Does what a button of a delivered alarm's popup does (`snooze`, `dismiss`, or one of its own actions).
    public func answer(_ identifier: String, action: String) throws {
        _ = try call("Answer", [.string(identifier), .string(action)])
    }

    /// Plays a sound once as an alarm with it would (`default`, a sound-theme name, or an absolute path).
    public func previewSound(_ sound: String) throws {
        _ = try call("PreviewSound", [.string(sound)])
    }

    /// Plays a sound as an alarm with these options would (`PlaySound`): once, or looping for
    /// `duration`. Returns its number (for `stopSound` and the `SoundEnded` signal), how long it
    /// lasts, and the way it plays ("the sound server (...)", or a player program's name).
    public func playSound(_ sound: String, volume: Int? = nil, fade: TimeSpan? = nil, for duration: TimeSpan? = nil) throws
        -> (play: UInt32, length: TimeSpan, way: String)
    {
        var options: [(String, Value)] = []
        if let volume { options.append(("volume", .uint32(UInt32(clamping: volume)))) }
        if let fade { options.append(("fade", .uint32(UInt32(clamping: fade.seconds)))) }
        if let duration { options.append(("for", .uint32(UInt32(clamping: duration.seconds)))) }
        let reply = try call("PlaySound", [.string(sound), .vardict(options)])
        guard reply.count == 3, case .uint32(let play) = reply[0], case .int64(let length) = reply[1], case .string(let way) = reply[2] else {
            throw DBusError(name: .invalidArgs, message: "PlaySound answered \(reply.map(\.signature).joined())")
        }
        return (play, .milliseconds(length), way)
    }

    /// Stops a sound `playSound` started (one that already ended is no error).
    public func stopSound(_ play: UInt32) throws {
        _ = try call("StopSound", [.uint32(play)])
    }

    /// Calls `handler` with each `SoundEnded` signal: the play, how it ended, and a note ("" or why
    /// nothing was heard).
    public func followSoundEnded(_ handler: @escaping (_ play: UInt32, _ how: String, _ note: String) -> Void) throws -> SubscriptionToken {
        try connection.subscribe(MatchRule(sender: SchedulerInterface.busName, interface: SchedulerInterface.interface, member: "SoundEnded",
                                           path: SchedulerInterface.path)) { message in
            let arguments = message.arguments()
            guard arguments.count == 3, case .uint32(let play) = arguments[0], case .string(let how) = arguments[1],
                case .string(let note) = arguments[2]
            else { return }
            handler(play, how, note)
        }
    }

    /// The alarms ringing now, soonest due first.
    public func ringing() throws -> [(identifier: String, due: Instant, until: Instant, title: String)] {
        Self.ringing(from: try call("ListRinging"))
    }

    /// The alarm file's timer presets.
    public func timerPresets() throws -> [(name: String, duration: TimeSpan, title: String)] {
        Self.timerPresets(from: try call("ListTimerPresets"))
    }

    /// Starts the alarm file's timer preset `name`; returns the new timer's identifier and when it fires.
    @discardableResult
    public func startTimer(_ name: String) throws -> (identifier: String, nextFire: Instant) {
        let reply = try call("StartTimer", [.string(name)])
        guard reply.count == 2, let id = reply[0].stringValue, case .int64(let next) = reply[1] else {
            throw DBusError(name: .invalidSignature, message: "StartTimer answered \(reply.map(\.signature).joined())")
        }
        return (id, Instant(seconds: next))
    }

    /// Every paused timer with the time it has left.
    public func pausedTimers() throws -> [(identifier: String, remaining: TimeSpan)] {
        Self.pausedTimers(from: try call("ListPaused"))
    }

    /// An `a(sx)` answer.
    private static func pairs(_ answer: [Value]) -> [(String, Int64)] {
        (answer.first?.arrayElements ?? []).compactMap { item in
            guard case .structure(let fields) = item, fields.count == 2, let id = fields[0].stringValue,
                case .int64(let number) = fields[1] else { return nil }
            return (id, number)
        }
    }

    /// Removes every pending request added from the command line or over D-Bus (the alarm
    /// file's alarms are changed in the file); returns their identifiers.
    @discardableResult
    public func removeAllPendingNotificationRequests() throws -> [String] {
        try call("RemoveAll").first?.arrayElements?.compactMap(\.stringValue) ?? []
    }

    /// The daemon's own state: its version, store, and quarantined alarms.
    public func daemonStatus() throws -> DaemonStatus {
        try DaemonStatus(dbus: try call("Status").first)
    }

    /// The alarm file the daemon follows, and what it made of it.
    public func alarmFileStatus() throws -> AlarmFileStatus {
        try AlarmFileStatus(dbus: try call("AlarmFileStatus").first)
    }

    /// Has the daemon read the alarm file again now (as on SIGHUP or an edit).
    public func reloadAlarmFile() throws -> AlarmFileStatus {
        try AlarmFileStatus(dbus: try call("ReloadAlarmFile").first)
    }

    /// Notifications the server is showing (or showed), oldest first.
    public func deliveredNotifications() throws -> [DeliveredSummary] {
        try (try call("ListDelivered").first?.arrayElements ?? []).map { item throws(DBusError) in try DeliveredSummary(dbus: item) }
    }

    /// Closes delivered notifications.
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) throws {
        _ = try call("CloseDelivered", [.strings(identifiers)])
    }

    /// Occurrences that passed while nothing could show them.
    public func missedOccurrences() throws -> [MissedOccurrence] {
        try Self.missed(from: try call("ListMissed"))
    }
}

/// What the daemon made of the alarm file, as `chime status` shows it.
public struct AlarmFileStatus: Hashable, Sendable {
    /// The file the daemon follows.
    public var path: String
    /// Whether the file was there at the last look.
    public var exists: Bool
    /// Alarms from the file that are scheduled, and those set `enabled = false`.
    public var alarms: Int
    public var disabled: Int
    /// When the running set was loaded (nil: never, or no file).
    public var loaded: Instant?
    /// When the file was last read.
    public var checked: Instant?
    /// What was wrong at the last read (`file:line:col: message`); the last good set keeps running meanwhile.
    public var problems: [String]
    /// Alarms from the file left out because a command-line alarm has their identifier.
    public var conflicts: [String]

    public init(path: String, exists: Bool = false, alarms: Int = 0, disabled: Int = 0, loaded: Instant? = nil,
                checked: Instant? = nil, problems: [String] = [], conflicts: [String] = []) {
        self.path = path
        self.exists = exists
        self.alarms = alarms
        self.disabled = disabled
        self.loaded = loaded
        self.checked = checked
        self.problems = problems
        self.conflicts = conflicts
    }
}
