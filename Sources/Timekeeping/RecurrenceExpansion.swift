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

import Synchronization

extension RecurrenceRule {
    /// The rule with RFC 5545's defaults filled from `start`: the day parts a coarse frequency takes
    /// from DTSTART, and the time parts at or below the frequency.
    mutating func resolve(start: CivilTime) {
        if byWeekNo.isEmpty, byYearDay.isEmpty, byMonthDay.isEmpty, byDay.isEmpty {
            switch frequency {
            case .yearly:
                if byMonth.isEmpty { byMonth = Self.one(start.month) }
                byMonthDay = Self.one(start.day)
            case .monthly:
                byMonthDay = Self.one(start.day)
            case .weekly:
                byDay = [WeekdayNumber(ordinal: nil, weekday: start.weekday)]
            default:
                break
            }
        }
        let coarse = frequency == .yearly || frequency == .monthly || frequency == .weekly || frequency == .daily
        if byHour.isEmpty, coarse { byHour = Self.one(start.hour) }
        if byMinute.isEmpty, coarse || frequency == .hourly { byMinute = Self.one(start.minute) }
        if bySecond.isEmpty, frequency != .secondly { bySecond = Self.one(start.second) }
    }

    /// Whether the day `day` (days since 1970) passes the day parts.
    func dayMatches(_ day: Int64) -> Bool {
        let (year, month, dayOfMonth) = civilFromDays(day)
        return dayMatches(day, year: year, month: month, dayOfMonth: dayOfMonth)
    }

    /// `dayMatches` for a day whose civil date is known.
    func dayMatches(_ day: Int64, year: Int, month: Int, dayOfMonth: Int) -> Bool {
        if !byMonth.isEmpty, !byMonth.contains(month) { return false }
        if !byMonthDay.isEmpty {
            let fromEnd = dayOfMonth - daysInMonth(year, month) - 1
            if !byMonthDay.contains(dayOfMonth), !byMonthDay.contains(fromEnd) { return false }
        }
        if byYearDay.isEmpty, byWeekNo.isEmpty, byDay.isEmpty { return true }
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
        /// The values to walk: the one given (if the part allows it), else the part's, sorted.
        func walk(_ given: Int?, _ part: [Int]) -> [Int] {
            if let given { return part.isEmpty || part.contains(given) ? [given] : [] }
            return sortedUnique(part)
        }
        let (hours, minutes, seconds) = (walk(hour, byHour), walk(minute, byMinute), walk(second, bySecond))
        var out: [Int] = []
        out.reserveCapacity(hours.count * minutes.count * seconds.count)
        // Walked in order, so the times come sorted; a leap second (60) reads as 59 and may repeat it.
        for h in hours {
            for m in minutes {
                for s in seconds {
                    let time = h * 3600 + m * 60 + min(s, 59)
                    if out.last != time { out.append(time) }
                }
            }
        }
        return out
    }
}

extension Recurrence {
    /// The zone the recurrence's times are read in: its TZID's, UTC for a UTC start, else
    /// `floatingZone` (a floating time is the same wall-clock time wherever it is read).
    public func zone(floatingZone: Zone) -> Zone {
        switch start {
        case .zoned(_, let name): startZone ?? (try? Zone.named(name)) ?? floatingZone
        case .utc: .utc
        case .date, .floating: floatingZone
        }
    }

    /// DTSTART as an instant (a floating one read in `floatingZone`).
    public func startInstant(floatingZone: Zone) -> UnixTime {
        self.startInstant ?? Self.instant(start, in: zone(floatingZone: floatingZone))
    }

    /// The instant a civil time of this recurrence stands for (§3.3.5: a skipped time with the
    /// offset before the gap, a repeated one the first).
    static func instant(_ civil: CivilTime, in zone: Zone) -> UnixTime {
        instant(local: civil.localSeconds, in: zone)
    }

    /// The instant of the wall-clock time `local` (seconds since 1970-01-01 00:00 on the wall).
    static func instant(local: Int64, in zone: Zone) -> UnixTime {
        if let offset = zone.steadyOffset(near: local) { return local - Int64(offset) }
        let civil = CivilTime(localSeconds: local)
        return switch zone.resolve(civil) {
        case .unique(let t): t
        case .ambiguous(let earlier, _): earlier
        case .gap(let endsAt): local - Int64(zone.offset(at: endsAt - 1))
        }
    }

    /// The instant a DATE or DATE-TIME value stands for, read in `zone` unless it says its own.
    static func instant(_ value: DateTimeValue, in zone: Zone) -> UnixTime {
        switch value {
        case .utc(let civil): civil.localSeconds
        case .zoned(let civil, let name): instant(civil, in: name == zone.identifier ? zone : (try? Zone.named(name)) ?? zone)
        case .date, .floating: instant(value.civil, in: zone)
        }
    }

    /// Every occurrence in order, as instants, up to and including `limit` (at most `maximum` of
    /// them): DTSTART first, each rule's, the RDATEs, without the EXDATEs.
    public func occurrences(through limit: UnixTime, floatingZone: Zone, maximum: Int = 100_000) -> [UnixTime] {
        let zone = zone(floatingZone: floatingZone)
        let excluded = Exclusions(self, zone: zone)
        let first = Self.instant(start, in: zone)
        var all: Set<UnixTime> = first <= limit ? [first] : []
        for expansion in expansions {
            var found = 0
            expansion.forEach(zone: zone, after: nil, through: limit) { t in
                all.insert(t)
                found += 1
                return found < maximum
            }
        }
        for date in dates {
            let t = Self.instant(date, in: zone)
            if t <= limit { all.insert(t) }
        }
        return Array(all.filter { !excluded.contains($0) }.sorted().prefix(maximum))
    }

    /// The first occurrence strictly after `time`, or nil when there is none up to `Instant.latest`.
    /// A rule without COUNT starts from the period holding `time`, so this costs the same for a
    /// rule set in 1990 as for one set today.
    public func next(after time: UnixTime, floatingZone: Zone) -> UnixTime? {
        let zone = zone(floatingZone: floatingZone)
        let excluded = Exclusions(self, zone: zone)
        var best: UnixTime?
        func consider(_ t: UnixTime) {
            if t > time, !excluded.contains(t), best.map({ t < $0 }) ?? true { best = t }
        }
        consider(startInstant ?? Self.instant(start, in: zone))
        for date in dates { consider(Self.instant(date, in: zone)) }
        for expansion in expansions {
            let limit = best.map { $0 - 1 } ?? Instant.latest.seconds
            guard time < limit else { continue }
            // The first that is not an EXDATE.
            expansion.forEach(zone: zone, after: time, through: limit) { t in
                if excluded.contains(t) { return true }
                consider(t)
                return false
            }
        }
        return best
    }

    /// The EXDATEs as instants; an EXDATE that is a DATE where DTSTART has a time takes out its
    /// whole day (as calendar programs mean it).
    struct Exclusions {
        var instants: Set<UnixTime> = []
        var days: Set<Int64> = []
        var zone: Zone

        init(_ recurrence: Recurrence, zone: Zone) {
            self.zone = zone
            for exception in recurrence.exceptions {
                if exception.isDate, !recurrence.start.isDate {
                    days.insert(exception.civil.dayNumber)
                } else {
                    instants.insert(Recurrence.instant(exception, in: zone))
                }
            }
        }

        func contains(_ t: UnixTime) -> Bool {
            if instants.contains(t) { return true }
            return !days.isEmpty && days.contains(zone.civil(at: t).dayNumber)
        }
    }
}

extension RecurrenceRule {
    /// This rule's occurrences from `start` (DTSTART's civil time, which counts as the first),
    /// as instants in `zone`, strictly after `after` and up to `limit`.
    func instants(start: CivilTime, zone: Zone, after: UnixTime? = nil, through limit: UnixTime, maximum: Int) -> [UnixTime] {
        var out: [UnixTime] = []
        RuleExpansion(self, start: start).forEach(zone: zone, after: after, through: limit) { t in
            out.append(t)
            return out.count < maximum
        }
        return out
    }
}

/// A rule made ready to expand from its DTSTART: RFC 5545's defaults filled in, and what every
/// period needs worked out once (a recurrence keeps one per RRULE, so asking for the next
/// occurrence of 100,000 alarms does no parsing or sorting).
struct RuleExpansion: Sendable {
    let rule: RecurrenceRule
    let start: CivilTime
    let startDay: Int64
    let unit: Int64
    let subDailyBase: Int64
    let firstWeek: Int64
    /// Nothing can ever match (BYSETPOS beyond any period's size, times the steps never reach).
    let never: Bool
    /// The times of day of a daily or coarser rule, the same in every period.
    let fixedTimes: [Int]
    let months: [Int]
    let yearDays: [Int]
    let weekNumbers: [Int]
    let hours: [Int], minutes: [Int], seconds: [Int]
    /// Where a COUNT rule's last occurrence is kept once found (nil for a rule without COUNT).
    private let countEndFound: CountEnd?

    init(_ unresolved: consuming RecurrenceRule, start: CivilTime) {
        var rule = unresolved
        rule.resolve(start: start)
        self.start = start
        startDay = start.dayNumber
        let startSecond = Int64(start.hour * 3600 + start.minute * 60 + start.second)
        unit = rule.frequency == .hourly ? 3600 : rule.frequency == .minutely ? 60 : 1
        subDailyBase = startDay * 86_400 + startSecond / unit * unit
        firstWeek = startDay - Int64((isoWeekday(startDay) - rule.weekStart + 7) % 7)
        never = rule.bySetPosNeverChooses || !rule.reachesItsTimes(from: Int(startSecond))
        let coarse = rule.frequency == .yearly || rule.frequency == .monthly || rule.frequency == .weekly || rule.frequency == .daily
        fixedTimes = coarse ? rule.times() : []
        months = rule.byMonth.isEmpty || !rule.byWeekNo.isEmpty || !rule.byYearDay.isEmpty ? RecurrenceRule.everyMonth : sortedUnique(rule.byMonth)
        yearDays = sortedUnique(rule.byYearDay)
        weekNumbers = sortedUnique(rule.byWeekNo)
        // A leap second (BYSECOND=60, which RFC 5545 allows) is read as 59, as `times()` reads it:
        // Unix time has no second 60, and a SECONDLY rule looking for one would search to 2199.
        let leapFree = rule.bySecond.contains(60) ? sortedUnique(rule.bySecond.map { min($0, 59) }) : rule.bySecond
        (hours, minutes, seconds) = (sortedUnique(rule.byHour), sortedUnique(rule.byMinute), sortedUnique(leapFree))
        countEndFound = rule.count == nil ? nil : CountEnd()
        // Kept last, moved rather than copied (a rule is nine arrays: a copy retains each).
        self.rule = consume rule
    }

    /// A COUNT rule's last occurrence, as a local time (Int64.max: it has fewer before 2199); nil
    /// for a rule without COUNT, and at a COUNT rule's first search (which walks from DTSTART as
    /// far as it needs, usually less than to the end). Found at the second, once: from then on the
    /// next occurrence is searched from the period holding the time asked about, never walked to
    /// from DTSTART again. Reading a rule stays cheap, and so does asking once.
    var countEnd: Int64? {
        guard let countEndFound, let count = rule.count else { return nil }
        let known: Int64?? = countEndFound.value.withLock { state in
            if state.searches == 0 {
                state.searches = 1
                return .some(nil)
            }
            return state.end.map { .some($0) }
        }
        if let known { return known }
        // COUNT counts local times from DTSTART, whatever the zone: walked once in UTC, where an
        // instant is its local time (to two days past the last instant a zone can reach).
        var last = start.localSeconds
        var found = 1  // DTSTART
        walk(zone: .utc, after: nil, through: Instant.latest.seconds + 172_800, countEnd: nil) { local in
            last = local
            found += 1
            return true
        }
        let end = found >= count ? last : Int64.max
        countEndFound.value.withLock { $0.end = end }
        return end
    }

    /// Calls `body` with each occurrence after DTSTART, as instants in `zone`, strictly after
    /// `after` and up to `limit`, in order, while it returns true.
    ///
    /// A period's candidates are its matching days × the times of day, both sorted, never listed
    /// one by one: BYSETPOS picks from them by position, so `FREQ=YEARLY` with every hour, minute
    /// and second costs its days and its times, not their product.
    func forEach(zone: Zone, after: UnixTime?, through limit: UnixTime, _ body: (UnixTime) -> Bool) {
        guard !never else { return }
        walk(zone: zone, after: after, through: limit, countEnd: countEnd, body)
    }

    /// `forEach`, with a COUNT rule's end given (nil: counted from DTSTART).
    private func walk(zone: Zone, after: UnixTime?, through limit: UnixTime, countEnd: Int64?, _ body: (UnixTime) -> Bool) {
        guard !never else { return }
        // A COUNT rule whose end is known is searched as one without COUNT, up to that end.
        let count = countEnd == nil ? rule.count : nil
        let (interval, monthDays) = (rule.interval, rule.byMonthDay)
        let untilInstant: UnixTime? = rule.until.map { Recurrence.instant($0, in: zone) }
        if let untilInstant, let after, untilInstant <= after { return }
        var emitted = 1  // DTSTART, which `occurrences` adds
        // Which period, counted from DTSTART's in steps of INTERVAL. Without COUNT nothing before
        // the period holding `after`'s wall-clock time needs to be looked at: an earlier local time
        // is an earlier instant, except one a DST change skipped, which is read with the offset
        // before the gap (so the search starts at the smaller offset of the last two days).
        var period = 0
        var skipBelow = start.localSeconds + 1  // local times below this cannot be wanted
        if let after {
            let local = after + Int64(min(zone.offset(at: after), zone.offset(at: after - 172_800)))
            if count == nil {
                period = rule.period(holding: local, startYear: start.year, startMonth: start.month, startDay: startDay,
                                     firstWeek: firstWeek, subDailyBase: subDailyBase, unit: unit)
                skipBelow = max(skipBelow, local)
            }
        }
        var emptyPeriods = 0
        let lastYear = civilFromDays(limit.floorDivided(by: 86_400) + 2).year + 1
        var days: [Int64] = []  // the period's matching days, sorted
        days.reserveCapacity(8)
        var periodTimes: [Int] = []  // a sub-daily period's times of day
        var chosen: [Int64] = []  // what BYSETPOS picks, as local times

        /// Adds each of the `length` days from `first` that pass the day parts.
        func addDays(_ first: Int64, _ length: Int) {
            var (year, month, dayOfMonth) = civilFromDays(first)
            var monthLength = daysInMonth(year, month)
            for day in first..<first + Int64(length) {
                if rule.dayMatches(day, year: year, month: month, dayOfMonth: dayOfMonth) { days.append(day) }
                dayOfMonth += 1
                if dayOfMonth > monthLength {
                    dayOfMonth = 1
                    month += 1
                    if month > 12 { (year, month) = (year + 1, 1) }
                    monthLength = daysInMonth(year, month)
                }
            }
        }
        /// The days of a month that can match: those BYMONTHDAY names, or all of them.
        func addMonth(_ year: Int, _ month: Int) {
            let first = daysFromCivil(year, month, 1)
            let length = daysInMonth(year, month)
            guard !monthDays.isEmpty else { return addDays(first, length) }
            let before = days.count
            for named in monthDays {
                let dayOfMonth = named > 0 ? named : length + 1 + named
                guard dayOfMonth >= 1, dayOfMonth <= length else { continue }
                let day = first + Int64(dayOfMonth - 1)
                if rule.dayMatches(day, year: year, month: month, dayOfMonth: dayOfMonth) { days.append(day) }
            }
            if monthDays.count > 1 { sortUnique(&days, from: before) }
        }
        /// Hands over one candidate (local seconds); false when the expansion is over.
        func emit(_ local: Int64) -> Bool {
            if local < skipBelow { return true }  // DTSTART, what comes before it, and before `after`
            if let countEnd, local > countEnd { return false }
            let t = Recurrence.instant(local: local, in: zone)
            if let untilInstant, t > untilInstant { return false }
            if t > limit { return false }
            emitted += 1
            if after.map({ t > $0 }) ?? true, !body(t) { return false }
            return emitted < (count ?? Int.max)
        }

        while emitted < (count ?? Int.max) {
            days.removeAll(keepingCapacity: true)
            var times = fixedTimes
            switch rule.frequency {
            case .yearly:
                let year = start.year + period * interval
                if year > lastYear { return }
                let yearStart = daysFromCivil(year, 1, 1)
                let yearLength = isLeapYear(year) ? 366 : 365
                if !yearDays.isEmpty {
                    // Only the days of the year it names.
                    for named in yearDays {
                        let day = named > 0 ? named : yearLength + 1 + named
                        if day >= 1, day <= yearLength { addDays(yearStart + Int64(day - 1), 1) }
                    }
                    sortUnique(&days, from: 0)
                } else if !weekNumbers.isEmpty {
                    // Only the weeks it names, within the year.
                    let weekOne = rule.firstWeekStart(year)
                    let nextWeekOne = rule.firstWeekStart(year + 1)
                    let yearEnd = yearStart + Int64(yearLength)
                    let weeks = Int((nextWeekOne - weekOne) / 7)
                    // The year's first days may be in the last week of the year before, its last days
                    // in week 1 of the next: those days count with those weeks' numbers.
                    if yearStart < weekOne { addDays(yearStart, Int(weekOne - yearStart)) }
                    for named in weekNumbers {
                        let week = named > 0 ? named : weeks + 1 + named
                        guard week >= 1, week <= weeks else { continue }
                        let from = max(weekOne + Int64((week - 1) * 7), yearStart)
                        let to = min(weekOne + Int64(week * 7), yearEnd)
                        if from < to { addDays(from, Int(to - from)) }
                    }
                    if nextWeekOne < yearEnd { addDays(nextWeekOne, Int(yearEnd - nextWeekOne)) }
                    sortUnique(&days, from: 0)
                } else {
                    // Only the months it names can hold a match.
                    for month in months { addMonth(year, month) }
                }
            case .monthly:
                let months = start.year * 12 + (start.month - 1) + period * interval
                let (year, month) = (months / 12, months % 12 + 1)
                if year > lastYear { return }
                addMonth(year, month)
            case .weekly:
                let first = firstWeek + Int64(period * interval * 7)
                if civilFromDays(first).year > lastYear { return }
                addDays(first, 7)
            case .daily:
                let day = startDay + Int64(period * interval)
                let (year, month, _) = civilFromDays(day)
                if year > lastYear { return }
                if !rule.byMonth.isEmpty, !rule.byMonth.contains(month) {
                    // On to the first day of the next month, in steps of INTERVAL days.
                    let next = month == 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1)
                    period += max(1, Int((next - day + Int64(interval) - 1) / Int64(interval)))
                    continue
                }
                addDays(day, 1)
            case .hourly, .minutely, .secondly:
                let local = subDailyBase + Int64(period) * Int64(interval) * unit
                let day = local.floorDivided(by: 86_400)
                let (year, month, dayOfMonth) = civilFromDays(day)
                if year > lastYear { return }
                let second = Int(local - day * 86_400)
                // A month, a day, an hour or a minute that cannot match is skipped whole, to the next
                // one that can (the periods are steps of INTERVAL units: the first at or after it).
                let (hour, minute, secondOfMinute) = (second / 3600, second / 60 % 60, second % 60)
                /// The next value of `allowed` after `value`, as seconds from `value`'s start, or nil.
                func following(_ allowed: [Int], _ value: Int, _ size: Int) -> Int? {
                    allowed.first { $0 > value }.map { ($0 - value) * size }
                }
                var next: Int64?
                if !rule.byMonth.isEmpty, !rule.byMonth.contains(month) {
                    next = (month == 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1)) * 86_400
                } else if !rule.dayMatches(day, year: year, month: month, dayOfMonth: dayOfMonth) {
                    next = (day + 1) * 86_400
                } else if !hours.isEmpty, !hours.contains(hour) {
                    next = following(hours, hour, 3600).map { local - Int64(second % 3600) + Int64($0) } ?? (day + 1) * 86_400
                } else if rule.frequency != .hourly, !minutes.isEmpty, !minutes.contains(minute) {
                    let hourStart = local - Int64(second % 3600)
                    next = following(minutes, minute, 60).map { local - Int64(second % 60) + Int64($0) } ?? hourStart + 3600
                } else if rule.frequency == .secondly, !seconds.isEmpty, !seconds.contains(secondOfMinute) {
                    next = following(seconds, secondOfMinute, 1).map { local + Int64($0) } ?? local - Int64(secondOfMinute) + 60
                }
                if let next {
                    let step = Int64(interval) * unit
                    period += max(1, Int((next - local + step - 1) / step))
                    continue
                }
                days.append(day)
                // The period's own hour (and minute, and second), at the finer parts' values.
                periodTimes.removeAll(keepingCapacity: true)
                let hourStart = hour * 3600
                switch rule.frequency {
                case .hourly:
                    for m in minutes.isEmpty ? [minute] : minutes {
                        for s in seconds.isEmpty ? [secondOfMinute] : seconds { periodTimes.append(hourStart + m * 60 + min(s, 59)) }
                    }
                    sortUnique(&periodTimes, from: 0)
                case .minutely:
                    for s in seconds.isEmpty ? [secondOfMinute] : seconds { periodTimes.append(hourStart + minute * 60 + min(s, 59)) }
                    sortUnique(&periodTimes, from: 0)
                default:
                    periodTimes.append(second)
                }
                times = periodTimes
            }
            period += 1
            guard !days.isEmpty, !times.isEmpty else {
                emptyPeriods += 1
                if emptyPeriods > 100_000 { return }  // a rule that matches nothing more (FEB 30)
                continue
            }
            if rule.bySetPos.isEmpty {
                for day in days {
                    for time in times where !emit(day * 86_400 + Int64(time)) { return }
                }
                emptyPeriods = 0
            } else {
                // Positions in the period's candidates, which are days × times in order.
                let n = days.count * times.count
                chosen.removeAll(keepingCapacity: true)
                for position in rule.bySetPos {
                    let index = position > 0 ? position - 1 : n + position
                    guard index >= 0, index < n else { continue }
                    chosen.append(days[index / times.count] * 86_400 + Int64(times[index % times.count]))
                }
                sortUnique(&chosen, from: 0)
                if chosen.isEmpty {
                    emptyPeriods += 1
                    if emptyPeriods > 100_000 { return }
                    continue
                }
                emptyPeriods = 0
                for local in chosen where !emit(local) { return }
            }
        }
    }
}

/// Sorts `values` from `index` on, and drops repeats (day 5 and day -27 of a 31-day month).
func sortUnique<T: Comparable>(_ values: inout [T], from index: Int) {
    guard values.count - index > 1 else { return }
    values[index...].sort()
    var kept = index + 1
    for i in index + 1..<values.count where values[i] != values[kept - 1] {
        values[kept] = values[i]
        kept += 1
    }
    values.removeLast(values.count - kept)
}

extension RecurrenceRule {

    /// Whether BYSETPOS asks only for positions beyond the most candidates a period can have
    /// (`FREQ=MINUTELY;BYSETPOS=3`: a minute has one time): such a rule never fires.
    var bySetPosNeverChooses: Bool {
        guard !bySetPos.isEmpty else { return false }
        func distinct(_ values: [Int], _ all: Int) -> Int { values.isEmpty ? all : sortedUnique(values).count }
        let seconds = distinct(bySecond, 60)
        let perDay = distinct(byHour, 24) * distinct(byMinute, 60) * seconds
        // The most days a period can hold: each part that limits days bounds them.
        var days: Int = switch frequency {
        case .secondly, .minutely, .hourly, .daily: 1
        case .weekly: 7
        case .monthly: 31
        case .yearly: 366
        }
        if !byMonthDay.isEmpty { days = min(days, sortedUnique(byMonthDay).count * (frequency == .yearly ? 12 : 1)) }
        if !byYearDay.isEmpty { days = min(days, sortedUnique(byYearDay).count) }
        if !byWeekNo.isEmpty { days = min(days, 7 * sortedUnique(byWeekNo).count) }
        if !byDay.isEmpty {
            // An ordinal names one day in each month (of BYMONTH's, in a year) or in the year.
            let perOrdinal = frequency == .yearly && !byMonth.isEmpty ? sortedUnique(byMonth).count : 1
            let perWeekday = frequency == .weekly ? 1 : frequency == .monthly ? 5 : 53
            days = min(days, Set(byDay).reduce(0) { $0 + ($1.ordinal == nil ? perWeekday : perOrdinal) })
        }
        let most: Int = switch frequency {
        case .secondly: 1
        case .minutely: seconds
        case .hourly: distinct(byMinute, 60) * seconds
        default: days * perDay
        }
        return !bySetPos.contains { abs($0) <= most }
    }

    /// Whether a sub-daily rule's steps reach a time of day its BYHOUR, BYMINUTE and BYSECOND
    /// allow. Its periods start at DTSTART's plus multiples of INTERVAL units, so within a day at
    /// DTSTART's plus multiples of gcd(step, one day): `FREQ=HOURLY;INTERVAL=2;BYHOUR=3` from
    /// 04:00 never fires, and is known not to without searching to 2199.
    func reachesItsTimes(from startSecond: Int) -> Bool {
        let unit = frequency == .hourly ? 3600 : frequency == .minutely ? 60 : frequency == .secondly ? 1 : 0
        guard unit > 0 else { return true }
        var a = interval * unit % 86_400
        var b = 86_400
        while a != 0 { (a, b) = (b % a, a) }
        let step = b  // gcd(INTERVAL × unit, 86,400)
        if step == 1 { return true }
        for hour in byHour.isEmpty ? Self.everyHour : byHour {
            for minute in byMinute.isEmpty ? Self.everyMinute : byMinute {
                for second in bySecond.isEmpty ? Self.everyMinute : bySecond {
                    // The period (hour, minute or second) that holds this time.
                    let period = (hour * 3600 + minute * 60 + min(second, 59)) / unit * unit
                    if (period - startSecond / unit * unit) % step == 0 { return true }
                }
            }
        }
        return false
    }

    /// The period (from DTSTART's, in steps of INTERVAL) that holds the local time `local`, or 0.
    func period(holding local: Int64, startYear: Int, startMonth: Int, startDay: Int64, firstWeek: Int64,
                subDailyBase: Int64, unit: Int64) -> Int {
        let day = local.floorDivided(by: 86_400)
        let (year, month, _) = civilFromDays(day)
        let steps: Int64 = switch frequency {
        case .yearly: Int64(year - startYear) / Int64(interval)
        case .monthly: Int64((year * 12 + month) - (startYear * 12 + startMonth)) / Int64(interval)
        case .weekly: (day - firstWeek).floorDivided(by: 7 * Int64(interval))
        case .daily: (day - startDay).floorDivided(by: Int64(interval))
        case .hourly, .minutely, .secondly: (local - subDailyBase).floorDivided(by: unit * Int64(interval))
        }
        return Int(max(0, steps))
    }
}

extension RecurrenceRule {
    /// Arrays of one value, 0 to 366, made once: most parts of most rules hold one value, and a
    /// rule read or resolved shares these instead of allocating its own.
    private static let ones: [[Int]] = (0...366).map { [$0] }

    /// `[value]`, shared where it is one of `ones`.
    @inline(__always) static func one(_ value: Int) -> [Int] { value >= 0 && value <= 366 ? ones[value] : [value] }

    static let everyHour = Array(0..<24)
    static let everyMinute = Array(0..<60)
    static let everyMonth = Array(1...12)
}

/// `values` sorted, each once: the array itself (no copy) when it is so already, as a rule's parts
/// mostly are.
func sortedUnique(_ values: [Int]) -> [Int] {
    var ordered = true
    for i in values.indices.dropFirst() where values[i - 1] >= values[i] {
        ordered = false
        break
    }
    if ordered { return values }
    var out = values.sorted()
    var kept = 0
    for i in out.indices where kept == 0 || out[kept - 1] != out[i] {
        out[kept] = out[i]
        kept += 1
    }
    out.removeLast(out.count - kept)
    return out
}

/// A COUNT rule's last occurrence, once found, and whether it was searched before (shared by the
/// copies of the rule).
final class CountEnd: Sendable {
    struct State {
        var searches = 0
        var end: Int64?
    }
    let value = Mutex(State())
}
