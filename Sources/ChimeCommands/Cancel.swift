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

/// `chime cancel ID... | --all`.
public struct Cancel: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Cancel pending alarms by identifier, or all of them.",
        discussion: """
            Alarms from the alarm file are changed in the file (remove them, or set enabled = false): \
            cancelling one exits 7 and says so, and --all leaves them.

            Examples:
              chime cancel eggs-15
              chime cancel homeroom tea
              chime cancel --all
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    @Flag(help: "Cancel every alarm added from the command line or over D-Bus (the alarm file's stay).")
    var all = false

    public func validate() throws {
        if all == !identifiers.isEmpty { throw ValidationError("give identifiers or --all, not both and not neither") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        if all {
            let removed = reportingErrors { try center.removeAllPendingNotificationRequests() }
            printLine("cancelled \(removed.count) alarm\(removed.count == 1 ? "" : "s") (alarms from the alarm file stay; change them there)")
            return
        }
        let removed = reportingErrors { try center.removePendingNotificationRequests(withIdentifiers: identifiers) }
        let unknown = identifiers.filter { !removed.contains($0) }
        if !unknown.isEmpty { ExitStatus.unknownIdentifier.exit("no pending alarm \(unknown.map(quotedForMessage).joined(separator: ", ")); see chime list") }
    }
}
