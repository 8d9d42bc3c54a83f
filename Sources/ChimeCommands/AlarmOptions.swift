import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Notifications
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What every alarm command takes besides its rule.
struct AlarmOptions: ParsableArguments {
    @Argument(help: "The title.")
    var title: String

    @Argument(help: "The body.")
    var body: String = ""

    @Option(name: .customLong("id"), help: "The identifier: replaces a pending alarm with the same one (without --id, chime makes a new, unique one).")
    var identifier: String?

    @Option(help: "A label to list the alarm by.")
    var label: String = ""

    @Option(help: ArgumentHelp("A sound: a theme name (e.g. bell) or a file path.", valueName: "NAME|PATH"))
    var sound: String?

    @Option(help: ArgumentHelp(
        "The sound's own volume, 1-100 percent of the file as recorded (default 100), apart from other programs' sounds.",
        valueName: "PERCENT"))
    var volume: String?

    @Option(help: ArgumentHelp("How long the sound takes to rise from silence to its volume, e.g. 30s (default: no fade).",
                               valueName: "DURATION"))
    var fade: String?

    @Option(name: .customLong("fade-from"), help: ArgumentHelp(
        "The level the fade starts from, 0-99 percent of the volume (default 0: silence); needs --fade.", valueName: "PERCENT"))
    var fadeFrom: String?

    @Flag(help: "Be heard: a muted or turned-down output is unmuted and raised to 100% while the alarm rings, then put back as it was.")
    var insist = false

    @Option(help: ArgumentHelp("low, normal or critical.", valueName: "LEVEL"))
    var urgency: UrgencyArgument = UrgencyArgument(urgency: .critical)

    @Option(help: ArgumentHelp("A theme icon name or an image path (default: chime's own icon, which make install and the package put in the hicolor theme every icon theme falls back to).", valueName: "ICON"))
    var icon: String = "chime"

    @Option(help: ArgumentHelp("Time zone to evaluate the rule in (default: the system's).", valueName: "ZONE"))
    var tz: String?

    @Option(help: ArgumentHelp("How long Snooze waits (default 10m): 90s, 5m, 1h.", valueName: "DURATION"))
    var snooze: String?

    @Option(help: ArgumentHelp("How late a missed alarm is still shown, e.g. after the machine slept (default 1h).",
                               valueName: "DURATION"))
    var grace: String?

    @Option(help: ArgumentHelp("How long the popup stays (default: the server's); chime closes it if the server does not.",
                               valueName: "DURATION"))
    var expire: String?

    @Option(help: ArgumentHelp(
        "A program whose output becomes the body when the alarm fires, split into words like a shell would (quotes, backslashes) but never run by one.",
        valueName: "COMMAND"))
    var bodyCommand: String?

    @Option(help: ArgumentHelp("How long the body command may run (default 5s, at most 60s).", valueName: "DURATION"))
    var bodyTimeout: String?

    @Option(help: ArgumentHelp(
        "How long the sound repeats until Dismiss or Snooze is pressed (default 5m with --sound; 0: it plays once).",
        valueName: "DURATION"))
    var ring: String?

    @Flag(help: "When the alarm rings out unanswered, snooze it (the ring time is recorded either way).")
    var autoSnooze = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Wake the machine from suspend for this alarm (chime says so when this system cannot); --no-wake: never, not even on a phone, which otherwise wakes for every alarm with a sound."))
    var wake: Bool?

    @Option(help: ArgumentHelp(
        "While the server's do-not-disturb is on: break-through (default: shown as critical, which servers let through), defer (shown when it ends, marked late) or silent (recorded, not shown).",
        valueName: "POLICY"))
    var dnd: String?

    @Option(help: ArgumentHelp("A reminder popup this long before each occurrence, e.g. 15m or 15m,1d (up to 8).",
                               valueName: "DURATION,..."))
    var remind: String?

    @Option(name: .customLong("except"), help: ArgumentHelp(
        "Days or months it does not ring on, in its zone: 2026-12-24,2026-12-31, 2026-12, or every year: 12-24, december.",
        valueName: "DATE,..."))
    var exceptions: String?

    @Option(help: ArgumentHelp(
        "A quiet notice this long before each occurrence, e.g. 2h or 12h, with Skip this one (and Open the app).",
        valueName: "DURATION"))
    var notice: String?

    @Option(help: ArgumentHelp(
        "Put it into a calendar of yours chime writes to (the alarm file's [[calendar]] with write = true, by its label): an event there, synced to your other machines.",
        valueName: "NAME"))
    var calendar: String?

    @Flag(help: "chime at: keep it on this machine, even where the alarm file's [defaults] calendar names a calendar to put alarms into.")
    var here = false

    @Option(name: .customLong("on-holiday"), help: ArgumentHelp(
        "What a day off (a holiday of the alarm file's [[holidays]] calendars) does to it: ring (the default), skip, or move to the nearest working day before or after.",
        valueName: "POLICY"))
    var onHoliday: String?

    @Option(help: ArgumentHelp("The last day it rings (through its end) or the last time: 2027-06-30 or \"2027-06-30 18:00\".",
                               valueName: "DATE[ TIME]"))
    var until: String?

    @Option(help: ArgumentHelp("How many times it rings in all, from now (1-10000).", valueName: "N"))
    var count: Int?

    @Flag(name: .customLong("json"), help: "Print the identifier and first fire time as JSON: {\"id\", \"nextFire\"} (docs/json.md).")
    var json = false

    /// The request these options describe, built as every door builds one (`AlarmDraft`): a field
    /// out of bounds, a rule chime cannot read or a time that has passed is a usage error naming
    /// the option. Without --id the daemon makes a unique identifier.
    func request(rule text: String) throws -> NotificationRequest {
        let now = WallClock.system.now()
        // A timer counts from this very moment, not from the start of the second.
        var draft = AlarmDraft(kind: .alarm, anchor: now)
        draft.identifier = identifier
        draft.title = title
        draft.body = body
        draft.label = label
        draft.urgency = urgency.urgency
        draft.icon = icon
        draft.timeZone = tz
        draft.refusesZoneForElapsedTime = true
        draft.readsPhrases = true
        draft.phraseLanguage = .ofUser
        draft.twelveHourClock = PhraseLanguage.userHasTwelveHourClock
        draft.when = .rule(text)
        if let sound {
            draft.sound = sound.contains(Character("/")) ? .file(reportingErrors { try NotifyRunner.soundFilePath(sound) }) : .named(sound)
        }
        if let volume {
            guard let percent = parsePercent(volume) else { ExitStatus.usage.exit("--volume \(volume): give a percentage such as 70 or 70%") }
            draft.volume = percent
        }
        if let fade { draft.fade = ["0", "0s"].contains(fade) ? .zero : Self.duration(fade, option: "--fade") }
        if let fadeFrom {
            guard let percent = parsePercent(fadeFrom) else {
                ExitStatus.usage.exit("--fade-from \(fadeFrom): give a percentage such as 20 or 20%")
            }
            draft.fadeFrom = percent
        }
        if insist { draft.insist = true }
        draft.snooze = snooze.map { Self.duration($0, option: "--snooze") }
        draft.grace = grace.map { Self.duration($0, option: "--grace") }
        if let ring { draft.ring = ["0", "0s"].contains(ring) ? .zero : Self.duration(ring, option: "--ring") }
        draft.autoSnooze = autoSnooze
        draft.wake = wake
        if let dnd {
            guard let policy = DoNotDisturbPolicy(rawValue: dnd) else {
                ExitStatus.usage.exit("--dnd \(dnd): must be break-through, defer or silent")
            }
            draft.doNotDisturb = policy
        }
        draft.expire = expire.map { Self.duration($0, option: "--expire") }
        if let bodyCommand {
            do { draft.bodyCommand = try splitWords(bodyCommand) } catch { ExitStatus.usage.exit("--body-command: \(error)") }
            guard draft.bodyCommand?.isEmpty == false else { ExitStatus.usage.exit("--body-command: give a program to run") }
        }
        draft.bodyTimeout = bodyTimeout.map { Self.duration($0, option: "--body-timeout") }
        if let remind {
            draft.reminders = Self.items(remind).map { Self.duration($0, option: "--remind") }
        }
        if let exceptions {
            draft.exceptions = Self.items(exceptions).map { text in
                do throws(RuleError) { return try ExceptDate(parsing: text) } catch { ExitStatus.usage.exit("--except \(text): \(error.message)") }
            }
        }
        draft.notice = notice.map { Self.duration($0, option: "--notice") }
        if let onHoliday {
            guard let policy = HolidayPolicy(rawValue: onHoliday) else {
                ExitStatus.usage.exit("--on-holiday \(onHoliday): give ring, skip, before or after")
            }
            draft.onHoliday = policy
        }
        draft.until = until.map { .text($0) }
        draft.count = count
        do throws(RequestError) {
            return try draft.build(now: now)
        } catch where error.offset != nil {
            ExitStatus.usage.exit("\(text): \(error.message)" + (Self.suggestion(for: text).map { "; \($0)" } ?? ""))
        } catch where error.field == .ring && sound == nil {
            ExitStatus.usage.exit("--ring \(ring ?? ""): give --sound too (an alarm without a sound has nothing to ring)")
        } catch where [.volume, .fade, .fadeFrom, .insist].contains(error.field) && sound == nil {
            ExitStatus.usage.exit("\(option(for: error, rule: text)): give --sound too")
        } catch where error.field == .bodyTimeout && bodyCommand == nil {
            ExitStatus.usage.exit("--body-timeout needs --body-command")
        } catch {
            ExitStatus.usage.exit("\(option(for: error, rule: text)): \(error.message)")
        }
    }

    /// What the user probably meant by a time chime does not read: `9` or `9am` is 09:00, and
    /// month names are written as numbers.
    static func suggestion(for text: String) -> String? {
        let lower = text.lowercased()
        let words = lower.split(separator: " ")
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        if words.contains(where: { word in months.contains { word.hasPrefix($0) } }) {
            return "write dates as YYYY-MM-DD, e.g. \"2026-12-24 18:00\" (month names are not understood)"
        }
        guard let first = words.first else { return nil }
        var digits = Substring(first)
        var pm = false
        for suffix in ["am", "a.m.", "pm", "p.m."] where digits.hasSuffix(suffix) {
            pm = suffix.hasPrefix("p")
            digits = digits.dropLast(suffix.count)
        }
        guard let hour = Int(digits), (0...23).contains(hour), digits.count <= 2 else { return nil }
        let twentyFour = pm && hour < 12 ? hour + 12 : (!pm && first.hasSuffix("m") && hour == 12 ? 0 : hour)
        return "times are 24-hour HH:MM: did you mean \(twentyFour < 10 ? "0" : "")\(twentyFour):00?"
    }

    /// How the user wrote the field an error is about.
    func option(for error: RequestError, rule: String) -> String {
        switch error.field {
        case .title?: "the title"
        case .body?: "the body"
        case .label?: "--label"
        case .sound?, .soundFile?: "--sound \(sound ?? "")"
        case .icon?: "--icon"
        case .expire?: "--expire \(expire ?? "")"
        case .snooze?: "--snooze \(snooze ?? "")"
        case .grace?: "--grace \(grace ?? "")"
        case .ring?: "--ring \(ring ?? "")"
        case .volume?: "--volume \(volume ?? "")"
        case .fade?: "--fade \(fade ?? "")"
        case .fadeFrom?: "--fade-from \(fadeFrom ?? "")"
        case .insist?: "--insist"
        case .autoSnooze?: "--auto-snooze"
        case .bodyCommand?: "--body-command"
        case .bodyTimeout?: "--body-timeout \(bodyTimeout ?? "")"
        case .timeZone?: "--tz \(tz ?? "")"
        case .remind?: "--remind \(remind ?? "")"
        case .except?: "--except \(exceptions ?? "")"
        case .until?: "--until \(until ?? "")"
        case .onHoliday?: "--on-holiday \(onHoliday ?? "")"
        case .notice?: "--notice \(notice ?? "")"
        case .count?: "--count \(count.map(String.init) ?? "")"
        case .id?: "--id \(quotedForMessage(identifier ?? ""))"
        default: "\"\(rule)\""
        }
    }

    /// The items of a comma-separated list, without the spaces around them.
    static func items(_ list: String) -> [String] {
        list.split(separator: ",", omittingEmptySubsequences: false).map { String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
    }

    /// A duration option (90s, 5m, 1h30m); a usage error when it is not one.
    static func duration(_ text: String, option: String) -> TimeSpan {
        guard let seconds = parseDuration(text), seconds > 0 else {
            ExitStatus.usage.exit("\(option) \(text): use a duration such as 5m or 90s")
        }
        return .seconds(seconds)
    }

    /// `intoDefaultCalendar`: into the alarm file's `[defaults] calendar` when it names one and
    /// neither `--calendar` nor `--here` says otherwise (`chime at`).
    func schedule(_ request: NotificationRequest, intoDefaultCalendar: Bool = false) {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let added = reportingErrors {
            if let calendar { return try center.add(request, calendar: calendar) }
            if intoDefaultCalendar, !here { return try center.add(request, intoDefaultCalendar: true) }
            return try center.add(request)
        }
        // What was understood, in words: for a phrase, and for a rule that repeats.
        let trigger = request.trigger
        let words = trigger.said != nil || trigger.repeats ? trigger.words(.ofUser) : nil
        AddedReport(identifier: added.identifier, nextFire: added.nextFire, zone: trigger.zone, words: words).print(json: json)
        warnIfUnplayable(request.content.sound, center: center)
        if request.content.wake { warnIfCannotWake(center: center) }
    }
}

/// What `chime in`, `at` and `timer` print: the new alarm's identifier and first fire time
/// (`eggs-12: 2026-11-23T16:40:00+01:00`; JSON `{"id", "nextFire"}`).
struct AddedReport: Report {
    var identifier: String
    var nextFire: Instant
    var zone: Zone
    /// The rule in words, as understood (nil: none said).
    var words: String? = nil

    var fields: [Field] {
        [Field("id", "", .text(identifier)), Field("nextFire", "", .instant(nextFire, zone)), Field("words", "", .optional(words) { .text($0) })]
    }
    func writeJSON(to out: inout PrintedOutput) { Datum.writeRecord(fields, to: &out) }
    var lines: [String] { ["\(identifier): \(Datum.instant(nextFire, zone).text ?? "")"] + (words.map { ["  " + $0] } ?? []) }
}

/// Says, after a `--wake` alarm is set, when this system cannot wake the machine for it, why, and
/// what would make it work (the alarm stays: it rings whenever the machine is awake).
func warnIfCannotWake(center: UserNotificationCenter, what: String = "this alarm", rings: String = "It is set, and rings") {
    guard let why = cannotWake(center: center) else { return }
    printError("chime: warning: \(what) cannot wake the machine: \(why). \(rings) if the machine is awake")
}

/// Why the running daemon cannot wake the machine (nil: it can, or it does not say).
func cannotWake(center: UserNotificationCenter) -> String? {
    guard let status = try? center.daemonStatus(), status.wakeMethod == "none" else { return nil }
    var why = Substring(status.wake)
    if why.hasPrefix("no: ") { why = why.dropFirst(4) }
    return String(why)
}

/// Says, after the alarm is set, when nothing here can play its sound (the alarm stays: it will be
/// silent, or a server or player installed later plays it).
func warnIfUnplayable(_ sound: Sound?, center: UserNotificationCenter) {
    guard let sound, let settings = try? center.notificationSettings(), settings.isAuthorized,
        let why = sound.whyUnplayable(with: settings.sound)
    else { return }
    printError("chime: warning: nothing here can play this alarm's sound: \(why); the alarm is set, and silent until that changes")
}
