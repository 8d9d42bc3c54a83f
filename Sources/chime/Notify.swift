import ArgumentParser
import DBus
import Notifications
internal import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// `chime notify`: a drop-in for notify-send (libnotify 0.8), plus `--sound` and `--json`.
struct Notify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a notification (a drop-in for notify-send).",
        discussion: """
            Takes every option of notify-send with the same short and long names and the same meaning, and puts the same Notify call on the wire.

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
    var appName: String = "notify-send"

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

    @Option(name: .customLong("wait-timeout"), help: ArgumentHelp("The longest time to wait, in seconds (0: no limit).", valueName: "SECONDS"))
    var waitTimeout: Int?

    @Flag(name: .customLong("json"), help: "Print the result as JSON: the id, and after waiting the action or the close reason.")
    var json = false

    func validate() throws {
        if summary == nil && !version { throw ValidationError("No summary specified.") }
        if let waitTimeout, waitTimeout < 0 { throw ValidationError("--wait-timeout must be 0 or more seconds") }
    }

    /// GOption takes short options with the value attached (`-t5000`, `-ulow`); ArgumentParser does not.
    static func splitAttachedShortValues(_ arguments: [String]) -> [String] {
        let takesValue: Set<Character> = ["u", "t", "a", "i", "c", "h", "r", "A"]
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
                let option = argument.dropFirst().first, takesValue.contains(option)
            {
                out.append("-" + String(option))
                out.append(String(argument.dropFirst(2)))
                continue
            }
            out.append(argument)
            // The value of a value-taking option is never itself an option.
            if argument.count == 2, argument.hasPrefix("-"), let option = argument.last, takesValue.contains(option),
                index < arguments.count
            {
                out.append(arguments[index])
                index += 1
            }
        }
        return out
    }

    func run() throws {
        if version {
            printLine("chime \(chimeVersion)")
            return
        }
        let notification = reportingErrors { try makeNotification() }
        let connection = reportingErrors { try openSessionBus() }
        let client = NotificationClient(connection: connection)

        var notification_ = notification
        var actionsDropped = false
        if !notification.actions.isEmpty {
            let capabilities = reportingErrors { try client.capabilities() }
            if !capabilities.contains(.actions) {
                printError("chime: the notification server does not support actions; showing the notification without them")
                notification_.actions = []
                actionsDropped = true
            }
        }
        let waiting = wait || !notification_.actions.isEmpty
        if !waiting {
            let id = reportingErrors { try client.notify(notification_) }
            report(id: id, outcome: nil)
            if actionsDropped { Glibc.exit(ExitStatus.actionsUnsupported.rawValue) }
            return
        }
        let outcome = reportingErrors { try waitForOutcome(client, notification_) }
        if actionsDropped, outcome.status == .success { Glibc.exit(ExitStatus.actionsUnsupported.rawValue) }
        if outcome.status != .success { Glibc.exit(outcome.status.rawValue) }
    }

    /// The Notify call these options describe.
    func makeNotification() throws -> Notification {
        var hintList: [Hint] = [.senderPID(Int64(getpid())), .urgency(urgency.urgency)]
        if let category, !category.isEmpty { hintList.append(.category(category)) }
        if transient { hintList.append(.transient(true)) }
        if let sound { hintList.append(try Self.soundHint(sound)) }
        for text in hints { hintList.append(try NotifySendSyntax.hint(text)) }
        return Notification(
            appName: appName,
            replacesID: UInt32(bitPattern: replaceID),
            icon: icon,
            summary: summary ?? "",
            body: try body.map(NotifySendSyntax.compressBody) ?? "",
            actions: NotifySendSyntax.actions(actions),
            hints: hintList,
            expiration: Expiration(wireValue: expireTime))
    }

    /// `--sound`: a path (anything with a `/`, which must exist) is a sound-file hint; anything else a sound-name.
    static func soundHint(_ sound: String) throws -> Hint {
        guard sound.contains("/") else { return .soundName(sound) }
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
        return .soundFile(path)
    }

    struct Outcome {
        var status: ExitStatus
    }

    /// Shows the notification and waits for it to close, an action, the server to leave, or the time limit.
    func waitForOutcome(_ client: NotificationClient, _ notification: Notification) throws -> Outcome {
        let connection = client.connection
        var id: UInt32? = nil
        var events: [NotificationEvent] = []  // those that arrive before we know our id
        var serverGone = false
        try client.subscribe { events.append($0) }
        try connection.watchNameOwner(NotificationClient.busName) { old, new in
            if !old.isEmpty { serverGone = true }
        }
        let signals = SignalFD(blocking: [SIGINT, SIGTERM])

        let shownID = try client.notify(notification)
        id = shownID
        if printID && !json { printLine(String(shownID)) }

        let limitSeconds: Int? = {
            if let waitTimeout { return waitTimeout == 0 ? nil : waitTimeout }
            switch notification.expiration {
            case .milliseconds(let ms): return (Int(ms) + 999) / 1000 + Notify.graceSeconds
            case .serverDefault: return Notify.defaultWaitSeconds
            case .never: return Notify.neverExpireWaitSeconds
            }
        }()
        let deadline = limitSeconds.map { ContinuousClock.now + .seconds($0) }

        var action: String? = nil
        var closed: CloseReason? = nil
        var token: String? = nil
        func absorb() {
            for event in events where event.id == id {
                switch event {
                case .actionInvoked(_, let key): if action == nil { action = key }
                case .closed(_, let reason): if closed == nil { closed = reason }
                case .activationToken(_, let text): token = text
                }
            }
            events.removeAll()
        }
        let result = connection.run(until: deadline, wakeOn: signals?.fd) {
            absorb()
            return action == nil && closed == nil && !serverGone
        }

        var fields: [(String, JSON)] = [("id", .number(Int64(shownID)))]
        if let token { fields.append(("activationToken", .string(token))) }
        let status: ExitStatus
        if let action {
            // As notify-send does: print the action, then take the notification down.
            if json { fields.append(("action", .string(action))) } else { printLine(action) }
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
            printError("chime: stopped waiting after \(limitSeconds ?? 0) s without the notification closing")
            status = .waitTimedOut
        }
        if json { printLine(JSON.object(fields).text) }
        return Outcome(status: status)
    }

    func report(id: UInt32, outcome: String?) {
        if json {
            printLine(JSON.object([("id", .number(Int64(id)))]).text)
        } else if printID {
            printLine(String(id))
        }
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
        guard fd >= 0 else { return nil }
        self.fd = fd
    }
    deinit { close(fd) }
}
