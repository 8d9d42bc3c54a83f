import NotifyTool
import ArgumentParser
import ChimeCenter
import DBus
import Posix
import Timekeeping

/// `chime import FILE.ics|-`: a calendar's reminders as chime alarms.
public struct Import: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn the alarms of a calendar's events and to-dos (an .ics file, or - for standard input) into chime alarms.",
        discussion: """
            Each event or to-do with alarms (VALARM) becomes one alarm: its recurrence (RRULE, RDATE, EXDATE, \
            moved instances) is the rule, in its zone (a tz database TZID, a VTIMEZONE's X-LIC-LOCATION, a Windows \
            zone name), and it fires where its VALARMs say: before or after the start or the end, repeated as \
            REPEAT and DURATION say. An AUDIO alarm rings the default sound (or its attached file); DISPLAY shows \
            the description. An alarm at an absolute time is an alarm of its own.

            Identifiers come from the events' UIDs (ics-UID), so importing the same file again updates its \
            alarms and never duplicates them. Events without alarms, cancelled ones and those whose alarms have \
            all passed are left out, and counted.

            What chime cannot represent (an EMAIL alarm, a zone it cannot name, an unreadable rule) is reported \
            as FILE:LINE: why, and then nothing is imported (exit 65), unless --partial imports the rest. \
            The import is one transaction: all of it or none.

            Examples:
              chime import ~/Downloads/team.ics
              curl -s https://example.org/holidays.ics | chime import -
              chime export --all > mine.ics
            """)

    @Argument(help: ArgumentHelp("The .ics file, or - for standard input.", valueName: "FILE"))
    var file: String

    @Flag(help: "Import what can be imported, even when some of the file cannot be (each is still reported).")
    var partial = false

    @Flag(help: "Say what would be imported, and import nothing.")
    var dryRun = false

    /// The largest file read (a calendar of years of events is a few MiB).
    static let maximumBytes = 16 << 20

    public func run() throws {
        let name = file == "-" ? "(standard input)" : file
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try Sys.readFile(file == "-" ? "/dev/stdin" : file, limit: Self.maximumBytes)
        } catch {
            ExitStatus.invalidInput.exit("\(name): \(error.reason)")
        }
        let now = WallClock.system.now()
        let calendar = CalendarImport(reading: bytes, anchor: now)
        var problems = calendar.problems.map { "\(name):\($0.line): \($0.message)" }
        var requests: [NotificationRequest] = []
        var past = 0
        for alarm in calendar.alarms {
            do throws(RequestError) {
                let request = try alarm.draft.build(now: nil)
                if request.trigger.nextFire(after: now) == nil { past += 1 } else { requests.append(request) }
            } catch {
                problems.append("\(name):\(alarm.line): \(error.key): \(error.message)")
            }
        }
        for problem in problems { printError(problem) }
        if !problems.isEmpty, !partial {
            ExitStatus.invalidInput.exit("\(name): \(problems.count) problem\(problems.count == 1 ? "" : "s"); nothing imported (--partial imports the rest)")
        }
        var leftOut: [String] = []
        if calendar.withoutAlarms > 0 { leftOut.append("\(calendar.withoutAlarms) without alarms") }
        if calendar.cancelled > 0 { leftOut.append("\(calendar.cancelled) cancelled") }
        if past > 0 { leftOut.append("\(past) whose alarms have passed") }
        let note = leftOut.isEmpty ? "" : "; left out: " + leftOut.joined(separator: ", ")
        if dryRun {
            for request in requests { print("\(request.identifier)  \(request.content.title)  (\(request.summaryRule))") }
            print("\(requests.count) alarm\(requests.count == 1 ? "" : "s") would be imported from \(name)\(note)")
            return
        }
        guard !requests.isEmpty else {
            print("nothing to import from \(name)\(note)")
            return
        }
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let known = Set(reportingErrors { try center.pendingSummaries() }.map(\.identifier))
        let added = reportingErrors { try center.addAll(requests) }
        let updated = added.filter { known.contains($0.identifier) }.count
        print("imported \(added.count) alarm\(added.count == 1 ? "" : "s") from \(name) (\(added.count - updated) new, \(updated) updated)\(note)")
    }
}
