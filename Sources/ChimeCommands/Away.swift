import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Timekeeping

/// `chime off [ID…] [--from DATE] --until DATE`: time away.
public struct Off: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Time away: alarms do not ring until a date (every alarm, or those named).",
        discussion: """
            An alarm in time away does not ring, and what it would have rung is not a missed alarm; it rings \
            again from --until on (a date: from the start of that day, so --until 2027-01-04 rings on the \
            4th; or a date and time). --from starts it later (default: now). Without identifiers it is for \
            every alarm, those added meanwhile too. Time away is kept across restarts; `chime on` ends it \
            early; `chime list` and `chime status` say "off until Mon 4 Jan". The alarm file's [[off]] sets \
            time away too (docs/alarms.md). With no --until, lists the time away set.

            Examples:
              chime off --until 2027-01-04
              chime off gym swim --from 2026-12-19 --until "2027-01-04 12:00"
              chime off
            """)

    @Argument(help: "The alarms (as `chime list` shows them); none: every alarm.")
    var identifiers: [String] = []

    @Option(help: ArgumentHelp("When it starts: YYYY-MM-DD (its start) or \"YYYY-MM-DD HH:MM\" (default: now).", valueName: "DATE"))
    var from: String?

    @Option(help: ArgumentHelp("When alarms ring again: YYYY-MM-DD (from the start of that day) or \"YYYY-MM-DD HH:MM\".", valueName: "DATE"))
    var until: String?

    public func validate() throws {
        if until == nil, from != nil || !identifiers.isEmpty { throw ValidationError("give --until: when alarms ring again") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let zone = Zone.system()
        guard let until else {
            AwayReport(away: reportingErrors { try center.away() }, zone: zone, now: WallClock.system.now()).print(json: false)
            return
        }
        guard let end = DaysOff.moment(until, in: zone) else {
            ExitStatus.usage.exit("--until \(until): give a date (2027-01-04) or a date and time (\"2027-01-04 12:00\")")
        }
        var start: Instant?
        if let from {
            guard let begin = DaysOff.moment(from, in: zone) else {
                ExitStatus.usage.exit("--from \(from): give a date (2026-12-19) or a date and time (\"2026-12-19 18:00\")")
            }
            start = begin
        }
        reportingErrors { try center.setAway(from: start, until: end, identifiers: identifiers) }
        let now = WallClock.system.now()
        let year = zone.civil(at: now.seconds).year
        let who = identifiers.isEmpty ? "every alarm" : identifiers.joined(separator: ", ")
        let since = start.map { $0 > now ? " from \(DaysOff.until($0, in: zone, thisYear: year))" : "" } ?? ""
        print("\(who) off\(since) until \(DaysOff.until(end, in: zone, thisYear: year)) (chime on ends it early)")
    }
}

/// `chime on [ID…]`: ends time away early.
public struct On: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "End time away early (all of it, or for the alarms named).",
        discussion: """
            Ends the time away `chime off` set: all of it, or the named alarms' part. Each alarm is planned \
            again from now. Time away from the alarm file's [[off]] stays until the file changes.

            Examples:
              chime on
              chime on gym
            """)

    @Argument(help: "The alarms; none: end all time away.")
    var identifiers: [String] = []

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let ended = reportingErrors { try center.endAway(identifiers) }
        let zone = Zone.system()
        let year = zone.civil(at: WallClock.system.now().seconds).year
        if ended.isEmpty {
            print("no time away was set by chime off" + (identifiers.isEmpty ? "" : " for \(identifiers.joined(separator: ", "))"))
        }
        for stretch in ended {
            let who = identifiers.isEmpty ? (stretch.alarms.map { $0.sorted().joined(separator: ", ") } ?? "every alarm") : identifiers.joined(separator: ", ")
            print("\(who) back on (was off until \(DaysOff.until(stretch.until, in: zone, thisYear: year)))")
        }
        let fromFile = (try? center.away())?.filter(\.fromFile) ?? []
        for stretch in fromFile where stretch.away.until > WallClock.system.now() {
            print("the alarm file's [[off]] keeps \(stretch.away.alarms.map { $0.sorted().joined(separator: ", ") } ?? "every alarm") off until \(DaysOff.until(stretch.away.until, in: zone, thisYear: year))")
        }
    }
}

/// The time away set: one line each.
struct AwayReport: Report {
    var away: [(away: DaysOff.Away, fromFile: Bool)]
    var zone: Zone
    var now: Instant

    func writeJSON(to out: inout PrintedOutput) {}
    var lines: [String] {
        let year = zone.civil(at: now.seconds).year
        let current = away.filter { $0.away.until > now }
        guard !current.isEmpty else { return ["no time away"] }
        return current.map { item in
            let who = item.away.alarms.map { $0.sorted().joined(separator: ", ") } ?? "every alarm"
            let since = item.away.from > now ? " from \(DaysOff.until(item.away.from, in: zone, thisYear: year))" : ""
            return "\(who) off\(since) until \(DaysOff.until(item.away.until, in: zone, thisYear: year))" + (item.fromFile ? " (alarm file)" : "")
        }
    }
}
