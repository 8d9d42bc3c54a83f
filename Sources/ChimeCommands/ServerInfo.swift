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
            Examples:
              chime server-info
              chime server-info --json
            """)

    @Flag(help: "Print JSON: {\"name\", \"vendor\", \"version\", \"specVersion\"}.")
    var json = false

    public func run() throws {
        let info = reportingErrors {
            try NotificationClient(connection: try openSessionBus()).serverInformation()
        }
        Self.report(info).print(json: json)
    }

    /// `{name, vendor, version, specVersion}`.
    static func report(_ info: ServerInformation) -> RecordReport {
        RecordReport(fields: [
            Field("name", "Name", .text(info.name)), Field("vendor", "Vendor", .text(info.vendor)),
            Field("version", "Version", .text(info.version)), Field("specVersion", "Spec version", .text(info.specVersion)),
        ], width: 15)
    }
}
