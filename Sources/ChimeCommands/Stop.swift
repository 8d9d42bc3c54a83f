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

/// `chime stop [ID...]`: stop ringing alarms from a terminal, as their Stop button does.
public struct Stop: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Stop ringing alarms (all of them when no identifier is given).",
        discussion: """
            Does what an alarm's Stop (Dismiss) button does: the sound stops, the popup is taken down, and a \
            repeating alarm rings again at its next time. Without identifiers, every alarm ringing now is \
            stopped (nothing ringing is not an error: for a keyboard shortcut or ssh). An identifier that is \
            not ringing or showing is an error (exit status 6). chime list --ringing lists what rings.

            Examples:
              chime stop
              chime stop get-up
            """)

    @Argument(help: "Identifiers of ringing alarms, as `chime list --ringing` shows them.")
    var identifiers: [String] = []

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        var stopping = identifiers
        if stopping.isEmpty {
            stopping = reportingErrors { try center.ringing() }.map(\.identifier)
            if stopping.isEmpty {
                printLine("nothing is ringing")
                return
            }
        }
        for identifier in stopping {
            answering(identifier) { try center.answer(identifier, action: NotificationAction.dismiss.identifier) }
            printLine("\(identifier): stopped")
        }
    }
}

/// Runs an answer to the ringing alarm `identifier`; one not ringing (or showing) is exit status 6.
private func answering(_ identifier: String, _ body: () throws -> Void) {
    do {
        try body()
    } catch SchedulerError.refused(.unknownIdentifier, _) {
        ExitStatus.unknownIdentifier.exit("not ringing: \(quotedForMessage(identifier)); see chime list --ringing")
    } catch {
        ExitStatus.fail(error)
    }
}

/// `chime snooze ID --for 5m | --until 07:30`: snooze a ringing alarm for a chosen time.
public struct Snooze: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Snooze a ringing alarm, for its own snooze time or one you choose.",
        discussion: """
            Does what the alarm's Snooze button does: the sound stops, the popup is taken down, and it rings \
            again after its snooze time, or --for a length (5m, 1h30m; 1 s to 7 days), or --until a time of day \
            (07:30: the next 07:30) or a date and time (2026-12-24 07:30), in the system's zone. A repeating \
            alarm keeps its rule after that.

            Examples:
              chime snooze get-up
              chime snooze get-up --for 20m
              chime snooze get-up --until 07:30
            """)

    @Argument(help: "The ringing alarm's identifier, as `chime list --ringing` shows it.")
    var identifier: String

    @Option(name: .customLong("for"), help: "How long: 5m, 90s, 1h30m (1 s to 7 days).")
    var length: String?

    @Option(name: .customLong("until"), help: "Until a time of day (07:30) or a date and time (2026-12-24 07:30).")
    var until: String?

    public func validate() throws {
        if length != nil, until != nil { throw ValidationError("give --for or --until, not both") }
    }

    public func run() throws {
        let now = WallClock.system.now()
        let span: TimeSpan? = if let length {
            AlarmOptions.duration(length, option: "--for")
        } else if let until {
            Self.span(until: until, now: now, zone: .system())
        } else {
            nil
        }
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        if let span {
            answering(identifier) { try center.snooze(identifier, for: span) }
            printLine("\(identifier): snoozed until \(Datum.instant(now + span, .system()).text ?? "")")
        } else {
            answering(identifier) { try center.answer(identifier, action: NotificationAction.snooze.identifier) }
            printLine("\(identifier): snoozed")
        }
    }

    /// From `now` to the next `07:30` (or to a date and time), in whole seconds rounded up; a usage
    /// error for anything else, or for a time that has passed or is more than 7 days away.
    static func span(until text: String, now: Instant, zone: Zone) -> TimeSpan {
        let refusal = "--until \(text): use a time of day such as 07:30 or a date and time such as 2026-12-24 07:30, within 7 days"
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let clock = words.last, words.count <= 2 else { ExitStatus.usage.exit(refusal) }
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2 || parts.count == 3, let hour = parts[0], let minute = parts[1], (0...23).contains(hour),
            (0...59).contains(minute), parts.count == 2 || (parts[2].map { (0...59).contains($0) } ?? false)
        else { ExitStatus.usage.exit(refusal) }
        let second = parts.count == 3 ? parts[2]! : 0
        let today = zone.civil(at: now.seconds)
        var candidates: [CivilTime] = []
        if words.count == 2 {
            let date = words[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard date.count == 3, let year = date[0], let month = date[1], let day = date[2], (1...12).contains(month), (1...31).contains(day)
            else { ExitStatus.usage.exit(refusal) }
            candidates = [CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)]
        } else {
            // Today's, or tomorrow's when today's has passed.
            for offset in 0...1 {
                let day = civilFromDays(today.dayNumber + Int64(offset))
                candidates.append(CivilTime(year: day.year, month: day.month, day: day.day, hour: hour, minute: minute, second: second))
            }
        }
        for civil in candidates {
            let seconds: Int64 = switch zone.resolve(civil) {
            case .unique(let t): t
            case .ambiguous(let earlier, _): earlier
            case .gap(let endsAt): endsAt
            }
            let span = TimeSpan.seconds(seconds - now.seconds)
            if span >= .seconds(1) {
                guard RequestBounds.snooze.contains(span) else { ExitStatus.usage.exit(refusal) }
                return span
            }
        }
        ExitStatus.usage.exit(refusal)
    }
}
