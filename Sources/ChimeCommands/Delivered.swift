import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime delivered`: alarms on screen (or shown and not yet closed).
public struct Delivered: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "List delivered alarms.",
        discussion: """
            The alarms shown whose popups are still up (the daemon forgets one when it is closed, answered, or \
            its server leaves): identifier, when it was shown, title. A popup shown before the daemon restarted \
            is checked against dunst's history; on servers that tell only the connection that showed a popup \
            when it closes and cannot be asked, its state is said to be unknown.

            Examples:
              chime delivered
              chime delivered --json
            """)

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        Self.report(reportingErrors { try center.deliveredNotifications() }).print(json: json)
    }

    /// `{id, notificationID, shown, title, state}` each (docs/json.md).
    static func report(_ delivered: [DeliveredSummary]) -> TableReport {
        let zone = Zone.system()
        return TableReport(rows: delivered.map { item in
            [Field("id", "", .text(item.identifier)), Field("notificationID", "", .count(Int64(item.serverID))),
             Field("shown", "", .instant(item.shown, zone)), Field("title", "", .text(item.title)),
             Field("state", "", .text(item.known ? "on screen" : "unknown"))]
        }, line: { row in
            "\(row["id"])  shown \(row["shown"])  \(row["title"])"
                + (row["state"] == "unknown" ? "  (state unknown: shown before the daemon restarted; this server cannot say whether it was closed)" : "")
        }, empty: "no delivered alarms")
    }
}
