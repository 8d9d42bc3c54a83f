import ArgumentParser
import ChimeCenter
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

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
