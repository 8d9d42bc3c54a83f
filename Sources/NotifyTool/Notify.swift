import DBus
import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

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
    /// `-n/--app-icon` (libnotify 0.8.7): the app_icon argument; `-i` is the image.
    public var appIcon = ""
    /// `--id-fd`, `--selected-action-fd`, `--activation-token-fd` (libnotify 0.8.7).
    public var idFD: Int32?
    public var selectedActionFD: Int32?
    public var activationTokenFD: Int32?
    /// dunstify's `-C/--close ID`, `--stack-tag TAG` and `-I/--raw-icon FILE`.
    public var close: UInt32?
    public var stackTag: String?
    public var rawIcon: String?
    /// `--button-purpose NAME=PURPOSE` (chime's own): what an action's button is for, such as
    /// `call.accept`, which version 2 of the notification portal shows (servers do not).
    public var buttonPurposes: [String] = []

    public init(
        summary: String? = nil, body: String? = nil, urgency: Urgency = .normal, expireTime: Int32 = -1,
        appName: String = "chime", icon: String = "", category: String? = nil, transient: Bool = false,
        hints: [String] = [], printID: Bool = false, replaceID: Int32 = 0, wait: Bool = false,
        actions: [String] = [], version: Bool = false, sound: String? = nil, waitTimeout: Int? = nil,
        json: Bool = false, appIcon: String = "", idFD: Int32? = nil, selectedActionFD: Int32? = nil,
        activationTokenFD: Int32? = nil, close: UInt32? = nil, stackTag: String? = nil, rawIcon: String? = nil,
        buttonPurposes: [String] = []
    ) {
        self.buttonPurposes = buttonPurposes
        self.appIcon = appIcon
        self.idFD = idFD
        self.selectedActionFD = selectedActionFD
        self.activationTokenFD = activationTokenFD
        self.close = close
        self.stackTag = stackTag
        self.rawIcon = rawIcon
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

    /// notify-send's command line as GLib's option parser reads it, in the shapes both of chime's
    /// parsers take: a flag given a value (`--transient=false`) is set, whatever the value;
    /// `--help-all` is `--help`; an empty number (`--expire-time=`) is an error, not a cue to take
    /// the next argument as the value.
    public static func normalizedAsGOption<C: Collection>(_ arguments: C) -> [String] where C.Element == String {
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
                if ["expire-time", "replace-id", "id-fd", "selected-action-fd", "activation-token-fd"].contains(name),
                    text[text.index(after: equals)...].isEmpty
                {
                    ExitStatus.usage.exit("Cannot parse integer value “” for --\(name)")
                }
            }
            out.append(argument)
        }
        return out
    }
    /// GOption takes short options with the value attached (`-t5000`, `-ulow`); ArgumentParser does not.
    public static func splitAttachedShortValues(_ arguments: [String]) -> [String] {
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

    /// `--button-purpose` values as (action, purpose) pairs; refuses one without `=` or with an empty side.
    static func buttonPurposes(_ values: [String]) throws(NotifySendSyntaxError) -> [(action: String, purpose: String)] {
        try values.map { value throws(NotifySendSyntaxError) in
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex, value.index(after: equals) != value.endIndex else {
                throw NotifySendSyntaxError("--button-purpose \(value): give NAME=PURPOSE, e.g. accept=call.accept")
            }
            return (String(value[..<equals]), String(value[value.index(after: equals)...]))
        }
    }

    /// Short options that take a value.
    /// (An array, not a Set: see `Connection.subscriptions` on start-up cost.)
    static let shortWithValue: [Character] = ["u", "t", "a", "i", "n", "c", "h", "r", "A", "C", "I"]

    /// Parses the common shapes of notify-send's command line without
    /// ArgumentParser (whose reflection costs milliseconds of start-up). Returns
    /// nil for anything unusual (help, unknown options, bad values, too many
    /// arguments), which then goes to ArgumentParser for its messages; the
    /// tests check that both agree wherever this one answers.
    public init?<C: Collection>(fastParsing arguments: C) where C.Element == String {
        guard let options = try? Self(gOptionParsing: arguments) else { return nil }
        self = options
    }

    /// Why notify-send's parser refuses a command line, in GLib's words (`Unknown option --x`,
    /// `Missing argument for -t`, `Cannot parse integer value “x” for -t`), or that it asks for help.
    public enum GOptionFailure: Error, Equatable {
        case message(String)
        case help
        /// A shape this parser leaves to ArgumentParser ("-pt5", a lone "-").
        case unusual
    }

    /// Parses a command line as notify-send's GOption parser does, with chime's and dunstify's
    /// options besides; throws notify-send's message for what it refuses.
    public init<C: Collection>(gOptionParsing arguments: C, defaultAppName: String = "chime") throws(GOptionFailure)
    where C.Element == String {
        appName = defaultAppName
        var positionals: [String] = []
        var iterator = arguments.makeIterator()
        var onlyPositionals = false

        /// Applies a value option (`given` as written, for messages); throws where the value is not acceptable.
        func apply(_ option: String, _ value: String, given: String) throws(GOptionFailure) {
            func integer<T: FixedWidthInteger>(_: T.Type) throws(GOptionFailure) -> T {
                guard let number = T(value) else { throw .message("Cannot parse integer value “\(value)” for \(given)") }
                return number
            }
            switch option {
            case "u", "urgency":
                guard let level = Urgency(name: value) else {
                    throw .message("Unknown urgency \(value) specified. Known urgency levels: low, normal, critical.")
                }
                urgency = level
            case "t", "expire-time": expireTime = try integer(Int32.self)
            case "a", "app-name": appName = value
            case "i", "icon": icon = value
            case "n", "app-icon": appIcon = value
            case "c", "category": category = value
            case "id-fd": idFD = try integer(Int32.self)
            case "selected-action-fd": selectedActionFD = try integer(Int32.self)
            case "activation-token-fd": activationTokenFD = try integer(Int32.self)
            case "C", "close": close = try integer(UInt32.self)
            case "stack-tag": stackTag = value
            case "I", "raw-icon": rawIcon = value
            case "h", "hint": hints.append(value)
            case "r", "replace-id": replaceID = try integer(Int32.self)
            case "A", "action": actions.append(value)
            case "sound": sound = value
            case "button-purpose": buttonPurposes.append(value)
            case "wait-timeout":
                guard let number = Int(value), number >= 0 else { throw .unusual }
                waitTimeout = number
            default: throw .message("Unknown option \(given)")
            }
        }
        func applyFlag(_ option: String, given: String) throws(GOptionFailure) {
            switch option {
            case "e", "transient": transient = true
            case "p", "print-id": printID = true
            case "w", "wait": wait = true
            case "v", "version": version = true
            case "json": json = true
            case "?", "help", "help-all": throw .help
            default: throw .message("Unknown option \(given)")
            }
        }
        let longWithValue: [String] = [
            "urgency", "expire-time", "app-name", "icon", "category", "hint", "replace-id", "action", "sound",
            "wait-timeout", "app-icon", "id-fd", "selected-action-fd", "activation-token-fd", "close", "stack-tag",
            "raw-icon", "button-purpose",
        ]

        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                if argument == "-" { throw .unusual }
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
                    guard longWithValue.contains(name) else { throw .message("Unknown option --\(name)") }
                    try apply(name, String(text[text.index(after: equals)...]), given: "--" + name)
                } else if longWithValue.contains(String(text)) {
                    guard let value = iterator.next() else { throw .message("Missing argument for \(argument)") }
                    try apply(String(text), value, given: argument)
                } else {
                    try applyFlag(String(text), given: argument)
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
                        guard argument.count > 2, argument.dropFirst().first == option else { throw .unusual }
                        value = String(rest)
                    } else {
                        guard let next = iterator.next() else { throw .message("Missing argument for -\(option)") }
                        value = next
                    }
                    try apply(String(option), value, given: "-\(option)")
                    break
                }
                try applyFlag(String(option), given: "-\(option)")
            }
        }
        guard positionals.count <= 2 else { throw .message("Invalid number of options.") }
        guard positionals.count >= 1 || version || close != nil else { throw .message("No summary specified.") }
        summary = positionals.first
        body = positionals.count > 1 ? positionals[1] : nil
    }
}

/// Shows the notification the options describe, waits if asked, prints, and exits.
package struct NotifyRunner {
    package var options: NotifyOptions
    /// Started as `notify-send`: notify-send's messages and exit statuses (see `NotifySendName`).
    package var asNotifySend = false

    /// The sandbox this process runs in (Flatpak, Snap), read once: it decides the portal and, in a
    /// Snap, the desktop entry.
    let sandbox: Sandbox

    package init(options: NotifyOptions, asNotifySend: Bool = false) {
        self.options = options
        self.asNotifySend = asNotifySend
        sandbox = Sandbox.current()
    }

    /// The grace added to a wait beyond the expire time; the waits for the server's default expiry and for never.
    package static let graceSeconds = 5
    package static let defaultWaitSeconds = 120
    package static let neverExpireWaitSeconds = 24 * 3600

    package func runAndExit() -> Never {
        if options.version {
            printLine(asNotifySend ? "\(NotifySendName.programName) \(NotifySendName.matchedVersion) (chime \(chimeVersion))" : "chime \(chimeVersion)")
            Sys.exit(ExitStatus.success.rawValue)
        }
        // Everything the command line alone can refuse is refused before the bus is touched.
        var notification = options.close == nil ? reportingErrors { try makeNotification(specVersion: "1.2") } : Notification(summary: "")
        let connection = reportingErrors { try openSessionBus() }
        // Inside a sandbox (or NOTIFY_FORCE_PORTAL set), the notification portal where one answers.
        if sandbox.wantsPortal {
            let portal = PortalClient(connection: connection)
            if let version = reportingErrors({ try portal.version() }) {
                if let number = options.close { closeThroughPortal(portal, number: number) }
                runThroughPortal(portal, version: version)
            }
        }
        let client = NotificationClient(connection: connection)
        if let id = options.close {
            // dunstify -C ID: close that notification, and nothing else.
            reportingErrors { try client.close(id) }
            Sys.exit(ExitStatus.success.rawValue)
        }
        if !options.icon.isEmpty {
            // -i is an image hint whose name depends on the spec version the server follows.
            let spec = reportingErrors { try client.serverInformation().specVersion }
            notification = reportingErrors { try makeNotification(specVersion: spec) }
        }

        var shown = notification
        var actionsDropped = false
        if !notification.actions.isEmpty {
            let capabilities = reportingErrors { try client.capabilities() }
            if !capabilities.contains(.actions) {
                printError(asNotifySend ? "Actions are not supported by this notifications server. Displaying non-interactively."
                    : "chime: the notification server does not support actions; showing the notification without them")
                shown.actions = []
                actionsDropped = true
            }
        }
        var status = ExitStatus.success
        if options.wait || !shown.actions.isEmpty {
            status = reportingErrors { try waitForOutcome(client, shown) }
        } else {
            let id = reportingErrors { try show(client, shown) }
            if options.json { RecordReport(fields: [Field("id", "", .count(Int64(id)))]).print(json: true) }
        }
        if actionsDropped && status == .success { status = .actionsUnsupported }
        Sys.exit(asNotifySend && status != .success ? 1 : status.rawValue)
    }

    /// Shows the notification, then gives its id to whoever asked: `-p` on stdout, `--id-fd`.
    func show(_ client: NotificationClient, _ notification: Notification) throws -> UInt32 {
        let id = try client.notify(notification)
        if options.printID && !options.json { printLine(String(id)) }
        if let fd = options.idFD { writeLine(String(id), to: fd) }
        return id
    }

    /// The Notify call these options describe, for a server following `specVersion` of the spec.
    func makeNotification(specVersion: String) throws -> Notification {
        guard let summary = options.summary, !summary.isEmpty else { throw NotifySendSyntaxError("No summary specified.") }
        _ = try NotifyOptions.buttonPurposes(options.buttonPurposes)
        var hintList: [Hint] = [.senderPID(Int64(Sys.processID)), .urgency(options.urgency)]
        var appIcon = options.appIcon
        if !options.icon.isEmpty {
            // As libnotify 0.8.7 sends its icon-name: the image hint of the server's spec version
            // ("image-path" from 1.2, "image_path" in 1.1), or the app icon before them.
            let spec = specVersion.split(separator: ".").map { Int($0) ?? 0 }
            if !spec.lexicographicallyPrecedes([1, 2]) {
                hintList.append(.imagePath(options.icon))
            } else if !spec.lexicographicallyPrecedes([1, 1]) {
                hintList.append(.custom(name: "image_path", value: .string(options.icon)))
            } else if appIcon.isEmpty {
                appIcon = options.icon
            }
        }
        if let category = options.category, !category.isEmpty { hintList.append(.category(category)) }
        if options.transient { hintList.append(.transient(true)) }
        if let sound = options.sound { hintList.append(try Self.soundHint(sound)) }
        if let tag = options.stackTag, !tag.isEmpty {
            // dunstify's hint, and the one mako and swaync also stack by.
            hintList.append(.custom(name: "x-dunst-stack-tag", value: .string(tag)))
            hintList.append(.custom(name: "x-canonical-private-synchronous", value: .string(tag)))
        }
        if let path = options.rawIcon { hintList.append(.imageData(try ImageData(pngFile: path))) }
        for text in options.hints {
            // An empty string hint sets nothing (libnotify's set_hint_string ignores it).
            if NotifySendSyntax.isEmptyStringHint(text) { continue }
            hintList.append(try NotifySendSyntax.hint(text))
        }
        // In a Snap, libnotify names the snap's desktop entry unless the notification names one.
        if let entry = sandbox.snapDesktopEntry, !hintList.contains(where: { $0.name == "desktop-entry" }) {
            hintList.append(.desktopEntry(entry))
        }
        return Notification(
            appName: options.appName,
            // libnotify takes the id through a property that accepts 0 and up: a negative one is 0.
            replacesID: options.replaceID > 0 ? UInt32(options.replaceID) : 0,
            icon: appIcon,
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
    package static func soundFilePath(_ sound: String) throws -> String {
        var path = sound
        if !path.hasPrefix("/"), let directory = Sys.workingDirectory { path = directory + "/" + path }
        guard Sys.isReadable(path) else {
            throw InputError(message: "--sound \(sound): no readable sound file there")
        }
        return path
    }

    /// How long to wait for the notification to close, or nil for no limit. notify-send waits
    /// exactly the expire time (none for 0; -1 is a timer of 2^32-1 ms, about 50 days); chime adds
    /// a grace and has limits for the server's default and for never.
    func waitLimit(for expiration: Expiration) -> Duration? {
        if let waitTimeout = options.waitTimeout { return waitTimeout == 0 ? nil : .seconds(waitTimeout) }
        if asNotifySend {
            return options.expireTime == 0 ? nil : .milliseconds(Int64(UInt32(bitPattern: options.expireTime)))
        }
        switch expiration {
        case .milliseconds(let ms): return .seconds((Int(ms) + 999) / 1000 + Self.graceSeconds)
        case .serverDefault, .undefined: return .seconds(Self.defaultWaitSeconds)
        case .never: return .seconds(Self.neverExpireWaitSeconds)
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
        // SIGINT and SIGTERM as a descriptor the wait wakes on (without one, they end the process as usual).
        let signals = try? SignalDescriptor([SIGINT, SIGTERM])

        let shownID = try show(client, notification)
        id = shownID

        let limit = waitLimit(for: notification.expiration)
        let deadline = limit.map { Deadline.now + $0 }
        let offered = Set(notification.actions.map(\.key))
        var action: String? = nil
        var closed: CloseReason? = nil
        var token: String? = nil
        let result = connection.run(until: deadline, wakeOn: signals?.fd) {
            for event in events where event.id == id {
                switch event {
                case .actionInvoked(_, let key):
                    // An action this notification never offered is reported, and the wait goes on.
                    guard offered.contains(key) else {
                        printError(asNotifySend ? "Received unknown action \(key)" : "chime: received unknown action \(key); still waiting")
                        continue
                    }
                    if action == nil { action = key }
                case .closed(_, let reason): if closed == nil { closed = reason }
                case .activationToken(_, let text): token = text
                }
            }
            events.removeAll()
            return action == nil && closed == nil && !serverGone
        }

        var fields = [Field("id", "", .count(Int64(shownID)))]
        if let token { fields.append(Field("activationToken", "", .text(token))) }
        let status: ExitStatus
        if let action {
            // As notify-send does: print the action, then take the notification down.
            if options.json { fields.append(Field("action", "", .text(action))) } else { printLine(action) }
            if let fd = options.selectedActionFD { writeLine(action, to: fd) }
            if let fd = options.activationTokenFD, let token { writeLine(token, to: fd) }
            if closed == nil { try? client.close(shownID) }
            status = .success
        } else if let closed {
            fields.append(Self.closedField(closed))
            status = .success
        } else if serverGone || result == .disconnected {
            fields.append(Field("serverGone", "", .flag(true)))
            printError("chime: the notification server left the bus while waiting")
            status = .serverVanished
        } else if result == .woken {
            sayWaitCancelled()
            try? client.close(shownID)
            fields.append(Field("interrupted", "", .flag(true)))
            status = asNotifySend ? .success : .interrupted
        } else {
            fields.append(Field("timedOut", "", .flag(true)))
            if asNotifySend {
                printError("Wait timeout expired")
                status = .success
            } else {
                printError("chime: stopped waiting after \(limit.map { "\($0.components.seconds)" } ?? "0") s without the notification closing")
                status = .waitTimedOut
            }
        }
        if options.json { RecordReport(fields: fields).print(json: true) }
        return status
    }

    /// Ctrl-C or SIGTERM during a wait, said as notify-send says it (which then exits 0; chime exits
    /// 130, as a program stopped by Ctrl-C does).
    func sayWaitCancelled() {
        printError(asNotifySend ? "Wait cancelled, closing notification" : "chime: wait cancelled, closing notification")
    }

    /// `--json`'s `closed: {reason, code}`.
    static func closedField(_ reason: CloseReason) -> Field {
        Field("closed", "", .record([Field("reason", "", .text(reason.name)), Field("code", "", .count(Int64(reason.wireValue)))]))
    }
}

/// Writes `text` and a newline to a descriptor the caller passed (`--id-fd`); a closed or bad one
/// is skipped, as libnotify does.
package func writeLine(_ text: String, to fd: Int32) {
    guard fd >= 0 else { return }
    try? Sys.writeAll(fd, (text + "\n").utf8)
}
