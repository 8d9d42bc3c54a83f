// A request on the wire: an `a{sv}` of documented keys (docs/dbus-interface.md), as
// the notification spec carries hints. Both ends of org.chime.Scheduler1 use this
// file; nothing else turns a request into D-Bus values or back.
import DBus
import Notifications
import Timekeeping

/// The keys of a request dictionary, as `Add` takes it.
public enum RequestKey {
    /// Every key `Add` accepts, in the order the documentation lists them.
    public static let all: [String] = RequestField.allCases.filter { !$0.isStoredOnly }.map(\.rawValue)
}

/// What `Add` was given: the request, and whether its identifier was the caller's
/// (false: the daemon is to make a unique one).
public struct IncomingRequest: Sendable {
    public var request: NotificationRequest
    public var identifierGiven: Bool
    /// The calendar chime writes to that the alarm goes into (`calendar`: a `[[calendar]]` with
    /// `write = true`, by its name); nil: the daemon keeps it.
    public var calendar: String? = nil
    /// Into the alarm file's `[defaults] calendar` when it names one and `calendar` is not given
    /// (`calendar-default`: what `chime at` asks unless `--here`).
    public var calendarDefault = false
}

extension NotificationRequest {
    /// The request as `Add` takes it: an `a{sv}` with a key for every field that differs
    /// from its default. The trigger travels as its rule text (or `at`); the daemon anchors
    /// it when it receives it.
    public var dbusRequest: Value {
        var entries: [(String, Value)] = []
        if !identifier.isEmpty { entries.append(("id", .string(identifier))) }
        let c = content
        entries.append(("title", .string(c.title)))
        if !c.subtitle.isEmpty { entries.append(("subtitle", .string(c.subtitle))) }
        if !c.body.isEmpty { entries.append(("body", .string(c.body))) }
        if c.bodyIsMarkup { entries.append(("body-markup", .boolean(true))) }
        if !c.label.isEmpty { entries.append(("label", .string(c.label))) }
        if !c.icon.isEmpty { entries.append(("icon", .string(c.icon))) }
        if !c.category.isEmpty { entries.append(("category", .string(c.category))) }
        if c.urgency != .normal { entries.append(("urgency", .string(c.urgency.name))) }
        switch c.sound {
        case nil: break
        case .default?: entries.append(("sound", .string("default")))
        case .named(let name)?: entries.append(("sound", .string(name)))
        case .file(let path)?: entries.append(("sound-file", .string(path)))
        }
        if let volume = c.volume { entries.append(("volume", .uint32(UInt32(clamping: volume)))) }
        if let fade = c.fade { entries.append(("fade", .uint32(UInt32(clamping: fade.seconds)))) }
        if let fadeFrom = c.fadeFrom { entries.append(("fade-from", .uint32(UInt32(clamping: fadeFrom)))) }
        if c.insist { entries.append(("insist", .boolean(true))) }
        if !c.actions.isEmpty {
            entries.append(("actions", .array(element: .structure([.string, .string]),
                                              c.actions.map { .structure([.string($0.identifier), .string($0.title)]) })))
        }
        if !c.userInfo.isEmpty {
            entries.append(("user-info", .dictionary(key: .string, value: .string, c.userInfo.sorted { $0.key < $1.key }.map {
                .init(key: .string($0.key), value: .string($0.value))
            })))
        }
        switch c.expiry {
        case .serverDefault: break
        case .never: entries.append(("persistent", .boolean(true)))
        case .after(let span): entries.append(("expire", .uint32(UInt32(clamping: span.seconds))))
        }
        if let snooze = c.snooze { entries.append(("snooze", .uint32(UInt32(clamping: snooze.seconds)))) }
        if let grace = c.grace { entries.append(("grace", .uint32(UInt32(clamping: grace.seconds)))) }
        if let ring = c.ring { entries.append(("ring", .uint32(UInt32(clamping: ring.seconds)))) }
        if c.autoSnooze { entries.append(("auto-snooze", .boolean(true))) }
        if c.wake { entries.append(("wake", .boolean(true))) } else if c.stayAsleep { entries.append(("wake", .boolean(false))) }
        if let policy = c.doNotDisturb { entries.append(("dnd", .string(policy.rawValue))) }
        if let command = c.bodyCommand {
            entries.append(("body-command", .strings(command.arguments)))
            if command.timeLimit != BodyCommand.defaultTimeLimit {
                entries.append(("body-timeout", .uint32(UInt32(clamping: command.timeLimit.seconds))))
            }
            if command.outputLimit != BodyCommand.defaultOutputLimit {
                entries.append(("body-output-limit", .uint32(UInt32(clamping: command.outputLimit))))
            }
        }
        switch trigger.rule {
        case .instant(let instant):
            // Whole seconds as an integer; a fraction as a double (sub-microsecond precision).
            entries.append(("at", instant.nanosecond == 0 ? .int64(instant.seconds)
                                : .double(Double(instant.seconds) + Double(instant.nanosecond) / 1e9)))
        case .interval(let span, let again): entries.append(("rule", .string((again ? "every " : "in ") + span.description)))
        case .calendar(let expression): entries.append(("rule", .string(expression.description)))
        case .recurrence(let recurrence): entries.append(("rule", .string(recurrence.text)))
        }
        if trigger.repeats != trigger.rule.repeats { entries.append(("repeats", .boolean(trigger.repeats))) }
        if let zone = trigger.timeZone { entries.append(("time-zone", .string(zone))) }
        if !trigger.offsets.isEmpty {
            entries.append(("offset", .array(element: .int64, trigger.offsets.map { .int64($0.seconds) })))
        }
        if !trigger.reminders.isEmpty {
            entries.append(("remind", .array(element: .uint32, trigger.reminders.map { .uint32(UInt32(clamping: $0.seconds)) })))
        }
        if !trigger.exceptions.isEmpty { entries.append(("except", .strings(trigger.exceptions.map(\.description)))) }
        if let until = trigger.until { entries.append(("until", .int64(until.seconds))) }
        if let count = trigger.count { entries.append(("count", .uint32(UInt32(clamping: count)))) }
        if let said = trigger.said { entries.append(("said", .string(said))) }
        if let policy = trigger.onHoliday, policy != .ring { entries.append(("on-holiday", .string(policy.rawValue))) }
        if let notice = trigger.notice { entries.append(("notice", .uint32(UInt32(clamping: notice.seconds)))) }
        return .vardict(entries)
    }

    /// Its rule as a person writes it for the `rule` key (`16:35 mon-fri`, `in 5m`, `every 25m`, a
    /// calendar expression in full where it has no short form), or "" for a one-off at an instant:
    /// what `ListPending` lists.
    public var summaryRule: String {
        switch trigger.rule {
        case .instant: ""
        case .interval(let span, let again): (again ? "every " : "in ") + span.description
        case .calendar(let expression): expression.shortDescription
        case .recurrence(let recurrence): recurrence.text
        }
    }

    /// Its sound as the `sound` or `sound-file` key has it (`default`, `bell`, a path), or "".
    public var summarySound: String {
        switch content.sound {
        case nil: ""
        case .default?: "default"
        case .named(let name)?: name
        case .file(let path)?: path
        }
    }

    /// Reads a request dictionary as `Add` receives it, anchored at `now`, and validates it
    /// (`validate(now:)`): every key known and of its documented type, every field within its
    /// bound, and at least one occurrence ahead. Without an `id` (or with an empty one), the
    /// request's identifier is empty and `identifierGiven` false.
    public static func fromDBus(_ entries: [Value.DictionaryEntry], now: Instant) throws(RequestError) -> IncomingRequest {
        let incoming = try decode(entries, now: now, stored: false)
        var request = incoming.request
        // Checked with a stand-in where the daemon makes the identifier.
        if request.identifier.isEmpty { request.identifier = "x" }
        try request.validate(now: now)
        return incoming
    }

    /// The request as `Get` answers it: `dbusRequest` with its identifier, its `anchor` (when it
    /// was set) and the occurrences `skipped`, each in whole seconds since the epoch and, as
    /// `anchor-ns` and `skipped-ns`, exactly, in nanoseconds.
    public var storedDBusRequest: Value {
        guard case .dictionary(let k, let v, var entries) = dbusRequest else { return dbusRequest }
        entries.append(.init(key: .string("anchor"), value: .variant(.int64(trigger.anchor.seconds))))
        entries.append(.init(key: .string("anchor-ns"), value: .variant(.int64(trigger.anchor.nanosecondsSinceEpoch))))
        if !trigger.skipped.isEmpty {
            entries.append(.init(key: .string("skipped"), value: .variant(.array(element: .int64, trigger.skipped.map { .int64($0.seconds) }))))
            entries.append(.init(key: .string("skipped-ns"),
                                 value: .variant(.array(element: .int64, trigger.skipped.map { .int64($0.nanosecondsSinceEpoch) }))))
        }
        return .dictionary(key: k, value: v, entries)
    }

    /// Reads what `Get` answers (validated, but it may have no occurrence left).
    public static func fromStored(_ entries: [Value.DictionaryEntry]) throws(RequestError) -> NotificationRequest {
        try decode(entries, now: .epoch, stored: true).request
    }

    private static func decode(_ entries: [Value.DictionaryEntry], now: Instant, stored: Bool) throws(RequestError) -> IncomingRequest {
        var fields: [RequestField: Value] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else { continue }  // the signature is a{sv}: always a string
            guard let field = RequestField(rawValue: key), !field.isStoredOnly || stored else {
                let guess = closestWord(to: key, in: RequestKey.all).map { "; did you mean '\($0)'?" } ?? ""
                throw RequestError(key: key.isEmpty ? "(an empty key)" : escapedForMessage(key), "unknown key\(guess) (keys: \(RequestKey.all.joined(separator: ", ")))")
            }
            guard fields[field] == nil else { throw RequestError(field, "is given twice") }
            // a{sv}: each value is one variant; its content is the value itself.
            guard case .variant(let inner) = entry.value else { throw RequestError(field, "must be a variant") }
            fields[field] = inner
        }
        let reader = FieldReader(fields: fields)
        let identifier = try reader.string(.id) ?? ""
        var anchor = now
        // Exactly where the answer says it exactly (a daemon before 0.3 said whole seconds only).
        if stored, let nanoseconds = try reader.integer(.anchorNanoseconds) {
            anchor = Instant(nanosecondsSinceEpoch: nanoseconds)
        } else if stored, let seconds = try reader.integer(.anchor) {
            anchor = Instant(seconds: seconds)
        }
        // What the program said, each field as given; the builder adds nothing (`asGiven`) and
        // applies the rules across fields, as at every other door.
        var draft = AlarmDraft(kind: .asGiven, anchor: anchor)
        // A program may say when as a person would (`rule`: "every other tuesday 09:00"): read once,
        // as said now, and kept as the rule it means.
        draft.readsPhrases = !stored
        // An empty `id` is documented as none: the daemon makes one.
        draft.identifier = identifier.isEmpty ? nil : identifier
        draft.title = try reader.string(.title)
        draft.subtitle = try reader.string(.subtitle)
        draft.body = try reader.string(.body)
        draft.bodyIsMarkup = try reader.bool(.bodyMarkup)
        draft.label = try reader.string(.label)
        draft.icon = try reader.string(.icon)
        draft.category = try reader.string(.category)
        if let name = try reader.string(.urgency) {
            guard let urgency = Urgency(name: name) else {
                throw RequestError(.urgency, "must be \"low\", \"normal\" or \"critical\", got \"\(escapedForMessage(name))\"")
            }
            draft.urgency = urgency
        }
        let soundName = try reader.string(.sound)
        let soundFile = try reader.string(.soundFile)
        if soundName != nil, soundFile != nil { throw RequestError(.soundFile, "give sound or sound-file, not both") }
        if let soundName { draft.sound = soundName == "default" ? .default : .named(soundName) }
        if let soundFile { draft.sound = .file(soundFile) }
        if let volume = try reader.integer(.volume) {
            guard let percent = Int(exactly: volume), RequestBounds.volume.contains(percent) else {
                throw RequestError(.volume, "must be \(RequestBounds.volume.lowerBound)-\(RequestBounds.volume.upperBound) percent, got \(volume)")
            }
            draft.volume = percent
        }
        draft.fade = try reader.seconds(.fade)
        if let fadeFrom = try reader.integer(.fadeFrom) {
            guard let percent = Int(exactly: fadeFrom), RequestBounds.fadeFrom.contains(percent) else {
                throw RequestError(.fadeFrom, "must be \(RequestBounds.fadeFrom.lowerBound)-\(RequestBounds.fadeFrom.upperBound) percent of the volume, got \(fadeFrom)")
            }
            draft.fadeFrom = percent
        }
        draft.insist = try reader.bool(.insist)
        if let actions = fields[.actions] {
            guard case .array(.structure([.string, .string]), let items) = actions else {
                throw RequestError(.actions, "must be a(ss): (identifier, title) pairs, got \(actions.signature)")
            }
            try checkCount(items.count, .actions, RequestBounds.actionCount, "actions")
            draft.actions = items.compactMap { item in
                guard case .structure(let pair) = item, case .string(let id) = pair[0], case .string(let title) = pair[1] else { return nil }
                return NotificationAction(identifier: id, title: title)
            }
        }
        if let info = fields[.userInfo] {
            guard case .dictionary(.string, .string, let pairs) = info else {
                throw RequestError(.userInfo, "must be a{ss}, got \(info.signature)")
            }
            try checkCount(pairs.count, .userInfo, RequestBounds.userInfoCount, "entries")
            var userInfo: [String: String] = [:]
            for pair in pairs {
                if case .string(let key) = pair.key, case .string(let value) = pair.value { userInfo[key] = value }
            }
            draft.userInfo = userInfo
        }
        draft.persistent = try reader.bool(.persistent)
        draft.expire = try reader.seconds(.expire)
        draft.snooze = try reader.seconds(.snooze)
        draft.grace = try reader.seconds(.grace)
        draft.ring = try reader.seconds(.ring)
        draft.autoSnooze = try reader.bool(.autoSnooze)
        draft.wake = try reader.bool(.wake)
        if let name = try reader.string(.dnd) {
            guard let policy = DoNotDisturbPolicy(rawValue: name) else {
                throw RequestError(.dnd, "must be \"break-through\", \"defer\" or \"silent\", got \"\(escapedForMessage(name))\"")
            }
            draft.doNotDisturb = policy
        }
        draft.bodyTimeout = try reader.seconds(.bodyTimeout)
        draft.bodyOutputLimit = try reader.integer(.bodyOutputLimit).map { Int(clamping: $0) }
        if let words = fields[.bodyCommand] {
            guard case .array(.string, let items) = words else {
                throw RequestError(.bodyCommand, "must be as (the program, then its arguments), got \(words.signature)")
            }
            try checkCount(items.count, .bodyCommand, RequestBounds.bodyCommandArguments, "words")
            draft.bodyCommand = items.compactMap(\.stringValue)
        }
        // The content first: its errors are cheaper to find than the rule's.
        _ = try draft.buildContent()

        draft.timeZone = try reader.string(.timeZone)
        draft.repeats = try reader.bool(.repeats)
        switch (try reader.string(.rule), try reader.instant(.at)) {
        case (let text?, nil): draft.when = .rule(text)
        case (nil, let instant?): draft.when = .instant(instant)
        case (nil, nil): draft.when = nil
        case (_?, _?): throw RequestError(.at, "give rule or at, not both")
        }
        if let seconds = try reader.integers(.offset, "ax: seconds from each occurrence (negative: before)",
                                             count: RequestBounds.offsetCount, noun: "offsets") {
            draft.offsets = seconds.map { .seconds($0) }
        }
        if let seconds = try reader.integers(.remind, "au: seconds before each occurrence", count: RequestBounds.reminderCount,
                                             noun: "reminders") {
            draft.reminders = try seconds.map { (n) throws(RequestError) -> TimeSpan in
                guard (1...Int64(UInt32.max)).contains(n) else { throw RequestError(.remind, "must be a number of seconds, got \(n)") }
                return .seconds(n)
            }
        }
        if let dates = fields[.except] {
            guard case .array(.string, let items) = dates else {
                throw RequestError(.except, "must be as: dates (YYYY-MM-DD) or months (YYYY-MM), got \(dates.signature)")
            }
            try checkCount(items.count, .except, RequestBounds.exceptionCount, "dates")
            draft.exceptions = try items.compactMap(\.stringValue).map { (text) throws(RequestError) -> ExceptDate in
                do throws(RuleError) { return try ExceptDate(parsing: text) } catch {
                    throw RequestError(.except, "\"\(escapedForMessage(text))\": \(error.message)")
                }
            }
        }
        if let until = try reader.instant(.until) { draft.until = .instant(until) }
        if let count = try reader.integer(.count) {
            guard let n = Int(exactly: count), RequestBounds.count.contains(n) else {
                throw RequestError(.count, "must be \(RequestBounds.count.lowerBound)-\(RequestBounds.count.upperBound), got \(count)")
            }
            draft.count = n
        }
        if stored, let nanoseconds = try reader.integers(.skippedNanoseconds, "ax: nanoseconds since the epoch", count: RequestBounds.skippedCount,
                                                         noun: "occurrences") {
            draft.skipped = nanoseconds.map { Instant(nanosecondsSinceEpoch: $0) }
        } else if stored, let seconds = try reader.integers(.skipped, "ax: seconds since the epoch", count: RequestBounds.skippedCount,
                                                            noun: "occurrences") {
            draft.skipped = seconds.map { Instant(seconds: $0) }
        }
        draft.said = try reader.string(.said)
        draft.notice = try reader.seconds(.notice)
        if let name = try reader.string(.onHoliday) {
            guard let policy = HolidayPolicy(rawValue: name) else {
                throw RequestError(.onHoliday, "must be \"ring\", \"skip\", \"before\" or \"after\", got \"\(escapedForMessage(name))\"")
            }
            draft.onHoliday = policy
        }
        let request: NotificationRequest
        do {
            // Checked against `now` by the caller (`fromDBus`); a stored one may have no occurrence left.
            request = try draft.build(now: nil)
        } catch {
            // An unreadable rule is quoted, so the message stands on its own.
            guard error.offset != nil, case .rule(let text)? = draft.when else { throw error }
            throw RequestError(.rule, "\(error.message) in \"\(text)\"")
        }
        var incoming = IncomingRequest(request: request, identifierGiven: !identifier.isEmpty)
        if !stored, let calendar = try reader.string(.calendar) {
            try checkText(calendar, .calendar, 1...200, allowing: .none)
            incoming.calendar = calendar
        }
        if !stored { incoming.calendarDefault = try reader.bool(.calendarDefault) ?? false }
        return incoming
    }
}

extension Value {
    /// An integer of any width, or nil (a `uint64` beyond `Int64` too).
    var anyInteger: Int64? {
        switch self {
        case .byte(let n): Int64(n)
        case .int16(let n): Int64(n)
        case .uint16(let n): Int64(n)
        case .int32(let n): Int64(n)
        case .uint32(let n): Int64(n)
        case .int64(let n): n
        case .uint64(let n): Int64(exactly: n)
        default: nil
        }
    }
}

/// Reads typed fields out of a request dictionary; a value of the wrong type is an error naming the key.
private struct FieldReader {
    var fields: [RequestField: Value]

    func string(_ field: RequestField) throws(RequestError) -> String? {
        guard let value = fields[field] else { return nil }
        guard case .string(let text) = value else { throw RequestError(field, "must be a string (s), got \(value.signature)") }
        return text
    }

    func bool(_ field: RequestField) throws(RequestError) -> Bool? {
        guard let value = fields[field] else { return nil }
        guard case .boolean(let flag) = value else { throw RequestError(field, "must be a boolean (b), got \(value.signature)") }
        return flag
    }

    /// Any integer type, so `gdbus` (which sends `<300>` as int32) and `busctl` (`u 300`) both work.
    func integer(_ field: RequestField) throws(RequestError) -> Int64? {
        guard let value = fields[field] else { return nil }
        if let n = value.anyInteger { return n }
        if case .uint64(let n) = value { throw RequestError(field, "\(n) is too large") }
        throw RequestError(field, "must be an integer (u or x)\(field == .at ? " or seconds with a fraction (d)" : ""), got \(value.signature)")
    }

    /// An array of integers of any width (`what` says which), at most `count.upperBound` of them.
    func integers(_ field: RequestField, _ what: String, count: ClosedRange<Int>, noun: String) throws(RequestError) -> [Int64]? {
        guard let value = fields[field] else { return nil }
        guard case .array(_, let items) = value, case let numbers = items.compactMap(\.anyInteger), numbers.count == items.count else {
            throw RequestError(field, "must be \(what), got \(value.signature)")
        }
        try checkCount(items.count, field, count, noun)
        return numbers
    }

    /// An instant: whole seconds since the epoch as any integer type, or seconds with a fraction
    /// as a double; within 1970-2199.
    func instant(_ field: RequestField) throws(RequestError) -> Instant? {
        guard let value = fields[field] else { return nil }
        let instant: Instant?
        let shown: String
        if case .double(let seconds) = value {
            shown = "\(seconds)"
            if seconds.isFinite, seconds >= 0, seconds < 7_258_118_400 {
                let whole = seconds.rounded(.down)
                instant = Instant(seconds: Int64(whole), nanosecond: min(Int64(((seconds - whole) * 1e9).rounded()), 999_999_999))
            } else {
                instant = nil
            }
        } else {
            guard let seconds = try integer(field) else { return nil }
            shown = "\(seconds)"
            instant = Instant.exactly(seconds: seconds)
        }
        guard let instant, RequestBounds.instants.contains(instant) else {
            throw RequestError(field, "must lie in 1970-2199, got \(shown) s since the epoch")
        }
        return instant
    }

    /// A duration in whole seconds.
    func seconds(_ field: RequestField) throws(RequestError) -> TimeSpan? {
        guard let n = try integer(field) else { return nil }
        // Larger than any bound: said as given, not as a saturated span.
        guard (0...Int64(UInt32.max)).contains(n) else { throw RequestError(field, "must be a number of seconds, got \(n)") }
        return .seconds(n)
    }
}
