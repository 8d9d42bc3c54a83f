import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Timekeeping

/// `chime enable ID...`: switch alarms back on.
public struct Enable: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Switch alarms back on; each is planned from now.",
        discussion: """
            Prints each alarm with its next fire time (--json: [{"id", "nextFire"}], docs/json.md). A one-off \
            whose time passed while it was off has nothing left to ring for: it stays off and the exit status is \
            64. An unknown identifier exits 6.

            Examples:
              chime enable homeroom
              chime enable homeroom tea --json
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    @Flag(name: .customLong("json"), help: "Print JSON: [{\"id\", \"nextFire\"}].")
    var json = false

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers to switch on") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let enabled = reportingErrors { try center.enable(identifiers) }
        let zone = Zone.system()
        TableReport(rows: enabled.map { [Field("id", "", .text($0.identifier)), Field("nextFire", "", .instant($0.nextFire, zone))] },
                    line: { row in "\(row["id"]): \(row["nextFire"])" }, empty: nil).print(json: json)
    }
}
