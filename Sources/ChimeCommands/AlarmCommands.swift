import ArgumentParser
import ChimeCenter
import DBus
import Notifications
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

    @Flag(help: "Wake the machine from suspend for this alarm (chime says so when this system cannot).")
    var wake = false

    @Option(help: ArgumentHelp(
        "While the server's do-not-disturb is on: break-through (default: shown as critical, which servers let through), defer (shown when it ends, marked late) or silent (recorded, not shown).",
        valueName: "POLICY"))
    var dnd: String?

    @Flag(name: .customLong("json"), help: "Print the identifier and next fire time as JSON.")
    var json = false

    /// The request these options describe, checked as the daemon will check it
    /// (`NotificationRequest.validate`): a field out of bounds, or a time that has passed,
    /// is a usage error naming the option. An empty identifier lets the daemon make one.
    func request(rule text: String) throws -> NotificationRequest {
        let now = WallClock.system.now()
        if let tz {
            do throws(RequestError) { try Trigger.validateTimeZone(tz) } catch { ExitStatus.usage.exit("--tz \(tz): \(error.message)") }
        }
        let trigger: Trigger
        do throws(RuleError) {
            // A timer counts from this very moment, not from the start of the second.
            trigger = try Trigger(parsing: text, timeZone: tz, anchor: now)
        } catch {
            ExitStatus.usage.exit("\(text): \(error.message)" + (Self.suggestion(for: text).map { "; \($0)" } ?? ""))
        }
        if let tz, case .interval = trigger.rule {
            ExitStatus.usage.exit("--tz \(tz): \"\(text)\" counts elapsed time, which has no time zone; --tz is for clock times such as 16:35")
        }
        var content = NotificationContent(title: title, body: body, label: label, urgency: urgency.urgency, icon: icon,
                                          category: "x-chime.alarm", actions: [.snooze, .dismiss])
        if let sound {
            content.sound = sound.contains(Character("/")) ? .file(reportingErrors { try NotifyRunner.soundFilePath(sound) }) : .named(sound)
        }
        content.snooze = snooze.map { Self.duration($0, option: "--snooze") }
        content.grace = grace.map { Self.duration($0, option: "--grace") }
        if let ring {
            guard sound != nil else { ExitStatus.usage.exit("--ring \(ring): give --sound too (an alarm without a sound has nothing to ring)") }
            content.ring = ["0", "0s"].contains(ring) ? .zero : Self.duration(ring, option: "--ring")
        } else if sound != nil {
            content.ring = RingPolicy.defaultRing
        }
        content.autoSnooze = autoSnooze
        content.wake = wake
        if let dnd {
            guard let policy = DoNotDisturbPolicy(rawValue: dnd) else {
                ExitStatus.usage.exit("--dnd \(dnd): must be break-through, defer or silent")
            }
            content.doNotDisturb = policy
        }
        if let expire { content.expiry = .after(Self.duration(expire, option: "--expire")) }
        if let bodyCommand {
            let words: [String]
            do { words = try splitWords(bodyCommand) } catch { ExitStatus.usage.exit("--body-command: \(error)") }
            guard !words.isEmpty else { ExitStatus.usage.exit("--body-command: give a program to run") }
            content.bodyCommand = BodyCommand(
                arguments: words, timeLimit: bodyTimeout.map { Self.duration($0, option: "--body-timeout") } ?? BodyCommand.defaultTimeLimit)
        } else if bodyTimeout != nil {
            ExitStatus.usage.exit("--body-timeout needs --body-command")
        }
        if let identifier {
            do throws(RequestError) { try NotificationRequest.validateIdentifier(identifier) } catch {
                ExitStatus.usage.exit("--id \(quotedForMessage(identifier)): \(error.message)")
            }
        }
        let request = NotificationRequest(identifier: identifier ?? "", content: content, trigger: trigger)
        do throws(RequestError) {
            var checked = request
            if checked.identifier.isEmpty { checked.identifier = "x" }  // the daemon makes it
            try checked.validate(now: now)
        } catch {
            ExitStatus.usage.exit("\(option(for: error, rule: text)): \(error.message)")
        }
        return request
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
        case .autoSnooze?: "--auto-snooze"
        case .bodyCommand?: "--body-command"
        case .bodyTimeout?: "--body-timeout \(bodyTimeout ?? "")"
        case .timeZone?: "--tz \(tz ?? "")"
        case .id?: "--id"
        default: "\"\(rule)\""
        }
    }

    /// A duration option (90s, 5m, 1h30m); a usage error when it is not one.
    static func duration(_ text: String, option: String) -> TimeSpan {
        guard let seconds = parseDuration(text), seconds > 0 else {
            ExitStatus.usage.exit("\(option) \(text): use a duration such as 5m or 90s")
        }
        return .seconds(seconds)
    }

    func schedule(_ request: NotificationRequest) {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let added = reportingErrors { try center.add(request) }
        if json {
            printLine(JSON.object([("id", .string(added.identifier)), ("nextFire", .number(added.nextFire.seconds))]).text)
        } else {
            printLine("\(added.identifier): \(Next.iso8601(added.nextFire, in: request.trigger.zone))")
        }
        warnIfUnplayable(request.content.sound, center: center)
        if request.content.wake { warnIfCannotWake(center: center) }
    }
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

/// `chime in 5m TITLE [BODY]`: an egg timer.
public struct In: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "in",
        abstract: "Set a timer: chime in 5m \"Wait!\" \"Your eggs are almost done!\"",
        discussion: """
            DURATION is a number with a unit: 90s, 5m, 1h30m, 2d (s, m, h, d, w). Needs `chime daemon` running.

            Examples:
              chime in 5m "Eggs" "Take them off the heat"
              chime in 1h30m --sound bell --snooze 5m "Laundry"
              chime in 25m --id pomodoro --expire 1m "Break"
            """)

    @Argument(help: "How long from now.")
    var duration: String

    @OptionGroup var options: AlarmOptions

    public func run() throws {
        let request = try options.request(rule: "in " + duration)
        options.schedule(request)
    }
}

/// `chime at RULE TITLE [BODY]`: an alarm at a time, once or repeating.
public struct At: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "at",
        abstract: "Set an alarm: chime at 16:35 --days mon-fri \"Homeroom\" \"Check the guidance list\"",
        discussion: """
            RULE is any rule `chime next` accepts (see `chime next --help`). --days adds days to a time: \
            `16:35 --days mon-fri` is the rule "16:35 mon-fri". Needs `chime daemon` running.

            Examples:
              chime at 16:35 --days mon-fri --label school "Homeroom" "Check the guidance list"
              chime at "2026-12-24 18:00" --tz Europe/Berlin "Presents"
              chime at "*:0/15" "Quarter hour"
              chime at 07:00 --days weekdays --sound bell --snooze 9m "Get up"
            """)

    @Argument(help: "When: 16:35, \"2026-12-24 18:00\", \"Mon..Fri *-*-* 16:35\", ...")
    var rule: String

    @Option(help: ArgumentHelp("Days added to a time rule: 16:35 --days mon-fri is the rule \"16:35 mon-fri\" (also mon,wed,fri, weekdays, weekends).",
                               valueName: "DAYS"))
    var days: String?

    @OptionGroup var options: AlarmOptions

    public func run() throws {
        let text = days.map { rule + " " + $0 } ?? rule
        let request = try options.request(rule: text)
        options.schedule(request)
    }
}

/// `chime list`: pending alarms, soonest first.
public struct List: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "List pending alarms (or missed ones).",
        discussion: """
            One line per alarm: identifier, next fire time, title, [label], then in parentheses its rule \
            (16:35 mon-fri, in 5m, every 25m, once), its sound and where it comes from (command line or alarm \
            file), and what is wrong where something is: "held: …" for an occurrence waiting for a \
            notification server, "QUARANTINED: …" for an alarm the daemon keeps but will not fire (it crashed \
            twice while firing it, or its stored form no longer passes today's checks; chime cancel ID removes \
            it). chime show ID prints everything about one. --json gives each as {id, title, label, nextFire, \
            rule, sound, origin, state, note} with origin "command-line" or "file" and state "scheduled", \
            "held", "retrying" (the server failed to show it; it is tried again, 1 s then doubling to 1 min, \
            while within its grace) or "quarantined".

            Examples:
              chime list
              chime list --json | jq -r '.[] | select(.origin == "file") | .id'
              chime list --missed
            """)

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @Flag(name: .customLong("missed"), help: "List occurrences that were missed instead.")
    var missed = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        if missed {
            let list = reportingErrors { try center.missedOccurrences() }
            if json {
                printLine(JSON.array(list.map { item in
                    .object([("id", .string(item.identifier)), ("due", .number(item.due.seconds))] + (item.reason.map { [("reason", JSON.string($0))] } ?? []))
                }).text)
            } else {
                for item in list {
                    printLine("\(item.identifier)  missed \(Next.iso8601(item.due, in: Zone.system()))" + (item.reason.map { "  (\($0))" } ?? ""))
                }
            }
            return
        }
        let pending = reportingErrors { try center.pendingSummaries() }
        let system = Zone.system()
        var zones: [String: Zone] = [:]  // looked up once per name, not once per alarm
        func zone(_ item: PendingSummary) -> Zone {
            guard let name = item.timeZone else { return system }
            if let known = zones[name] { return known }
            let found = (try? Zone.named(name)) ?? system
            zones[name] = found
            return found
        }
        if json {
            printLine(JSON.array(pending.map { item in
                .object([
                    ("id", .string(item.identifier)), ("title", .string(item.title)), ("label", .string(item.label)),
                    ("nextFire", item.nextFire.map { .string(Next.iso8601($0, in: zone(item))) } ?? .bool(false)),
                    ("rule", .string(item.ruleText)), ("sound", .string(item.sound)),
                    ("origin", .string(item.origin.rawValue)), ("state", .string(item.state.rawValue)),
                    ("note", .string(item.note)),
                ])
            }).text)
            return
        }
        if pending.isEmpty { printLine("no pending alarms"); return }
        for item in pending {
            let when = item.nextFire.map { Next.iso8601($0, in: zone(item)) } ?? "never"
            let label = item.label.isEmpty ? "" : " [\(item.label)]"
            let sound = item.sound.isEmpty ? "no sound" : item.sound == "default" ? "default sound" : "sound \(item.sound)"
            let origin = "  (\(item.ruleText), \(sound), \(item.origin == .file ? "alarm file" : "command line"))"
            let state = switch item.state {
            case .scheduled: ""
            case .held: "  held: \(item.note)"
            case .retrying: "  retrying: \(item.note)"
            case .quarantined: "  QUARANTINED: \(item.note)"
            }
            // An alarm whose next occurrence waits (held, retrying) says so rather than "never".
            let shownWhen = item.state == .quarantined ? "never" : item.nextFire == nil && item.state != .scheduled ? item.state.rawValue : when
            printLine("\(item.identifier)  \(shownWhen)  \(item.title)\(label)\(origin)\(state)")
        }
    }
}

/// `chime show ID`: everything about one pending alarm.
public struct Show: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Show everything about one pending alarm.",
        discussion: """
            Its title, body, label, rule (as written and in full), time zone, next fire time, sound, urgency, \
            icon, actions, snooze, grace and expire times, body command, how long it rings, whether it wakes the \
            machine, its do-not-disturb policy, where it comes from and its state. \
            --json gives the same as one object.

            Examples:
              chime show homeroom
              chime show --json eggs-15
            """)

    @Argument(help: "The alarm's identifier (see chime list).")
    var id: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let request = reportingErrors { try center.request(withIdentifier: id) }
        let summary = reportingErrors { try center.pendingSummaries() }.first { $0.identifier == id }
        let content = request.content
        let zone = request.trigger.zone
        let next = summary?.nextFire.map { Next.iso8601($0, in: zone) } ?? "never"
        let rule = summary?.ruleText ?? ""
        let full: String = switch request.trigger.rule {
        case .calendar(let expression): expression.description
        case .interval(let span, let again): (again ? "every " : "in ") + span.description
        case .instant(let instant): "at " + Next.iso8601(instant, in: zone)
        }
        let sound: String = switch content.sound {
        case nil: "none"
        case .default?: "default (\(Sound.defaultName))"
        case .named(let name)?: name
        case .file(let path)?: path
        }
        let expire: String = switch content.expiry {
        case .serverDefault: "the server's default"
        case .never: "never"
        case .after(let span): span.description
        }
        let fields: [(String, String)] = [
            ("id", id), ("title", content.title), ("subtitle", content.subtitle), ("body", content.body),
            ("label", content.label), ("rule", rule == full || rule.isEmpty ? full : "\(rule) (\(full))"),
            ("time zone", request.trigger.timeZone ?? "the system's (\(Zone.system().identifier))"), ("next", next),
            ("sound", sound), ("urgency", content.urgency.name), ("icon", content.icon),
            ("actions", content.actions.map { "\($0.identifier)=\($0.title)" }.joined(separator: ", ")),
            ("snooze", (content.snooze ?? .minutes(10)).description), ("grace", (content.grace ?? .minutes(60)).description),
            ("expire", expire), ("body command", content.bodyCommand.map { $0.arguments.joined(separator: " ") } ?? ""),
            ("ring", content.sound == nil ? "" : content.rings
                ? "\(content.ring ?? .zero) until answered" + (content.autoSnooze ? ", then snoozes itself" : "") : "plays once"),
            ("wake", content.wake ? "yes" : "no"), ("dnd", (content.doNotDisturb ?? .breakThrough).rawValue),
            ("ring", content.sound == nil ? "" : content.rings
                ? "\(content.ring ?? .zero) until answered" + (content.autoSnooze ? ", then snoozes itself" : "") : "plays once"),
            ("wake", content.wake ? "yes" : "no"), ("dnd", (content.doNotDisturb ?? .breakThrough).rawValue),
            ("origin", summary?.origin == .file ? "alarm file" : "command line"),
            ("state", summary.map { $0.note.isEmpty ? $0.state.rawValue : "\($0.state.rawValue): \($0.note)" } ?? "not pending"),
        ]
        if json {
            printLine(JSON.object(fields.map { ($0.0 == "time zone" ? "timeZone" : $0.0 == "body command" ? "bodyCommand" : $0.0, JSON.string($0.1)) }).text)
        } else {
            for (name, value) in fields where !value.isEmpty {
                printLine((name + ":").padding(14) + value)
            }
        }
    }
}

/// `chime cancel ID... | --all`.
public struct Cancel: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Cancel pending alarms by identifier, or all of them.",
        discussion: """
            Alarms from the alarm file are changed in the file (remove them, or set enabled = false): \
            cancelling one exits 7 and says so, and --all leaves them.

            Examples:
              chime cancel eggs-15
              chime cancel homeroom tea
              chime cancel --all
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    @Flag(help: "Cancel every alarm added from the command line or over D-Bus (the alarm file's stay).")
    var all = false

    public func validate() throws {
        if all == !identifiers.isEmpty { throw ValidationError("give identifiers or --all, not both and not neither") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        if all {
            let removed = reportingErrors { try center.removeAllPendingNotificationRequests() }
            printLine("cancelled \(removed.count) alarm\(removed.count == 1 ? "" : "s") (alarms from the alarm file stay; change them there)")
            return
        }
        let removed = reportingErrors { try center.removePendingNotificationRequests(withIdentifiers: identifiers) }
        let unknown = identifiers.filter { !removed.contains($0) }
        if !unknown.isEmpty { ExitStatus.unknownIdentifier.exit("no pending alarm \(unknown.map(quotedForMessage).joined(separator: ", ")); see chime list") }
    }
}

/// `chime delivered`: alarms on screen (or shown and not yet closed).
public struct Delivered: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "List delivered alarms.",
        discussion: """
            The alarms shown whose popups are still up (the daemon forgets one when it is closed, answered, or \
            its server leaves): identifier, when it was shown, title.

            Examples:
              chime delivered
              chime delivered --json
            """)

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let delivered = reportingErrors { try center.deliveredNotifications() }
        if json {
            printLine(JSON.array(delivered.map {
                .object([("id", .string($0.identifier)), ("notificationID", .number(Int64($0.serverID))),
                         ("shown", .string(Next.iso8601($0.shown, in: Zone.system()))), ("title", .string($0.title))])
            }).text)
            return
        }
        if delivered.isEmpty { printLine("no delivered alarms"); return }
        for item in delivered {
            printLine("\(item.identifier)  shown \(Next.iso8601(item.shown, in: Zone.system()))  \(item.title)")
        }
    }
}

/// `chime close ID...`: take delivered alarms off the screen.
public struct Close: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Close delivered alarms by identifier.",
        discussion: """
            Takes the popups of delivered alarms down (CloseNotification); a repeating alarm rings again at its \
            next time.

            Examples:
              chime close homeroom
              chime close homeroom tea
            """)

    @Argument(help: "Identifiers, as `chime delivered` shows them.")
    var identifiers: [String]

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers to close") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        do {
            try center.removeDeliveredNotifications(withIdentifiers: identifiers)
        } catch let error as DBusError where error.name == SchedulerInterface.unknownIdentifier {
            ExitStatus.unknownIdentifier.exit("\(error.message); see chime delivered")
        } catch {
            ExitStatus.fail(error)
        }
    }
}

/// Why a command line could not be split into words.
struct WordSplitError: Error, CustomStringConvertible {
    var description: String
}

/// Splits `text` into words the way a POSIX shell would for a simple command:
/// blanks separate words; single quotes keep everything literally; double
/// quotes keep everything but `\"`, `\\`, `\$` and `` \` ``; a backslash
/// outside quotes keeps the next character. Nothing is expanded: there are no
/// variables, globs, pipes or redirections, because no shell runs it.
func splitWords(_ text: String) throws(WordSplitError) -> [String] {
    var words: [String] = []
    var current = ""
    var inWord = false
    var iterator = text.makeIterator()
    while let c = iterator.next() {
        switch c {
        case " ", "\t", "\n":
            if inWord { words.append(current); current = ""; inWord = false }
        case "'":
            inWord = true
            while true {
                guard let q = iterator.next() else { throw WordSplitError(description: "a single quote is not closed") }
                if q == "'" { break }
                current.append(q)
            }
        case "\"":
            inWord = true
            while true {
                guard let q = iterator.next() else { throw WordSplitError(description: "a double quote is not closed") }
                if q == "\"" { break }
                if q == "\\" {
                    guard let next = iterator.next() else { throw WordSplitError(description: "a double quote is not closed") }
                    switch next {
                    case "\"", "\\", "$", "`": current.append(next)
                    case "\n": break  // a line continuation
                    default: current += "\\" + String(next)
                    }
                    continue
                }
                current.append(q)
            }
        case "\\":
            inWord = true
            guard let next = iterator.next() else { throw WordSplitError(description: "a backslash ends the command") }
            if next != "\n" { current.append(next) }
        default:
            inWord = true
            current.append(c)
        }
    }
    if inWord { words.append(current) }
    return words
}
