import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import Timekeeping

/// `chime pause ID...`: pause timers, keeping the time they have left.
public struct Pause: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Pause timers; each keeps the time it has left, across restarts too.",
        discussion: """
            Only timers (chime in, chime timer, every 25m) can be paused; an alarm at a clock time is switched \
            off instead (chime disable). Prints each with the time it has left (--json: [{"id", "remaining"}], \
            seconds). `chime resume ID` starts it again.

            Examples:
              chime timer eggs --id eggs && chime pause eggs
              chime resume eggs
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    @Flag(name: .customLong("json"), help: "Print JSON: [{\"id\", \"remaining\"}] (seconds).")
    var json = false

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers of the timers to pause") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let paused = reportingErrors { try center.pause(identifiers) }
        // Whole seconds, rounded up: a timer with 0.4 s left is not said to have none.
        TableReport(rows: paused.map {
            [Field("id", "", .text($0.identifier)), Field("remaining", "", .duration(.seconds(($0.remaining.milliseconds + 999) / 1000)))]
        }, line: { row in "\(row["id"]): paused, \(row["remaining"]) left" }, empty: nil).print(json: json)
    }
}

/// `chime resume ID...`: start paused timers again.
public struct Resume: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Resume paused timers: each fires when the time it had left has passed again.",
        discussion: """
            Prints each with its next fire time (--json: [{"id", "nextFire"}]).

            Examples:
              chime resume eggs
            """)

    @Argument(help: "Identifiers, as `chime list` shows them.")
    var identifiers: [String] = []

    @Flag(name: .customLong("json"), help: "Print JSON: [{\"id\", \"nextFire\"}].")
    var json = false

    public func validate() throws {
        if identifiers.isEmpty { throw ValidationError("give the identifiers of the timers to resume") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let resumed = reportingErrors { try center.resume(identifiers) }
        let zone = Zone.system()
        TableReport(rows: resumed.map { [Field("id", "", .text($0.identifier)), Field("nextFire", "", .instant($0.nextFire, zone))] },
                    line: { row in "\(row["id"]): \(row["nextFire"])" }, empty: nil).print(json: json)
    }
}
