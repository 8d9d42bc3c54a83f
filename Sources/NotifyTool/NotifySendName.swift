import Posix
#if canImport(Glibc)
import Glibc
#endif

/// chime started under the name `notify-send` (a link: `ln -s "$(command -v chime)" ~/.local/bin/notify-send`)
/// *is* notify-send: libnotify 0.8.7's options and its master branch's behaviour, its app name
/// ("notify-send"), its help, its messages and its exit statuses (0, or 1 for every failure).
/// dunstify's `-C`, `--stack-tag` and `-I`, and chime's `--sound`, `--json` and `--wait-timeout`
/// work too; the help shows notify-send's own options only.
package enum NotifySendName {
    /// The libnotify release whose notify-send this follows (with its master branch's additions).
    package static let matchedVersion = "0.8.7"

    /// The name it was started as, as notify-send prints it in --version.
    package static var programName: String { CommandLine.arguments.first ?? "notify-send" }

    /// Whether the process was started as notify-send.
    package static var isActive: Bool {
        guard let first = CommandLine.arguments.first else { return false }
        return first.split(separator: "/").last == "notify-send"
    }

    /// Runs as notify-send. `unusual` takes the command lines only swift-argument-parser reads
    /// ("-pt5", a lone "-"): chime-commands parses them, as `chime notify` would.
    package static func main(unusual: ([String]) -> Never) -> Never {
        ExitStatus.asNotifySend = true
        let arguments = NotifyOptions.normalizedAsGOption(CommandLine.arguments.dropFirst())
        let failure: NotifyOptions.GOptionFailure
        do {
            let options = try NotifyOptions(gOptionParsing: arguments, defaultAppName: "notify-send")
            NotifyRunner(options: options, asNotifySend: true).runAndExit()
        } catch {
            failure = error
        }
        switch failure {
        case .help:
            printLine(help)
            Sys.exit(0)
        case .message(let text):
            printError(text)
            Sys.exit(1)
        case .unusual:
            unusual(arguments)
        }
    }

    /// notify-send's --help, as GLib lays it out.
    package static var help: String {
        let options: [(String, String)] = [
            ("-u, --urgency=LEVEL", "Specifies the urgency level (low, normal, critical)."),
            ("-t, --expire-time=TIME", "Specifies the timeout in milliseconds at which to expire the notification."),
            ("-a, --app-name=APP_NAME", "Specifies the app name for the notification"),
            ("-i, --icon=ICON", "Specifies an icon filename or stock icon to display."),
            ("-n, --app-icon=ICON", "Specifies an application icon filename or app icon name. The server may or may not display it."),
            ("-c, --category=TYPE[,TYPE...]", "Specifies the notification category."),
            ("-e, --transient", "Create a transient notification"),
            ("-h, --hint=TYPE:NAME:VALUE", "Specifies basic extra data to pass. Valid types are boolean, int, double, string, byte and variant."),
            ("-p, --print-id", "Print the notification ID."),
            ("    --id-fd=FD", "Write the notification ID to this file descriptor."),
            ("-r, --replace-id=REPLACE_ID", "The ID of the notification to replace."),
            ("-w, --wait", "Wait for the notification to be closed before exiting."),
            ("-A, --action=[NAME=]Text...", "Specifies the actions to display to the user. Implies --wait to wait for user input. May be set multiple times. The name of the action is output to stdout. If NAME is not specified, the numerical index of the option is used (starting with 0)."),
            ("    --selected-action-fd=FD", "Write the name of the selected action to this file descriptor."),
            ("    --activation-token-fd=FD", "Write the activation token of the selected action to this file descriptor."),
            ("-v, --version", "Version of the package."),
        ]
        let width = options.map(\.0.count).max()! + 5
        // GLib names the program as it was started, and writes "…" only in a UTF-8 locale.
        func variable(_ name: String) -> String? {
            guard let value = Sys.environment(name), !value.isEmpty else { return nil }
            return value
        }
        let locale = variable("LC_ALL") ?? variable("LC_CTYPE") ?? variable("LANG") ?? ""
        // The codeset: after the dot, before any modifier ("en_US.UTF-8", "de_DE.utf8@euro").
        let codeset = locale.split(separator: ".", maxSplits: 1).dropFirst().first?.split(separator: "@").first?.uppercased()
        let ellipsis = codeset == "UTF-8" || codeset == "UTF8" ? "…" : "?"
        return """
            Usage:
              \(programName) [OPTION\(ellipsis)] <SUMMARY> [BODY] - create a notification

            Help Options:
              \("-?, --help".padding(width))Show help options

            Application Options:
            \(options.map { "  " + $0.0.padding(width) + $0.1 }.joined(separator: "\n"))

            """
    }
}
