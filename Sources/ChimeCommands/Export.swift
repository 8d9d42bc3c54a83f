import NotifyTool
import ArgumentParser
import ChimeCalendars
import ChimeCenter
import ChimeClient
import DBus
import Timekeeping

/// `chime export [ID...]`: alarms as iCalendar.
public struct Export: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write alarms as iCalendar (every pending alarm, or those named) for other calendar programs.",
        discussion: """
            An event per alarm: its rule as DTSTART and RRULE (a systemd expression converted; one beyond \
            RRULE, e.g. one naming years, as its next year of dates), a VALARM where it fires (AUDIO with its \
            sound, DISPLAY with its text), reminders as VALARMs of their own, exceptions as EXDATEs, an end as \
            UNTIL. What only chime has (its rule as written, sound, ring, volume, ...) is kept in X-CHIME-* \
            properties, so `chime import` gives back the alarm as it was. An imported alarm keeps its UID.

            Examples:
              chime export > alarms.ics
              chime export review standup > two.ics
            """)

    @Argument(help: "Identifiers, as `chime list` shows them (none: every pending alarm).")
    var identifiers: [String] = []

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let ids = identifiers.isEmpty ? reportingErrors { try center.pendingSummaries() }.filter { $0.state != .quarantined }.map(\.identifier)
            : identifiers
        let requests = ids.map { id in reportingErrors { try center.request(withIdentifier: id) } }
        print(CalendarExport.calendar(requests, now: WallClock.system.now()), terminator: "")
    }
}
