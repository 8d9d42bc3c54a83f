import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus

/// `chime disable ID...`: switch alarms off without losing them.
public struct Disable: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Switch alarms off: kept and listed, never fired until switched on again.",
        discussion: """
            `chime list` shows them as off. A ringing one stops. Alarms from the alarm file are switched off \
            in the file (enabled = false): disabling one exits 7 and says so. An unknown identifier exits 6.

            Examples:
              chime disable homeroom
              chime enable homeroom
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers to switch off") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        _ = reportingErrors { try center.disable(identifiers) }
    }
}
