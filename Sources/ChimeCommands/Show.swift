import NotifyTool
import ArgumentParser
import ChimeCalendars
import ChimeCenter
import ChimeClient
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime show ID`: everything about one pending alarm.
public struct Show: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Show everything about one pending alarm.",
        discussion: """
            Its title, body, label, rule (as written, the phrase it was said as, in words, and in full), time \
            zone, next fire time, what a day off does to it and which of the next year's occurrences a day off \
            moves or skips or time away silences ("Fri 25 Dec: Christmas Day, moved to Thu 24 Dec"), sound, urgency, \
            icon, actions, snooze, grace and expire times, body command, how long it rings, whether it wakes the \
            machine, its do-not-disturb policy, where it comes from (and for an alarm of a calendar, its event, \
            what of it the calendar cannot carry and is kept on this machine only, and until when it was \
            answered on another machine) and its state. \
            --json gives the same as one object, typed: durations in seconds, the next fire time in ISO 8601 \
            with its offset, null for none (docs/json.md).

            Examples:
              chime show homeroom
              chime show --json eggs-15
            """)

    @Argument(help: "The alarm's identifier (see chime list).")
    var id: String

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let request = reportingErrors { try center.request(withIdentifier: id) }
        let summary = reportingErrors { try center.pendingSummaries() }.first { $0.identifier == id }
        let daysOff = reportingErrors { try center.occurrencesOff(id) }
        Self.report(request, summary: summary, daysOff: daysOff).print(json: json)
    }

    /// Everything about one alarm, each field typed (docs/json.md): durations in seconds, instants
    /// in ISO 8601, null for none; the text says the same in words.
    static func report(_ request: NotificationRequest, summary: PendingSummary?, daysOff: [(original: Instant, fate: OccurrenceFate)] = [],
                       now: Instant = WallClock.system.now()) -> RecordReport {
        let content = request.content
        let zone = request.trigger.zone
        let expression: String = switch request.trigger.rule {
        case .calendar(let expression): expression.description
        case .recurrence(let recurrence): recurrence.text
        case .interval(let span, let again): (again ? "every " : "in ") + span.description
        case .instant(let instant): "at " + zone.iso8601(instant)
        }
        let written = summary?.ruleText ?? ""
        // What was understood, in the user's language (a one-off at an instant has no words).
        let words: String? = if case .instant = request.trigger.rule { nil } else { request.trigger.words(.ofUser) }
        let sound: Datum = switch content.sound {
        case nil: .none
        case .default?: .text("default")
        case .named(let name)?: .text(name)
        case .file(let path)?: .text(path)
        }
        let expire: Datum = switch content.expiry {
        case .serverDefault: .none
        case .never: .text("never")
        case .after(let span): .duration(span)
        }
        let system = Zone.system().identifier
        return RecordReport(fields: [
            Field("id", "id", .text(request.identifier)), Field("title", "title", .text(content.title)),
            Field("subtitle", "subtitle", .text(content.subtitle)), Field("body", "body", .text(content.body)),
            Field("label", "label", .text(content.label)),
            Field("rule", "rule", .text(written.isEmpty ? expression : written)),
            Field("said", "said", .optional(request.trigger.said) { .text($0) }) { $0.text ?? "none (written the machine way)" },
            Field("words", "in words", .optional(words) { .text($0) }) { $0.text ?? "none" },
            Field("expression", "expression", .text(expression)),
            Field("timeZone", "time zone", .optional(request.trigger.timeZone) { .text($0) }) { $0.text ?? "the system's (\(system))" },
            Field("nextFire", "next", .optional(summary?.nextFire) { .instant($0, zone) }) { $0.text ?? "never" },
            Field("offset", "fires", .list(request.trigger.offsets.map { .count($0.seconds) })) { datum in
                guard case .list(let places) = datum, !places.isEmpty else { return "at each occurrence" }
                return request.trigger.offsets.map { span in
                    span == .zero ? "at" : span < .zero ? "\(TimeSpan.zero - span) before" : "\(span) after"
                }.joined(separator: ", ") + " each occurrence"
            },
            Field("remind", "remind", .list(request.trigger.reminders.map { .duration($0) })) { datum in
                guard case .list(let leads) = datum, !leads.isEmpty else { return "none" }
                return leads.compactMap(\.text).map { "\($0) before" }.joined(separator: ", ")
            },
            Field("notice", "notice", .optional(request.trigger.notice) { .duration($0) }) { datum in
                datum.text.map { "\($0) before, with Skip this one" } ?? "none"
            },
            Field("except", "except", .list(request.trigger.exceptions.map { .text($0.description) })) { datum in
                guard case .list(let dates) = datum, !dates.isEmpty else { return "none" }
                return dates.compactMap(\.text).joined(separator: ", ")
            },
            Field("until", "until", .optional(request.trigger.until) { .instant($0, zone) }) { $0.text ?? "none" },
            Field("count", "count", .optional(request.trigger.count) { .count(Int64($0)) }) { datum in
                guard let count = datum.text else { return "none" }
                return request.trigger.countEnd.flatMap { Datum.instant($0, zone).text }.map { "\(count) (the last \($0))" } ?? count
            },
            Field("skipped", "skipped", .list(request.trigger.skipped.filter { $0 > now }.map { .instant($0, zone) })) { datum in
                guard case .list(let times) = datum, !times.isEmpty else { return "none" }
                return times.compactMap(\.text).joined(separator: ", ")
            },
            Field("onHoliday", "on a day off", .text(request.trigger.holidayPolicy.rawValue)) { datum in
                switch request.trigger.holidayPolicy {
                case .ring: "rings"
                case .skip: "skipped"
                case .before: "moved to the working day before"
                case .after: "moved to the working day after"
                }
            },
            Field("daysOff", "days off", .list(daysOff.map { item in
                let (fate, at, holiday): (String, Datum, Datum) = switch item.fate {
                case .rings: ("rings", .instant(item.original, zone), .none)
                case .moved(let to, let name): ("moved", .instant(to, zone), .text(name))
                case .dropped(let name): ("skipped", .none, .text(name))
                case .away(let until): ("away", .instant(until, zone), .none)
                }
                return .record([Field("due", "", .instant(item.original, zone)), Field("fate", "", .text(fate)), Field("at", "", at),
                                Field("holiday", "", holiday)])
            })) { _ in
                // What the next year's days off and time away do, in words: "Fri 25 Dec: Christmas Day, moved to Thu 24 Dec".
                daysOff.isEmpty ? "none in the next year" : daysOff.map { $0.fate.describe($0.original, in: request.trigger.wallClockZone, now: now) }
                    .joined(separator: "; ")
            },
            Field("sound", "sound", sound) { datum in
                datum.text.map { $0 == "default" ? "default (\(Sound.defaultName))" : $0 } ?? "none"
            },
            Field("urgency", "urgency", .text(content.urgency.name)), Field("icon", "icon", .text(content.icon)),
            Field("actions", "actions", .list(content.actions.map { action in
                .record([Field("id", "", .text(action.identifier)), Field("title", "", .text(action.title))])
            })) { datum in
                guard case .list(let actions) = datum, !actions.isEmpty else { return "none" }
                return actions.map { action in
                    guard case .record(let fields) = action else { return "" }
                    return "\(fields[0].text ?? "")=\(fields[1].text ?? "")"
                }.joined(separator: ", ")
            },
            Field("snooze", "snooze", .duration(content.snooze ?? AlarmDefaults.snooze)),
            Field("grace", "grace", .duration(content.grace ?? AlarmDefaults.grace)),
            Field("expire", "expire", expire) { $0.text ?? "the server's default" },
            Field("bodyCommand", "body command", .optional(content.bodyCommand) { .list($0.arguments.map { .text($0) }) }) { datum in
                guard case .list(let words) = datum else { return nil }
                return words.compactMap(\.text).joined(separator: " ")
            },
            Field("bodyTimeout", "body timeout", .optional(content.bodyCommand) { .duration($0.timeLimit) }),
            Field("ring", "ring", content.sound == nil ? .none : .duration(content.ring ?? .zero)) { datum in
                guard case .length(let nanoseconds, let text) = datum else { return nil }
                return nanoseconds > 0 ? "\(text) until answered" : "plays once"
            },
            Field("autoSnooze", "auto-snooze", .flag(content.autoSnooze)),
            Field("volume", "volume", content.sound == nil ? .none : .count(Int64(content.volume ?? 100))) { datum in
                datum.text.map { "\($0)%" }
            },
            Field("fade", "fade", content.sound == nil ? .none : .duration(content.fade ?? .zero)) { datum in
                guard case .length(let nanoseconds, let text) = datum else { return nil }
                return nanoseconds > 0 ? "from silence over \(text)" : "none"
            },
            Field("fadeFrom", "fade from", content.fade == nil ? .none : .count(Int64(content.fadeFrom ?? 0))) { datum in
                datum.text.map { $0 == "0" ? "silence" : "\($0)% of the volume" }
            },
            Field("insist", "insist", .flag(content.insist)),
            Field("wake", "wake", .flag(content.wake)) { datum in content.stayAsleep ? "no, not even on a phone (--no-wake)" : datum.text },
            Field("dnd", "dnd", .text((content.doNotDisturb ?? AlarmDefaults.doNotDisturb).rawValue)),
            Field("origin", "origin", .text((summary?.origin ?? .commandLine).rawValue)) { datum in
                datum.text == AlarmOrigin.file.rawValue ? "alarm file" : "command line"
            },
            // Where it lives: this machine, or an event of a calendar (its UID), and what of it the
            // calendar cannot carry, kept on the machine that set it.
            Field("calendarEvent", "calendar event", .optional(content.userInfo[CalendarImport.uidKey]) { .text($0) }) { datum in
                guard let uid = datum.text else { return "none (it lives on this machine)" }
                return content.userInfo[CalendarImport.calendarKey].map { "\(uid), in the calendar '\($0)'" } ?? uid
            },
            Field("calendar", "calendar", .optional(content.userInfo[CalendarImport.calendarKey]) { .text($0) }),
            Field("keptHere", "kept here", .list((content.userInfo[KeptHere.key] ?? "").split(separator: ",").map {
                .text(String($0.drop { $0 == " " }))
            })) { datum in
                guard case .list(let names) = datum, !names.isEmpty else { return nil }
                return names.compactMap(\.text).joined(separator: ", ") + " (its calendar cannot carry them: on this machine only)"
            },
            Field("answeredUntil", "answered until", .optional(CalendarAnswers.of(request).acknowledged) { .instant($0, zone) }) { datum in
                datum.text.map { "\($0) (its calendar says so: occurrences until then ring nowhere)" }
            },
            Field("state", "state", .text(summary?.state.rawValue ?? "not pending")),
            Field("note", "note", .optional(summary.flatMap { $0.note.isEmpty ? nil : $0.note }) { .text($0) }),
        ])
    }
}
