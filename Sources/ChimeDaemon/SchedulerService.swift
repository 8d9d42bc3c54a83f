// org.chime.Scheduler1 at /org/chime/Scheduler: the daemon's D-Bus face. Each member
// of packaging/org.chime.Scheduler1.xml is one typed method here; arguments are read,
// checked once (NotificationRequest.fromDBus for requests), handed to the scheduler,
// and every refusal goes back as a documented error name (docs/dbus-interface.md).
import ChimeCenter
import ChimeConfig
import DBus
import Notifications
import Posix
import Timekeeping

/// The daemon's D-Bus face: it reads and checks what callers send, asks the daemon's parts
/// through their one narrow interface (`SchedulerParts`), and answers with the documented errors.
final class SchedulerService {
    /// The bus its answers go out on.
    private let connection: Connection
    private let parts: any SchedulerParts

    init(connection: Connection, parts: any SchedulerParts) {
        self.connection = connection
        self.parts = parts
    }

    /// The largest reply the daemon sends: the bus disconnects a peer whose message exceeds its
    /// limit (32 MiB by default), which would take the whole daemon down.
    static let maximumReply = 24 << 20

    // MARK: - The methods

    func add(_ request: [Value.DictionaryEntry]) throws(DBusError) -> (identifier: String, nextFire: Instant) {
        try add(incoming(request))
    }

    /// A request as `Add` takes it, checked.
    func incoming(_ request: [Value.DictionaryEntry]) throws(DBusError) -> IncomingRequest {
        do { return try NotificationRequest.fromDBus(request, now: parts.now()) } catch { throw Self.error(.invalid(error)) }
    }

    func add(_ incoming: IncomingRequest) throws(DBusError) -> (identifier: String, nextFire: Instant) {
        do {
            let added = try parts.add(incoming)
            return (added.identifier, added.next)
        } catch {
            throw Self.error(error)
        }
    }

    /// Answers an `Add` into a calendar of the person's once it is written and read back; the loop
    /// goes on meanwhile.
    func answerAddToCalendar(_ incoming: IncomingRequest, _ call: Message) {
        parts.addToCalendar(incoming) { [weak self] result in
            guard let self else { return }
            reply(to: call) {
                switch result {
                case .success(let added): return [.string(added.identifier), .int64(added.next.seconds)]
                case .failure(let error): throw self.error(error)
                }
            }
        }
    }

    /// The most requests one `AddAll` takes.
    static let addAllLimit = 10_000

    func addAll(_ requests: [Value]) throws(DBusError) -> [(identifier: String, nextFire: Instant)] {
        guard requests.count <= Self.addAllLimit else {
            throw Self.error(.invalid(RequestError(key: "requests", "at most \(Self.addAllLimit) requests at once, got \(requests.count)")))
        }
        var incoming: [IncomingRequest] = []
        let now = parts.now()
        for (index, request) in requests.enumerated() {
            do { incoming.append(try NotificationRequest.fromDBus(request.dictionaryEntries ?? [], now: now)) } catch {
                var refusal = error
                refusal.message = "request \(index + 1): \(error.key): \(error.message)"
                refusal.key = "requests"
                throw Self.error(.invalid(refusal))
            }
        }
        if let index = incoming.firstIndex(where: { $0.calendar != nil }) {
            throw Self.error(.invalid(RequestError(key: "requests", "request \(index + 1): calendar: is for Add, one alarm at a time")))
        }
        do { return try parts.addAll(incoming).map { ($0.identifier, $0.next) } } catch { throw Self.error(error) }
    }

    func remove(_ identifiers: [String]) throws(DBusError) -> [String] {
        do { return try parts.remove(identifiers) } catch { throw self.error(error) }
    }

    /// Answers a `Remove` of alarms that live in calendars chime writes to (and any others with them).
    func answerRemoveFromCalendars(_ requests: [NotificationRequest], rest: [String], _ call: Message) {
        // The others first: a refusal among them leaves every calendar as it was.
        var removed: [String]
        do { removed = rest.isEmpty ? [] : try remove(rest) } catch {
            reply(to: call) { throw error }
            return
        }
        parts.removeFromCalendars(requests) { [weak self] result in
            guard let self else { return }
            reply(to: call) {
                switch result {
                case .success(let gone):
                    removed += gone
                    return [.strings(removed)]
                case .failure(let error): throw self.error(error)
                }
            }
        }
    }

    func disable(_ identifiers: [String]) throws(DBusError) -> [String] {
        do { return try parts.disable(identifiers) } catch { throw self.error(error) }
    }

    func enable(_ identifiers: [String]) throws(DBusError) -> [(identifier: String, next: Instant)] {
        do { return try parts.enable(identifiers) } catch { throw self.error(error) }
    }

    func skip(_ identifier: String, undo: Bool) throws(DBusError) -> (changed: Instant, next: Instant?) {
        do { return try parts.skip(identifier, undo: undo) } catch { throw self.error(error) }
    }

    func pause(_ identifiers: [String]) throws(DBusError) -> [(identifier: String, remaining: TimeSpan)] {
        do { return try parts.pause(identifiers) } catch { throw self.error(error) }
    }

    func resume(_ identifiers: [String]) throws(DBusError) -> [(identifier: String, next: Instant)] {
        do { return try parts.resume(identifiers) } catch { throw self.error(error) }
    }

    /// Does what a button of a delivered alarm's popup does (`snooze`, `dismiss`, or one of the
    /// alarm's own actions): the ringing page's Snooze and Stop. The popup is taken down.
    func answer(_ identifier: String, action: String) throws(DBusError) {
        do { try parts.answer(identifier, action: action) } catch { throw Self.error(error) }
    }

    /// Snoozes a delivered alarm for `seconds` instead of its own snooze time (1 s to 7 days).
    func snooze(_ identifier: String, seconds: Int64) throws(DBusError) {
        let span = TimeSpan.seconds(seconds)
        guard RequestBounds.snooze.contains(span) else {
            throw Self.error(.invalid(RequestError(key: "seconds", "must be 1-604800 (1 s to 7 days), got \(seconds)")))
        }
        do { try parts.snooze(identifier, for: span) } catch { throw Self.error(error) }
    }

    /// Plays a sound once, as an alarm with it would (`default`, a theme name, or an absolute path),
    /// checked as a request's `sound` or `sound-file` is.
    func previewSound(_ text: String) throws(DBusError) {
        _ = try playSound(text, options: [])
    }

    /// Plays a sound as an alarm with these options would (`chime sound play`): once, or looping
    /// `for` seconds. Returns its number (for `StopSound` and `SoundEnded`), how long it lasts, and
    /// the way it plays.
    func playSound(_ text: String, options: [Value.DictionaryEntry]) throws(DBusError) -> (play: Int, length: TimeSpan, way: String) {
        let sound: Sound = text == "default" ? .default : text.hasPrefix("/") ? .file(text) : .named(text)
        do throws(RequestError) { try sound.validate() } catch { throw Self.error(.invalid(error)) }
        var volume = 100
        var fade = TimeSpan.zero
        var duration: TimeSpan?
        for entry in options {
            guard case .string(let key) = entry.key else { continue }
            guard ["volume", "fade", "for"].contains(key) else {
                throw DBusError(name: SchedulerInterface.invalidRequest, message: "\(key): unknown option (volume, fade and for are)")
            }
            let value: Value = if case .variant(let inner) = entry.value { inner } else { entry.value }
            let number: Int64? = switch value {
            case .uint32(let n): Int64(n)
            case .int32(let n): Int64(n)
            case .int64(let n): n
            case .uint64(let n): Int64(exactly: n)
            default: nil
            }
            func refuse(_ message: String) -> DBusError { DBusError(name: SchedulerInterface.invalidRequest, message: "\(key): \(message)") }
            guard let number else { throw refuse("must be an integer (u), got \(value.signature)") }
            switch key {
            case "volume":
                guard RequestBounds.volume.contains(Int(clamping: number)) else { throw refuse("must be 1-100 percent, got \(number)") }
                volume = Int(number)
            case "fade":
                guard RequestBounds.fade.contains(.seconds(number)) else { throw refuse("must be 0-3600 seconds, got \(number)") }
                fade = .seconds(number)
            case "for":
                guard (1...3600).contains(number) else { throw refuse("must be 1-3600 seconds, got \(number)") }
                duration = .seconds(number)
            default:
                throw DBusError(name: SchedulerInterface.invalidRequest, message: "\(key): unknown option (volume, fade and for are)")
            }
        }
        do throws(PreviewError) {
            return try parts.preview(sound, volume: volume, fade: fade, for: duration)
        } catch {
            throw DBusError(name: SchedulerInterface.cannotPlay, message: error.message)
        }
    }

    /// Starts the alarm file's timer preset `name`, as `chime timer NAME` does.
    func startTimer(_ name: String) throws(DBusError) -> (identifier: String, nextFire: Instant) {
        guard parts.alarmFilePath != nil else {
            throw DBusError(name: SchedulerInterface.noAlarmFile, message: "the daemon follows no alarm file (--no-config)")
        }
        let presets = parts.timerPresets
        guard let preset = presets.first(where: { $0.name == name }) else {
            let known = presets.map(\.name)
            throw DBusError(name: SchedulerInterface.unknownIdentifier,
                            message: "no timer \(quotedForMessage(name)) in the alarm file" + (known.isEmpty ? "" : "; there are: \(known.joined(separator: ", "))"))
        }
        let now = parts.now()
        var draft = AlarmDraft(kind: .timer, content: preset.content, anchor: now)
        if preset.content.label.isEmpty { draft.label = preset.name }
        draft.when = .rule("in \(preset.duration)")
        let request: NotificationRequest
        do throws(RequestError) { request = try draft.build(now: now) } catch { throw Self.error(.invalid(error)) }
        return try add(request.dbusRequest.dictionaryEntries ?? [])
    }

    func removeAll() throws(DBusError) -> [String] {
        do { return try parts.removeAll() } catch { throw Self.error(error) }
    }

    func get(_ identifier: String) throws(DBusError) -> NotificationRequest {
        let loaded: LoadedRequest?
        do { loaded = try parts.stored(identifier) } catch { throw Self.error(.store(error)) }
        switch loaded {
        case .valid(let request)?: return request
        case .invalid(let reason)?:
            throw DBusError(name: SchedulerInterface.invalidRequest, message: "\(quotedForMessage(identifier)) is quarantined: \(reason)")
        case nil: throw Self.error(.unknown([identifier]))
        }
    }

    /// Hands each pending alarm to `add` as it is read from the store; stops with LimitsExceeded
    /// before the reply outgrows one message.
    func listPending(_ add: (Value) throws -> Void) throws {
        var size = 0
        do {
            try parts.forEachPending { summary in
                size += 64 + summary.identifier.utf8.count + summary.title.utf8.count + summary.label.utf8.count
                    + (summary.timeZone?.utf8.count ?? 0) + summary.note.utf8.count
                guard size <= Self.maximumReply else {
                    throw DBusError(name: .limitsExceeded, message: "the list would be more than one D-Bus message may carry")
                }
                try add(summary.dbusValue)
            }
        } catch let error as StoreError {
            throw Self.error(.store(error))
        }
    }

    /// `ListPendingFile`: every pending alarm's row (`PendingRows`) written into a file in memory,
    /// sealed, and answered with its descriptor and the count. Writing to memory never blocks the
    /// loop, and the rows do not cross the bus.
    func answerListPendingFile(_ call: Message) {
        var fd: Int32 = -1
        // The reply holds its own copy of the descriptor (libdbus duplicates it when it is
        // added); ours closes once the reply is made.
        defer { if fd >= 0 { _ = try? Sys.close(fd) } }
        reply(to: call) {
            fd = try Sys.memoryFile(name: "chime-pending")
            var block = PendingRows.magic
            block.reserveCapacity(1 << 20)
            var written = 0
            var count: UInt32 = 0
            func flush() throws {
                try Sys.writeAll(fd, block)
                written += block.count
                block.removeAll(keepingCapacity: true)
            }
            do {
                try parts.forEachPending { summary in
                    PendingRows.append(summary, to: &block)
                    count &+= 1
                    if block.count >= 1 << 20 {
                        guard written + block.count <= PendingRows.maximumBytes else {
                            throw DBusError(name: .limitsExceeded, message: "the list would be more than \(PendingRows.maximumBytes >> 20) MiB")
                        }
                        try flush()
                    }
                }
            } catch let error as StoreError {
                throw Self.error(.store(error))
            }
            try flush()
            try Sys.sealAll(fd)
            return [.unixFD(fd), .uint32(count)]
        }
    }

    /// Answers `ListDelivered` once the ledger knows what it can of popups shown before a restart
    /// (dunst's history, asked without waiting here).
    func answerListDelivered(_ call: Message) {
        parts.delivered { [weak self] result in
            guard let self else { return }
            let reply: Message?
            do {
                let list = try result.get()
                let value = try Self.bounded([.array(element: .structure([.string, .uint32, .int64, .string, .boolean]), list.map(\.dbusValue))])
                reply = try call.makeReturn(value)
            } catch let error as DBusError {
                reply = try? call.makeError(name: error.name, message: error.message)
            } catch let error as StoreError {
                let refusal = Self.error(.store(error))
                reply = try? call.makeError(name: refusal.name, message: refusal.message)
            } catch {
                reply = nil
            }
            if let reply { _ = try? self.connection.send(reply) }
        }
    }

    func closeDelivered(_ identifiers: [String]) throws(DBusError) {
        do { try parts.close(identifiers) } catch { throw Self.error(error) }
    }

    func listMissed() throws(DBusError) -> [MissedOccurrence] {
        do { return try parts.missed() } catch { throw Self.error(.store(error)) }
    }


    /// Answers `Status` once what it reports is known afresh (the way to wake, how sounds are
    /// played, the server's do-not-disturb); the loop goes on meanwhile.
    func answerStatus(_ call: Message) {
        parts.status { [weak self] result in
            self?.reply(to: call) {
                switch result {
                case .success(let status): return [status.dbusValue]
                case .failure(let error): throw Self.error(.store(error))
                }
            }
        }
    }

    /// Answers a call once `body` has its answer or its error (sent from the loop, later).
    private func reply(to call: Message, _ body: () throws -> [Value]) {
        let reply: Message?
        do {
            reply = try call.makeReturn(try body())
        } catch let error as DBusError {
            reply = try? call.makeError(name: error.name, message: error.message)
        } catch {
            reply = try? call.makeError(name: .failed, message: "\(error)")
        }
        if let reply { _ = try? connection.send(reply) }
    }

    /// `PlaySound` and `PreviewSound`, answered once it is known how sounds are played (the first
    /// question loads the sound libraries and connects).
    func answerPlaySound(_ call: Message, _ arguments: [Value], preview: Bool) {
        parts.whenSoundSettled { [weak self] in
            guard let self else { return }
            reply(to: call) {
                let sound = arguments.first?.stringValue ?? ""
                if preview {
                    try previewSound(sound)
                    return []
                }
                let started = try playSound(sound, options: arguments.count > 1 ? arguments[1].dictionaryEntries ?? [] : [])
                return [.uint32(UInt32(clamping: started.play)), .int64(started.length.milliseconds), .string(started.way)]
            }
        }
    }

    /// Answers `Settings` once the server has said what it can do and who it is (or failed to, or
    /// none runs), with its do-not-disturb read afresh: never by waiting on it here.
    func answerSettings(_ call: Message) {
        parts.settings { [weak self] settings in
            self?.reply(to: call) { [settings.dbusValue] }
        }
    }

    func alarmFileStatus() -> AlarmFileStatus { parts.alarmFileStatus }

    /// Answers `ReloadAlarmFile` once the file was read and applied (or found wrong); the loop goes on meanwhile.
    func answerReloadAlarmFile(_ call: Message) throws(DBusError) {
        guard parts.alarmFilePath != nil else { throw Self.error(.noAlarmFile) }
        parts.reloadAlarmFile(reason: "asked over D-Bus") { [weak self] status in
            self?.reply(to: call) { [status.dbusValue] }
        }
    }

    // MARK: - Errors

    /// A refusal as the D-Bus error a client sees, naming the alarm file where it matters.
    func error(_ error: SchedulerError) -> DBusError {
        if case .fromAlarmFile(let owned) = error {
            return DBusError(name: SchedulerInterface.fromAlarmFile,
                             message: "\(Self.list(owned)) \(owned.count == 1 ? "is an alarm" : "are alarms") from the alarm file \(parts.alarmFilePath ?? ""); change \(owned.count == 1 ? "it" : "them") there (or set enabled = false)")
        }
        return Self.error(error)
    }

    /// A refusal as the D-Bus error a client sees.
    static func error(_ error: SchedulerError) -> DBusError {
        switch error {
        case .invalid(let problem):
            DBusError(name: problem.kind == .neverFires ? SchedulerInterface.neverFires : SchedulerInterface.invalidRequest,
                      message: problem.description)
        case .fromAlarmFile(let owned):
            DBusError(name: SchedulerInterface.fromAlarmFile,
                      message: "\(list(owned)) \(owned.count == 1 ? "is an alarm" : "are alarms") from the alarm file; change \(owned.count == 1 ? "it" : "them") there (or set enabled = false)")
        case .unknown(let identifiers):
            DBusError(name: SchedulerInterface.unknownIdentifier, message: "no pending alarm \(list(identifiers))")
        case .store(let failure):
            DBusError(name: SchedulerInterface.storeFailed, message: failure.description)
        case .noAlarmFile:
            DBusError(name: SchedulerInterface.noAlarmFile, message: "this daemon follows no alarm file (it was started with --no-config)")
        case .notShowing(let message):
            DBusError(name: SchedulerInterface.unknownIdentifier, message: message)
        }
    }

    static func list(_ identifiers: [String]) -> String { SchedulerError.list(identifiers) }

    // MARK: - The exported object

    /// Checks that a reply fits in one message before it is sent.
    static func bounded(_ values: [Value]) throws(DBusError) -> [Value] {
        // Strings dominate a listing: a cheap upper estimate of the marshalled size.
        var size = 0
        func measure(_ value: Value) {
            switch value {
            case .string(let text): size += text.utf8.count + 8
            case .array(_, let items): items.forEach(measure)
            case .structure(let fields): fields.forEach(measure)
            case .variant(let inner): measure(inner)
            case .dictionary(_, _, let entries): entries.forEach { measure($0.key); measure($0.value) }
            default: size += 8
            }
        }
        values.forEach(measure)
        guard size <= maximumReply else {
            throw DBusError(name: .limitsExceeded, message: "the answer would be about \(size >> 20) MiB, more than one D-Bus message may carry")
        }
        return values
    }

    func object() -> ExportedObject {
        let pendingItem = DBusType.structure([.string, .int64, .string, .string, .string, .string, .string, .string, .string, .string, .int64])
        let method = { (name: MemberName, inputs: [Parameter], outputs: [Parameter], body: @escaping (MethodCall) throws -> [Value]) in
            ExportedMethod(name, inputs: inputs, outputs: outputs, handler: body)
        }
        return ExportedObject(interfaces: [
            ExportedInterface(
                SchedulerInterface.interface,
                methods: [
                    method("Add", [Parameter("request", .dictionary(key: .string, value: .variant))],
                           [Parameter("id", .string), Parameter("next_fire", .int64)]) { [unowned self] call in
                        var request = try incoming(call.arguments[0].dictionaryEntries ?? [])
                        if request.calendar == nil, request.calendarDefault { request.calendar = parts.defaultCalendar }
                        if request.calendar != nil {
                            answerAddToCalendar(request, call.message)
                            throw ReplyLater()
                        }
                        let added = try add(request)
                        return [.string(added.identifier), .int64(added.nextFire.seconds)]
                    },
                    method("AddAll", [Parameter("requests", .array(.dictionary(key: .string, value: .variant)))],
                           [Parameter("added", .array(.structure([.string, .int64])))]) { [unowned self] call in
                        let added = try addAll(call.arguments[0].arrayElements ?? [])
                        return [.array(element: .structure([.string, .int64]), added.map { .structure([.string($0.identifier), .int64($0.nextFire.seconds)]) })]
                    },
                    method("Remove", [Parameter("ids", .array(.string))], [Parameter("removed", .array(.string))]) { [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        // Alarms of calendars chime writes to are removed from their calendar: answered once gone.
                        let inCalendars = parts.calendarAlarms(ids)
                        if !inCalendars.isEmpty {
                            answerRemoveFromCalendars(inCalendars, rest: ids.filter { id in !inCalendars.contains { $0.identifier == id } }, call.message)
                            throw ReplyLater()
                        }
                        return [.strings(try remove(ids))]
                    },
                    method("Disable", [Parameter("ids", .array(.string))], [Parameter("disabled", .array(.string))]) { [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        // Alarms of calendars chime writes to are switched off in their events: answered once read back.
                        if parts.setEnabledInCalendars(ids, false, then: { [weak self] result in
                            self?.reply(to: call.message) {
                                switch result {
                                case .success(let done): return [.strings(done.map(\.identifier))]
                                case .failure(let error): throw Self.error(error)
                                }
                            }
                        }) { throw ReplyLater() }
                        return [.strings(try disable(ids))]
                    },
                    method("Enable", [Parameter("ids", .array(.string))], [Parameter("enabled", .array(.structure([.string, .int64])))]) {
                        [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        func answer(_ enabled: [(identifier: String, next: Instant?)]) -> [Value] {
                            [.array(element: .structure([.string, .int64]), enabled.map { .structure([.string($0.identifier), .int64($0.next?.seconds ?? 0)]) })]
                        }
                        if parts.setEnabledInCalendars(ids, true, then: { [weak self] result in
                            self?.reply(to: call.message) {
                                switch result {
                                case .success(let done): return answer(done)
                                case .failure(let error): throw Self.error(error)
                                }
                            }
                        }) { throw ReplyLater() }
                        return answer(try enable(ids).map { ($0.identifier, $0.next) })
                    },
                    method("Skip", [Parameter("id", .string), Parameter("undo", .boolean)],
                           [Parameter("occurrence", .int64), Parameter("next_fire", .int64)]) { [unowned self] call in
                        guard case .string(let id) = call.arguments[0], case .boolean(let undo) = call.arguments[1] else { return [] }
                        // An alarm of a calendar chime writes to: the occurrence is excluded in its event.
                        if parts.skipInCalendar(id, undo: undo, then: { [weak self] result in
                            self?.reply(to: call.message) {
                                switch result {
                                case .success(let skipped): return [.int64(skipped.changed.seconds), .int64(skipped.next?.seconds ?? 0)]
                                case .failure(let error): throw Self.error(error)
                                }
                            }
                        }) { throw ReplyLater() }
                        let skipped = try skip(id, undo: undo)
                        return [.int64(skipped.changed.seconds), .int64(skipped.next?.seconds ?? 0)]
                    },
                    method("Pause", [Parameter("ids", .array(.string))], [Parameter("paused", .array(.structure([.string, .int64])))]) {
                        [unowned self] call in
                        let paused = try pause(call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? [])
                        return [.array(element: .structure([.string, .int64]), paused.map { .structure([.string($0.identifier), .int64($0.remaining.milliseconds)]) })]
                    },
                    method("Resume", [Parameter("ids", .array(.string))], [Parameter("resumed", .array(.structure([.string, .int64])))]) {
                        [unowned self] call in
                        let resumed = try resume(call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? [])
                        return [.array(element: .structure([.string, .int64]), resumed.map { .structure([.string($0.identifier), .int64($0.next.seconds)]) })]
                    },
                    method("ListPaused", [], [Parameter("paused", .array(.structure([.string, .int64])))]) { [unowned self] _ in
                        let paused: [(identifier: String, remaining: TimeSpan)]
                        do throws(StoreError) { paused = try parts.pausedTimers() } catch { throw Self.error(.store(error)) }
                        return [.array(element: .structure([.string, .int64]), paused.map { .structure([.string($0.identifier), .int64($0.remaining.milliseconds)]) })]
                    },
                    method("OccurrencesOff", [Parameter("id", .string)], [Parameter("occurrences", .array(.structure([.int64, .string, .int64, .string])))]) {
                        [unowned self] call in
                        let found: [(original: Instant, fate: OccurrenceFate)]
                        do throws(SchedulerError) { found = try parts.occurrencesOff(call.arguments[0].stringValue ?? "") } catch { throw Self.error(error) }
                        return [.array(element: .structure([.int64, .string, .int64, .string]), found.map { item in
                            let (fate, at, why): (String, Int64, String) = switch item.fate {
                            case .rings: ("rings", item.original.seconds, "")
                            case .moved(let to, let holiday): ("moved", to.seconds, holiday)
                            case .dropped(let holiday): ("skipped", 0, holiday)
                            case .away(let until): ("away", until.seconds, "")
                            }
                            return .structure([.int64(item.original.seconds), .string(fate), .int64(at), .string(why)])
                        })]
                    },
                    method("ListSkipped", [], [Parameter("skipped", .array(.structure([.string, .int64])))]) { [unowned self] _ in
                        let skipped: [(identifier: String, occurrence: Instant)]
                        do throws(StoreError) { skipped = try parts.skippedAhead() } catch { throw Self.error(.store(error)) }
                        return [.array(element: .structure([.string, .int64]), skipped.map { .structure([.string($0.identifier), .int64($0.occurrence.seconds)]) })]
                    },
                    method("ListAway", [], [Parameter("away", .array(.structure([.int64, .int64, .array(.string), .boolean])))]) { [unowned self] _ in
                        [.array(element: .structure([.int64, .int64, .array(.string), .boolean]), parts.away.map {
                            .structure([.int64($0.stretch.from.seconds), .int64($0.stretch.until.seconds), .strings($0.stretch.alarms?.sorted() ?? []),
                                        .boolean($0.fromFile)])
                        })]
                    },
                    method("SetAway", [Parameter("from", .int64), Parameter("until", .int64), Parameter("ids", .array(.string))], []) { [unowned self] call in
                        guard case .int64(let from) = call.arguments[0], case .int64(let until) = call.arguments[1] else { return [] }
                        let ids = call.arguments[2].arrayElements?.compactMap(\.stringValue) ?? []
                        guard ids.count <= 10_000, RequestBounds.instants.contains(Instant(seconds: until)),
                              from == 0 || RequestBounds.instants.contains(Instant(seconds: from)) else {
                            throw Self.error(.invalid(RequestError(key: "until", "from and until must lie in 1970-2199, and at most 10000 ids")))
                        }
                        let start = from == 0 ? parts.now() : Instant(seconds: from)
                        do throws(SchedulerError) {
                            try parts.setAway(DaysOff.Away(from: start, until: Instant(seconds: until), alarms: ids.isEmpty ? nil : Set(ids)))
                        } catch { throw Self.error(error) }
                        return []
                    },
                    method("EndAway", [Parameter("ids", .array(.string))], [Parameter("ended", .array(.structure([.int64, .int64, .array(.string)])))]) {
                        [unowned self] call in
                        let ended: [DaysOff.Away]
                        do throws(SchedulerError) { ended = try parts.endAway(call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []) } catch {
                            throw Self.error(error)
                        }
                        return [.array(element: .structure([.int64, .int64, .array(.string)]), ended.map {
                            .structure([.int64($0.from.seconds), .int64($0.until.seconds), .strings($0.alarms?.sorted() ?? [])])
                        })]
                    },
                    method("Answer", [Parameter("id", .string), Parameter("action", .string)], []) { [unowned self] call in
                        try answer(call.arguments[0].stringValue ?? "", action: call.arguments[1].stringValue ?? "")
                        return []
                    },
                    method("SnoozeFor", [Parameter("id", .string), Parameter("seconds", .int64)], []) { [unowned self] call in
                        guard case .int64(let seconds) = call.arguments[1] else { return [] }
                        try snooze(call.arguments[0].stringValue ?? "", seconds: seconds)
                        return []
                    },
                    method("PreviewSound", [Parameter("sound", .string)], []) { [unowned self] call in
                        answerPlaySound(call.message, call.arguments, preview: true)
                        throw ReplyLater()
                    },
                    method("PlaySound", [Parameter("sound", .string), Parameter("options", .dictionary(key: .string, value: .variant))],
                           [Parameter("play", .uint32), Parameter("length_ms", .int64), Parameter("way", .string)]) { [unowned self] call in
                        answerPlaySound(call.message, call.arguments, preview: false)
                        throw ReplyLater()
                    },
                    method("StopSound", [Parameter("play", .uint32)], []) { [unowned self] call in
                        parts.stopPreview(Int(call.arguments[0].uint32Value ?? 0))
                        return []
                    },
                    method("ListRinging", [], [Parameter("ringing", .array(.structure([.string, .int64, .int64, .string])))]) {
                        [unowned self] _ in
                        [.array(element: .structure([.string, .int64, .int64, .string]), parts.ringing.map {
                            .structure([.string($0.identifier), .int64($0.due.seconds), .int64($0.until.seconds), .string($0.title)])
                        })]
                    },
                    method("ListCalendars", [], [Parameter("calendars", .array(.structure([.string, .boolean, .boolean, .boolean, .string])))]) {
                        [unowned self] _ in
                        [.array(element: .structure([.string, .boolean, .boolean, .boolean, .string]), parts.calendars.map {
                            .structure([.string($0.name), .boolean($0.write), .boolean($0.syncs), .boolean($0.isDefault), .string($0.failing)])
                        })]
                    },
                    method("ListTimerPresets", [], [Parameter("presets", .array(.structure([.string, .int64, .string])))]) {
                        [unowned self] _ in
                        [.array(element: .structure([.string, .int64, .string]), parts.timerPresets.map {
                            .structure([.string($0.name), .int64($0.duration.seconds), .string($0.content.title)])
                        })]
                    },
                    method("StartTimer", [Parameter("name", .string)], [Parameter("id", .string), Parameter("next_fire", .int64)]) {
                        [unowned self] call in
                        let started = try startTimer(call.arguments[0].stringValue ?? "")
                        return [.string(started.identifier), .int64(started.nextFire.seconds)]
                    },
                    method("RemoveAll", [], [Parameter("removed", .array(.string))]) { [unowned self] _ in
                        [.strings(try removeAll())]
                    },
                    method("Get", [Parameter("id", .string)], [Parameter("request", .dictionary(key: .string, value: .variant))]) {
                        [unowned self] call in
                        [try get(call.arguments[0].stringValue ?? "").storedDBusRequest]
                    },
                    ExportedMethod("ListPending", streaming: Parameter("alarms", .array(pendingItem))) { [unowned self] _, add in
                        try listPending(add)
                    },
                    method("ListPendingFile", [], [Parameter("rows", .unixFD), Parameter("count", .uint32)]) { [unowned self] call in
                        answerListPendingFile(call.message)
                        throw ReplyLater()
                    },
                    method("ListDelivered", [], [Parameter("delivered", .array(.structure([.string, .uint32, .int64, .string, .boolean])))]) {
                        [unowned self] call in
                        answerListDelivered(call.message)
                        throw ReplyLater()
                    },
                    method("CloseDelivered", [Parameter("ids", .array(.string))], []) { [unowned self] call in
                        try closeDelivered(call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? [])
                        return []
                    },
                    method("ListMissed", [], [Parameter("missed", .array(.structure([.string, .int64, .int64, .string])))]) {
                        [unowned self] _ in
                        try Self.bounded([.array(element: .structure([.string, .int64, .int64, .string]), try listMissed().map(\.dbusValue))])
                    },
                    method("Settings", [], [Parameter("settings", .dictionary(key: .string, value: .variant))]) { [unowned self] call in
                        // Answered when the server has said what it can do: never by waiting on it here.
                        answerSettings(call.message)
                        throw ReplyLater()
                    },
                    method("Status", [], [Parameter("status", .dictionary(key: .string, value: .variant))]) { [unowned self] call in
                        answerStatus(call.message)
                        throw ReplyLater()
                    },
                    method("AlarmFileStatus", [], [Parameter("status", .dictionary(key: .string, value: .variant))]) { [unowned self] _ in
                        [alarmFileStatus().dbusValue]
                    },
                    method("ReloadAlarmFile", [], [Parameter("status", .dictionary(key: .string, value: .variant))]) { [unowned self] call in
                        try answerReloadAlarmFile(call.message)
                        throw ReplyLater()
                    },
                ],
                signals: [
                    ExportedSignal(SchedulerSignal.fired.member, arguments: [Parameter("id", .string), Parameter("due", .int64), Parameter("timeliness", .string)]),
                    ExportedSignal(SchedulerSignal.missed.member, arguments: [Parameter("id", .string), Parameter("due", .int64)]),
                    ExportedSignal(SchedulerSignal.rangOut.member, arguments: [Parameter("id", .string), Parameter("due", .int64), Parameter("snoozed", .boolean)]),
                    ExportedSignal(SchedulerSignal.reminded.member, arguments: [Parameter("id", .string), Parameter("occurrence", .int64), Parameter("lead", .int64)]),
                    ExportedSignal(SchedulerSignal.answered.member, arguments: [Parameter("id", .string), Parameter("action", .string)]),
                    ExportedSignal(SchedulerSignal.dismissed.member, arguments: [Parameter("id", .string)]),
                    ExportedSignal(SchedulerSignal.pendingChanged.member, arguments: [Parameter("ids", .array(.string))]),
                    ExportedSignal(SchedulerSignal.ringingChanged.member, arguments: [Parameter("ids", .array(.string))]),
                    ExportedSignal(SchedulerSignal.soundEnded.member, arguments: [Parameter("play", .uint32), Parameter("how", .string), Parameter("note", .string)]),
                    ExportedSignal(SchedulerSignal.calendarsChanged.member, arguments: []),
                ]),
        ])
    }
}
