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

/// `chime list`: pending alarms, soonest first.
public struct List: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "List pending alarms (or missed ones).",
        discussion: """
            One line per alarm: identifier, next fire time, title, [label], then in parentheses its rule \
            in words in your language (LC_TIME, then LANG: "every weekday at 16:35", "in 5 minutes", "every \
            25 minutes"; as written where words do not say it: *:0/15, once), its sound and where it comes from (command line or alarm \
            file), and what is wrong where something is: "held: …" for an occurrence waiting for a \
            notification server, "QUARANTINED: …" for an alarm the daemon keeps but will not fire (it crashed \
            twice while firing it, or its stored form no longer passes today's checks; chime cancel ID removes \
            it). chime show ID prints everything about one. --json gives each as {id, title, label, nextFire, \
            rule, words, sound, origin, state, note, remaining, offUntil} with origin "command-line" or "file" and state "scheduled", \
            "held", "disabled" (switched off: chime enable), "paused" (a timer: chime resume), "retrying" (the server failed to show it; it is tried again, 1 s then doubling to 1 min, \
            while within its grace) or "quarantined"; nextFire is ISO 8601 with its offset, or null \
            (docs/json.md).

            Examples:
              chime list
              chime list --json | jq -r '.[] | select(.origin == "file") | .id'
              chime list --missed
              chime list --ringing

            --ringing lists the alarms ringing now: {id, title, due, until} (until: when the ring ends \
            unanswered).
            """)

    @Flag(name: .customLong("json"), help: "Print JSON.")
    var json = false

    @Flag(name: .customLong("missed"), help: "List occurrences that were missed instead.")
    var missed = false

    @Flag(name: .customLong("ringing"), help: "List the alarms ringing now instead (chime stop, chime snooze answer them).")
    var ringing = false

    public func validate() throws {
        if missed, ringing { throw ValidationError("give --missed or --ringing, not both") }
    }

    public func run() throws {
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        if missed {
            Self.missedReport(reportingErrors { try center.missedOccurrences() }).print(json: json)
        } else if ringing {
            Self.ringingReport(reportingErrors { try center.ringing() }).print(json: json)
        } else {
            let pending = reportingErrors { try center.pendingSummaries() }
            // The time paused timers have left, typed (asked only when there are any).
            let paused = pending.contains { $0.state == .paused } ? reportingErrors { try center.pausedTimers() } : []
            let now = WallClock.system.now()
            let away = ((try? center.away()) ?? []).map(\.away).filter { $0.contains(now) }
            Self.pendingReport(pending, paused: Dictionary(paused.map { ($0.identifier, $0.remaining) }, uniquingKeysWith: { a, _ in a }),
                               away: away, now: now)
                .print(json: json)
        }
    }

    /// Pending alarms: one line each, or a JSON array of `{id, title, label, nextFire, rule, words, sound,
    /// origin, state, note, remaining}` (docs/json.md).
    static func pendingReport(_ pending: [PendingSummary], paused: [String: TimeSpan] = [:], away: [DaysOff.Away] = [],
                              now: Instant = WallClock.system.now()) -> TableReport {
        let system = Zone.system()
        let year = system.civil(at: now.seconds).year
        // When the time away each alarm is in now ends (the latest, where several hold it).
        func offUntil(_ identifier: String) -> Instant? {
            away.isEmpty ? nil : away.filter { $0.alarms?.contains(identifier) ?? true }.map(\.until).max()
        }
        var zones: [String: Zone] = [:]  // looked up once per name, not once per alarm
        func zone(_ item: PendingSummary) -> Zone {
            guard let name = item.timeZone else { return system }
            if let known = zones[name] { return known }
            let found = (try? Zone.named(name)) ?? system
            zones[name] = found
            return found
        }
        // The rule in words, in the user's language: read once per distinct rule and zone (a listing
        // of 100,000 alarms holds a few hundred rules at most, usually).
        let language = PhraseLanguage.ofUser
        var said: [String: String?] = [:]
        func words(_ item: PendingSummary) -> String? {
            guard !item.rule.isEmpty else { return nil }
            let key = item.rule + "\u{0}" + (item.timeZone ?? "")
            if let known = said[key] { return known }
            let found = (try? Rule(parsing: item.rule)).flatMap { $0.words(language, zone: zone(item)) }
            said[key] = found
            return found
        }
        return TableReport(count: pending.count, row: { index in
            let item = pending[index]
            return [
                Field("id", "", .text(item.identifier)), Field("title", "", .text(item.title)), Field("label", "", .text(item.label)),
                Field("nextFire", "", .optional(item.nextFire) { .instant($0, zone(item)) }),
                Field("rule", "", .text(item.ruleText)), Field("words", "", .optional(words(item)) { .text($0) }),
                Field("sound", "", item.sound.isEmpty ? .none : .text(item.sound)),
                Field("origin", "", .text(item.origin.rawValue)), Field("state", "", .text(item.state.rawValue)),
                Field("note", "", item.note.isEmpty ? .none : .text(item.note)),
                // A paused timer's time left, in whole seconds rounded up (null for every other alarm).
                Field("remaining", "", .optional(paused[item.identifier]) { .duration(.seconds(($0.milliseconds + 999) / 1000)) }),
                // Time away it is in now: when it ends (null: none).
                Field("offUntil", "", .optional(offUntil(item.identifier)) { .instant($0, zone(item)) }),
            ]
        }, line: { row in
            let label = row["label"].isEmpty ? "" : " [\(row["label"])]"
            let sound = row["sound"].isEmpty ? "no sound" : row["sound"] == "default" ? "default sound" : "sound \(row["sound"])"
            let origin = "  (\(row["words"].isEmpty ? row["rule"] : row["words"]), \(sound), \(row["origin"] == AlarmOrigin.file.rawValue ? "alarm file" : "command line"))"
            let state = AlarmState(rawValue: row["state"]) ?? .scheduled
            let note = switch state {
            case .scheduled: ""
            case .held: "  held: \(row["note"])"
            case .retrying: "  retrying: \(row["note"])"
            case .quarantined: "  QUARANTINED: \(row["note"])"
            case .disabled: "  off (chime enable \(row["id"]) switches it on)"
            case .paused: "  paused: \(row["note"]) (chime resume \(row["id"]))"
            }
            // An alarm whose next occurrence waits (held, retrying) says so rather than "never".
            let when = state == .quarantined ? "never" : state == .disabled ? "off" : state == .paused ? "paused" : row["nextFire"].isEmpty ? (state == .scheduled ? "never" : state.rawValue) : row["nextFire"]
            let away = offUntil(row["id"]).map { "  off until \(DaysOff.until($0, in: system, thisYear: year)) (chime on)" } ?? ""
            return "\(row["id"])  \(when)  \(row["title"])\(label)\(origin)\(note)\(away)"
        }, empty: "no pending alarms")
    }

    /// The alarms ringing now: `{id, title, due, until}` each (until: when the ring ends unanswered).
    static func ringingReport(_ ringing: [(identifier: String, due: Instant, until: Instant, title: String)]) -> TableReport {
        let zone = Zone.system()
        return TableReport(rows: ringing.map { item in
            [Field("id", "", .text(item.identifier)), Field("title", "", .text(item.title)), Field("due", "", .instant(item.due, zone)),
             Field("until", "", .instant(item.until, zone))]
        }, line: { row in
            "\(row["id"])  ringing since \(row["due"])  \(row["title"])  (until \(row["until"]) unanswered; chime stop \(row["id"]), chime snooze \(row["id"]))"
        }, empty: "nothing is ringing")
    }

    /// Missed occurrences: `{id, due, reason}` each.
    static func missedReport(_ missed: [MissedOccurrence]) -> TableReport {
        let zone = Zone.system()
        return TableReport(rows: missed.map { item in
            [Field("id", "", .text(item.identifier)), Field("due", "", .instant(item.due, zone)),
             Field("reason", "", .optional(item.reason) { .text($0) })]
        }, line: { row in
            "\(row["id"])  missed \(row["due"])" + (row["reason"].isEmpty ? "" : "  (\(row["reason"]))")
        }, empty: nil)
    }
}
