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
        if json {
            printLine(JSON.object([
                ("name", .string(info.name)), ("vendor", .string(info.vendor)),
                ("version", .string(info.version)), ("specVersion", .string(info.specVersion)),
            ]).text)
            return
        }
        print("Name:          \(info.name)")
        print("Vendor:        \(info.vendor)")
        print("Version:       \(info.version)")
        print("Spec version:  \(info.specVersion)")
    }
}
