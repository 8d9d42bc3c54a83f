// English: the words the grammar reads (`PhraseVocabulary`, each with what it means) and the words
// said back (`PhraseBook`).

extension PhraseVocabulary {
    static let english = PhraseVocabulary(.english) { w in
        w.ordinalSuffixes = ["st", "nd", "rd", "th"]
        w.dayFirst = false  // 12/24/2026
        w.numbered([["monday", "mon"], ["tuesday", "tue", "tues"], ["wednesday", "wed"], ["thursday", "thu", "thur", "thurs"],
                    ["friday", "fri"], ["saturday", "sat"], ["sunday", "sun"]], PhraseWord.weekday)
        w.numbered([["mondays"], ["tuesdays"], ["wednesdays"], ["thursdays"], ["fridays"], ["saturdays"], ["sundays"]], PhraseWord.weekdays)
        w.numbered([["january", "jan"], ["february", "feb"], ["march", "mar"], ["april", "apr"], ["may"], ["june", "jun"],
                    ["july", "jul"], ["august", "aug"], ["september", "sep", "sept"], ["october", "oct"], ["november", "nov"],
                    ["december", "dec"]], PhraseWord.monthName)
        w.numbered([["first"], ["second"], ["third"], ["fourth"], ["fifth"]], PhraseWord.ordinal)
        w.numbered([["one", "a", "an"], ["two"], ["three"], ["four"], ["five"], ["six"], ["seven"], ["eight"], ["nine"], ["ten"],
                    ["eleven"], ["twelve"]], PhraseWord.number)
        w.add(["minute", "minutes", "min", "mins"], .unit(.minute))
        w.add(["hour", "hours", "hr", "hrs"], .unit(.hour))
        w.add(["days"], .unit(.day))
        w.add(["weeks"], .unit(.week))
        w.add(["months"], .unit(.month))
        w.add(["years"], .unit(.year))
        w.add(["day"], .day)
        w.add(["week"], .week)
        w.add(["month"], .month)
        w.add(["year"], .year)
        w.add(["today"], .today)
        w.add(["tomorrow"], .tomorrow)
        w.add(["next"], .next)
        w.add(["every", "each"], .every)
        w.add(["other"], .other)
        w.add(["last"], .last)
        w.add(["daily", "everyday"], .daily)
        w.add(["weekly"], .weekly)
        w.add(["monthly"], .monthly)
        w.add(["yearly", "annually"], .yearly)
        w.add(["weekday", "weekdays", "workday", "workdays"], .workdays)
        w.add(["weekend", "weekends"], .weekend)
        w.add(["am", "a.m."], .am)
        w.add(["pm", "p.m."], .pm)
        w.part(["morning"], .morning, at: 9)
        w.part(["afternoon"], .evening, at: 12)
        w.part(["evening"], .evening, at: 19)
        w.part(["night", "tonight"], .evening, at: 22)
        w.add(["noon", "midday"], .noon)
        w.add(["midnight"], .midnight)
        w.add(["teatime"], .teatime)
        w.add(["o'clock", "oclock"], .oclock)
        w.add(["at", "@"], .at)
        w.add(["on"], .on)
        w.add(["in"], .inWord)
        w.add(["of", "every-month"], .of)
        w.add(["the"], .the)
        w.add(["and", "&"], .and)
        w.add(["now"], .now)
        w.add(["+"], .plus)
        w.add(["half"], .half)
        w.add(["quarter"], .quarter)
        w.add(["past"], .past)
        w.add(["to", "through", "thru"], .to)
        w.add(["after"], .after)
        w.add(["from", "starting"], .from)
    }
}

struct EnglishBook: PhraseBook {
    func say(_ problem: PhraseProblem) -> String {
        switch problem {
        case .notAWord(let word, let nearest): "'\(word)' is not a word chime knows" + (nearest.map { "; did you mean '\($0)'?" } ?? "")
        case .atWhatTime(let example): "at what time? e.g. '\(example)'"
        case .hasPassed(let date, let time): "\(date) \(time) has passed"
        case .sayWhen(let once, let repeating): "say when, e.g. '\(once)' or '\(repeating)'"
        case .second(.time): "a second time of day"
        case .second(.day): "a second day"
        case .second(.repetition): "a second repetition"
        case .second(.start): "a second start"
        case .notUnderstoodHere(let word): "'\(word)' is not understood here"
        }
    }

    let dayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let and = " and "

    func date(_ day: CivilTime) -> String { "\(dayNames[day.weekday - 1].prefix(3)) \(day.day) \(Self.months[day.month - 1]) \(day.year)" }
    func at(_ hour: Int, _ minute: Int) -> String { "at " + clock(hour, minute) }
    func once(_ date: CivilTime) -> String { "on " + self.date(date) + " " + at(date.hour, date.minute) }

    let unitNames: [(one: String, many: String)] = [("day", "days"), ("hour", "hours"), ("minute", "minutes"), ("seconds", "seconds")]

    func after(_ duration: String) -> String { "in " + duration }
    func every(_ duration: String) -> String { "every " + duration }
    func since(_ date: CivilTime) -> String { ", from " + self.date(date) }
    let exampleOnce = "tomorrow 07:00"
    let exampleRepeating = "every monday 09:00"

    func ordinal(_ n: Int) -> String { n == -1 ? "last" : ["first", "second", "third", "fourth", "fifth"][max(0, min(4, n - 1))] }

    func repeating(_ repeating: PhraseMeaning.Repeat, at: String, from: String) -> String {
        switch repeating {
        case .days(let n):
            return (n == 1 ? "every day " : "every \(n) days ") + at + from
        case .weekdays(let days, let n):
            let sorted = days.sorted()
            if n > 1 { return "every \(n) weeks on " + list(sorted) + " " + at + from }
            if sorted == [1, 2, 3, 4, 5] { return "every weekday " + at + from }
            if sorted == [6, 7] { return "every weekend " + at + from }
            return "every " + list(sorted) + " " + at + from
        case .monthlyWeekdays(let ordinals, let weekday, let n):
            let which = "the " + ordinals.map(ordinal).joined(separator: and) + " " + dayNames[weekday - 1]
            return n == 1 ? "on \(which) of every month \(at)\(from)" : "every \(n) months on \(which) \(at)\(from)"
        case .monthDay(let day, let n):
            let which = day == -1 ? "the last day" : "the \(PhraseWords.englishOrdinal(day))"
            return n == 1 ? "on \(which) of every month \(at)\(from)" : "every \(n) months on \(which) \(at)\(from)"
        case .yearly(let month, let day):
            return "every year on \(day) \(Self.months[month - 1]) \(at)"
        case .everyUnit(let unit, let n):
            return "every \(n) \(unit == .week ? "weeks" : unit == .month ? "months" : "years") " + at + from
        case .interval:
            return at
        }
    }
}
