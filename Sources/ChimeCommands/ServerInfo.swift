import NotifyTool
import ArgumentParser
import DBus
import Notifications

/// `chime server-info`: which notification server is running.
public struct ServerInfo: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "server-info",
        abstract: "Show the notification server's name, vendor and versions (GetServerInformation).",
        discussion: """
            Where chime notify goes through the notification portal (inside Flatpak or Snap, or with
            NOTIFY_FORCE_PORTAL set), the portal has no server information: chime answers as libnotify
            does ("Portal Notification", the portal's version) and says so.

            Examples:
              chime server-info
              chime server-info --json
            """)

    @Flag(help: "Print JSON: {\"name\", \"vendor\", \"version\", \"specVersion\"}.")
    var json = false

    public func run() throws {
        let connection = reportingErrors { try openSessionBus() }
        // Through the portal, libnotify's answer for it: the server behind it is not asked.
        if let portal = PortalUse.current(connection) {
            Self.report(portal.serverInformation, portal: portal).print(json: json)
            return
        }
        let info = reportingErrors { try NotificationClient(connection: connection).serverInformation() }
        Self.report(info).print(json: json)
    }

    /// `{name, vendor, version, specVersion, portal}`.
    static func report(_ info: ServerInformation, portal: PortalUse? = nil) -> RecordReport {
        RecordReport(fields: [
            Field("name", "Name", .text(info.name)), Field("vendor", "Vendor", .text(info.vendor)),
            Field("version", "Version", .text(info.version)), Field("specVersion", "Spec version", .text(info.specVersion)),
            Field("portal", "Portal", .optional(portal) { $0.datum }) { _ in portal?.line },
        ], width: 15)
    }
}
