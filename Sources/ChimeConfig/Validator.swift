// Turns a parsed TOML table into alarms and timers, collecting every problem.
import ChimeCenter
import Notifications
import Timekeeping
import Posix
import TOMLKit
#if canImport(Glibc)
import Glibc
#endif

/// A table with its keys read once: asking for a key it does not have costs no call into
/// toml++ (an alarm sets a few of its sixteen keys).
struct Entries {
    let table: TOMLTable
    let keys: [String]

    init(_ table: TOMLTable) {
        self.table = table
        keys = table.keys
    }

    subscript(key: String) -> TOMLValueConvertible? {
        guard keys.contains(key) else { return nil }
        let value: TOMLValueConvertible? = table[key]
        return value
    }
}

struct Validator {
    let path: String
    let locator: KeyLocator
    let anchor: Instant
    var alarms: [ConfigAlarm] = []
    var timers: [TimerPreset] = []
    var calendars: [FollowedCalendar] = []
    var holidays: [HolidaySource] = []
    var workingDays: Set<Int> = Set(1...5)
    /// `[defaults] calendar`: checked against the calendars once they are read.
    var defaultCalendar: String?
    /// `[[alarm]] calendar`, by the alarm's index: checked the same way.
    var alarmCalendars: [(index: Int, name: String)] = []
    var away: [DaysOff.Away] = []
    var diagnostics: [Diagnostic] = []
    /// Zone names already checked (a file names the same one or two zones again and again).
    var knownZones: Set<String> = []

    /// What `[defaults]` sets for every alarm.
    struct Defaults {
        var sound: Sound? = nil
        // nil: chime's own default for an alarm (`AlarmDraft`).
        var urgency: Urgency? = nil
        var icon: String? = nil
        var snooze: TimeSpan? = nil
        var grace: TimeSpan? = nil
        var expire: TimeSpan? = nil
        var timeZone: String? = nil
        var actions: [NotificationAction]? = nil
        var ring: TimeSpan? = nil
        var autoSnooze = false
        var volume: Int? = nil
        var fade: TimeSpan? = nil
        var fadeFrom: Int? = nil
        var insist = false
        var doNotDisturb: DoNotDisturbPolicy? = nil
        var onHoliday: HolidayPolicy? = nil
        var notice: TimeSpan? = nil
    }

    /// Where chime-eds keeps EDS's calendars (`CalendarReading.edsRoot`).
    let edsRoot: String
    /// The EDS calendars the file follows (`[[calendar]] eds`), each as chime-eds mirrors it.
    var edsMirrors: [EDSMirror] = []

    init(path: String, locator: KeyLocator, anchor: Instant, edsRoot: String = CalendarReading.defaultEDSRoot) {
        self.path = path
        self.locator = locator
        self.anchor = anchor
        self.edsRoot = edsRoot
    }

    // MARK: - Reporting

    mutating func report(_ keyPath: String, _ message: String, atValue: Bool = true, offset: Int = 0) {
        var position = (atValue ? locator.value(keyPath) : nil) ?? locator.key(keyPath)
        if position == nil {
            // A key inside an inline table: point at the table's key.
            var parent = keyPath
            while position == nil, let dot = parent.lastIndex(of: ".") {
                parent = String(parent[..<dot])
                position = locator.key(parent)
            }
        }
        position?.column += offset
        diagnostics.append(Diagnostic(file: path, position: position, message: message))
    }

    static func describe(_ value: TOMLValueConvertible) -> String {
        switch value.type {
        case .string: "a string"
        case .int: "an integer"
        case .double: "a floating-point number"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
    }

    // MARK: - Typed values

    mutating func string(_ table: Entries, _ key: String, _ keyPath: String) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else {
            report(keyPath, "'\(key)' must be a string, found \(Self.describe(value))")
            return nil
        }
        return text
    }

    mutating func bool(_ table: Entries, _ key: String, _ keyPath: String) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let flag = value.bool else {
            report(keyPath, "'\(key)' must be true or false, found \(Self.describe(value))")
            return nil
        }
        return flag
    }

    /// A duration: "5m", "1h30m", "90s", or a whole number of seconds, within `range`
    /// (one of `RequestBounds`: the same bounds as every other door).
    mutating func duration(_ table: Entries, _ key: String, _ keyPath: String, range: ClosedRange<TimeSpan>) -> TimeSpan? {
        guard let value = table[key] else { return nil }
        var seconds: Int64?
        if let n = value.int {
            seconds = Int64(n)
        } else if let text = value.string {
            seconds = ["0", "0s"].contains(text) ? 0 : parseDuration(text)
            guard seconds != nil else {
                report(keyPath, "'\(key)' must be a duration such as \"5m\", \"90s\" or \"1h30m\", found \"\(text)\"")
                return nil
            }
        } else {
            report(keyPath, "'\(key)' must be a duration such as \"5m\" or a number of seconds, found \(Self.describe(value))")
            return nil
        }
        guard let seconds, range.contains(.seconds(seconds)) else {
            report(keyPath, "'\(key)' must be \(range.lowerBound)-\(range.upperBound), found \(TimeSpan.seconds(seconds ?? 0))")
            return nil
        }
        return .seconds(seconds)
    }

    /// `ring`, `auto-snooze`, `volume`, `fade`, `insist` and `dnd`, as the command line has them:
    /// an alarm with a sound rings `RingPolicy.defaultRing` unless the file says otherwise; the
    /// sound's defaults apply to alarms with a sound.
    mutating func ringing(_ table: Entries, _ p: String, defaults: Defaults, into draft: inout AlarmDraft) {
        let own = duration(table, "ring", p + ".ring", range: RequestBounds.ring)
        // The file's default ring applies to alarms with a sound; one's own ring needs one.
        draft.ring = own ?? (draft.sound != nil ? defaults.ring : nil)
        let rings = draft.sound != nil && (draft.ring ?? AlarmDefaults.ring) > .zero
        draft.autoSnooze = bool(table, "auto-snooze", p + ".auto-snooze") ?? (rings && defaults.autoSnooze)
        let hasSound = draft.sound != nil
        draft.volume = volume(table, "volume", p + ".volume") ?? (hasSound ? defaults.volume : nil)
        draft.fade = duration(table, "fade", p + ".fade", range: RequestBounds.fade) ?? (hasSound ? defaults.fade : nil)
        draft.fadeFrom = volume(table, "fade-from", p + ".fade-from", range: RequestBounds.fadeFrom)
            ?? (hasSound && (draft.fade ?? .zero) > .zero ? defaults.fadeFrom : nil)
        draft.insist = bool(table, "insist", p + ".insist") ?? (hasSound && defaults.insist)
        draft.doNotDisturb = policy(table, "dnd", p + ".dnd") ?? defaults.doNotDisturb
    }

    /// A volume: a whole number of percent, or a string such as "70%", within `RequestBounds.volume`.
    mutating func volume(_ table: Entries, _ key: String, _ keyPath: String, range: ClosedRange<Int> = RequestBounds.volume) -> Int? {
        guard let value = table[key] else { return nil }
        let percent: Int? = if let n = value.int { n } else if let text = value.string { parsePercent(text) } else { nil }
        guard let percent, range.contains(percent) else {
            let found = value.int.map { "\($0)" } ?? value.string.map { "\"\($0)\"" } ?? Self.describe(value)
            report(keyPath, "'\(key)' must be a percentage \(range.lowerBound)-\(range.upperBound) such as 70 or \"70%\", found \(found)")
            return nil
        }
        return percent
    }

    mutating func policy(_ table: Entries, _ key: String, _ keyPath: String) -> DoNotDisturbPolicy? {
        guard let name = string(table, key, keyPath) else { return nil }
        guard let policy = DoNotDisturbPolicy(rawValue: name) else {
            report(keyPath, "'\(key)' must be \"break-through\", \"defer\" or \"silent\", found \"\(name)\"")
            return nil
        }
        return policy
    }

    mutating func holidayPolicy(_ table: Entries, _ key: String, _ keyPath: String) -> HolidayPolicy? {
        guard let text = string(table, key, keyPath) else { return nil }
        guard let policy = HolidayPolicy(rawValue: text) else {
            var message = "'\(key)' must be \"ring\", \"skip\", \"before\" or \"after\", found \"\(text)\""
            if let guess = AlarmConfig.closest(text, in: HolidayPolicy.allCases.map(\.rawValue)) { message += "; did you mean \"\(guess)\"?" }
            report(keyPath, message)
            return nil
        }
        return policy
    }

    mutating func urgency(_ table: Entries, _ key: String, _ keyPath: String) -> Urgency? {
        guard let name = string(table, key, keyPath) else { return nil }
        guard let urgency = Urgency(name: name) else {
            report(keyPath, "'urgency' must be \"low\", \"normal\" or \"critical\", found \"\(name)\"")
            return nil
        }
        return urgency
    }

    mutating func sound(_ table: Entries, _ key: String, _ keyPath: String) -> Sound? {
        guard let name = string(table, key, keyPath) else { return nil }
        guard !name.isEmpty else {
            report(keyPath, "'sound' is empty; give a sound-theme name such as \"bell\" or a file path")
            return nil
        }
        guard name.contains(Character("/")) else { return .named(name) }
        var file = name
        if file.hasPrefix("~/"), let home = Sys.environment("HOME") { file = home + file.dropFirst() }
        guard file.hasPrefix("/") else {
            report(keyPath, "sound file \"\(name)\" must be an absolute path (or start with ~/)")
            return nil
        }
        do { try Sys.checkReadable(file) } catch {
            report(keyPath, "sound file \"\(name)\" cannot be read: \(error.reason)")
            return nil
        }
        return .file(file)
    }

    mutating func zone(_ table: Entries, _ key: String, _ keyPath: String) -> String? {
        guard let name = string(table, key, keyPath) else { return nil }
        if knownZones.contains(name) { return name }
        do throws(ZoneError) {
            _ = try Zone.named(name)
        } catch {
            report(keyPath, "\(error)")
            return nil
        }
        knownZones.insert(name)
        return name
    }

    mutating func actions(_ table: Entries, _ key: String, _ keyPath: String) -> [NotificationAction]? {
        guard let value = table[key] else { return nil }
        guard let array = value.array else {
            report(keyPath, "'actions' must be an array such as [\"snooze\", \"dismiss\"], found \(Self.describe(value))")
            return nil
        }
        var actions: [NotificationAction] = []
        for element in array {
            switch element.string {
            case "snooze": actions.append(.snooze)
            case "dismiss": actions.append(.dismiss)
            default:
                report(keyPath, "'actions' may hold \"snooze\" and \"dismiss\", found \(element.string.map { "\"\($0)\"" } ?? Self.describe(element))")
                return nil
            }
        }
        return actions
    }

    mutating func checkKeys(_ table: Entries, known: [String], prefix: String, section: String) {
        for key in table.keys where !known.contains(key) {
            if key == "count", section == "[[alarm]]" {
                // A count runs from when an alarm is set; a file alarm is set again at each change of the file.
                report(prefix + "." + key, "'count' is for alarms set once (chime at --count); in the file give 'until', or COUNT in an iCalendar rule")
                continue
            }
            var message = "unknown key '\(key)' in \(section)"
            if let guess = AlarmConfig.closest(key, in: known) { message += "; did you mean '\(guess)'?" }
            report(prefix + "." + key, message, atValue: false)
        }
    }

    // MARK: - The document

    mutating func validate(_ root: TOMLTable) {
        for key in root.keys where !AlarmConfig.tables.contains(key) {
            let value = root[key]!
            var message = value.type == .table || value.type == .array ? "unknown table '\(key)'" : "unknown key '\(key)'"
            if let guess = AlarmConfig.closest(key, in: AlarmConfig.tables) {
                message += guess == "defaults" ? "; did you mean [defaults]?" : "; did you mean [[\(guess)]]?"
            } else {
                message += "; the file holds [defaults], [[alarm]], [[timer]], [[calendar]], [[holidays]] and [[off]]"
            }
            report(key, message, atValue: false)
        }
        var defaults = Defaults()
        if let value = root["defaults"] {
            if let table = value.table { defaults = validateDefaults(Entries(table)) } else {
                report("defaults", "'defaults' must be a table ([defaults]), found \(Self.describe(value))", atValue: false)
            }
        }
        var seen: [String: Int] = [:]
        for (index, table) in tables(root, "alarm") {
            guard let alarm = validateAlarm(Entries(table), index: index, defaults: defaults) else { continue }
            if let first = seen[alarm.id] {
                // At the second `id =` (or the label it came from), not at the table's header.
                let key = table["id"] != nil ? "id" : "label"
                report("alarm[\(index)].\(key)", "duplicate id '\(alarm.id)' (first used on line \(first)); give one of them an 'id'")
                continue
            }
            seen[alarm.id] = alarm.line
            alarms.append(alarm)
        }
        for (index, table) in tables(root, "calendar") {
            let entries = Entries(table)
            let p = "calendar[\(index)]"
            checkKeys(entries, known: AlarmConfig.calendarKeys, prefix: p, section: "[[calendar]]")
            let eds = edsName(entries, p)
            if entries["eds"] != nil, eds == nil { continue }
            guard let path = eds.map({ FollowedCalendar.edsFolder($0, root: edsRoot) }) ?? calendarPath(entries, p, what: "calendar") else { continue }
            let label = string(entries, "label", p + ".label")
            let enabled = bool(entries, "enabled", p + ".enabled") ?? true
            let write = bool(entries, "write", p + ".write") ?? false
            // A calendar chime writes to is the person's own.
            let own = bool(entries, "own", p + ".own") ?? write
            if write, !own { report(p + ".own", "a calendar chime writes to is yours: 'own' cannot be false with 'write'") }
            if write, eds == nil, path.hasSuffix(".ics") {
                report(p + ".path", "a calendar chime writes to is a directory of events (a vdir, as vdirsyncer keeps one), not one .ics file")
            }
            var calendar = FollowedCalendar(path: path, label: label, enabled: enabled, own: own, line: locator.header("calendar", index)?.line ?? 0)
            calendar.write = write
            calendar.eds = eds
            calendar.ring = bool(entries, "ring", p + ".ring") ?? false
            if eds != nil, entries["sync"] != nil || entries["sync-interval"] != nil {
                report(p + (entries["sync"] != nil ? ".sync" : ".sync-interval"),
                       "Evolution Data Server syncs its calendars with their servers itself: leave out 'sync' and 'sync-interval'", atValue: false)
            }
            if let value = entries["sync"], eds == nil {
                let words = value.string.map { $0.split(separator: " ").map(String.init) } ?? value.array?.compactMap(\.string)
                if let words, !words.isEmpty, words.count == (value.array?.count ?? words.count), !words[0].isEmpty {
                    calendar.sync = words
                } else {
                    report(p + ".sync", "'sync' must be a command, e.g. [\"vdirsyncer\", \"sync\", \"work\"]")
                }
            }
            if eds == nil, let interval = duration(entries, "sync-interval", p + ".sync-interval", range: FollowedCalendar.syncIntervals) {
                calendar.syncInterval = interval
                if calendar.sync == nil, entries["sync"] == nil { report(p + ".sync-interval", "'sync-interval' needs 'sync': the command that syncs it") }
            }
            if write, let other = calendars.first(where: { $0.write && $0.name == calendar.name }) {
                report(p, "another calendar chime writes to is named '\(calendar.name)' (line \(other.line)); give one a 'label'", atValue: false)
            }
            if let eds, let other = edsMirrors.first(where: { $0.eds == eds }) {
                report(p + ".eds", "the file already follows the EDS calendar \"\(eds)\" (line \(other.line))")
                continue
            }
            if let eds { edsMirrors.append(EDSMirror(eds: eds, folder: path, enabled: enabled, write: write, line: calendar.line)) }
            calendars.append(calendar)
        }
        // `eds = "*"`: each of EDS's calendars as chime-eds last listed them, but those the file
        // names on their own (by name or UID), which are followed as their own entries say.
        if let index = calendars.firstIndex(where: { $0.eds == "*" }) {
            let all = calendars.remove(at: index)
            let named = Set(calendars.compactMap(\.eds))
            for calendar in all.edsCalendars() where !named.contains(calendar.edsName ?? "") && !named.contains(calendar.edsUID ?? "") {
                calendars.append(calendar)
            }
        }
        // With every EDS calendar followed for writing, a calendar named that EDS has not listed
        // yet (chime-eds has not run) is not an error: its alarms wait for it.
        let writesToEDS = edsMirrors.contains { $0.eds == "*" && $0.enabled && $0.write }
        // An alarm's calendar, and the default one, name calendars chime writes to.
        for (index, name) in alarmCalendars where !writesToEDS && !calendars.contains(where: { $0.write && $0.enabled && $0.name == name }) {
            let names = calendars.filter(\.write).map { "'\($0.name)'" }
            report("alarm[\(index)].calendar", "'calendar' must name a [[calendar]] with write = true; "
                   + (names.isEmpty ? "the file has none" : "the file's are " + names.joined(separator: ", ")) + ", found \"\(name)\"")
        }
        if let name = defaultCalendar, !writesToEDS, !calendars.contains(where: { $0.write && $0.name == name }) {
            let names = calendars.filter(\.write).map { "'\($0.name)'" }
            report("defaults.calendar", "'calendar' must name a [[calendar]] with write = true; "
                   + (names.isEmpty ? "the file has none" : "the file's are " + names.joined(separator: ", ")) + ", found \"\(name)\"")
            defaultCalendar = nil
        }
        for (index, table) in tables(root, "holidays") {
            let entries = Entries(table)
            let p = "holidays[\(index)]"
            checkKeys(entries, known: AlarmConfig.holidaysKeys, prefix: p, section: "[[holidays]]")
            guard let path = calendarPath(entries, p, what: "holiday calendar") else { continue }
            holidays.append(HolidaySource(path: path, label: string(entries, "label", p + ".label"),
                                          enabled: bool(entries, "enabled", p + ".enabled") ?? true,
                                          line: locator.header("holidays", index)?.line ?? 0))
        }
        let offZone = defaults.timeZone.flatMap { try? Zone.named($0) } ?? Zone.system()
        for (index, table) in tables(root, "off") {
            let entries = Entries(table)
            let p = "off[\(index)]"
            checkKeys(entries, known: AlarmConfig.offKeys, prefix: p, section: "[[off]]")
            let from = moment(entries, "from", p + ".from", zone: offZone)
            let until = moment(entries, "until", p + ".until", zone: offZone)
            if entries["until"] == nil { report(p, "time away needs 'until', e.g. until = \"2027-01-04\" (alarms ring again that day)", atValue: false) }
            let alarms = list(entries, "alarms", p + ".alarms", example: "[\"wake-up\", \"gym\"]")
            guard let until else { continue }
            let start = from ?? anchor
            if entries["from"] != nil, from == nil { continue }
            guard start < until else {
                // Time away without a start that has ended stays in the file harmlessly.
                if from != nil { report(p + ".until", "'until' must come after 'from'") }
                continue
            }
            guard until - start <= DaysOff.maximumAway else {
                report(p + ".until", "time away is at most two years; is the year right?")
                continue
            }
            away.append(DaysOff.Away(from: start, until: until, alarms: alarms.map(Set.init)))
        }
        var names: [String: Int] = [:]
        for (index, table) in tables(root, "timer") {
            guard let timer = validateTimer(Entries(table), index: index, defaults: defaults) else { continue }
            if let first = names[timer.name] {
                report("timer[\(index)].name", "duplicate timer name '\(timer.name)' (first used on line \(first))")
                continue
            }
            names[timer.name] = timer.line
            timers.append(timer)
        }
    }

    /// `eds`: the name or source UID of a calendar of Evolution Data Server, or `*` for all of them;
    /// nil (said) when it is not a usable name. It becomes an argument of chime-eds: no NUL, no
    /// control character, and short.
    mutating func edsName(_ entries: Entries, _ p: String) -> String? {
        guard entries["eds"] != nil, let name = string(entries, "eds", p + ".eds") else { return nil }
        if entries["path"] != nil {
            report(p, "a calendar is either a 'path' (a file or a vdir) or 'eds' (a calendar of GNOME's Evolution Data Server), not both",
                   atValue: false)
            return nil
        }
        guard !name.isEmpty, name.utf8.count <= 256, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            report(p + ".eds", "'eds' must be the name of a calendar as GNOME Calendar shows it (or its UID), or \"*\" for all of them")
            return nil
        }
        return name
    }

    /// A calendar's `path` (an .ics file or a directory of them), `~/` read as the home directory;
    /// nil, and said at its place, when it is missing or not absolute.
    mutating func calendarPath(_ entries: Entries, _ p: String, what: String) -> String? {
        guard var path = string(entries, "path", p + ".path") else {
            if entries["path"] == nil { report(p, "this \(what) needs 'path': an .ics file or a directory of them", atValue: false) }
            return nil
        }
        if path.hasPrefix("~/"), let home = Sys.environment("HOME") { path = home + path.dropFirst() }
        guard path.hasPrefix("/") else {
            report(p + ".path", "\(what) path \"\(path)\" must be absolute (or start with ~/)")
            return nil
        }
        return path
    }

    /// The tables of an array of tables (`[[alarm]]`), reporting anything else.
    mutating func tables(_ root: TOMLTable, _ name: String) -> [(Int, TOMLTable)] {
        guard let value = root[name] else { return [] }
        guard let array = value.array else {
            report(name, "write each \(name) as [[\(name)]], not [\(name)]", atValue: false)
            return []
        }
        var out: [(Int, TOMLTable)] = []
        for (index, element) in array.enumerated() {
            if let table = element.table { out.append((index, table)) } else {
                report(name, "'\(name)' must hold tables ([[\(name)]]), found \(Self.describe(element))", atValue: false)
            }
        }
        return out
    }

    mutating func validateDefaults(_ table: Entries) -> Defaults {
        var d = Defaults()
        checkKeys(table, known: AlarmConfig.defaultKeys, prefix: "defaults", section: "[defaults]")
        let p = "defaults."
        if let v = sound(table, "sound", p + "sound") { d.sound = v }
        if let v = urgency(table, "urgency", p + "urgency") { d.urgency = v }
        if let v = string(table, "icon", p + "icon") { d.icon = v }
        if let v = duration(table, "snooze", p + "snooze", range: RequestBounds.snooze) { d.snooze = v }
        if let v = duration(table, "grace", p + "grace", range: RequestBounds.grace) { d.grace = v }
        if let v = duration(table, "expire", p + "expire", range: RequestBounds.expire) { d.expire = v }
        if let v = zone(table, "tz", p + "tz") { d.timeZone = v }
        if let v = actions(table, "actions", p + "actions") { d.actions = v }
        if let v = duration(table, "ring", p + "ring", range: RequestBounds.ring) { d.ring = v }
        if let v = bool(table, "auto-snooze", p + "auto-snooze") { d.autoSnooze = v }
        if let v = volume(table, "volume", p + "volume") { d.volume = v }
        if let v = duration(table, "fade", p + "fade", range: RequestBounds.fade) { d.fade = v }
        if let v = volume(table, "fade-from", p + "fade-from", range: RequestBounds.fadeFrom) { d.fadeFrom = v }
        if let v = bool(table, "insist", p + "insist") { d.insist = v }
        if let v = policy(table, "dnd", p + "dnd") { d.doNotDisturb = v }
        if let v = holidayPolicy(table, "on-holiday", p + "on-holiday") { d.onHoliday = v }
        if let v = duration(table, "notice", p + "notice", range: RequestBounds.reminder) { d.notice = v }
        defaultCalendar = string(table, "calendar", p + "calendar")
        if let text = string(table, "working-days", p + "working-days") {
            if let days = DaysOff.workingDays(parsing: text) { workingDays = days } else {
                report(p + "working-days", "'working-days' must be \(DaysOff.workingDaysExample), found \"\(text)\"")
            }
        }
        return d
    }

    mutating func validateAlarm(_ table: Entries, index: Int, defaults: Defaults) -> ConfigAlarm? {
        let p = "alarm[\(index)]"
        let errorsBefore = diagnostics.count
        checkKeys(table, known: AlarmConfig.alarmKeys, prefix: p, section: "[[alarm]]")
        let label = string(table, "label", p + ".label") ?? ""
        var id = string(table, "id", p + ".id")
        if let given = id, given.isEmpty || given.utf8.count > 200 {
            report(p + ".id", "'id' must be 1-200 bytes")
            id = nil
        }
        if id == nil, table["id"] == nil {
            let derived = AlarmConfig.slug(label)
            if derived.isEmpty, !label.isEmpty {
                // An id is made of the label's letters and digits: "!!!" has none.
                report(p + ".label", "the label \"\(label)\" has no letters or digits to make an id of; give this alarm an 'id'")
            } else if derived.isEmpty {
                report(p, "this alarm needs an 'id' or a 'label' to name it", atValue: false)
            } else {
                id = derived
            }
        }
        let title = string(table, "title", p + ".title") ?? (label.isEmpty ? nil : label)
        if title == nil, table["title"] == nil { report(p, "this alarm needs a 'title' (or a 'label' to use as one)", atValue: false) }
        var draft = AlarmDraft(kind: .alarm, anchor: anchor)
        draft.identifier = id
        draft.title = title ?? ""
        draft.label = label
        draft.timeZone = zone(table, "tz", p + ".tz")
        draft.defaultTimeZone = defaults.timeZone
        if let when = string(table, "when", p + ".when") {
            draft.when = .rule(when)
            // A phrase is read as said when the file is read; the daemon keeps what it meant then
            // until the phrase is changed (its definition is the phrase, not the rule it became).
            draft.readsPhrases = true
            draft.phraseLanguage = .ofUser
            draft.twelveHourClock = PhraseLanguage.userHasTwelveHourClock
        } else if table["when"] == nil {
            report(p, "this alarm needs 'when', e.g. when = \"16:35 mon-fri\"", atValue: false)
        }
        draft.body = string(table, "body", p + ".body")
        draft.sound = sound(table, "sound", p + ".sound") ?? defaults.sound
        draft.urgency = urgency(table, "urgency", p + ".urgency") ?? defaults.urgency
        draft.icon = string(table, "icon", p + ".icon") ?? defaults.icon
        draft.snooze = duration(table, "snooze", p + ".snooze", range: RequestBounds.snooze) ?? defaults.snooze
        draft.grace = duration(table, "grace", p + ".grace", range: RequestBounds.grace) ?? defaults.grace
        draft.expire = duration(table, "expire", p + ".expire", range: RequestBounds.expire) ?? defaults.expire
        draft.actions = actions(table, "actions", p + ".actions") ?? defaults.actions
        ringing(table, p, defaults: defaults, into: &draft)
        draft.wake = bool(table, "wake", p + ".wake")
        draft.bodyTimeout = duration(table, "body-timeout", p + ".body-timeout", range: RequestBounds.bodyTimeout)
        if let value = table["body-command"] {
            let words = value.array?.compactMap(\.string)
            if let words, !words.isEmpty, words.count == value.array?.count, !words[0].isEmpty {
                draft.bodyCommand = words
            } else {
                report(p + ".body-command", "'body-command' must be an array of strings, the program first, e.g. [\"date\", \"+%H:%M\"]")
            }
        }
        draft.reminders = list(table, "remind", p + ".remind", example: "[\"15m\", \"1d\"]").map { items in
            items.compactMap { text in
                guard let seconds = parseDuration(text) else {
                    report(p + ".remind", "'remind' holds durations such as \"15m\" or \"1d\", found \"\(text)\"")
                    return nil
                }
                return .seconds(seconds)
            }
        }
        draft.exceptions = list(table, "except", p + ".except", example: "[\"2026-12-24\", \"2026-12\"]").map { items in
            items.compactMap { text in
                do throws(RuleError) { return try ExceptDate(parsing: text) } catch {
                    report(p + ".except", "'except': \"\(text)\": \(error.message)")
                    return nil
                }
            }
        }
        draft.until = string(table, "until", p + ".until").map { .text($0) }
        draft.onHoliday = holidayPolicy(table, "on-holiday", p + ".on-holiday") ?? defaults.onHoliday
        draft.notice = duration(table, "notice", p + ".notice", range: RequestBounds.reminder) ?? defaults.notice
        let enabled = bool(table, "enabled", p + ".enabled") ?? true
        // Every problem at once: the rules across fields, then the rule itself.
        for broken in draft.conflicts() { reportBuilding(broken, p) }
        var trigger: Trigger?
        if draft.when != nil {
            do throws(RequestError) { trigger = try draft.buildTrigger() } catch { reportBuilding(error, p, table: table) }
        }
        guard diagnostics.count == errorsBefore, let id, let trigger else { return nil }
        let line = locator.header("alarm", index)?.line ?? 0
        // Built as at every other door (a one-off whose time has passed is not an error here: it
        // fired, or will not, and stays in the file harmlessly).
        let request: NotificationRequest
        do throws(RequestError) {
            request = try draft.build(now: nil, trigger: trigger)
        } catch {
            reportBuilding(error, p, table: table)
            return nil
        }
        var alarm = ConfigAlarm(id: id, when: table["when"]?.string ?? "", enabled: enabled, request: request, line: line)
        alarm.calendar = string(table, "calendar", p + ".calendar")
        if let name = alarm.calendar { alarmCalendars.append((index, name)) }
        return alarm
    }

    /// A refusal of the builder, at the key the file names it by.
    mutating func reportBuilding(_ error: RequestError, _ p: String, table: Entries? = nil) {
        let key = Self.key(for: error)
        if let offset = error.offset {
            // Point into the rule: past the opening quote, at the offending part.
            report(p + ".when", "\(error.message) in \"\(table?["when"]?.string ?? "")\"", offset: 1 + offset)
            return
        }
        switch error.field {
        case .ring?: report(p + ".ring", "'ring' needs a 'sound' (an alarm without a sound has nothing to ring)")
        case .bodyTimeout? where error.message.hasPrefix("needs"): report(p + ".body-timeout", "'body-timeout' needs a 'body-command'", atValue: false)
        default: report(p + "." + key, "'\(key)': \(error.message)")
        }
    }

    mutating func validateTimer(_ table: Entries, index: Int, defaults: Defaults) -> TimerPreset? {
        let p = "timer[\(index)]"
        let errorsBefore = diagnostics.count
        checkKeys(table, known: AlarmConfig.timerKeys, prefix: p, section: "[[timer]]")
        let name = string(table, "name", p + ".name")
        if name == nil, table["name"] == nil { report(p, "this timer needs a 'name' (what `chime timer NAME` starts)", atValue: false) }
        if let name, name.isEmpty || name.contains(where: { $0 == " " || $0 == "/" }) {
            report(p + ".name", "a timer name must be one word, found \"\(name)\"")
        }
        let seconds = duration(table, "duration", p + ".duration", range: RequestBounds.interval)
        if table["duration"] == nil { report(p, "this timer needs a 'duration', e.g. duration = \"7m\"", atValue: false) }
        var draft = AlarmDraft(kind: .timer, anchor: anchor)
        draft.title = string(table, "title", p + ".title") ?? name ?? ""
        draft.body = string(table, "body", p + ".body")
        draft.sound = sound(table, "sound", p + ".sound") ?? defaults.sound
        draft.urgency = urgency(table, "urgency", p + ".urgency") ?? defaults.urgency
        draft.icon = string(table, "icon", p + ".icon") ?? defaults.icon
        draft.actions = defaults.actions
        draft.snooze = defaults.snooze
        ringing(table, p, defaults: defaults, into: &draft)
        for broken in draft.conflicts() { reportBuilding(broken, p) }
        guard diagnostics.count == errorsBefore, let name, let seconds else { return nil }
        let content: NotificationContent
        do throws(RequestError) {
            content = try draft.buildContent()
        } catch {
            reportBuilding(error, p)
            return nil
        }
        return TimerPreset(name: name, duration: seconds, content: content, line: locator.header("timer", index)?.line ?? 0)
    }

    /// A list of strings: an array of them, or one string with commas (`"15m, 1d"`).
    mutating func list(_ table: Entries, _ key: String, _ keyPath: String, example: String) -> [String]? {
        guard let value = table[key] else { return nil }
        if let text = value.string {
            return text.split(separator: ",").map { String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
        }
        guard let array = value.array, case let items = array.compactMap(\.string), items.count == array.count else {
            report(keyPath, "'\(key)' must be an array of strings such as \(example), found \(Self.describe(value))")
            return nil
        }
        return items
    }

    /// When time away begins or ends: a date (its start) or a date and time, as a string or a TOML
    /// date or date-time.
    mutating func moment(_ table: Entries, _ key: String, _ keyPath: String, zone: Zone) -> Instant? {
        guard let value = table[key] else { return nil }
        func pad(_ n: Int, _ width: Int = 2) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        func written(_ d: TOMLDate) -> String { "\(pad(d.year, 4))-\(pad(d.month))-\(pad(d.day))" }
        var text = value.string
        if let date = value.date {
            text = written(date)  // a TOML date: 2027-01-04
        } else if let stamp = value.dateTime, stamp.offset == nil {
            text = written(stamp.date) + " \(pad(stamp.time.hour)):\(pad(stamp.time.minute)):\(pad(stamp.time.second))"  // 2027-01-04T12:00
        }
        guard let text, let instant = DaysOff.moment(text, in: zone) else {
            report(keyPath, "'\(key)' must be a date (\"2027-01-04\") or a date and time (\"2027-01-04 12:00\"), found \(value.string.map { "\"\($0)\"" } ?? Self.describe(value))")
            return nil
        }
        return instant
    }

    /// The file's key for a request field.
    static func key(for error: RequestError) -> String {
        switch error.field {
        case .soundFile?: "sound"
        case .rule?, .at?, .repeats?, .anchor?: "when"
        case .timeZone?: "tz"
        case .persistent?: "expire"
        case .bodyOutputLimit?: "body-command"
        case .bodyMarkup?, .userInfo?, .category?: "body"
        case let field?: field.rawValue
        case nil: error.key
        }
    }
}
