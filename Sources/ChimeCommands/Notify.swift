import ArgumentParser
import ChimeCenter
import DBus
import Notifications
import NotifyTool
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// `chime notify`: a drop-in for notify-send (libnotify 0.8), plus `--sound` and `--json`.
public struct Notify: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "Show a notification (a drop-in for notify-send).",
        discussion: """
            Takes every option of notify-send (libnotify 0.8.7) with the same short and long names and the same meaning, and puts the same Notify call on the wire (the default app name is "chime"); -i is the image and -n the application's icon. dunstify's -C/--close, --stack-tag and -I/--raw-icon work too. Exit statuses are listed in `chime --help`. Started under the name notify-send (a link), chime is notify-send: its app name, help, messages and exit statuses.

            Hints (-h TYPE:NAME:VALUE) take the types boolean, int, double, string, byte and variant (GVariant text, e.g. -h "variant:x-pos:<int32 5>"). The body's C escapes (\\n, \\t, \\\\) are expanded as notify-send does.

            Inside a Flatpak or a Snap, or with NOTIFY_FORCE_PORTAL set (never with NOTIFY_IGNORE_PORTAL set), the notification goes through the notification portal (org.freedesktop.portal.Notification) where one answers, as libnotify does: -p prints the notification's number in its portal id, -r replaces this program's own numbered notification, and a wait ends at an action, the expire time, Ctrl-C or the portal leaving (README, "Inside a sandbox").

            Waiting (-w, or -A, which implies it) ends when the notification is closed, when an action is invoked (its name is printed), when the notification server leaves the bus, or when the time limit passes: the expire time plus \(NotifyRunner.graceSeconds) s, \(NotifyRunner.defaultWaitSeconds) s for the server's default expiry, a day for -t 0, or --wait-timeout. Ctrl-C closes the notification and exits 130.

            Examples:
              chime notify "Tea is ready"
              chime notify -u critical -t 10000 "Backup failed" "Disk full on /home"
              chime notify -A snooze=Snooze -A dismiss=Dismiss "Alarm" "16:35 homeroom"
              chime notify -p -h int:value:42 -c transfer.complete --sound complete "Done"
              chime notify --stack-tag volume -h int:value:60 "Volume"
              chime notify -C 17
            """,
        helpNames: [.customShort("?"), .long]
    )

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

    @Option(name: [.customShort("n"), .customLong("app-icon")],
            help: ArgumentHelp("An application icon file name or icon name; the server may or may not show it.", valueName: "ICON"))
    var appIcon: String = ""

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

    @Option(name: .customLong("id-fd"), help: ArgumentHelp("Write the notification id to this file descriptor.", valueName: "FD"))
    var idFD: Int32?

    @Option(name: .customLong("selected-action-fd"), help: ArgumentHelp("Write the invoked action's name to this file descriptor.", valueName: "FD"))
    var selectedActionFD: Int32?

    @Option(name: .customLong("activation-token-fd"), help: ArgumentHelp("Write the action's activation token to this file descriptor.", valueName: "FD"))
    var activationTokenFD: Int32?

    @Option(name: [.customShort("C"), .customLong("close")], help: ArgumentHelp("Close the notification with this id, and exit (as dunstify).", valueName: "ID"))
    var close: UInt32?

    @Option(name: .customLong("stack-tag"), help: ArgumentHelp("Replace any notification with the same tag (servers that stack by tag: dunst, mako, swaync).", valueName: "TAG"))
    var stackTag: String?

    @Option(name: [.customShort("I"), .customLong("raw-icon")], help: ArgumentHelp("Send this PNG file's pixels as the image (image-data hint), as dunstify does.", valueName: "FILE"))
    var rawIcon: String?

    @Option(name: .customLong("sound"), help: ArgumentHelp("A sound: a theme name (sound-name hint) or a file path (sound-file hint).", valueName: "NAME|PATH"))
    var sound: String?

    @Option(name: .customLong("button-purpose"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("What an action's button is for (e.g. accept=call.accept), shown by the notification portal (version 2). Repeatable.", valueName: "NAME=PURPOSE"))
    var buttonPurposes: [String] = []

    @Option(name: .customLong("wait-timeout"), parsing: .unconditional, help: ArgumentHelp("The longest time to wait, in seconds (0: no limit).", valueName: "SECONDS"))
    var waitTimeout: Int?

    @Flag(name: .customLong("json"), help: "Print the result as JSON: the id, and after waiting the action or the close reason.")
    var json = false

    public func validate() throws {
        if summary == nil && !version && close == nil { throw ValidationError("No summary specified.") }
        if let waitTimeout, waitTimeout < 0 { throw ValidationError("--wait-timeout must be 0 or more seconds") }
    }

    /// The parsed options as a plain value.
    public var options: NotifyOptions {
        NotifyOptions(
            summary: summary, body: body, urgency: urgency.urgency, expireTime: expireTime, appName: appName,
            icon: icon, category: category, transient: transient, hints: hints, printID: printID,
            replaceID: replaceID, wait: wait, actions: actions, version: version, sound: sound,
            waitTimeout: waitTimeout, json: json, appIcon: appIcon, idFD: idFD, selectedActionFD: selectedActionFD,
            activationTokenFD: activationTokenFD, close: close, stackTag: stackTag, rawIcon: rawIcon,
            buttonPurposes: buttonPurposes)
    }

    public func run() throws {
        NotifyRunner(options: options).runAndExit()
    }

    /// Parses `chime notify` arguments with ArgumentParser, as the fallback path does.
    public static func parseOptions(_ arguments: [String]) throws -> NotifyOptions {
        try parse(NotifyOptions.splitAttachedShortValues(arguments)).options
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

