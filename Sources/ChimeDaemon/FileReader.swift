// The alarm file and the calendars it follows are read by a child process, never by the daemon:
// a followed calendar is written by other people and may be 16 MiB, and neither its size nor a
// crash in reading it may reach the alarms. The daemon starts its own program again as
// `chime daemon --read-alarm-file PATH` (an internal mode, not for people), which reads and
// validates the file and its calendars, computes each alarm's first fire, and writes what it found
// to its standard output as frames; the daemon reads them as the loop finds them readable and
// applies them a few milliseconds at a time (`AlarmFileFollower`).
//
// What the child is doing is in the stream before it does it (a stage frame, written out at
// once): the alarm file, a calendar, the alarms' first fires, or (when asked to be careful, after
// a crash there) one alarm. A child that dies, or runs past its time limit, is charged to the
// stage it last named: the daemon notes the crash against that file or alarm (as a crash of its
// own was noted before), a second one leaves it out until it changes, and it reads again at once.
//
// Frames: one byte of kind, four of length (little-endian), then the payload. A record's fields
// are length-prefixed byte strings and fixed-size integers (`FrameWriter`, `FrameReader`).
import ChimeCenter
import ChimeConfig
import FoundationEssentials
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// A 128-bit FNV-1a digest of an alarm's definition: what a reload compares, so the daemon keeps
/// 16 bytes per alarm of the file rather than its whole definition.
struct DefinitionDigest: Hashable {
    var value: UInt128

    init(_ text: String) {
        var text = text
        value = text.withUTF8 { Self.fnv1a($0) }
    }

    static let offsetBasis: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
    static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

    /// FNV-1a, 128 bits. Its prime is 2⁸⁸ + 315: a product by it is a shift and a product by 315,
    /// a third of a full 128-bit multiplication (the digest was 5% of a big calendar's reading).
    static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt128 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt128(byte)
            hash = (hash << 88) &+ hash &* 315
        }
        return hash
    }

    init(value: UInt128) { self.value = value }

    /// As the store keeps it for an alarm of the file: `digest:HEX`, and ` calendar` when a
    /// followed calendar gave it (an older chime kept the whole definition; both are read).
    static func stored(_ digest: DefinitionDigest, fromCalendar: Bool) -> String {
        // 32 hex digits, written by hand (the generic radix conversion of a UInt128 was 2% of a
        // big calendar's first load).
        let digits = Array("0123456789abcdef".utf8)
        var text = Array("digest:".utf8)
        text.reserveCapacity(48)
        for shift in stride(from: 124, through: 0, by: -4) { text.append(digits[Int((digest.value >> UInt128(shift)) & 0xF)]) }
        if fromCalendar { text += Array(" calendar".utf8) }
        return String(decoding: text, as: UTF8.self)
    }

    /// What the store keeps for an alarm of the file, read back.
    static func known(_ stored: String) -> KnownFileAlarm {
        if stored.hasPrefix("digest:") {
            let fields = stored.dropFirst(7).split(separator: " ")
            if let hex = fields.first, let value = UInt128(hex, radix: 16) {
                return KnownFileAlarm(digest: DefinitionDigest(value: value), fromCalendar: fields.dropFirst().first == "calendar")
            }
        }
        return KnownFileAlarm(digest: DefinitionDigest(stored), fromCalendar: fromCalendar(stored))
    }

    /// Whether a stored definition is of an alarm a calendar gave (its JSON holds the calendar's
    /// UID key): a byte search, as a reload reads 100,000 of them.
    static func fromCalendar(_ definition: String) -> Bool {
        let needle = Array("\"\(CalendarKeys.uid)\"".utf8)
        var definition = definition
        return definition.withUTF8 { haystack in
            guard haystack.count >= needle.count else { return false }
            var at = 0
            while at <= haystack.count - needle.count {
                if haystack[at] == needle[0] {
                    var matched = 1
                    while matched < needle.count, haystack[at + matched] == needle[matched] { matched += 1 }
                    if matched == needle.count { return true }
                }
                at += 1
            }
            return false
        }
    }
}

/// What the reader says it is doing (and so what a crash is charged to).
enum ReaderStage: Equatable {
    case alarmFile
    case calendar(String)
    /// The alarms' first fires, all of them (a crash here is looked at again, carefully).
    case alarms
    case alarm(String)

    var encoded: String {
        switch self {
        case .alarmFile: "file"
        case .calendar(let path): "calendar\t" + path
        case .alarms: "alarms"
        case .alarm(let identifier): "alarm\t" + identifier
        }
    }

    init?(encoded: String) {
        if encoded == "file" { self = .alarmFile }
        else if encoded == "alarms" { self = .alarms }
        else if encoded.hasPrefix("calendar\t") { self = .calendar(String(encoded.dropFirst(9))) }
        else if encoded.hasPrefix("alarm\t") { self = .alarm(String(encoded.dropFirst(6))) }
        else { return nil }
    }
}

/// The file as a whole: sent before its alarms.
struct ReaderSummary: Codable, Equatable {
    /// The file's errors (nothing of it is applied when there are any).
    var diagnostics: [String] = []
    /// The calendars followed (watched for changes).
    var followed: [String] = []
    var notes: [String] = []
    /// Calendars there but not read: the alarms they gave keep running.
    var unread: [String] = []
    var timers: [WireTimer] = []
    /// How many alarms follow (room is made for them at once: a set grown one by one rehashes all
    /// it holds at every doubling, 10 ms at 50,000).
    var alarms = 0
    /// The days off of its holiday calendars, its working days and its time away.
    var holidays: [Int64: String] = [:]
    var workingDays: [Int] = [1, 2, 3, 4, 5]
    var away: [WireAway] = []

    /// The calendars chime writes to (`write = true`) or syncs (`sync`), by name.
    var writable: [WireWritable] = []
    /// The one `chime at` puts alarms into unless told otherwise (`[defaults] calendar`).
    var defaultCalendar: String? = nil
    /// The file's alarms that live in a calendar chime writes to (`[[alarm]] calendar`).
    var intoCalendars: [WireIntoCalendar]? = nil

    struct WireIntoCalendar: Codable, Equatable {
        var calendar: String
        var identifier: String
        /// The request as the file gives it now (anchored at the reading), and what stands for
        /// its definition (its normalized JSON's digest): the event is written again when it changes.
        var json: String
        var digest: String
        var enabled: Bool
    }

    struct WireWritable: Codable, Equatable {
        var name: String
        var path: String
        /// The command that syncs it (nil: none).
        var sync: [String]?
        var syncInterval: Int64
        /// chime writes to it (else it only syncs it, or follows it through EDS).
        var write = true
        /// The EDS calendar (`eds`) whose folder it is: chime-eds keeps it in step, and EDS syncs it.
        var eds: String? = nil
    }

    /// The EDS calendars followed: a `chime-eds mirror EDS FOLDER` runs for each.
    var eds: [WireEDS]? = nil

    struct WireEDS: Codable, Equatable, Hashable {
        var eds: String
        var folder: String
    }

    struct WireAway: Codable, Equatable {
        var from: Int64
        var until: Int64
        var alarms: [String]?
    }

    /// The file's days off as plans read them.
    var daysOff: DaysOff {
        var stored = StoredDaysOff(.none)
        (stored.holidays, stored.workingDays, stored.away) = (holidays, workingDays, away)
        return stored.daysOff
    }

    struct WireTimer: Codable, Equatable {
        var name: String
        var nanoseconds: Int64
        var content: NotificationContent
        var line: Int
    }
}

/// One alarm of the file, as the daemon stores it.
struct ReaderRecord: Equatable {
    var identifier: String
    var enabled: Bool
    /// Where it is in the file (a calendar's alarms: the `[[calendar]]` line).
    var line: Int
    /// Whether a followed calendar gave it (kept while a calendar cannot be read).
    var fromCalendar: Bool
    /// "enabled {json}": what the store keeps to compare with the next reload.
    var definition: String
    /// Its first fire from the reader's now (nil: disabled, passed, or left for quarantine).
    var next: Instant?
    /// The request as stored (an interval rule keeps the moment it counts from).
    var json: String
    var title: String
    var label: String
    var timeZone: String?
    var rule: String
    var sound: String
    /// It has reminders before its occurrences (to plan once it is stored).
    var hasReminders = false
    /// Its definition's digest (computed by the reader, which has the time).
    var digest: DefinitionDigest
    /// The calendar file that gave it, as `ReaderRecord.source(of:)` names it (0: the alarm file,
    /// or not said): a reading of only the files that changed takes out what they no longer give.
    var source: UInt64 = 0

    /// A calendar file's path as records name it: FNV-1a, 64 bits (never 0).
    static func source(of path: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash == 0 ? 1 : hash
    }

    init(identifier: String, enabled: Bool, line: Int, fromCalendar: Bool, definition: String, next: Instant?, json: String, title: String,
         label: String, timeZone: String?, rule: String, sound: String, hasReminders: Bool = false, digest: DefinitionDigest? = nil) {
        self.identifier = identifier
        self.enabled = enabled
        self.line = line
        self.fromCalendar = fromCalendar
        self.definition = definition
        self.next = next
        self.json = json
        self.title = title
        self.label = label
        self.timeZone = timeZone
        self.rule = rule
        self.sound = sound
        self.hasReminders = hasReminders
        self.digest = digest ?? DefinitionDigest(definition)
    }
}

enum FrameKind: UInt8 {
    case stage = 0x53  // S
    case summary = 0x46  // F
    case record = 0x41  // A
    /// Up to this many more alarms follow (a calendar's, once its events are known): room is made.
    case room = 0x52  // R
    /// What the calendars said (`ReaderCalendars`), once all are read, when their alarms streamed.
    case calendars = 0x43  // C
    case end = 0x45  // E
}

/// The calendars' notes and those not read, sent after their alarms when they streamed.
struct ReaderCalendars: Codable, Equatable {
    var notes: [String] = []
    var unread: [String] = []
}

/// Writes frames to a descriptor through a buffer (flushed at each stage, so a crash after it is
/// charged right).
final class FrameWriter {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    func frame(_ kind: FrameKind, _ payload: [UInt8]) {
        buffer.append(kind.rawValue)
        Self.append(UInt32(payload.count), to: &buffer)
        buffer.append(contentsOf: payload)
        if buffer.count >= 1 << 16 { flush() }
    }

    func stage(_ stage: ReaderStage) {
        frame(.stage, Array(stage.encoded.utf8))
        flush()
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                exit(3)  // the daemon is gone: nobody to tell
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    static func append(_ value: Int64, to bytes: inout [UInt8]) {
        let bits = UInt64(bitPattern: value)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    static func append(_ text: String, to bytes: inout [UInt8]) {
        append(UInt32(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    static func encode(_ record: ReaderRecord) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.definition.utf8.count + record.json.utf8.count + 128)
        append(record.identifier, to: &bytes)
        bytes.append((record.enabled ? 1 : 0) | (record.fromCalendar ? 2 : 0) | (record.next != nil ? 4 : 0) | (record.timeZone != nil ? 8 : 0)
                     | (record.json == jsonPart(of: record.definition) ? 16 : 0) | (record.hasReminders ? 32 : 0) | (record.source != 0 ? 64 : 0))
        append(Int64(record.line), to: &bytes)
        if record.source != 0 { append(Int64(bitPattern: record.source), to: &bytes) }
        append(record.next?.nanosecondsSinceEpoch ?? 0, to: &bytes)
        append(Int64(bitPattern: UInt64(truncatingIfNeeded: record.digest.value >> 64)), to: &bytes)
        append(Int64(bitPattern: UInt64(truncatingIfNeeded: record.digest.value)), to: &bytes)
        append(record.definition, to: &bytes)
        if record.json != jsonPart(of: record.definition) { append(record.json, to: &bytes) }
        append(record.title, to: &bytes)
        append(record.label, to: &bytes)
        append(record.timeZone ?? "", to: &bytes)
        append(record.rule, to: &bytes)
        append(record.sound, to: &bytes)
        return bytes
    }

    /// The request's JSON within its definition ("enabled {json}").
    static func jsonPart(of definition: String) -> Substring {
        definition.firstIndex(of: " ").map { definition[definition.index(after: $0)...] } ?? Substring(definition)
    }
}

/// Reads the fields of one frame's payload; nil when it is short or malformed (a reader that
/// wrote that is broken, and its run fails).
struct FrameReader {
    private let bytes: ArraySlice<UInt8>
    private var at: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    mutating func byte() -> UInt8? {
        guard at < bytes.endIndex else { return nil }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func uint32() -> UInt32? {
        guard bytes.endIndex - at >= 4 else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[at + i]) << UInt32(8 * i) }
        at += 4
        return value
    }

    mutating func int64() -> Int64? {
        guard bytes.endIndex - at >= 8 else { return nil }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[at + i]) << UInt64(8 * i) }
        at += 8
        return Int64(bitPattern: value)
    }

    mutating func string() -> String? {
        guard let count = uint32().map(Int.init), bytes.endIndex - at >= count else { return nil }
        defer { at += count }
        return String(decoding: bytes[at..<at + count], as: UTF8.self)
    }

    static func record(_ payload: ArraySlice<UInt8>) -> ReaderRecord? {
        var reader = FrameReader(payload)
        guard let identifier = reader.string(), let flags = reader.byte(), let line = reader.int64() else { return nil }
        var source: Int64 = 0
        if flags & 64 != 0 {
            guard let said = reader.int64(), said != 0 else { return nil }
            source = said
        }
        guard let next = reader.int64(), let high = reader.int64(), let low = reader.int64(), let definition = reader.string() else { return nil }
        let digest = DefinitionDigest(value: UInt128(UInt64(bitPattern: high)) << 64 | UInt128(UInt64(bitPattern: low)))
        let json: String
        if flags & 16 != 0 { json = String(FrameWriter.jsonPart(of: definition)) } else {
            guard let own = reader.string() else { return nil }
            json = own
        }
        guard let title = reader.string(), let label = reader.string(), let zone = reader.string(), let rule = reader.string(),
              let sound = reader.string()
        else { return nil }
        var record = ReaderRecord(identifier: identifier, enabled: flags & 1 != 0, line: Int(truncatingIfNeeded: line), fromCalendar: flags & 2 != 0,
                                  definition: definition, next: flags & 4 != 0 ? Instant(nanosecondsSinceEpoch: next) : nil, json: json,
                                  title: title, label: label, timeZone: flags & 8 != 0 ? zone : nil, rule: rule, sound: sound,
                                  hasReminders: flags & 32 != 0, digest: digest)
        record.source = UInt64(bitPattern: source)
        return record
    }
}

/// Splits a byte stream into frames as it arrives.
struct FrameStream {
    private(set) var buffer: [UInt8] = []
    private var start = 0
    /// The most one frame may hold (a record is a request of at most a few hundred KiB).
    static let largestFrame = 8 << 20

    var pendingBytes: Int { buffer.count - start }

    /// A whole frame (or what cannot be one) is there to take.
    var hasFrame: Bool {
        guard buffer.count - start >= 5 else { return false }
        var length = 0
        for i in 0..<4 { length |= Int(buffer[start + 1 + i]) << (8 * i) }
        return FrameKind(rawValue: buffer[start]) == nil || length > Self.largestFrame || buffer.count - start - 5 >= length
    }

    mutating func append(_ bytes: [UInt8]) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    enum Next {
        case frame(FrameKind, ArraySlice<UInt8>)
        case incomplete
        case malformed(String)
    }

    mutating func next() -> Next {
        guard buffer.count - start >= 5 else { return .incomplete }
        guard let kind = FrameKind(rawValue: buffer[start]) else { return .malformed("unknown frame kind \(buffer[start])") }
        var length = 0
        for i in 0..<4 { length |= Int(buffer[start + 1 + i]) << (8 * i) }
        guard length <= Self.largestFrame else { return .malformed("a frame of \(length) bytes") }
        guard buffer.count - start - 5 >= length else { return .incomplete }
        let payload = buffer[(start + 5)..<(start + 5 + length)]
        start += 5 + length
        return .frame(kind, payload)
    }
}

/// The reader's side: what `chime daemon --read-alarm-file` runs.
public enum AlarmFileReader {
    /// What the daemon asks of one run.
    public struct Request: Sendable {
        public var path: String
        /// When intervals count from, and after which first fires are found.
        public var now: Instant
        /// Name each alarm before its first fire is computed (after a crash among them).
        public var careful = false
        /// Calendars left out, with why.
        public var refused: [String: String] = [:]
        /// Alarms whose first fire is not computed (quarantined: it crashed the reader twice), with
        /// the digest of the definition they had then ("" when none is noted yet): one changed since
        /// gets a fresh chance.
        public var noNext: [String: String] = [:]
        /// Time away set by command (`chime off`), which the alarms' first fires read beside the file's.
        public var away: [DaysOff.Away] = []

        /// Whether `alarm`'s first fire is computed.
        func computesNext(_ identifier: String, definition: String) -> Bool {
            guard let noted = noNext[identifier] else { return true }
            return !noted.isEmpty && noted != DefinitionDigest.stored(DefinitionDigest(definition), fromCalendar: false)
        }

        /// Where chime-eds keeps EDS's calendars (nil: the default, `CalendarReading.defaultEDSRoot`).
        public var edsRoot: String?
        /// Only these files of the calendar folders are read (empty: every calendar, whole): those
        /// that changed since the last reading (`CalendarReading.only`).
        public var only: [String] = []
        /// How many alarms the calendars not read gave (with `only`).
        public var calendarAlarmsBefore = 0

        public init(path: String, now: Instant) {
            self.path = path
            self.now = now
        }

        /// As arguments after `--read-alarm-file PATH`.
        var arguments: [String] {
            var arguments = ["--now", String(now.nanosecondsSinceEpoch)]
            if careful { arguments.append("--careful") }
            if let edsRoot { arguments += ["--eds-root", edsRoot] }
            if !only.isEmpty {
                arguments += ["--calendar-alarms", String(calendarAlarmsBefore)]
                for path in only.sorted() { arguments += ["--only", path] }
            }
            for (path, reason) in refused.sorted(by: { $0.key < $1.key }) { arguments += ["--refuse", path + "\t" + reason] }
            for (identifier, noted) in noNext.sorted(by: { $0.key < $1.key }) { arguments += ["--no-next", identifier + "\t" + noted] }
            for stretch in away {
                arguments += ["--away", "\(stretch.from.nanosecondsSinceEpoch)\t\(stretch.until.nanosecondsSinceEpoch)\t" + (stretch.alarms?.sorted().joined(separator: ",") ?? "*")]
            }
            return arguments
        }
    }

    /// Reads the file and writes frames to standard output; the process's exit status.
    public static func run(_ request: Request) -> Int32 {
        signal(SIGPIPE, SIG_DFL)
        // Background work: the daemon's loop (and every other program) comes first.
        lowerPriority()
        let writer = FrameWriter(fd: 1)
        writer.stage(.alarmFile)
        testCrash(reading: request.path)
        var calendar: String?
        var reading = CalendarReading(refusal: { request.refused[$0] }, around: { path, body in
            calendar = path
            writer.stage(.calendar(path))
            testCrash(reading: path)
            body()
            calendar = nil
            writer.stage(.alarmFile)
        })
        if let root = request.edsRoot { reading.edsRoot = root }
        if !request.only.isEmpty {
            reading.only = Set(request.only)
            reading.calendarAlarmsBefore = request.calendarAlarmsBefore
        }
        func summary(_ file: AlarmFile) -> [UInt8] {
            var summary = ReaderSummary()
            summary.diagnostics = file.diagnostics.map(\.description)
            // The calendars followed, holiday calendars among them: both are watched.
            // chime-eds's list of every EDS calendar is watched as a calendar file is (a calendar added
            // or removed in EDS changes it).
            summary.followed = file.calendars.filter(\.enabled).map(\.path) + file.holidays.filter(\.enabled).map(\.path)
                + file.edsMirrors.filter { $0.enabled && $0.eds == "*" }.map { $0.folder + "/calendars" }
            summary.eds = file.edsMirrors.filter(\.enabled).map { .init(eds: $0.eds, folder: $0.folder) }
            summary.holidays = file.daysOff
            summary.writable = file.calendars.filter { $0.enabled && ($0.write || $0.sync != nil || $0.eds != nil) }.map {
                .init(name: $0.name, path: $0.path, sync: $0.sync, syncInterval: $0.syncInterval.nanoseconds, write: $0.write, eds: $0.eds)
            }
            summary.defaultCalendar = file.defaultCalendar
            summary.intoCalendars = file.intoCalendars.compactMap { alarm in
                guard let calendar = alarm.calendar else { return nil }
                let definition = (alarm.enabled ? "enabled " : "disabled ") + RequestJSON.encode(AlarmFileFollower.normalized(alarm).request)
                return .init(calendar: calendar, identifier: alarm.id, json: RequestJSON.encode(alarm.request), digest: DefinitionDigest.stored(DefinitionDigest(definition), fromCalendar: false),
                             enabled: alarm.enabled)
            }
            summary.workingDays = file.workingDays.sorted()
            summary.away = file.away.map { .init(from: $0.from.nanosecondsSinceEpoch, until: $0.until.nanosecondsSinceEpoch, alarms: $0.alarms?.sorted()) }
            summary.notes = Self.mostNotes(file.calendarNotes)
            summary.unread = file.unreadCalendars
            summary.alarms = file.isValid ? file.alarms.count : 0
            summary.timers = file.timers.map { ReaderSummary.WireTimer(name: $0.name, nanoseconds: $0.duration.nanoseconds, content: $0.content, line: $0.line) }
            return Self.json(summary)
        }
        if request.careful {
            // All read first, then one alarm at a time, each named before its first fire is computed.
            let file = AlarmConfig.load(path: request.path, anchor: request.now, calendars: reading)
            writer.frame(.summary, summary(file))
            if file.isValid {
                let off = file.plannedDaysOff.with(away: file.away + request.away)
                for alarm in file.alarms {
                    writer.stage(.alarm(alarm.id))
                    writer.frame(.record, FrameWriter.encode(record(alarm, now: request.now, request: request, off: off)))
                }
            }
        } else {
            // The file's own alarms as soon as it is valid, a calendar's a slice at a time as they
            // are read: the daemon stores them while the rest is still being read.
            var off = DaysOff.none
            func send(_ alarms: [ConfigAlarm]) {
                writer.stage(.alarms)
                encodeInParallel(alarms, request: request, off: off, source: calendar.map(ReaderRecord.source(of:)) ?? 0, writer: writer)
                writer.stage(calendar.map(ReaderStage.calendar) ?? .alarmFile)
            }
            reading.streaming = CalendarReading.Streaming(
                validated: { file in
                    writer.frame(.summary, summary(file))
                    off = file.plannedDaysOff.with(away: file.away + request.away)
                    if file.isValid, !file.alarms.isEmpty { send(file.alarms) }
                },
                counted: { count in writer.frame(.room, Array(String(count).utf8)) },
                deliver: { alarms in
                    lowerPriority()  // (the threads made meanwhile too)
                    send(alarms)
                })
            let file = AlarmConfig.load(path: request.path, anchor: request.now, calendars: reading)
            if file.isValid {
                writer.frame(.calendars, Self.json(ReaderCalendars(notes: Self.mostNotes(file.calendarNotes), unread: file.unreadCalendars)))
            }
        }
        writer.frame(.end, [])
        writer.flush()
        return 0
    }

    /// A frame's JSON (its types always encode).
    /// The calendars' notes as sent: the first 100 and how many more (a folder whose files all
    /// vanished while it was read gives a note each: 20,000 of them decoded on the daemon's loop
    /// held it 77 ms, and no one reads past the first few).
    static func mostNotes(_ notes: [String], most: Int = 100) -> [String] {
        guard notes.count > most else { return notes }
        return Array(notes.prefix(most)) + ["… and \(notes.count - most) more notes like these"]
    }

    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// Encodes the alarms (and computes their first fires) on two threads, a slice each, written
    /// in the file's order as each pair of slices is done (the daemon applies as they come).
    static func encodeInParallel(_ alarms: [ConfigAlarm], request: Request, off: DaysOff, source: UInt64, writer: FrameWriter) {
        // A few (an event's file of a folder: 100,000 of them) are encoded here: a thread started
        // for each file cost a folder of 100,000 events several seconds.
        if alarms.count < 64 {
            for alarm in alarms {
                var record = record(alarm, now: request.now, request: request, off: off)
                record.source = source
                writer.frame(.record, FrameWriter.encode(record))
            }
            return
        }
        let slice = 1024
        var start = 0
        while start < alarms.count {
            let end = min(alarms.count, start + 2 * slice)
            let (first, second) = onTwoThreads(start..<end) { part in
                lowerPriority()
                return part.map {
                    var record = record(alarms[$0], now: request.now, request: request, off: off)
                    record.source = source
                    return FrameWriter.encode(record)
                }
            }
            for bytes in first + second { writer.frame(.record, bytes) }
            start = end
        }
    }

    /// An alarm of the file as the daemon stores it.
    static func record(_ alarm: ConfigAlarm, now: Instant, request asked: Request, off: DaysOff = .none) -> ReaderRecord {
        let normalizedJSON = RequestJSON.encode(AlarmFileFollower.normalized(alarm).request)
        let definition = (alarm.enabled ? "enabled " : "disabled ") + normalizedJSON
        // Only an interval rule counts from its anchor: stored as loaded, not normalized.
        let json = AlarmFileFollower.countsFromAnchor(alarm.request) ? RequestJSON.encode(alarm.request) : normalizedJSON
        var next: Instant?
        if alarm.enabled, asked.computesNext(alarm.id, definition: definition) {
            testCrash(firing: alarm.id)
            next = alarm.request.nextFire(after: now, off: off.forAlarm(alarm.id))
        }
        let request = alarm.request
        return ReaderRecord(identifier: alarm.id, enabled: alarm.enabled, line: alarm.line,
                            fromCalendar: request.content.userInfo[CalendarKeys.uid] != nil, definition: definition, next: next,
                            json: json, title: request.content.title, label: request.content.label, timeZone: request.trigger.timeZone,
                            rule: request.summaryRule, sound: request.summarySound, hasReminders: !request.trigger.leads.isEmpty)
    }

    /// Nice 10 for every thread of the reader (its own process group; Linux keeps a nice value per
    /// thread, and a thread pool's threads are not all made by the thread that lowered its own).
    static func lowerPriority() {
        _ = setpriority(__priority_which_t(PRIO_PGRP.rawValue), 0, 10)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }

    /// Test builds only: the reading of one file, or the first fire of one alarm, crashes, to
    /// prove that costs only that. Release builds have no such switch.
    static func testCrash(reading path: String) {
        #if DEBUG
        if Sys.environment("CHIME_TEST_CRASH_READING") == path { fatalError("CHIME_TEST_CRASH_READING: crashing while reading \(path)") }
        if Sys.environment("CHIME_TEST_HANG_READING") == path {
            // Until the test says (the file it names appears), or for good.
            let release = Sys.environment("CHIME_TEST_HANG_UNTIL")
            while release.map({ ((try? Sys.status($0)) ?? nil) == nil }) ?? true { usleep(10_000) }
        }
        #endif
    }

    static func testCrash(firing identifier: String) {
        #if DEBUG
        if Sys.environment("CHIME_TEST_CRASH_FIRING") == identifier { fatalError("CHIME_TEST_CRASH_FIRING: crashing on \(identifier)") }
        #endif
    }
}
