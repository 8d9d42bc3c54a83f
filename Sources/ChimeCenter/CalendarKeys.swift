// What an alarm that came from a calendar carries in its user info: its event's UID, the calendar
// chime writes to that it lives in, and what the event says was answered (on any machine). Read
// by every client (the app shows which calendar an alarm lives in) and by the plan itself; the
// calendars' module (ChimeCalendars) writes them.
import Timekeeping

/// The user-info keys of an alarm that came from a calendar.
public enum CalendarKeys {
    /// Its event's UID, so an export gives it back (`CalendarImport.uidKey`).
    public static let uid = "ics-uid"
    /// The name of the calendar chime writes to that it lives in (`CalendarImport.calendarKey`).
    public static let calendar = "chime-calendar"
    /// What its event says was answered, in Unix seconds: the latest acknowledgment, and a snooze
    /// still ahead of it (`CalendarAnswers`).
    public static let acknowledged = "ics-acknowledged"
    public static let snoozed = "ics-snoozed"
}

extension NotificationRequest {
    /// The answers its calendar brought (none for alarms of any other kind).
    public var calendarAnswers: (acknowledged: Instant?, snoozed: Instant?) {
        let info = content.userInfo
        guard !info.isEmpty else { return (nil, nil) }
        func time(_ key: String) -> Instant? { info[key].flatMap { Int64($0) }.map { Instant(seconds: $0) } }
        return (time(CalendarKeys.acknowledged), time(CalendarKeys.snoozed))
    }

    /// The next time it fires after `time`: its trigger's plan, days off and time away read, past
    /// what its calendar says was answered on another machine, and at a snooze made there.
    public func nextFire(after time: Instant, off: DaysOff) -> Instant? {
        let (acknowledged, snoozed) = calendarAnswers
        guard acknowledged != nil || snoozed != nil else { return trigger.nextFire(after: time, off: off) }
        let regular = trigger.nextFire(after: max(time, acknowledged ?? time), off: off)
        if let snoozed, snoozed > time { return min(regular ?? snoozed, snoozed) }
        return regular
    }
}
