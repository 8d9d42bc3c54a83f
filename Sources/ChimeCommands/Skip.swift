import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Timekeeping

/// `chime skip [--undo] ID`: leave out an alarm's next occurrence, once.
public struct Skip: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Skip an alarm's next occurrence (once); --undo brings it back.",
        discussion: """
            Skipping again skips the occurrence after that. --undo brings back the occurrence skipped last \
            that is still ahead. `chime show ID` lists what is skipped. Skipping an alarm's last occurrence \
            is refused (exit 64): chime cancel removes it. An unknown identifier exits 6.

            Examples:
              chime skip standup          # not tomorrow
              chime skip --undo standup   # tomorrow after all
            """)

    @Flag(help: "Bring back the occurrence skipped last.")
    var undo = false

    @Argument(help: "The identifier, as `chime list` shows it.")
    var identifier: String

    @Flag(name: .customLong("json"), help: "Print {\"id\", \"occurrence\", \"nextFire\"} as JSON (docs/json.md).")
    var json = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let answer = reportingErrors { try center.skip(identifier, undo: undo) }
        let request = try? center.request(withIdentifier: identifier)
        SkipReport(identifier: identifier, undo: undo, occurrence: answer.occurrence, next: answer.next,
                   zone: request?.trigger.zone ?? .system()).print(json: json)
    }
}

/// What `chime skip` prints: `standup: skipped 2026-11-25T09:00:00+01:00; next 2026-11-26T09:00:00+01:00`.
struct SkipReport: Report {
    var identifier: String
    var undo: Bool
    var occurrence: Instant
    var next: Instant?
    var zone: Zone

    var fields: [Field] {
        [Field("id", "", .text(identifier)), Field("occurrence", "", .instant(occurrence, zone)),
         Field("nextFire", "", next.map { .instant($0, zone) } ?? .none)]
    }
    func writeJSON(to out: inout PrintedOutput) { Datum.writeRecord(fields, to: &out) }
    var lines: [String] {
        let what = undo ? "brought back" : "skipped"
        let when = Datum.instant(occurrence, zone).text ?? ""
        return ["\(identifier): \(what) \(when); next \(next.flatMap { Datum.instant($0, zone).text } ?? "none")"]
    }
}
