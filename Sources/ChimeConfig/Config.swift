// The alarm file: `$XDG_CONFIG_HOME/chime/alarms.toml`, parsed with TOMLKit,
// validated with every problem reported at once as `file:line:col: message`.
import ChimeCalendars
import ChimeCenter
import Notifications
import Timekeeping
import Posix
import TOMLKit
#if canImport(Glibc)
import Glibc
#endif

/// One problem in the file, where it is.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    /// nil for problems with the file as a whole (unreadable, too large).
    public var position: SourcePosition?
    public var message: String

    public var description: String {
        guard let position else { return "\(file): \(message)" }
        return "\(file):\(position.line):\(position.column): \(message)"
    }
}

/// An alarm from the file, ready for the scheduler.
public struct ConfigAlarm: Hashable, Sendable {
    public var id: String
    /// The rule as written.
    public var when: String
    public var enabled: Bool
    public var request: NotificationRequest
    public var line: Int
    /// The calendar chime writes to that it lives in (`calendar`): put there as an event, and rung
    /// from there, on every machine that follows it; nil: rung from the file.
    public var calendar: String? = nil
}

/// A `[[timer]]` preset that `chime timer NAME` starts.
public struct TimerPreset: Hashable, Sendable {
    public var name: String
    public var duration: TimeSpan
    public var content: NotificationContent
    public var line: Int

    public init(name: String, duration: TimeSpan, content: NotificationContent, line: Int) {
        self.name = name
        self.duration = duration
        self.content = content
        self.line = line
    }
}

/// A loaded file: its alarms and timers, or what is wrong with it.
public struct AlarmFile: Hashable, Sendable {
    public var path: String
    public var alarms: [ConfigAlarm] = []
    /// The file's alarms that live in a calendar chime writes to (`[[alarm]] calendar`): not among
    /// `alarms`; the daemon puts each into its calendar, from which it rings.
    public var intoCalendars: [ConfigAlarm] = []
    public var timers: [TimerPreset] = []
    /// The calendars it follows (`[[calendar]]`): their alarms are among `alarms`.
    public var calendars: [FollowedCalendar] = []
    /// The EDS calendars it follows: `calendars` holds what each gives, as a vdir.
    public var edsMirrors: [EDSMirror] = []
    public var diagnostics: [Diagnostic] = []
    /// What the calendars hold that chime cannot represent (`FILE:LINE: why`): left out, and said,
    /// without stopping the rest (a calendar is written by other programs, and synchronised).
    public var calendarNotes: [String] = []
    /// Calendar files that are there but were not read (too large, unreadable, left out after a
    /// crash, past the bound on calendar alarms): the alarms they gave before are kept, not removed.
    public var unreadCalendars: [String] = []
    /// The holiday calendars it follows (`[[holidays]]`), their days off once read, and the days
    /// that are working days (`[defaults] working-days`).
    public var holidays: [HolidaySource] = []
    public var daysOff: [Int64: String] = [:]
    public var workingDays: Set<Int> = Set(1...5)
    /// The calendar chime writes to that `chime at` puts alarms into unless told otherwise
    /// (`[defaults] calendar`, a `[[calendar]]` with `write = true`).
    public var defaultCalendar: String?
    /// Time away (`[[off]]`).
    public var away: [DaysOff.Away] = []
    public var isValid: Bool { diagnostics.isEmpty }

    /// The file's days off, working days and time away, as alarms' plans read them.
    public var plannedDaysOff: DaysOff { DaysOff(holidays: daysOff, workingDays: workingDays, away: away) }
}

/// A `[[holidays]]`: an .ics file or a directory of them whose all-day events are days off.
public struct HolidaySource: Hashable, Sendable {
    public var path: String
    /// Said beside each of its days (`Christmas Day (UK)`); nil: the event's name alone.
    public var label: String?
    public var enabled: Bool
    public var line: Int
}

/// A `[[calendar]]`: one .ics file, or a directory of them (the vdir layout vdirsyncer and khal
/// write), whose alarms chime keeps in step with the files.
public struct FollowedCalendar: Hashable, Sendable {
    public var path: String
    /// What `chime list` shows its alarms by (default: the calendar's own name).
    public var label: String?
    public var enabled: Bool
    /// The person's own calendar (`own = true`): chime's settings in it (X-CHIME-*) are taken, but
    /// never insist. Otherwise it is someone else's, and its events set only what they mean.
    public var own: Bool = false
    /// Its reminders ring as alarms do (`ring = true`): with the default sound where the event
    /// gives none, until answered, and (having a sound) waking a phone.
    public var ring = false
    public var line: Int
    /// chime writes its alarms into it (`write = true`: the person's own, a vdir): `chime at
    /// --calendar NAME` adds an event there, and the answers to its alarms travel in it.
    public var write = false
    /// The command that syncs it with its server (`vdirsyncer sync work`), run after chime writes
    /// and every `syncInterval`.
    public var sync: [String]? = nil
    public var syncInterval = FollowedCalendar.defaultSyncInterval

    public static let defaultSyncInterval = TimeSpan.seconds(900)
    /// How often a sync may run at most, and at least.
    public static let syncIntervals = TimeSpan.seconds(10)...TimeSpan.seconds(86_400)

    /// The Evolution Data Server calendar it is (`eds = "Personal"`: its display name or source
    /// UID; `"*"`: every enabled one): `path` is then the folder chime-eds keeps in step with it,
    /// in the daemon's state directory, and chime follows that folder as it follows a vdir.
    public var eds: String? = nil
    /// One of EDS's calendars that `eds = "*"` follows: its name in EDS (what `--calendar` names it
    /// by) and its source UID.
    public var edsName: String? = nil
    public var edsUID: String? = nil

    /// What `--calendar` names it by: EDS's name for one of `eds = "*"`'s calendars, else its label,
    /// else the EDS calendar it names, else its directory's name.
    public var name: String { edsName ?? label ?? eds ?? String(path.split(separator: "/").last ?? Substring(path)) }

    /// Where chime-eds keeps the EDS calendar `eds` in step, under `root` (the daemon's state
    /// directory's `eds`): `all` for every calendar, else the name's letters and a hash of it.
    public static func edsFolder(_ eds: String, root: String) -> String {
        if eds == "*" { return root + "/all" }
        let slug = AlarmConfig.slug(eds)
        return root + "/" + (slug.isEmpty ? "" : String(slug.prefix(40)) + "-") + AlarmConfig.shortHash(eds)
    }

    /// The calendars of `eds = "*"` as chime-eds last listed them (`FOLDER/calendars`, a line each:
    /// folder, EDS's UID, `rw` or `ro`, name, tab-separated): a calendar each, as the one that names
    /// them all says, but one EDS keeps read-only is never written to.
    public func edsCalendars() -> [FollowedCalendar] {
        guard eds == "*", let bytes = try? Sys.readFile(path + "/calendars", limit: 1 << 20), bytes.count < 1 << 20 else { return [] }
        var out: [FollowedCalendar] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").prefix(1000) {
            let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            // A folder name is chime-eds's own escaping of the UID: no slash, no dot first.
            guard fields.count == 4, !fields[0].isEmpty, !fields[0].contains("/"), !fields[0].hasPrefix("."), !fields[3].isEmpty else { continue }
            var calendar = self
            calendar.path = path + "/" + fields[0]
            calendar.edsName = fields[3]
            calendar.edsUID = fields[1]
            if fields[2] != "rw" { calendar.write = false }
            out.append(calendar)
        }
        return out
    }
}

/// An EDS calendar the file follows (`[[calendar]] eds`): the daemon runs `chime-eds mirror EDS
/// FOLDER` for each enabled one, and follows the folder as a vdir.
public struct EDSMirror: Hashable, Sendable, Codable {
    public var eds: String
    public var folder: String
    public var enabled: Bool
    public var write: Bool
    public var line: Int
}

/// How each followed calendar file is read: `refusal` says why one is left out (nil: it is read),
/// and `around` runs its reading (the daemon marks it, so a crash inside is charged to that file and
/// a second one leaves the file out until it changes).
///
/// A reader that wants a big calendar's alarms as they are read (the daemon's, which stores them
/// while the rest is still being read) sets `streaming`: `validated` gets the file once it is
/// validated, with its own alarms and before any calendar is read; `counted` how many alarms a
/// calendar file may give, once its events are known; `deliver` the calendars' alarms a slice at a
/// time, in order, which are then not kept in the file's `alarms`.
public struct CalendarReading {
    public var refusal: (String) -> String?
    public var around: (String, () -> Void) -> Void
    public var streaming: Streaming?
    /// Where chime-eds keeps EDS's calendars (`[[calendar]] eds`): the daemon's state directory's
    /// `eds` (by default `$XDG_STATE_HOME/chime/eds`).
    public var edsRoot: String = CalendarReading.defaultEDSRoot
    /// Read only these files of the calendar folders (nil: every file): what changed since the
    /// last reading. A calendar that is one file is then not read at all, and a file named here
    /// that is not there any more gives nothing (its alarms are the daemon's to take out).
    public var only: Set<String>?
    /// How many alarms the calendars not read now gave (with `only`): the bound on all calendars'
    /// alarms counts from there.
    public var calendarAlarmsBefore = 0

    public static var defaultEDSRoot: String {
        if let state = Sys.environment("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/chime/eds" }
        let home = Sys.environment("HOME").flatMap { $0.hasPrefix("/") && $0 != "/" ? $0 : nil } ?? ""
        return home + "/.local/state/chime/eds"
    }

    public struct Streaming {
        public var validated: (AlarmFile) -> Void
        public var counted: (Int) -> Void
        public var deliver: ([ConfigAlarm]) -> Void
        public init(validated: @escaping (AlarmFile) -> Void, counted: @escaping (Int) -> Void, deliver: @escaping ([ConfigAlarm]) -> Void) {
            self.validated = validated
            self.counted = counted
            self.deliver = deliver
        }
    }

    public init(refusal: @escaping (String) -> String?, around: @escaping (String, () -> Void) -> Void, streaming: Streaming? = nil) {
        self.refusal = refusal
        self.around = around
        self.streaming = streaming
    }

    /// Every file read, nothing around it.
    public static var plain: CalendarReading { CalendarReading(refusal: { _ in nil }, around: { $1() }) }
}

public enum AlarmConfig {
    /// The largest file chime reads (a 10,000-alarm file is about 1.5 MB).
    public static let maximumSize = 16 << 20

    public static let alarmKeys = ["id", "label", "when", "title", "body", "body-command", "body-timeout", "sound", "urgency",
                                   "icon", "snooze", "grace", "expire", "tz", "actions", "enabled", "ring", "auto-snooze", "wake", "dnd",
                                   "volume", "fade", "fade-from", "insist", "remind", "except", "until", "on-holiday", "notice", "calendar"]
    public static let defaultKeys = ["sound", "urgency", "icon", "snooze", "grace", "expire", "tz", "actions", "ring", "auto-snooze", "dnd",
                                     "volume", "fade", "fade-from", "insist", "on-holiday", "working-days", "notice", "calendar"]
    public static let timerKeys = ["name", "duration", "title", "body", "sound", "urgency", "icon", "ring", "auto-snooze", "dnd",
                                   "volume", "fade", "fade-from", "insist"]
    public static let calendarKeys = ["path", "eds", "label", "enabled", "own", "write", "sync", "sync-interval", "ring"]
    public static let holidaysKeys = ["path", "label", "enabled"]
    public static let offKeys = ["from", "until", "alarms"]
    static let tables = ["defaults", "alarm", "timer", "calendar", "holidays", "off"]
    /// The most .ics files one calendar directory is read for.
    public static let maximumCalendarFiles = 20_000
    /// The most .ics files the folder of one of EDS's calendars is read for: chime-eds writes it,
    /// a file an event, and bounds it itself; a shared calendar of 100,000 events is read whole
    /// (its alarms count against `maximumCalendarAlarms` as any calendar's do).
    public static let maximumEDSCalendarFiles = 200_000
    /// The most alarms all followed calendars together give (a shared calendar of years of
    /// events must not crowd out everything else).
    public static let maximumCalendarAlarms = 100_000

    /// The file in use: `--config`, else `$CHIME_CONFIG`, else `$XDG_CONFIG_HOME/chime/alarms.toml`,
    /// else `~/.config/chime/alarms.toml`.
    public static func path(option: String? = nil) -> String {
        if let option { return option }
        func env(_ name: String) -> String? { Sys.environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let explicit = env("CHIME_CONFIG") { return explicit }
        if let config = env("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/chime/alarms.toml" }
        return (env("HOME") ?? "/") + "/.config/chime/alarms.toml"
    }

    /// Reads and validates the file at `path`; `anchor` is when intervals count from.
    public static func load(path: String, anchor: Instant, calendars reading: CalendarReading = .plain) -> AlarmFile {
        var file = AlarmFile(path: path)
        do throws(SystemError) {
            let bytes = try Sys.readFile(path, limit: maximumSize)
            if bytes.count > maximumSize {
                file.diagnostics.append(Diagnostic(file: path, message: "the file is larger than \(maximumSize >> 20) MiB; is it the right file?"))
                return file
            }
            return parse(bytes, path: path, anchor: anchor, calendars: reading)
        } catch {
            file.diagnostics.append(Diagnostic(file: path, message: "cannot read the file: \(error.reason)"))
            return file
        }
    }

    /// Validates a document's bytes.
    public static func parse(_ bytes: [UInt8], path: String, anchor: Instant, calendars reading: CalendarReading = .plain) -> AlarmFile {
        var file = AlarmFile(path: path)
        // Invalid UTF-8 and NUL bytes are reported where they are, before the TOML parser sees them.
        if let (offset, what) = firstBadByte(bytes) {
            let before = bytes[..<offset]
            let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
            let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
            file.diagnostics.append(Diagnostic(file: path, position: SourcePosition(line: line, column: column), message: what))
            return file
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let locator = KeyLocator(bytes: bytes)
        if let (position, message) = locator.problems.first {
            file.diagnostics.append(Diagnostic(file: path, position: position, message: "TOML: \(message)"))
            return file
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            file.diagnostics.append(Diagnostic(
                file: path, position: SourcePosition(line: max(1, error.source.begin.line), column: max(1, error.source.begin.column)),
                message: "TOML: \(error.description)"))
            return file
        } catch {
            file.diagnostics.append(Diagnostic(file: path, message: "TOML: \(error)"))
            return file
        }
        var validator = Validator(path: path, locator: locator, anchor: anchor, edsRoot: reading.edsRoot)
        validator.validate(table)
        file.alarms = validator.alarms.filter { $0.calendar == nil }
        file.intoCalendars = validator.alarms.filter { $0.calendar != nil }
        file.timers = validator.timers
        file.calendars = validator.calendars
        file.edsMirrors = validator.edsMirrors
        file.diagnostics = validator.diagnostics.sorted { ($0.position ?? SourcePosition(line: 0, column: 0)) < ($1.position ?? SourcePosition(line: 0, column: 0)) }
        file.holidays = validator.holidays
        file.workingDays = validator.workingDays
        file.defaultCalendar = validator.defaultCalendar
        file.away = validator.away
        if file.isValid { readHolidays(&file, anchor: anchor, reading: reading) }
        reading.streaming?.validated(file)
        if file.isValid { readCalendars(&file, anchor: anchor, reading: reading) }
        return file
    }

    /// The days off of the holiday calendars the file follows; what they hold that is not a day off
    /// becomes a note. A calendar that cannot be read is a note too: the alarms ring as if it had no
    /// days off, never not at all.
    static func readHolidays(_ file: inout AlarmFile, anchor: Instant, reading: CalendarReading) {
        var calendars: [[Int64: String]] = []
        for source in file.holidays where source.enabled {
            if let refusal = reading.refusal(source.path) {
                file.calendarNotes.append("\(source.path): \(refusal); its days off are not taken")
                continue
            }
            reading.around(source.path) {
                do throws(SystemError) {
                    let (days, notes) = try HolidayCalendar.load(path: source.path, window: HolidayCalendar.window(around: anchor))
                    calendars.append(source.label.map { label in days.mapValues { $0 + " (" + label + ")" } } ?? days)
                    file.calendarNotes += notes
                } catch {
                    file.calendarNotes.append("\(source.path): cannot read the holiday calendar: \(error.reason)")
                }
            }
        }
        file.daysOff = DaysOff.merging(calendars)
    }

    /// Adds the alarms of the calendars the file follows; what they hold that chime cannot
    /// represent becomes a note, and the rest is read.
    static func readCalendars(_ file: inout AlarmFile, anchor: Instant, reading: CalendarReading) {
        var ids = Set(file.alarms.map(\.id))
        var calendarAlarms = reading.only == nil ? 0 : reading.calendarAlarmsBefore
        for calendar in file.calendars where calendar.enabled {
            var paths: [String]
            if Sys.isDirectory(calendar.path) {
                paths = Sys.directoryEntries(calendar.path).filter { $0.hasSuffix(".ics") && !$0.hasPrefix(".") }.sorted()
                    .map { calendar.path + "/" + $0 }
                let most = calendar.eds == nil ? maximumCalendarFiles : maximumEDSCalendarFiles
                if paths.count > most {
                    file.calendarNotes.append("\(calendar.path): \(paths.count) files; the first \(most) are read")
                    paths = Array(paths.prefix(most))
                }
                if let only = reading.only { paths = paths.filter(only.contains) }
                // A folder's events are about one alarm each: room for them all is made once,
                // before the first (a streaming reader's tables then never grow, and rehash, as
                // 100,000 of them come in).
                if paths.count > 1 { reading.streaming?.counted(paths.count) }
            } else {
                paths = reading.only == nil ? [calendar.path] : []
            }
            for path in paths {
                if let refusal = reading.refusal(path) {
                    file.calendarNotes.append("\(path): \(refusal); the alarms it gave before are kept")
                    file.unreadCalendars.append(path)
                    continue
                }
                let bytes: [UInt8]
                do throws(SystemError) { bytes = try Sys.readFile(path, limit: maximumSize) } catch {
                    file.calendarNotes.append("\(path): cannot read the calendar: \(error.reason); the alarms it gave before are kept")
                    file.unreadCalendars.append(path)
                    continue
                }
                // Whole or not at all: a file cut at the limit would end in a broken line and lose
                // every alarm it holds, with nothing said but a parse error.
                guard bytes.count <= maximumSize else {
                    file.calendarNotes.append("\(path): larger than \(maximumSize >> 20) MiB; not read, and the alarms it gave before are kept")
                    file.unreadCalendars.append(path)
                    continue
                }
                guard calendarAlarms < maximumCalendarAlarms else {
                    file.calendarNotes.append("\(path): not read: the calendars already gave \(maximumCalendarAlarms) alarms, the most chime takes from them")
                    file.unreadCalendars.append(path)
                    continue
                }
                // Its alarms as the file's, a slice at a time (all at once but for a streaming reader).
                var alarmNotes: [String] = []
                var collected: [ConfigAlarm] = []
                var full = false
                func take(_ alarms: [CalendarImport.Alarm]) {
                    var taken: [ConfigAlarm] = []
                    let built = Self.build(alarms[...], label: calendar.label, keepingOwn: calendar.write, livesIn: calendar.write ? calendar.name : nil,
                                           ringing: calendar.ring)
                    for (index, alarm) in alarms.enumerated() where !full {
                        guard calendarAlarms < maximumCalendarAlarms else {
                            alarmNotes.append("\(path):\(alarm.line): left out: the calendars already gave \(maximumCalendarAlarms) alarms, the most chime takes from them")
                            full = true
                            break
                        }
                        do throws(RequestError) {
                            var request = try built[index].get()
                            if !ids.insert(request.identifier).inserted {
                                // The same UID in another calendar (an invitation in two, a calendar
                                // followed twice): both alarms are kept, this one named after its
                                // calendar too. An identifier chime's settings chose is never taken.
                                let renamed = request.identifier + "@" + Self.shortHash(calendar.path)
                                guard !alarm.named, renamed.utf8.count <= RequestBounds.identifierBytes.upperBound, ids.insert(renamed).inserted else {
                                    alarmNotes.append("\(path):\(alarm.line): alarm '\(request.identifier)' is left out: another alarm has that id")
                                    continue
                                }
                                request.identifier = renamed
                            }
                            taken.append(ConfigAlarm(id: request.identifier, when: request.summaryRule, enabled: alarm.enabled, request: request,
                                                     line: calendar.line))
                            calendarAlarms += 1
                        } catch {
                            alarmNotes.append("\(path):\(alarm.line): \(error.key): \(error.message)")
                        }
                    }
                    if let streaming = reading.streaming {
                        if !taken.isEmpty { streaming.deliver(taken) }
                    } else {
                        collected += taken
                    }
                }
                var parsed: CalendarImport?
                let trust: CalendarImport.Trust = calendar.own ? .ownCalendar : .others
                reading.around(path) {
                    if let streaming = reading.streaming {
                        parsed = CalendarImport(reading: bytes, anchor: anchor, trust: trust,
                                                streaming: CalendarImport.Streaming(counted: streaming.counted, chunk: take))
                    } else {
                        parsed = CalendarImport(reading: bytes, anchor: anchor, trust: trust)
                    }
                }
                guard let read = parsed else { continue }
                if reading.streaming == nil { take(read.alarms) }
                file.alarms += collected
                file.calendarNotes += (read.problems + read.notes).sorted { $0.line < $1.line }.map { "\(path):\($0.line): \($0.message)" }
                file.calendarNotes += alarmNotes
            }
        }
    }

    /// A calendar's alarms as requests, labelled as the file says; a big calendar's on two threads,
    /// half each (each alarm is built alone).
    /// (`keepingOwn`: an alarm chime wrote keeps the label it was given; the calendar's stands in
    /// where it has none.)
    /// (`livesIn`: the name of the calendar chime writes to that it lives in, kept in its user info.)
    static func build(_ alarms: ArraySlice<CalendarImport.Alarm>, label: String?, keepingOwn: Bool = false,
                      livesIn: String? = nil, ringing: Bool = false) -> [Result<NotificationRequest, RequestError>] {
        @Sendable func one(_ alarm: CalendarImport.Alarm) -> Result<NotificationRequest, RequestError> {
            var draft = alarm.draft
            if let label, !keepingOwn || (draft.label ?? "").isEmpty { draft.label = label }
            // `ring = true`: a reminder rings as an alarm, with the event's sound or the default.
            if ringing {
                draft.sound = draft.sound ?? .default
                draft.ring = draft.ring ?? AlarmDefaults.ring
            }
            if let livesIn { draft.userInfo?[CalendarImport.calendarKey] = livesIn }
            return Result { () throws(RequestError) in try draft.build(now: nil) }
        }
        guard alarms.count >= 4096 else { return alarms.map(one) }
        let (first, second) = onTwoThreads(alarms.indices) { alarms[$0].map(one) }
        return first + second
    }

    /// Eight hex digits naming a calendar (FNV-1a of its path): stable across reloads.
    static func shortHash(_ text: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func firstBadByte(_ bytes: [UInt8]) -> (Int, String)? {
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0 { return (i, "a NUL byte; is this a text file?") }
            // TOML allows no raw control characters but tab and line ends (they must be escaped in strings).
            if b == 0x7F || b < 0x20 && b != 0x09 && b != 0x0A && !(b == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A) {
                let hex = String(b, radix: 16, uppercase: true)
                return (i, "a control character (U+\(String(repeating: "0", count: 4 - hex.count))\(hex)); write it as an escape inside a string")
            }
            if b < 0x80 { i += 1; continue }
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0
            guard length > 0, b < 0xF5, i + length <= bytes.count else { return (i, "not valid UTF-8") }
            for k in 1..<length where bytes[i + k] & 0xC0 != 0x80 { return (i, "not valid UTF-8") }
            // Overlong forms and surrogates.
            if b == 0xE0 && bytes[i + 1] < 0xA0 || b == 0xED && bytes[i + 1] > 0x9F || b == 0xF0 && bytes[i + 1] < 0x90
                || b == 0xF4 && bytes[i + 1] > 0x8F
            {
                return (i, "not valid UTF-8")
            }
            i += length
        }
        return nil
    }

    static func closest(_ word: String, in candidates: [String]) -> String? { closestWord(to: word, in: candidates) }

    /// An identifier from a label (see `ChimeCenter.slug`).
    public static func slug(_ label: String) -> String { ChimeCenter.slug(label) }
}
