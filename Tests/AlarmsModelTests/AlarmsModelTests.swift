import AlarmsModel
import ChimeCenter
import Notifications
import Testing
import Timekeeping

/// What the app shows and sends, without GTK: the dialog's alarm and the request it becomes,
/// and the words the lists show.
@Suite struct AlarmsModelTests {
    let zone = try! Zone.named("Europe/Berlin")
    /// Monday 2026-11-23 08:00 in Berlin.
    var monday8: Instant { Instant(seconds: 1_795_417_200) }

    @Test func theMondayIsAMonday() {
        let civil = zone.civil(at: monday8.seconds)
        #expect((civil.year, civil.month, civil.day, civil.hour, civil.minute, civil.weekday) == (2026, 11, 23, 8, 0, 1))
    }

    @Test func daysAreSaidAsAPersonSaysThem() {
        #expect(Weekdays.workdays.inWords == "Weekdays")
        #expect(Weekdays.weekend.inWords == "Weekends")
        #expect(Weekdays.everyDay.inWords == "Every day")
        #expect(Weekdays([.day(0), .day(2), .day(4)]).inWords == "Mon, Wed, Fri")
        #expect(Weekdays([.day(0), .day(2), .day(4)]).ruleText == "mon,wed,fri")
        #expect(Weekdays.day(6).inWords == "Sun")
    }

    @Test(arguments: [Weekdays.workdays, .everyDay, .weekend, Weekdays([.day(1), .day(3)]), []])
    func anAlarmSurvivesTheTripToTheDaemonAndBack(days: Weekdays) throws {
        var alarm = ClockAlarm()
        alarm.hour = 6
        alarm.minute = 45
        alarm.days = days
        alarm.label = "Get up"
        alarm.sound = .named("bell")
        alarm.ring = .seconds(600)
        alarm.snooze = .seconds(540)
        alarm.wake = true
        alarm.doNotDisturb = .defer
        alarm.volume = 70
        alarm.fade = .seconds(30)
        alarm.insist = true
        let request = try alarm.request(identifier: "get-up", now: monday8, zone: zone)
        #expect(request.content.volume == 70)
        #expect(request.content.fade == .seconds(30))
        #expect(request.content.insist)
        #expect(request.identifier == "get-up")
        #expect(request.content.title == "Get up")
        #expect(request.content.category == "x-chime.alarm")
        #expect(request.content.actions.map(\.identifier) == ["snooze", "dismiss"])
        let back = try #require(ClockAlarm(request: request))
        func shown(_ a: ClockAlarm) -> [String] {
            ["\(a.hour):\(a.minute)", "\(a.days.rawValue)", a.label, "\(String(describing: a.sound))", "\(a.ring)", "\(a.snooze)",
             "\(a.wake)", a.doNotDisturb.rawValue, "\(a.volume)", "\(a.fade)", "\(a.insist)"]
        }
        #expect(shown(back) == shown(alarm))
        #expect(back.base == request.content)
    }

    @Test func editingKeepsWhatTheDialogDoesNotShow() throws {
        var draft = AlarmDraft(kind: .alarm, anchor: monday8)
        draft.title = "Homeroom"
        draft.body = "Check the guidance list"
        draft.urgency = .normal
        draft.grace = .seconds(120)
        draft.sound = .named("bell")
        draft.autoSnooze = true
        draft.when = .rule("16:35 mon-fri")
        let original = try draft.build(now: monday8)
        var alarm = try #require(ClockAlarm(request: original))
        #expect(alarm.label == "Homeroom")
        alarm.minute = 40
        alarm.ring = .zero  // rings once: it can no longer snooze itself when unanswered
        let edited = try alarm.request(identifier: "homeroom", now: monday8, zone: zone)
        #expect(edited.content.body == "Check the guidance list")
        #expect(edited.content.grace == .seconds(120))
        #expect(edited.content.urgency == .normal)
        #expect(edited.content.title == "Homeroom")
        #expect(edited.content.label == "", "an unchanged name leaves title and label as they were")
        #expect(edited.content.autoSnooze == false)
        #expect(edited.content.volume == nil && edited.content.fade == nil && !edited.content.insist, "100%, no fade: nothing sent")
        alarm.sound = nil
        alarm.volume = 50
        alarm.insist = true
        let silent = try alarm.request(identifier: "homeroom", now: monday8, zone: zone)
        #expect(silent.content.volume == nil && !silent.content.insist, "no sound: no volume or insist")
        #expect(edited.summaryRule == "16:40 mon-fri")
        alarm.label = "Homeroom ends"
        let renamed = try alarm.request(identifier: "homeroom", now: monday8, zone: zone)
        #expect(renamed.content.title == "Homeroom ends")
        #expect(renamed.content.label == "Homeroom ends")
        #expect(renamed.content.body == "Check the guidance list")
    }

    @Test func theRuleSaysTheDaysOrTheNextDateForAOneOff() {
        var alarm = ClockAlarm()
        alarm.hour = 7
        alarm.minute = 5
        alarm.days = .workdays
        #expect(alarm.rule(now: monday8, zone: zone) == "07:05 mon,tue,wed,thu,fri")
        alarm.days = .everyDay
        #expect(alarm.rule(now: monday8, zone: zone) == "07:05")
        alarm.days = []
        // 07:05 has passed at 08:00: tomorrow.
        #expect(alarm.rule(now: monday8, zone: zone) == "2026-11-24 07:05")
        alarm.hour = 9
        #expect(alarm.rule(now: monday8, zone: zone) == "2026-11-23 09:05")
        // The last day of the year rolls into the next.
        let silvester = Instant(seconds: 1_798_754_400)  // 2026-12-31 23:00 in Berlin
        alarm.hour = 6
        #expect(alarm.rule(now: silvester, zone: zone) == "2027-01-01 06:05")
    }

    @Test func withoutALabelTheTitleIsAlarmAndNoSoundMeansNoRing() throws {
        var alarm = ClockAlarm()
        alarm.sound = nil
        let request = try alarm.request(identifier: nil, now: monday8, zone: zone)
        #expect(request.content.title == "Alarm")
        #expect(request.content.label == "")
        #expect(request.content.sound == nil)
        #expect(request.content.ring == nil || request.content.ring == .zero)
        let back = try #require(ClockAlarm(request: request))
        #expect(back.label == "")
    }

    /// An alarm set with a fade from a level (`--fade-from`) keeps it through an edit, and loses it
    /// with its fade when the dialog turns the fade off (a start level without a fade is refused).
    @Test func aFadesStartLevelGoesWithItsFade() throws {
        var draft = AlarmDraft(kind: .alarm, anchor: monday8)
        draft.title = "Soft"
        draft.when = .rule("07:00 mon-fri")
        draft.sound = .named("bell")
        draft.fade = .seconds(30)
        draft.fadeFrom = 20
        var alarm = try #require(ClockAlarm(request: try draft.build(now: monday8)))
        #expect(try alarm.request(identifier: "soft", now: monday8, zone: zone).content.fadeFrom == 20)
        alarm.fade = .zero
        let edited = try alarm.request(identifier: "soft", now: monday8, zone: zone)
        #expect(edited.content.fade == nil && edited.content.fadeFrom == nil)
    }

    /// Rules the clock and the day toggles cannot say are edited in the When field, as written,
    /// and come back as the same rule; a timer counting down is not the dialog's.
    @Test(arguments: ["*:0/15", "Mon *-*-* 07:00:00 UTC", "07:00:30", "*-*~01 07:00", "every 25m",
                      "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR"])
    func rulesTheDialogCannotSayAreEditedInTheWhenField(rule: String) throws {
        var draft = AlarmDraft(kind: .alarm, anchor: monday8)
        draft.title = "x"
        draft.when = .rule(rule)
        let request = try draft.build(now: monday8)
        let alarm = try #require(ClockAlarm(request: request))
        #expect(!alarm.when.isEmpty)
        let back = try alarm.request(identifier: "x", now: monday8, zone: zone)
        #expect(back.trigger.rule == request.trigger.rule)
        #expect(back.trigger.said == nil)
        var timer = AlarmDraft(kind: .timer, anchor: monday8)
        timer.title = "Tea"
        timer.when = .rule("in 5m")
        #expect(ClockAlarm(request: try timer.build(now: monday8)) == nil)
    }

    /// A phrase in the When field is understood as one types it (the words and the next three
    /// times, or the word it does not know), sent as said, and opens again as it was typed.
    @Test func aPhraseInTheWhenFieldIsUnderstoodSentAndKept() throws {
        var alarm = ClockAlarm()
        alarm.label = "Standup"
        #expect(alarm.whenPreview(now: monday8, language: .english) == nil)
        alarm.when = "every other tusday 9am"
        guard case .problem(let why)? = alarm.whenPreview(now: monday8, language: .english) else {
            Issue.record("an unknown word was not pointed at")
            return
        }
        #expect(why.contains("did you mean 'tuesday'"), "\(why)")
        alarm.when = "  every other tuesday 9am "
        // Read, and rung, in the system's zone (as the dialog's clock is): there, Tue 24 Nov 09:00
        // is the first (monday8 is a Monday, or the Sunday before, in every zone).
        let system = Zone.system()
        guard case .unique(let tuesday9) = system.resolve(CivilTime(year: 2026, month: 11, day: 24, hour: 9, minute: 0, second: 0)) else {
            Issue.record("no Tue 24 Nov 09:00 in \(system.identifier)")
            return
        }
        let preview = alarm.whenPreview(now: monday8, language: .english)
        #expect(preview == .understood(words: "every 2 weeks on Tuesday at 09:00, from Tue 24 Nov 2026",
                                       next: [0, 14, 28].map { Instant(seconds: tuesday9 + $0 * 86_400) }), "\(String(describing: preview))")
        #expect(preview?.text(zone: system) == "every 2 weeks on Tuesday at 09:00, from Tue 24 Nov 2026\nNext: Tue 2026-11-24 09:00, Tue 2026-12-08 09:00, Tue 2026-12-22 09:00")
        let request = try alarm.request(identifier: "standup", now: monday8, zone: zone)
        #expect(request.trigger.said == "every other tuesday 9am")
        #expect(request.trigger.nextFire(after: monday8) == Instant(seconds: tuesday9))
        let back = try #require(ClockAlarm(request: request))
        #expect(back.when == "every other tuesday 9am")
        #expect(back.label == "Standup")
        // In German, said back in German.
        alarm.when = "jeden zweiten Dienstag um 9:00"
        guard case .understood(let words, let next)? = alarm.whenPreview(now: monday8, language: .german) else {
            Issue.record("not understood")
            return
        }
        #expect(words?.hasPrefix("jeden zweiten Dienstag um 09:00") == true, "\(String(describing: words))")
        #expect(next.first == Instant(seconds: tuesday9))
        // In French and Spanish, said back in each.
        for (when, language, said) in [("toutes les 2 semaines le mardi à 9h", PhraseLanguage.french, "toutes les 2 semaines le mardi à 09:00"),
                                       ("cada 2 semanas el martes a las 9", .spanish, "cada 2 semanas el martes a las 09:00")] {
            alarm.when = when
            guard case .understood(let words, let next)? = alarm.whenPreview(now: monday8, language: language) else {
                Issue.record("\(when): not understood")
                continue
            }
            #expect(words?.hasPrefix(said) == true, "\(String(describing: words))")
            #expect(next.first == Instant(seconds: tuesday9))
        }
        // A one-off that has passed says so.
        alarm.when = "2026-11-01 07:00"
        #expect(alarm.whenPreview(now: monday8, language: .english).map { if case .problem = $0 { true } else { false } } == true)
    }

    @Test func rowsSayTimeDaysAndWhenTheyRing() {
        let alarm = AlarmRow(PendingSummary(identifier: "a", nextFire: Instant(seconds: monday8.seconds + 3600 * 23), title: "Wake up",
                                            label: "", timeZone: nil, rule: "07:00 mon-fri", sound: "default"), now: monday8, zone: zone)
        #expect(alarm.kind == .alarm)
        #expect(alarm.time == "07:00")
        #expect(alarm.days == "Weekdays")
        #expect(alarm.name == "Wake up")
        #expect(alarm.status == "Rings tomorrow at 07:00")
        #expect(alarm.isOn)

        let off = AlarmRow(PendingSummary(identifier: "b", nextFire: nil, title: "T", label: "school", timeZone: nil,
                                          state: .disabled, rule: "16:35 mon,wed"), now: monday8, zone: zone)
        #expect(off.name == "school")
        #expect(off.days == "Mon, Wed")
        #expect(off.status == "Off")
        #expect(!off.isOn)

        let timer = AlarmRow(PendingSummary(identifier: "t", nextFire: monday8 + .seconds(300), title: "Tea", label: "",
                                            timeZone: nil, rule: "in 5m"), now: monday8, zone: zone)
        #expect(timer.kind == .timer)
        #expect(timer.duration == .seconds(300))
        #expect(timer.status == "Rings in 5 min")

        // Repeating intervals and other rules are alarms, shown by their next time.
        let quarter = AlarmRow(PendingSummary(identifier: "q", nextFire: monday8 + .seconds(900), title: "Q", label: "",
                                              timeZone: nil, rule: "*-*-* *:00/15:00"), now: monday8, zone: zone)
        #expect(quarter.kind == .alarm)
        #expect(quarter.time == "08:15")
        #expect(quarter.days == "*-*-* *:00/15:00")
        // A one-off at a second of its own.
        let soon = AlarmRow(PendingSummary(identifier: "s", nextFire: nil, title: "Soon", label: "", timeZone: nil,
                                           state: .disabled, rule: "2026-11-23 22:59:05"), now: monday8, zone: zone)
        #expect(soon.time == "22:59:05")
        #expect(soon.days == "Once")
        let every = AlarmRow(PendingSummary(identifier: "e", nextFire: monday8 + .seconds(1500), title: "E", label: "",
                                            timeZone: nil, rule: "every 25m"), now: monday8, zone: zone)
        #expect(every.kind == .alarm)
    }

    /// The app sorts 100,000 alarms from its few timers without making their rows: the quick test
    /// must agree with the row's kind for every rule.
    @Test(arguments: ["in 5m", "In 90s", "  in 1h 30m", "IN 2d", "every 25m", "07:00 mon-fri", "*-*-* *:00/15:00", "2026-11-23 22:59:05",
                      "", "in", "inside", "information 07:00", "in 99999999999999999999m", "FREQ=DAILY"])
    func aTimerIsKnownWithoutItsRow(rule: String) {
        let summary = PendingSummary(identifier: "x", nextFire: monday8 + .seconds(60), title: "X", label: "", timeZone: nil, rule: rule)
        #expect(AlarmRow.isTimer(summary) == (AlarmRow(summary, now: monday8, zone: zone).kind == .timer), "\(rule)")
    }

    @Test func timesAheadAreSaidAsAClockSaysThem() {
        func said(_ seconds: Int64) -> String { relativeTime(from: monday8, to: monday8 + .seconds(seconds), zone: zone) }
        #expect(said(30) == "in less than a minute")
        #expect(said(45 * 60) == "in 45 min")
        #expect(said(3600 * 5 + 180) == "in 5 h 3 min")
        #expect(said(3600 * 2) == "in 2 h")
        #expect(said(3600 * 13) == "today at 21:00")
        #expect(said(3600 * 24) == "tomorrow at 08:00")
        #expect(said(3600 * 24 * 4) == "on Fri 08:00")
        #expect(said(3600 * 24 * 10) == "on 2026-12-03 08:00")
    }

    @Test func countdownsAndDurations() {
        #expect(countdown(.seconds(299)) == "4:59")
        #expect(countdown(.milliseconds(299_001)) == "5:00")
        #expect(countdown(.seconds(3723)) == "1:02:03")
        #expect(countdown(.seconds(-5)) == "0:00")
        #expect(durationWords(.seconds(30)) == "30 s")
        #expect(durationWords(.seconds(300)) == "5 min")
        #expect(durationWords(.seconds(5400)) == "1 h 30 min")
        #expect(durationWords(.seconds(7200)) == "2 h")
    }

    @Test func aCustomTimerIsBuiltAsThePresetsAre() throws {
        let request = try timerRequest(duration: .seconds(90), label: "", now: monday8)
        #expect(request.content.title == "Timer")
        #expect(request.content.category == "x-chime.timer")
        #expect(request.summaryRule == "in 1m30s")
        #expect(request.content.sound == .default)
        let named = try timerRequest(duration: .seconds(300), label: "Pasta", now: monday8)
        #expect(named.content.title == "Pasta")
        #expect(named.content.label == "Pasta")
    }
}
