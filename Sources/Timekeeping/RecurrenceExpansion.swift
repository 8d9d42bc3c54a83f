// The occurrences of an iCalendar recurrence (RFC 5545 §3.3.10, §3.8.5.3), computed on wall-clock
// (civil) time and turned into instants at the end: a time a DST change skips is read with the
// offset before the gap, one it repeats is the first (§3.3.5).
//
// Each period of the rule's frequency (a year, a month, a week from WKST, a day, an hour, a minute,
// a second), from DTSTART's on, every INTERVAL-th, gives its candidates: its days that pass
// BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY and BYDAY (which expand where the frequency is coarser and
// limit where it is finer), each at the times of BYHOUR × BYMINUTE × BYSECOND (DTSTART's where not
// given), chosen by BYSETPOS; then COUNT and UNTIL end the rule. DTSTART is always the first
// occurrence (§3.8.5.3); RDATEs join, EXDATEs leave.

extension RecurrenceRule {
    /// The rule with RFC 5545's defaults filled from `start`: the day parts a coarse frequency takes
    /// from DTSTART, and the time parts at or below the frequency.
    func resolved(start: CivilTime) -> RecurrenceRule {
        var rule = self
        if byWeekNo.isEmpty, byYearDay.isEmpty, byMonthDay.isEmpty, byDay.isEmpty {
            switch frequency {
            case .yearly:
                if byMonth.isEmpty { rule.byMonth = [start.month] }
                rule.byMonthDay = [start.day]
            case .monthly:
                rule.byMonthDay = [start.day]
            case .weekly:
                rule.byDay = [WeekdayNumber(ordinal: nil, weekday: start.weekday)]
            default:
                break
            }
        }
        let coarse: [Frequency] = [.yearly, .monthly, .weekly, .daily]
        if byHour.isEmpty, coarse.contains(frequency) { rule.byHour = [start.hour] }
        if byMinute.isEmpty, coarse.contains(frequency) || frequency == .hourly { rule.byMinute = [start.minute] }
        if bySecond.isEmpty, frequency != .secondly { rule.bySecond = [start.second] }
        return rule
    }

    /// Whether the day `day` (days since 1970) passes the day parts.
    func dayMatches(_ day: Int64) -> Bool {
        let (year, month, dayOfMonth) = civilFromDays(day)
        if !byMonth.isEmpty, !byMonth.contains(month) { return false }
        if !byMonthDay.isEmpty {
            let fromEnd = dayOfMonth - daysInMonth(year, month) - 1
            if !byMonthDay.contains(dayOfMonth), !byMonthDay.contains(fromEnd) { return false }
        }
        let yearStart = daysFromCivil(year, 1, 1)
        let daysInYear = isLeapYear(year) ? 366 : 365
        if !byYearDay.isEmpty {
            let yearDay = Int(day - yearStart) + 1
            if !byYearDay.contains(yearDay), !byYearDay.contains(yearDay - daysInYear - 1) { return false }
        }
        if !byWeekNo.isEmpty, !weekNumbers(of: day).contains(where: byWeekNo.contains) { return false }
        if !byDay.isEmpty {
            let weekday = isoWeekday(day)
            // An ordinal counts within the month (MONTHLY, or YEARLY with BYMONTH), else the year.
            let inMonth = frequency == .monthly || (frequency == .yearly && !byMonth.isEmpty)
            let (first, length) = inMonth ? (daysFromCivil(year, month, 1), daysInMonth(year, month)) : (yearStart, daysInYear)
            let index = Int(day - first)
            let nth = index / 7 + 1
            let nthFromEnd = -((length - 1 - index) / 7 + 1)
            let matches = byDay.contains { entry in
                guard entry.weekday == weekday else { return false }
                guard let ordinal = entry.ordinal else { return true }
                return ordinal == nth || ordinal == nthFromEnd
            }
            if !matches { return false }
        }
        return true
    }

    /// The week numbers a day has in its year (positive and negative), weeks starting on
    /// `weekStart`, week 1 being the first with at least four days of the year (ISO 8601's rule).
    /// A day of the last days of a year may be in week 1 of the next: it is checked against both.
    func weekNumbers(of day: Int64) -> [Int] {
        let (year, _, _) = civilFromDays(day)
        var numbers: [Int] = []
        for y in [year - 1, year, year + 1] {
            let start = firstWeekStart(y)
            let next = firstWeekStart(y + 1)
            guard day >= start, day < next else { continue }
            let week = Int((day - start) / 7) + 1
            let weeks = Int((next - start) / 7)
            numbers += [week, week - weeks - 1]
        }
        return numbers
    }

    /// The first day of week 1 of `year`.
    func firstWeekStart(_ year: Int) -> Int64 {
        let january1 = daysFromCivil(year, 1, 1)
        let shift = Int64((isoWeekday(january1) - weekStart + 7) % 7)
        let start = january1 - shift
        // Week 1 holds at least four days of the year; otherwise it starts a week later.
        return 7 - shift >= 4 ? start : start + 7
    }

    /// The time parts that pass the time-level filters, as seconds of the day, sorted.
    func times(hour: Int? = nil, minute: Int? = nil, second: Int? = nil) -> [Int] {
        var out: [Int] = []
        for h in hour.map({ [$0] }) ?? byHour.sorted() where byHour.isEmpty || byHour.contains(h) {
            for m in minute.map({ [$0] }) ?? byMinute.sorted() where byMinute.isEmpty || byMinute.contains(m) {
                for s in second.map({ [$0] }) ?? bySecond.sorted() where bySecond.isEmpty || bySecond.contains(s) {
                    out.append(h * 3600 + m * 60 + min(s, 59))
                }
            }
        }
        return Array(Set(out)).sorted()
    }
}

extension Recurrence {
    /// The zone the recurrence's times are read in: its TZID's, UTC for a UTC start, else
    /// `floatingZone` (a floating time is the same wall-clock time wherever it is read).
    public func zone(floatingZone: Zone) -> Zone {
        switch start {
        case .zoned(_, let name): (try? Zone.named(name)) ?? floatingZone
        case .utc: .utc
        case .date, .floating: floatingZone
        }
    }

    /// The instant a civil time of this recurrence stands for (§3.3.5: a skipped time with the
    /// offset before the gap, a repeated one the first).
    static func instant(_ civil: CivilTime, in zone: Zone) -> UnixTime {
        switch zone.resolve(civil) {
        case .unique(let t): t
        case .ambiguous(let earlier, _): earlier
        case .gap(let endsAt): civil.localSeconds - Int64(zone.offset(at: endsAt - 1))
        }
    }

    /// The instant a DATE or DATE-TIME value stands for, read in `zone` unless it says its own.
    static func instant(_ value: DateTimeValue, in zone: Zone) -> UnixTime {
        switch value {
        case .utc(let civil): civil.localSeconds
        case .zoned(let civil, let name): instant(civil, in: (try? Zone.named(name)) ?? zone)
        case .date, .floating: instant(value.civil, in: zone)
        }
    }

    /// Every occurrence in order, as instants, up to and including `limit` (at most `maximum` of
    /// them): DTSTART first, each rule's, the RDATEs, without the EXDATEs.
    public func occurrences(through limit: UnixTime, floatingZone: Zone, maximum: Int = 100_000) -> [UnixTime] {
        let zone = zone(floatingZone: floatingZone)
        let first = Self.instant(start, in: zone)
        var all: Set<UnixTime> = first <= limit ? [first] : []
        for rule in rules {
            for t in rule.instants(start: start.civil, zone: zone, through: limit, maximum: maximum) { all.insert(t) }
        }
        for date in dates {
            let t = Self.instant(date, in: zone)
            if t <= limit { all.insert(t) }
        }
        for exception in exceptions { all.remove(Self.instant(exception, in: zone)) }
        return Array(all.sorted().prefix(maximum))
    }
}

extension RecurrenceRule {
    /// This rule's occurrences from `start` (DTSTART's civil time, which counts as the first),
    /// as instants in `zone`, up to `limit`.
    func instants(start: CivilTime, zone: Zone, through limit: UnixTime, maximum: Int) -> [UnixTime] {
        let rule = resolved(start: start)
        let untilInstant: UnixTime? = until.map { Recurrence.instant($0, in: zone) }
        var out: [UnixTime] = []
        var emitted = 1  // DTSTART, which `occurrences` adds
        let startDay = start.dayNumber
        let startSecond = Int64(start.hour * 3600 + start.minute * 60 + start.second)
        var period = 0  // which period, counted from DTSTART's, in steps of INTERVAL
        var emptyPeriods = 0
        let lastYear = civilFromDays(limit.floorDivided(by: 86_400) + 2).year + 1
        while emitted < (count ?? Int.max), out.count < maximum {
            // The period's days, and the time of day it is limited to (sub-daily frequencies).
            let days: [Int64]
            var timeLimit: (hour: Int?, minute: Int?, second: Int?) = (nil, nil, nil)
            switch rule.frequency {
            case .yearly:
                let year = start.year + period * interval
                if year > lastYear { return out }
                days = Array(daysFromCivil(year, 1, 1)..<daysFromCivil(year + 1, 1, 1))
            case .monthly:
                let months = start.year * 12 + (start.month - 1) + period * interval
                let (year, month) = (months / 12, months % 12 + 1)
                if year > lastYear { return out }
                let first = daysFromCivil(year, month, 1)
                days = Array(first..<first + Int64(daysInMonth(year, month)))
            case .weekly:
                let shift = Int64((isoWeekday(startDay) - rule.weekStart + 7) % 7)
                let first = startDay - shift + Int64(period * interval * 7)
                if civilFromDays(first).year > lastYear { return out }
                days = Array(first..<first + 7)
            case .daily:
                let day = startDay + Int64(period * interval)
                if civilFromDays(day).year > lastYear { return out }
                days = [day]
            case .hourly, .minutely, .secondly:
                let unit: Int64 = rule.frequency == .hourly ? 3600 : rule.frequency == .minutely ? 60 : 1
                let base = startDay * 86_400 + (rule.frequency == .hourly ? startSecond / 3600 * 3600 : rule.frequency == .minutely ? startSecond / 60 * 60 : startSecond)
                let local = base + Int64(period) * Int64(interval) * unit
                let day = local.floorDivided(by: 86_400)
                if civilFromDays(day).year > lastYear { return out }
                let second = Int(local - day * 86_400)
                // A day, or an hour, that cannot match is skipped whole.
                if !rule.dayMatches(day) || (!rule.byHour.isEmpty && !rule.byHour.contains(second / 3600)) {
                    let next = rule.byHour.isEmpty || !rule.dayMatches(day) ? (day + 1) * 86_400 : local - Int64(second % 3600) + 3600
                    let step = Int64(interval) * unit
                    period += max(1, Int((next - local + step - 1) / step))
                    continue
                }
                days = [day]
                timeLimit.hour = second / 3600
                if rule.frequency != .hourly { timeLimit.minute = second / 60 % 60 }
                if rule.frequency == .secondly { timeLimit.second = second % 60 }
            }
            period += 1
            var candidates: [Int64] = []  // local seconds
            let times = rule.times(hour: timeLimit.hour, minute: timeLimit.minute, second: timeLimit.second)
            for day in days where rule.dayMatches(day) {
                for time in times { candidates.append(day * 86_400 + Int64(time)) }
            }
            if !rule.bySetPos.isEmpty {
                let n = candidates.count
                candidates = rule.bySetPos.compactMap { position -> Int64? in
                    let index = position > 0 ? position - 1 : n + position
                    return (0..<n).contains(index) ? candidates[index] : nil
                }
                candidates = Array(Set(candidates)).sorted()
            }
            if candidates.isEmpty {
                emptyPeriods += 1
                if emptyPeriods > 100_000 { return out }  // a rule that matches nothing more (FEB 30)
                continue
            }
            emptyPeriods = 0
            for local in candidates {
                let t = Recurrence.instant(CivilTime(localSeconds: local), in: zone)
                if local <= start.localSeconds { continue }  // DTSTART, and what comes before it
                if let untilInstant, t > untilInstant { return out }
                if t > limit { return out }
                out.append(t)
                emitted += 1
                if emitted >= (count ?? Int.max) || out.count >= maximum { return out }
            }
        }
        return out
    }
}
