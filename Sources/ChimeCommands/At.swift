import ArgumentParser
import ChimeCenter
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime at RULE TITLE [BODY]`: an alarm at a time, once or repeating.
public struct At: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "at",
        abstract: "Set an alarm: chime at 16:35 --days mon-fri \"Homeroom\" \"Check the guidance list\"",
        discussion: """
            RULE is any rule `chime next` accepts (see `chime next --help`), or a phrase in English or \
            German ("tomorrow 7am", "every other tuesday 09:00", "jeden zweiten Dienstag um 9:00"): it is \
            read once, now, and kept as the rule it means. --days adds days to a time: \
            `16:35 --days mon-fri` is the rule "16:35 mon-fri". Needs `chime daemon` running.

            Examples:
              chime at 16:35 --days mon-fri --label school "Homeroom" "Check the guidance list"
              chime at "2026-12-24 18:00" --tz Europe/Berlin "Presents"
              chime at "*:0/15" "Quarter hour"
              chime at "last friday of the month 16:35" "Timesheet"
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
        options.schedule(request, intoDefaultCalendar: true)
    }
}
