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

/// `chime close ID...`: take delivered alarms off the screen.
public struct Close: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Close delivered alarms by identifier.",
        discussion: """
            Takes the popups of delivered alarms down (CloseNotification); a repeating alarm rings again at its \
            next time.

            Examples:
              chime close homeroom
              chime close homeroom tea
            """)

    @Argument(help: "Identifiers, as `chime delivered` shows them.")
    var identifiers: [String]

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers to close") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        do {
            try center.removeDeliveredNotifications(withIdentifiers: identifiers)
        } catch .refused(.unknownIdentifier, let error) {
            ExitStatus.unknownIdentifier.exit("\(error.message); see chime delivered")
        } catch {
            ExitStatus.fail(error)
        }
    }
}
