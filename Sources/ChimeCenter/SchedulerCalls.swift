// Every method of org.chime.Scheduler1, typed, in one place: what is sent and how the answer is read.
// A client asks through `UserNotificationCenter`, blocking (`perform`) or not (`send`, for an event
// loop such as the app's), and names a method only as one of these values, never by its member
// name. A test holds the member names and signatures to packaging/org.chime.Scheduler1.xml.
import DBus
import Posix
import Timekeeping

/// One call of org.chime.Scheduler1: its member, the arguments sent, its signatures as the
/// interface's XML gives them, and how its answer is read.
public struct SchedulerCall<Answer> {
    public let member: MemberName
    public let arguments: [Value]
    /// The method's in and out signatures (the XML's; `SchedulerCallTests` holds them to it).
    public let inSignature: String
    public let outSignature: String
    let read: ([Value]) throws -> Answer

    init(_ member: MemberName, _ arguments: [Value] = [], in inSignature: String = "", out outSignature: String = "",
         read: @escaping ([Value]) throws -> Answer) {
        self.member = member
        self.arguments = arguments
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.read = read
    }

    /// Reads an answer to this call.
    public func answer(from reply: [Value]) throws -> Answer { try read(reply) }

    /// The same call, its answer read and dropped (for a caller that needs only that it succeeded).
    public var ignoringAnswer: SchedulerCall<Void> {
        SchedulerCall<Void>(member, arguments, in: inSignature, out: outSignature) { [read] reply in _ = try read(reply) }
    }
}

/// The methods of org.chime.Scheduler1, one typed call each.
public enum Scheduler1 {
    public typealias Added = (identifier: String, nextFire: Instant)

    /// Checks and stores a request, and schedules it: its identifier and first occurrence.
    /// `calendar`: into that calendar chime writes to; `intoDefaultCalendar`: into the alarm file's
    /// `[defaults] calendar` when it names one.
    public static func add(_ request: NotificationRequest, calendar: String? = nil, intoDefaultCalendar: Bool = false) -> SchedulerCall<Added> {
        var entries = request.dbusRequest
        if case .dictionary(let k, let v, var items) = entries {
            if let calendar { items.append(.init(key: .string("calendar"), value: .variant(.string(calendar)))) }
            if intoDefaultCalendar { items.append(.init(key: .string("calendar-default"), value: .variant(.boolean(true)))) }
            entries = .dictionary(key: k, value: v, items)
        }
        return SchedulerCall("Add", [entries], in: "a{sv}", out: "sx") { reply in
            guard reply.count == 2, let id = reply[0].stringValue, case .int64(let next) = reply[1] else { throw mismatch("Add", reply) }
            return (id, Instant(seconds: next))
        }
    }

    /// Adds many requests, all or none: each one's identifier and first occurrence, in order.
    public static func addAll(_ requests: [NotificationRequest]) -> SchedulerCall<[Added]> {
        SchedulerCall("AddAll", [.array(element: .dictionary(key: .string, value: .variant), requests.map(\.dbusRequest))],
                      in: "aa{sv}", out: "a(sx)") { reply in
            try pairs("AddAll", reply).map { ($0.0, Instant(seconds: $0.1)) }
        }
    }

    /// Cancels pending requests: those that were pending.
    public static func remove(_ identifiers: [String]) -> SchedulerCall<[String]> {
        SchedulerCall("Remove", [.strings(identifiers)], in: "as", out: "as") { try strings("Remove", $0) }
    }

    /// Switches pending alarms off (kept, never fired): those switched off.
    public static func disable(_ identifiers: [String]) -> SchedulerCall<[String]> {
        SchedulerCall("Disable", [.strings(identifiers)], in: "as", out: "as") { try strings("Disable", $0) }
    }

    /// Switches alarms back on, each planned from now: each with its next fire.
    public static func enable(_ identifiers: [String]) -> SchedulerCall<[Added]> {
        SchedulerCall("Enable", [.strings(identifiers)], in: "as", out: "a(sx)") { reply in
            try pairs("Enable", reply).map { ($0.0, Instant(seconds: $0.1)) }
        }
    }

    /// Skips an alarm's next occurrence, or (`undo`) brings back the one skipped last: that
    /// occurrence, and the alarm's next one.
    public static func skip(_ identifier: String, undo: Bool = false) -> SchedulerCall<(occurrence: Instant, next: Instant?)> {
        SchedulerCall("Skip", [.string(identifier), .boolean(undo)], in: "sb", out: "xx") { reply in
            guard reply.count == 2, case .int64(let occurrence) = reply[0], case .int64(let next) = reply[1] else {
                throw mismatch("Skip", reply)
            }
            return (Instant(seconds: occurrence), next == 0 ? nil : Instant(seconds: next))
        }
    }

    /// Pauses timers: each with the time it had left.
    public static func pause(_ identifiers: [String]) -> SchedulerCall<[(identifier: String, remaining: TimeSpan)]> {
        SchedulerCall("Pause", [.strings(identifiers)], in: "as", out: "a(sx)") { reply in
            try pairs("Pause", reply).map { ($0.0, .milliseconds($0.1)) }
        }
    }

    /// Resumes paused timers: each with its next fire.
    public static func resume(_ identifiers: [String]) -> SchedulerCall<[Added]> {
        SchedulerCall("Resume", [.strings(identifiers)], in: "as", out: "a(sx)") { reply in
            try pairs("Resume", reply).map { ($0.0, Instant(seconds: $0.1)) }
        }
    }

    /// Every paused timer with the time it has left.
    public static var listPaused: SchedulerCall<[(identifier: String, remaining: TimeSpan)]> {
        SchedulerCall("ListPaused", out: "a(sx)") { reply in try pairs("ListPaused", reply).map { ($0.0, .milliseconds($0.1)) } }
    }

    /// What days off and time away do to an alarm's occurrences of the next year.
    public static func occurrencesOff(_ identifier: String) -> SchedulerCall<[(original: Instant, fate: OccurrenceFate)]> {
        SchedulerCall("OccurrencesOff", [.string(identifier)], in: "s", out: "a(xsxs)") { reply in
            guard let items = reply.first?.arrayElements else { throw mismatch("OccurrencesOff", reply) }
            return items.compactMap { item in
                guard case .structure(let f) = item, f.count == 4, case .int64(let original) = f[0], let fate = f[1].stringValue,
                    case .int64(let at) = f[2], let why = f[3].stringValue else { return nil }
                let said: OccurrenceFate? = switch fate {
                case "moved": .moved(to: Instant(seconds: at), holiday: why)
                case "skipped": .dropped(holiday: why)
                case "away": .away(until: Instant(seconds: at))
                case "rings": .rings
                default: nil
                }
                return said.map { (Instant(seconds: original), $0) }
            }
        }
    }

    /// The alarms with a skipped occurrence ahead, each with the earliest (what the app's Undo skip is for).
    public static var listSkipped: SchedulerCall<[(identifier: String, occurrence: Instant)]> {
        SchedulerCall("ListSkipped", out: "a(sx)") { reply in try pairs("ListSkipped", reply).map { ($0.0, Instant(seconds: $0.1)) } }
    }

    /// Every stretch of time away: when it starts and ends, the alarms it is for (all: none named),
    /// and whether the alarm file set it.
    public static var listAway: SchedulerCall<[(away: DaysOff.Away, fromFile: Bool)]> {
        SchedulerCall("ListAway", out: "a(xxasb)") { reply in
            guard let items = reply.first?.arrayElements else { throw mismatch("ListAway", reply) }
            return items.compactMap { item in
                guard case .structure(let f) = item, f.count == 4, case .int64(let from) = f[0], case .int64(let until) = f[1],
                    let ids = f[2].arrayElements?.compactMap(\.stringValue), case .boolean(let fromFile) = f[3] else { return nil }
                return (DaysOff.Away(from: Instant(seconds: from), until: Instant(seconds: until), alarms: ids.isEmpty ? nil : Set(ids)), fromFile)
            }
        }
    }

    /// Sets time away for the alarms named (every alarm: none); `from` nil: from now.
    public static func setAway(from: Instant?, until: Instant, identifiers: [String]) -> SchedulerCall<Void> {
        SchedulerCall("SetAway", [.int64(from?.seconds ?? 0), .int64(until.seconds), .strings(identifiers)], in: "xxas") { _ in () }
    }

    /// Ends time away set by command: all of it, or the named alarms' part; answers what changed.
    public static func endAway(_ identifiers: [String]) -> SchedulerCall<[DaysOff.Away]> {
        SchedulerCall("EndAway", [.strings(identifiers)], in: "as", out: "a(xxas)") { reply in
            guard let items = reply.first?.arrayElements else { throw mismatch("EndAway", reply) }
            return items.compactMap { item in
                guard case .structure(let f) = item, f.count == 3, case .int64(let from) = f[0], case .int64(let until) = f[1],
                    let ids = f[2].arrayElements?.compactMap(\.stringValue) else { return nil }
                return DaysOff.Away(from: Instant(seconds: from), until: Instant(seconds: until), alarms: ids.isEmpty ? nil : Set(ids))
            }
        }
    }

    /// Does what a button of a delivered alarm's popup does (`snooze`, `dismiss`, or one of its own).
    public static func answer(_ identifier: String, action: String) -> SchedulerCall<Void> {
        SchedulerCall("Answer", [.string(identifier), .string(action)], in: "ss") { _ in () }
    }

    /// Snoozes a delivered alarm for `span` instead of its own snooze time.
    public static func snooze(_ identifier: String, for span: TimeSpan) -> SchedulerCall<Void> {
        SchedulerCall("SnoozeFor", [.string(identifier), .int64(span.seconds)], in: "sx") { _ in () }
    }

    /// Plays a sound once as an alarm with it would (`default`, a sound-theme name, or a path).
    public static func previewSound(_ sound: String) -> SchedulerCall<Void> {
        SchedulerCall("PreviewSound", [.string(sound)], in: "s") { _ in () }
    }

    /// Plays a sound as an alarm with these options would: once, or looping for `duration`. Its
    /// number (for `stopSound` and `SoundEnded`), how long it lasts, and the way it plays.
    public static func playSound(_ sound: String, volume: Int? = nil, fade: TimeSpan? = nil, for duration: TimeSpan? = nil)
        -> SchedulerCall<(play: UInt32, length: TimeSpan, way: String)>
    {
        var options: [(String, Value)] = []
        if let volume { options.append(("volume", .uint32(UInt32(clamping: volume)))) }
        if let fade { options.append(("fade", .uint32(UInt32(clamping: fade.seconds)))) }
        if let duration { options.append(("for", .uint32(UInt32(clamping: duration.seconds)))) }
        return SchedulerCall("PlaySound", [.string(sound), .vardict(options)], in: "sa{sv}", out: "uxs") { reply in
            guard reply.count == 3, case .uint32(let play) = reply[0], case .int64(let length) = reply[1], case .string(let way) = reply[2] else {
                throw mismatch("PlaySound", reply)
            }
            return (play, .milliseconds(length), way)
        }
    }

    /// Stops a sound `playSound` started (one that already ended is no error).
    public static func stopSound(_ play: UInt32) -> SchedulerCall<Void> {
        SchedulerCall("StopSound", [.uint32(play)], in: "u") { _ in () }
    }

    /// The alarms ringing now, soonest due first.
    public static var listRinging: SchedulerCall<[(identifier: String, due: Instant, until: Instant, title: String)]> {
        SchedulerCall("ListRinging", out: "a(sxxs)") { reply in
            (reply.first?.arrayElements ?? []).compactMap { item in
                guard case .structure(let f) = item, f.count == 4, let id = f[0].stringValue, case .int64(let due) = f[1],
                    case .int64(let until) = f[2], let title = f[3].stringValue else { return nil }
                return (id, Instant(seconds: due), Instant(seconds: until), title)
            }
        }
    }

    /// The alarm file's timer presets.
    /// The calendars chime writes to or syncs (the alarm file's `[[calendar]]` with `write` or
    /// `sync`): name, whether chime writes to it, whether it syncs it, whether `chime at` puts
    /// alarms into it unless told otherwise (`[defaults] calendar`), and why its sync fails ("").
    public static var listCalendars: SchedulerCall<[(name: String, write: Bool, syncs: Bool, isDefault: Bool, failing: String)]> {
        SchedulerCall("ListCalendars", out: "a(sbbbs)") { reply in
            (reply.first?.arrayElements ?? []).compactMap { item in
                guard case .structure(let f) = item, f.count == 5, let name = f[0].stringValue, case .boolean(let write) = f[1],
                    case .boolean(let syncs) = f[2], case .boolean(let isDefault) = f[3], let failing = f[4].stringValue else { return nil }
                return (name, write, syncs, isDefault, failing)
            }
        }
    }

    public static var listTimerPresets: SchedulerCall<[(name: String, duration: TimeSpan, title: String)]> {
        SchedulerCall("ListTimerPresets", out: "a(sxs)") { reply in
            (reply.first?.arrayElements ?? []).compactMap { item in
                guard case .structure(let f) = item, f.count == 3, let name = f[0].stringValue, case .int64(let seconds) = f[1],
                    let title = f[2].stringValue else { return nil }
                return (name, .seconds(seconds), title)
            }
        }
    }

    /// Starts the alarm file's timer preset `name`: the new timer's identifier and when it fires.
    public static func startTimer(_ name: String) -> SchedulerCall<Added> {
        SchedulerCall("StartTimer", [.string(name)], in: "s", out: "sx") { reply in
            guard reply.count == 2, let id = reply[0].stringValue, case .int64(let next) = reply[1] else { throw mismatch("StartTimer", reply) }
            return (id, Instant(seconds: next))
        }
    }

    /// Cancels every request added from the command line or over D-Bus: their identifiers.
    public static var removeAll: SchedulerCall<[String]> {
        SchedulerCall("RemoveAll", out: "as") { try strings("RemoveAll", $0) }
    }

    /// One pending request in full.
    public static func get(_ identifier: String) -> SchedulerCall<NotificationRequest> {
        SchedulerCall("Get", [.string(identifier)], in: "s", out: "a{sv}") { reply in
            guard let entries = reply.first?.dictionaryEntries else { throw mismatch("Get", reply) }
            do {
                return try NotificationRequest.fromStored(entries)
            } catch {
                throw DBusError(name: .invalidSignature, message: "Get answered a request chime cannot read: \(error)")
            }
        }
    }

    /// Pending alarms in brief, soonest first.
    public static var listPending: SchedulerCall<[PendingSummary]> {
        SchedulerCall("ListPending", out: "a(sxssssssssx)") { reply in
            try (reply.first?.arrayElements ?? []).map { item throws(DBusError) in try PendingSummary(dbus: item) }
        }
    }

    /// The same list beside the bus: a sealed file in memory holding `ListPending`'s rows
    /// (`PendingRows`), read here and closed; 100,000 alarms cross the bus as one descriptor.
    public static var listPendingFile: SchedulerCall<[PendingSummary]> {
        SchedulerCall("ListPendingFile", out: "hu") { reply in
            guard reply.count == 2, case .unixFD(let fd) = reply[0], case .uint32(let count) = reply[1] else {
                if case .unixFD(let fd)? = reply.first { _ = try? Sys.close(fd) }
                throw mismatch("ListPendingFile", reply)
            }
            defer { _ = try? Sys.close(fd) }
            // Sealed: nobody can change it while it is read.
            guard Sys.isSealed(fd) else { throw DBusError(name: .invalidArgs, message: "the daemon's listing is not a sealed file") }
            let size = try Sys.size(fd)
            guard size <= PendingRows.maximumBytes else {
                throw DBusError(name: .limitsExceeded, message: "the daemon's listing is \(size >> 20) MiB, more than chime reads")
            }
            let bytes = try Sys.read(fd, upTo: size, at: 0, context: "the daemon's listing")
            let rows = try bytes.withUnsafeBytes { (buffer) throws(DBusError) in try PendingRows.read(buffer) }
            guard rows.count == count else {
                throw DBusError(name: .invalidArgs, message: "the daemon's listing holds \(rows.count) alarms, not the \(count) it said")
            }
            return rows
        }
    }

    /// Notifications the server is showing (or showed), oldest first.
    public static var listDelivered: SchedulerCall<[DeliveredSummary]> {
        SchedulerCall("ListDelivered", out: "a(suxsb)") { reply in
            try (reply.first?.arrayElements ?? []).map { item throws(DBusError) in try DeliveredSummary(dbus: item) }
        }
    }

    /// Takes delivered alarms off the screen.
    public static func closeDelivered(_ identifiers: [String]) -> SchedulerCall<Void> {
        SchedulerCall("CloseDelivered", [.strings(identifiers)], in: "as") { _ in () }
    }

    /// Occurrences that passed while nothing could show them.
    public static var listMissed: SchedulerCall<[MissedOccurrence]> {
        SchedulerCall("ListMissed", out: "a(sxxs)") { reply in
            try (reply.first?.arrayElements ?? []).map { item throws(DBusError) in try MissedOccurrence(dbus: item) }
        }
    }

    /// What the daemon's notification server can do, as the daemon sees it (and its own player).
    public static var settings: SchedulerCall<NotificationSettings> {
        SchedulerCall("Settings", out: "a{sv}") { try NotificationSettings(dbus: $0.first) }
    }

    /// The daemon's own state: its version, store, quarantined alarms, waking, sleep, sound.
    public static var status: SchedulerCall<DaemonStatus> {
        SchedulerCall("Status", out: "a{sv}") { try DaemonStatus(dbus: $0.first) }
    }

    /// The alarm file the daemon follows, and what it made of it.
    public static var alarmFileStatus: SchedulerCall<AlarmFileStatus> {
        SchedulerCall("AlarmFileStatus", out: "a{sv}") { try AlarmFileStatus(dbus: $0.first) }
    }

    /// Has the daemon read the alarm file again now: what it made of it.
    public static var reloadAlarmFile: SchedulerCall<AlarmFileStatus> {
        SchedulerCall("ReloadAlarmFile", out: "a{sv}") { try AlarmFileStatus(dbus: $0.first) }
    }

    // MARK: - Reading answers

    static func mismatch(_ member: String, _ reply: [Value]) -> DBusError {
        DBusError(name: .invalidSignature, message: "\(member) answered \(reply.map(\.signature).joined())")
    }

    /// An `as` answer.
    static func strings(_ member: String, _ reply: [Value]) throws -> [String] {
        guard let items = reply.first?.arrayElements else { throw mismatch(member, reply) }
        return items.compactMap(\.stringValue)
    }

    /// An `a(sx)` answer.
    static func pairs(_ member: String, _ reply: [Value]) throws -> [(String, Int64)] {
        guard let items = reply.first?.arrayElements else { throw mismatch(member, reply) }
        return items.compactMap { item in
            guard case .structure(let fields) = item, fields.count == 2, let id = fields[0].stringValue,
                case .int64(let number) = fields[1] else { return nil }
            return (id, number)
        }
    }
}

/// The signals of org.chime.Scheduler1 (docs/dbus-interface.md says what each carries), each followed
/// from the daemon only: the rule names its well-known name, which the bus matches to its owner.
public enum SchedulerSignal: String, CaseIterable, Sendable {
    case fired = "Fired"
    case missed = "Missed"
    case rangOut = "RangOut"
    case reminded = "Reminded"
    case answered = "Answered"
    case dismissed = "Dismissed"
    case pendingChanged = "PendingChanged"
    case ringingChanged = "RingingChanged"
    case soundEnded = "SoundEnded"
    case calendarsChanged = "CalendarsChanged"

    public var member: MemberName { MemberName(rawValue: rawValue)! }

    /// Its arguments' signature, as the interface's XML gives it (`SchedulerCallTests` holds it to it).
    public var signature: String {
        switch self {
        case .fired: "sxs"
        case .missed: "sx"
        case .rangOut: "sxb"
        case .reminded: "sxx"
        case .answered: "ss"
        case .dismissed: "s"
        case .pendingChanged, .ringingChanged: "as"
        case .soundEnded: "uss"
        case .calendarsChanged: ""
        }
    }

    public var matchRule: MatchRule {
        MatchRule(sender: SchedulerInterface.busName, interface: SchedulerInterface.interface, member: member, path: SchedulerInterface.path)
    }
}
