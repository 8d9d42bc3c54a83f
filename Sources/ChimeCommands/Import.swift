import NotifyTool
import ArgumentParser
import ChimeCalendars
import ChimeCenter
import ChimeClient
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

            A file is someone else's unless --own says it is yours: its events set what they mean (times, \
            title, description, alarms, and sounds within your sound folders), and chime's own settings in it \
            (X-CHIME-*: identifiers, rules, labels, ring, urgency, insist, as chime export writes them) are left \
            out, with a note. An alarm already set that did not come from the same event is never replaced \
            silently: the import names it and stops, unless --replace.

            What chime cannot represent (an EMAIL alarm, a zone it cannot name, an unreadable rule) is reported \
            as FILE:LINE: why, and then nothing is imported (exit 65), unless --partial imports the rest. \
            The import is one transaction: all of it or none.

            Examples:
              chime import ~/Downloads/team.ics
              curl -s https://example.org/holidays.ics | chime import -
              chime export --all > mine.ics && chime import --own mine.ics
            """)

    @Argument(help: ArgumentHelp("The .ics file, or - for standard input.", valueName: "FILE"))
    var file: String

    @Flag(help: "Import what can be imported, even when some of the file cannot be (each is still reported).")
    var partial = false

    @Flag(help: "Say what would be imported, and import nothing.")
    var dryRun = false

    @Flag(help: "The file is yours (e.g. what chime export wrote): take chime's own settings in it (X-CHIME-*).")
    var own = false

    @Flag(help: "Replace alarms with the file's identifiers even where they did not come from the same event.")
    var replace = false

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
        let calendar = CalendarImport(reading: bytes, anchor: now, trust: own ? .ownFile : .others)
        var problems = calendar.problems.map { "\(name):\($0.line): \($0.message)" }
        for note in calendar.notes.prefix(10) { printError("\(name):\(note.line): note: \(note.message)") }
        if calendar.notes.count > 10 { printError("\(name): note: \(calendar.notes.count - 10) more like these") }
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
        // An alarm is updated only by the event it came from (the same UID); any other is named, and
        // kept unless --replace.
        var taken: [String] = []
        for request in requests where known.contains(request.identifier) {
            let existing = reportingErrors { try center.request(withIdentifier: request.identifier) }
            let uid = existing.content.userInfo[CalendarImport.uidKey]
            if uid == nil || uid != request.content.userInfo[CalendarImport.uidKey] {
                taken.append("\(request.identifier) (\(existing.content.title), \(uid == nil ? "not from a calendar" : "from another event"))")
            }
        }
        if !taken.isEmpty, !replace {
            for alarm in taken { printError("\(name): \(alarm) is already an alarm that did not come from this file's event") }
            ExitStatus.invalidInput.exit("\(name): it would replace \(taken.count) alarm\(taken.count == 1 ? "" : "s") set otherwise; nothing imported (--replace replaces them)")
        }
        let added = reportingErrors { try center.addAll(requests) }
        let updated = added.filter { known.contains($0.identifier) }.count
        print("imported \(added.count) alarm\(added.count == 1 ? "" : "s") from \(name) (\(added.count - updated) new, \(updated) updated)\(note)")
    }
}
