import ArgumentParser
import ChimeCenter
import DBus
import Notifications
internal import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// `chime notify`: a drop-in for notify-send (libnotify 0.8), plus `--sound` and `--json`.
public struct Notify: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "Show a notification (a drop-in for notify-send).",
        discussion: """
            Takes every option of notify-send with the same short and long names and the same meaning, and puts the same Notify call on the wire (the default app name is "chime"). Exit statuses are listed in `chime --help`.

            Hints (-h TYPE:NAME:VALUE) take the types boolean, int, double, string, byte and variant (GVariant text, e.g. -h "variant:x-pos:<int32 5>"). The body's C escapes (\\n, \\t, \\\\) are expanded as notify-send does.

            Waiting (-w, or -A, which implies it) ends when the notification is closed, when an action is invoked (its name is printed), when the notification server leaves the bus, or when the time limit passes: the expire time plus \(Notify.graceSeconds) s, \(Notify.defaultWaitSeconds) s for the server's default expiry, a day for -t 0, or --wait-timeout. Ctrl-C closes the notification and exits 130.

            Examples:
              chime notify "Tea is ready"
              chime notify -u critical -t 10000 "Backup failed" "Disk full on /home"
              chime notify -A snooze=Snooze -A dismiss=Dismiss "Alarm" "16:35 homeroom"
              chime notify -p -h int:value:42 -c transfer.complete --sound complete "Done"
            """,
        helpNames: [.customShort("?"), .long]
    )

    static let graceSeconds = 5

    /// notify-send's command line as GLib's option parser reads it, in the shapes both of chime's
    /// parsers take: a flag given a value (`--transient=false`) is set, whatever the value;
    /// `--help-all` is `--help`; an empty number (`--expire-time=`) is an error, not a cue to take
    /// the next argument as the value.
    static func normalizedAsGOption<C: Collection>(_ arguments: C) -> [String] where C.Element == String {
        let flags = ["transient", "print-id", "wait", "version", "json"]
        var out: [String] = []
        var positionalsOnly = false
        for argument in arguments {
            if positionalsOnly || !argument.hasPrefix("--") {
                out.append(argument)
                continue
            }
            if argument == "--" { positionalsOnly = true }
            if argument == "--help-all" {
                out.append("--help")
                continue
            }
            let text = argument.dropFirst(2)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                if flags.contains(name) {
                    out.append("--" + name)
                    continue
                }
                if ["expire-time", "replace-id"].contains(name), text[text.index(after: equals)...].isEmpty {
                    ExitStatus.usage.exit("Cannot parse integer value “” for --\(name)")
                }
            }
            out.append(argument)
        }
        return out
    }
    static let defaultWaitSeconds = 120
    static let neverExpireWaitSeconds = 24 * 3600

    @Argument(help: "The summary (one line).")
    var summary: String?

    @Argument(help: "The body; C escapes such as \\n are expanded.")
    var body: String?

    @Option(name: [.customShort("u"), .customLong("urgency")], help: ArgumentHelp("The urgency level (low, normal, critical).", valueName: "LEVEL"))
    var urgency: UrgencyArgument = UrgencyArgument(urgency: .normal)

    @Option(name: [.customShort("t"), .customLong("expire-time")], parsing: .unconditional,
            help: ArgumentHelp("Expire after this many milliseconds (0: never, -1: the server's default).", valueName: "TIME"))
    var expireTime: Int32 = -1

    @Option(name: [.customShort("a"), .customLong("app-name")], help: ArgumentHelp("The application name.", valueName: "APP_NAME"))
    var appName: String = "chime"

    @Option(name: [.customShort("i"), .customLong("icon")], help: ArgumentHelp("An icon file name or theme icon name.", valueName: "ICON"))
    var icon: String = ""

    @Option(name: [.customShort("c"), .customLong("category")], help: ArgumentHelp("The notification category.", valueName: "TYPE[,TYPE...]"))
    var category: String?

    @Flag(name: [.customShort("e"), .customLong("transient")], help: "Create a transient notification.")
    var transient = false

    @Option(name: [.customShort("h"), .customLong("hint")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Extra data: boolean, int, double, string, byte or variant.", valueName: "TYPE:NAME:VALUE"))
    var hints: [String] = []

    @Flag(name: [.customShort("p"), .customLong("print-id")], help: "Print the notification id.")
    var printID = false

    @Option(name: [.customShort("r"), .customLong("replace-id")], help: ArgumentHelp("The id of the notification to replace.", valueName: "REPLACE_ID"))
    var replaceID: Int32 = 0

    @Flag(name: [.customShort("w"), .customLong("wait")], help: "Wait for the notification to be closed before exiting.")
    var wait = false

    @Option(name: [.customShort("A"), .customLong("action")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp(
                "An action to offer; implies --wait. Repeatable. Prints the invoked action's NAME, or its index (from 0) when NAME is not given.",
                valueName: "[NAME=]TEXT"))
    var actions: [String] = []

    @Flag(name: [.customShort("v"), .customLong("version")], help: "Print the version and exit.")
    var version = false

    @Option(name: .customLong("sound"), help: ArgumentHelp("A sound: a theme name (sound-name hint) or a file path (sound-file hint).", valueName: "NAME|PATH"))
    var sound: String?

    @Option(name: .customLong("wait-timeout"), parsing: .unconditional, help: ArgumentHelp("The longest time to wait, in seconds (0: no limit).", valueName: "SECONDS"))
    var waitTimeout: Int?

    @Flag(name: .customLong("json"), help: "Print the result as JSON: the id, and after waiting the action or the close reason.")
    var json = false

    public func validate() throws {
        if summary == nil && !version { throw ValidationError("No summary specified.") }
        if let waitTimeout, waitTimeout < 0 { throw ValidationError("--wait-timeout must be 0 or more seconds") }
    }

    /// The parsed options as a plain value.
    public var options: NotifyOptions {
        NotifyOptions(
            summary: summary, body: body, urgency: urgency.urgency, expireTime: expireTime, appName: appName,
            icon: icon, category: category, transient: transient, hints: hints, printID: printID,
            replaceID: replaceID, wait: wait, actions: actions, version: version, sound: sound,
            waitTimeout: waitTimeout, json: json)
    }

    public func run() throws {
        NotifyRunner(options: options).runAndExit()
    }

    /// Parses `chime notify` arguments with ArgumentParser, as the fallback path does.
    public static func parseOptions(_ arguments: [String]) throws -> NotifyOptions {
        try parse(splitAttachedShortValues(arguments)).options
    }

    /// GOption takes short options with the value attached (`-t5000`, `-ulow`); ArgumentParser does not.
    static func splitAttachedShortValues(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var index = 0
        var afterTerminator = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if afterTerminator || argument == "--" {
                afterTerminator = true
                out.append(argument)
                continue
            }
            // Split "-t5000" into "-t", "5000"; leave "-pe" (flags) and "--long" alone.
            if argument.count > 2, argument.hasPrefix("-"), !argument.hasPrefix("--"),
                let option = argument.dropFirst().first, NotifyOptions.shortWithValue.contains(option)
            {
                out.append("-" + String(option))
                out.append(String(argument.dropFirst(2)))
                continue
            }
            out.append(argument)
            // The value of a value-taking option is never itself an option.
            if argument.count == 2, argument.hasPrefix("-"), let option = argument.last,
                NotifyOptions.shortWithValue.contains(option), index < arguments.count
            {
                out.append(arguments[index])
                index += 1
            }
        }
        return out
    }
}

/// The options of `chime notify`, as plain values.
public struct NotifyOptions: Equatable, Sendable {
    public var summary: String?
    public var body: String?
    public var urgency: Urgency = .normal
    public var expireTime: Int32 = -1
    public var appName = "chime"
    public var icon = ""
    public var category: String?
    public var transient = false
    public var hints: [String] = []
    public var printID = false
    public var replaceID: Int32 = 0
    public var wait = false
    public var actions: [String] = []
    public var version = false
    public var sound: String?
    public var waitTimeout: Int?
    public var json = false

    public init(
        summary: String? = nil, body: String? = nil, urgency: Urgency = .normal, expireTime: Int32 = -1,
        appName: String = "chime", icon: String = "", category: String? = nil, transient: Bool = false,
        hints: [String] = [], printID: Bool = false, replaceID: Int32 = 0, wait: Bool = false,
        actions: [String] = [], version: Bool = false, sound: String? = nil, waitTimeout: Int? = nil,
        json: Bool = false
    ) {
        self.summary = summary
        self.body = body
        self.urgency = urgency
        self.expireTime = expireTime
        self.appName = appName
        self.icon = icon
        self.category = category
        self.transient = transient
        self.hints = hints
        self.printID = printID
        self.replaceID = replaceID
        self.wait = wait
        self.actions = actions
        self.version = version
        self.sound = sound
        self.waitTimeout = waitTimeout
        self.json = json
    }

    /// Short options that take a value.
    /// (An array, not a Set: see `Connection.subscriptions` on start-up cost.)
    static let shortWithValue: [Character] = ["u", "t", "a", "i", "c", "h", "r", "A"]

    /// Parses the common shapes of notify-send's command line without
    /// ArgumentParser (whose reflection costs milliseconds of start-up). Returns
    /// nil for anything unusual (help, unknown options, bad values, too many
    /// arguments), which then goes to ArgumentParser for its messages; the
    /// tests check that both agree wherever this one answers.
    public init?<C: Collection>(fastParsing arguments: C) where C.Element == String {
        var positionals: [String] = []
        var iterator = arguments.makeIterator()
        var onlyPositionals = false

        /// Applies a value option; false when the value is not acceptable.
        func apply(_ option: String, _ value: String) -> Bool {
            switch option {
            case "u", "urgency":
                guard let level = Urgency(name: value) else { return false }
                urgency = level
            case "t", "expire-time":
                guard let number = Int32(value) else { return false }
                expireTime = number
            case "a", "app-name": appName = value
            case "i", "icon": icon = value
            case "c", "category": category = value
            case "h", "hint": hints.append(value)
            case "r", "replace-id":
                guard let number = Int32(value) else { return false }
                replaceID = number
            case "A", "action": actions.append(value)
            case "sound": sound = value
            case "wait-timeout":
                guard let number = Int(value), number >= 0 else { return false }
                waitTimeout = number
            default: return false
            }
            return true
        }
        func applyFlag(_ option: String) -> Bool {
            switch option {
            case "e", "transient": transient = true
            case "p", "print-id": printID = true
            case "w", "wait": wait = true
            case "v", "version": version = true
            case "json": json = true
            default: return false
            }
            return true
        }
        let longWithValue: [String] = [
            "urgency", "expire-time", "app-name", "icon", "category", "hint", "replace-id", "action", "sound",
            "wait-timeout",
        ]

        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                if argument == "-" { return nil }
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument.hasPrefix("--") {
                let text = argument.dropFirst(2)
                if let equals = text.firstIndex(of: "=") {
                    let name = String(text[..<equals])
                    guard longWithValue.contains(name), apply(name, String(text[text.index(after: equals)...])) else {
                        return nil
                    }
                } else if longWithValue.contains(String(text)) {
                    guard let value = iterator.next(), apply(String(text), value) else { return nil }
                } else {
                    guard applyFlag(String(text)) else { return nil }
                }
                continue
            }
            // A cluster of short options: flags, then at most one option taking a value.
            var rest = Substring(argument.dropFirst())
            while let option = rest.first {
                rest = rest.dropFirst()
                if NotifyOptions.shortWithValue.contains(option) {
                    let value: String
                    if !rest.isEmpty {
                        // ArgumentParser reads "-pt5" differently from GOption; leave such clusters to it.
                        guard argument.count > 2, argument.dropFirst().first == option else { return nil }
                        value = String(rest)
                    } else {
                        guard let next = iterator.next() else { return nil }
                        value = next
                    }
                    guard apply(String(option), value) else { return nil }
                    break
                }
                guard applyFlag(String(option)) else { return nil }
            }
        }
        guard positionals.count <= 2, positionals.count >= 1 || version else { return nil }
        summary = positionals.first
        body = positionals.count > 1 ? positionals[1] : nil
    }
}

/// Shows the notification the options describe, waits if asked, prints, and exits.
struct NotifyRunner {
    var options: NotifyOptions

    func runAndExit() -> Never {
        if options.version {
            printLine("chime \(chimeVersion)")
            exit(ExitStatus.success.rawValue)
        }
        let notification = reportingErrors { try makeNotification() }
        let connection = reportingErrors { try openSessionBus() }
        let client = NotificationClient(connection: connection)

        var shown = notification
        var actionsDropped = false
        if !notification.actions.isEmpty {
            let capabilities = reportingErrors { try client.capabilities() }
            if !capabilities.contains(.actions) {
                printError("chime: the notification server does not support actions; showing the notification without them")
                shown.actions = []
                actionsDropped = true
            }
        }
        var status = ExitStatus.success
        if options.wait || !shown.actions.isEmpty {
            status = reportingErrors { try waitForOutcome(client, shown) }
        } else {
            let id = reportingErrors { try client.notify(shown) }
            if options.json {
                printLine(JSON.object([("id", .number(Int64(id)))]).text)
            } else if options.printID {
                printLine(String(id))
            }
        }
        if actionsDropped && status == .success { status = .actionsUnsupported }
        exit(status.rawValue)
    }

    /// The Notify call these options describe.
    func makeNotification() throws -> Notification {
        guard let summary = options.summary, !summary.isEmpty else { throw NotifySendSyntaxError("No summary specified.") }
        var hintList: [Hint] = [.senderPID(Int64(getpid())), .urgency(options.urgency)]
        if let category = options.category, !category.isEmpty { hintList.append(.category(category)) }
        if options.transient { hintList.append(.transient(true)) }
        if let sound = options.sound { hintList.append(try Self.soundHint(sound)) }
        for text in options.hints {
            // An empty string hint sets nothing (libnotify's set_hint_string ignores it).
            if NotifySendSyntax.isEmptyStringHint(text) { continue }
            hintList.append(try NotifySendSyntax.hint(text))
        }
        return Notification(
            appName: options.appName,
            // libnotify takes the id through a property that accepts 0 and up: a negative one is 0.
            replacesID: options.replaceID > 0 ? UInt32(options.replaceID) : 0,
            icon: options.icon,
            summary: summary,
            body: try options.body.map(NotifySendSyntax.compressBody) ?? "",
            actions: NotifySendSyntax.actions(options.actions),
            hints: hintList,
            expiration: Expiration(wireValue: options.expireTime))
    }

    /// `--sound`: a path (anything with a `/`, which must exist) is a sound-file hint; anything else a sound-name.
    static func soundHint(_ sound: String) throws -> Hint {
        guard sound.contains(Character("/")) else { return .soundName(sound) }
        return .soundFile(try soundFilePath(sound))
    }

    /// The absolute path of a sound file given on the command line, which must be readable.
    static func soundFilePath(_ sound: String) throws -> String {
        var path = sound
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buffer, buffer.count) != nil {
                path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
            }
        }
        guard access(path, R_OK) == 0 else {
            throw InputError(message: "--sound \(sound): no readable sound file there")
        }
        return path
    }

    /// How long to wait for the notification to close, or nil for no limit.
    func waitLimitSeconds(for expiration: Expiration) -> Int? {
        if let waitTimeout = options.waitTimeout { return waitTimeout == 0 ? nil : waitTimeout }
        switch expiration {
        case .milliseconds(let ms): return (Int(ms) + 999) / 1000 + Notify.graceSeconds
        case .serverDefault, .undefined: return Notify.defaultWaitSeconds
        case .never: return Notify.neverExpireWaitSeconds
        }
    }

    /// Shows the notification and waits for it to close, an action, the server to leave, or the time limit.
    func waitForOutcome(_ client: NotificationClient, _ notification: Notification) throws -> ExitStatus {
        let connection = client.connection
        var id: UInt32? = nil
        var events: [NotificationEvent] = []
        var serverGone = false
        // Subscribe before Notify, so no signal can slip past.
        try client.subscribe { events.append($0) }
        try connection.watchNameOwner(NotificationClient.busName) { old, _ in
            if !old.isEmpty { serverGone = true }
        }
        let signals = SignalFD(blocking: [SIGINT, SIGTERM])

        let shownID = try client.notify(notification)
        id = shownID
        if options.printID && !options.json { printLine(String(shownID)) }

        let limit = waitLimitSeconds(for: notification.expiration)
        let deadline = limit.map { ContinuousClock.now + .seconds($0) }
        var action: String? = nil
        var closed: CloseReason? = nil
        var token: String? = nil
        let result = connection.run(until: deadline, wakeOn: signals?.fd) {
            for event in events where event.id == id {
                switch event {
                case .actionInvoked(_, let key): if action == nil { action = key }
                case .closed(_, let reason): if closed == nil { closed = reason }
                case .activationToken(_, let text): token = text
                }
            }
            events.removeAll()
            return action == nil && closed == nil && !serverGone
        }

        var fields: [(String, JSON)] = [("id", .number(Int64(shownID)))]
        if let token { fields.append(("activationToken", .string(token))) }
        let status: ExitStatus
        if let action {
            // As notify-send does: print the action, then take the notification down.
            if options.json { fields.append(("action", .string(action))) } else { printLine(action) }
            if closed == nil { try? client.close(shownID) }
            status = .success
        } else if let closed {
            fields.append(("closed", .object([("reason", .string(closed.name)), ("code", .number(Int64(closed.wireValue)))])))
            status = .success
        } else if serverGone || result == .disconnected {
            fields.append(("serverGone", .bool(true)))
            printError("chime: the notification server left the bus while waiting")
            status = .serverVanished
        } else if result == .woken {
            printError("chime: wait cancelled, closing notification")
            try? client.close(shownID)
            fields.append(("interrupted", .bool(true)))
            status = .interrupted
        } else {
            fields.append(("timedOut", .bool(true)))
            printError("chime: stopped waiting after \(limit ?? 0) s without the notification closing")
            status = .waitTimedOut
        }
        if options.json { printLine(JSON.object(fields).text) }
        return status
    }
}

/// `-u LEVEL`, case-insensitive like notify-send.
struct UrgencyArgument: ExpressibleByArgument {
    var urgency: Urgency
    init(urgency: Urgency) { self.urgency = urgency }
    init?(argument: String) {
        guard let urgency = Urgency(name: argument) else { return nil }
        self.urgency = urgency
    }
    var defaultValueDescription: String { urgency.name }
    static var allValueStrings: [String] { Urgency.allCases.map(\.name) }
}

/// SIGINT and SIGTERM delivered as a readable file descriptor, so a poll loop can wake on them.
final class SignalFD {
    let fd: Int32
    init?(blocking signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        guard sigprocmask(SIG_BLOCK, &set, nil) == 0 else { return nil }
        let fd = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else {
            // Without the descriptor, let the signals end the process as usual.
            sigprocmask(SIG_UNBLOCK, &set, nil)
            return nil
        }
        self.fd = fd
    }
    deinit { close(fd) }
}
