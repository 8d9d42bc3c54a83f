import ArgumentParser

/// The root command: `chime SUBCOMMAND`.
@main
struct Chime: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime",
        abstract: "Desktop notifications and alarms for Linux.",
        discussion: """
            chime talks to the notification server of your desktop (any server of the freedesktop Desktop Notifications spec: GNOME, KDE, dunst, mako, xfce4-notifyd) over the D-Bus session bus.

            \(ExitStatus.helpText)
            """,
        subcommands: [Notify.self, Capabilities.self, ServerInfo.self]
    )

    func run() throws {
        printLine(Chime.helpMessage())
    }

    static func main() {
        // Strings on D-Bus must be UTF-8; libdbus aborts on anything else, and
        // Swift would quietly repair it. Refuse it here, naming the argument.
        if let bad = firstInvalidUTF8Argument() {
            ExitStatus.invalidInput.exit(
                "argument \(bad.index) is not valid UTF-8 (\(bad.shown)); D-Bus can only carry UTF-8 text")
        }
        var arguments = Array(CommandLine.arguments.dropFirst())
        // `chime -v` / `chime --version`; handled here so `notify -v` stays notify-send's.
        if arguments == ["-v"] || arguments == ["--version"] {
            printLine("chime \(chimeVersion)")
            return
        }
        if arguments.first == "notify" { arguments = Notify.splitAttachedShortValues(arguments) }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}
