import ArgumentParser
import ChimeCenter
import Notifications
import NotifyTool
import Posix

/// The root command: `chime SUBCOMMAND`.
public struct Chime: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "chime",
        abstract: "Desktop notifications and alarms for Linux.",
        discussion: """
            chime talks to the notification server of your desktop (any server of the freedesktop Desktop Notifications spec: GNOME, KDE, dunst, mako, xfce4-notifyd) over the D-Bus session bus.

            \(ExitStatus.helpText)
            """,
        subcommands: [Notify.self, In.self, At.self, List.self, Show.self, Cancel.self, Disable.self, Enable.self, Skip.self, Off.self, On.self, Stop.self, Snooze.self, Import.self, Export.self, Pause.self, Resume.self, Delivered.self, Close.self, Next.self, Timer.self, SoundCommand.self, ConfigCommand.self, Status.self, Capabilities.self, ServerInfo.self, DaemonCommand.self]
    )

    public func run() throws {
        printLine(Chime.helpMessage())
    }

    /// The subcommands' names, from the commands themselves (`timer`, `config`, `server-info`, ...).
    static var subcommandNames: [String] {
        configuration.subcommands.map { $0._commandName }
    }

    /// Parses the process's arguments and runs the command, exiting with chime's statuses.
    public static func main() {
        ExitStatus.failMore = failForScheduler
        // Strings on D-Bus must be UTF-8; libdbus aborts on anything else, and
        // Swift would quietly repair it. Refuse it here, naming the argument.
        if let bad = firstInvalidUTF8Argument() {
            if NotifySendName.isActive { ExitStatus.asNotifySend = true }
            ExitStatus.invalidInput.exit(
                "argument \(bad.index) is not valid UTF-8 (\(bad.shown)); D-Bus can only carry UTF-8 text")
        }
        if NotifySendName.isActive { NotifySendName.main(unusual: notifySendByArgumentParser) }
        var arguments = Array(CommandLine.arguments.dropFirst())
        // `chime -v` / `chime --version`; handled here so `notify -v` stays notify-send's.
        if arguments == ["-v"] || arguments == ["--version"] {
            printLine("chime \(chimeVersion)")
            return
        }
        // `chime in -5m`: a negative duration, not an option.
        if arguments.first == "in", arguments.count > 1, arguments[1].hasPrefix("-"),
            arguments[1].dropFirst().first.map({ $0.isNumber }) == true
        {
            ExitStatus.usage.exit("in \(arguments[1]): a duration cannot be negative; give how long from now, e.g. 5m")
        }
        if arguments.first == "notify" {
            arguments = ["notify"] + NotifyOptions.normalizedAsGOption(arguments.dropFirst())
            // The common case, parsed without ArgumentParser's reflection (about 2.5 ms
            // of start-up); anything unusual goes to ArgumentParser for its messages.
            if let options = NotifyOptions(fastParsing: arguments.dropFirst()) {
                NotifyRunner(options: options).runAndExit()
            }
            arguments = NotifyOptions.splitAttachedShortValues(arguments)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            // Help and usage errors: keep ArgumentParser's help, but make errors one line.
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            let message = Chime.message(for: error)
            let command = arguments.first.flatMap { subcommandNames.contains($0) ? " " + $0 : nil } ?? ""
            ExitStatus(rawValue: code.rawValue) .map { $0.exit("\(message) (see 'chime\(command) --help')") }
            exit(withError: error)
        }
    }

    /// notify-send's command lines that only swift-argument-parser reads ("-pt5", a lone "-"), parsed
    /// as `chime notify` would, with notify-send's app name and its messages.
    static func notifySendByArgumentParser(_ arguments: [String]) -> Never {
        do {
            var options = try Notify.parseOptions(arguments)
            if !arguments.contains(where: { $0 == "-a" || $0.hasPrefix("--app-name") || ($0.hasPrefix("-a") && !$0.hasPrefix("--")) }) {
                options.appName = "notify-send"
            }
            NotifyRunner(options: options, asNotifySend: true).runAndExit()
        } catch {
            printError(Notify.message(for: error))
            Sys.exit(1)
        }
    }
}
