// German: the words the grammar reads (`PhraseVocabulary`, each with what it means) and the words
// said back (`PhraseBook`). (`am` is English's a.m. too: before a day, the grammar reads it as `on`.)

extension PhraseVocabulary {
    static let german = PhraseVocabulary(.german) { w in
        w.ordinalSuffixes = ["."]
        w.numbered([["montag", "mo"], ["dienstag", "di"], ["mittwoch", "mi"], ["donnerstag", "do"], ["freitag", "fr"],
                    ["samstag", "sonnabend", "sa"], ["sonntag", "so"]], PhraseWord.weekday)
        w.numbered([["montags"], ["dienstags"], ["mittwochs"], ["donnerstags"], ["freitags"], ["samstags", "sonnabends"], ["sonntags"]],
                   PhraseWord.weekdays)
        w.numbered([["januar", "jänner", "jaenner", "jan"], ["februar", "feb"], ["märz", "maerz", "mär"], ["april", "apr"], ["mai"],
                    ["juni"], ["juli"], ["august", "aug"], ["september", "sep", "sept"], ["oktober", "okt"], ["november", "nov"],
                    ["dezember", "dez"]], PhraseWord.monthName)
        w.numbered([["erste", "ersten", "erster", "erstes"], ["zweite", "zweiten", "zweiter", "zweites"], ["dritte", "dritten", "dritter", "drittes"],
                    ["vierte", "vierten", "vierter", "viertes"], ["fünfte", "fünften", "fuenfte", "fuenften"]], PhraseWord.ordinal)
        w.numbered([["ein", "eine", "einen", "einer", "einem"], ["zwei"], ["drei"], ["vier"], ["fünf", "fuenf"], ["sechs"], ["sieben"],
                    ["acht"], ["neun"], ["zehn"], ["elf"], ["zwölf", "zwoelf"]], PhraseWord.number)
        w.add(["minute", "minuten", "min"], .unit(.minute))
        w.add(["stunde", "stunden"], .unit(.hour))
        w.add(["tage", "tagen"], .unit(.day))
        w.add(["wochen"], .unit(.week))
        w.add(["monate", "monaten"], .unit(.month))
        w.add(["jahre", "jahren"], .unit(.year))
        w.add(["tag"], .day)
        w.add(["woche"], .week)
        w.add(["monat", "monats"], .month)
        w.add(["jahr", "jahres"], .year)
        w.add(["heute"], .today)
        w.add(["morgen"], .tomorrow, or: .morning)  // `jeden Morgen`
        w.add(["übermorgen", "uebermorgen"], .dayAfterTomorrow)
        w.add(["nächsten", "nächster", "nächste", "naechsten", "naechster", "naechste", "kommenden", "kommender", "kommende"], .next)
        w.add(["jeden", "jede", "jedes", "alle", "allen"], .every)
        w.add(["letzten", "letzter", "letzte", "letztes"], .last)
        w.add(["täglich", "taeglich"], .daily)
        w.add(["wöchentlich", "woechentlich"], .weekly)
        w.add(["monatlich"], .monthly)
        w.add(["jährlich", "jaehrlich"], .yearly)
        w.add(["anderthalb", "eineinhalb"], .oneAndAHalf)
        w.add(["werktags", "wochentags", "werktag", "werktage", "wochentag"], .workdays)
        w.add(["wochenende", "wochenenden"], .weekend)
        w.add(["am"], .am)
        w.part(["morgens", "früh", "frueh", "vormittags"], .morning, at: 9)
        w.part(["nachmittag", "nachmittags"], .evening, at: 12)
        w.part(["abends", "abend"], .evening, at: 19)
        w.part(["nacht", "nachts"], .evening, at: 22)
        w.add(["mittag", "mittags"], .noon)
        w.add(["mitternacht"], .midnight)
        w.add(["uhr"], .oclock)
        w.add(["um"], .at)
        w.add(["in"], .inWord)
        w.add(["im", "des"], .of)
        w.add(["der", "die", "das", "den", "dem"], .the)
        w.add(["und"], .and)
        w.add(["jetzt"], .now)
        w.add(["halb", "halbe", "halben"], .half)
        w.add(["viertel"], .quarter)
        w.add(["dreiviertel"], .threeQuarters)
        w.add(["nach"], .past)
        w.add(["vor", "bis"], .to)
        w.add(["ab"], .from)
    }
}

struct GermanBook: PhraseBook {
    func say(_ problem: PhraseProblem) -> String {
        switch problem {
        case .notAWord(let word, let nearest): "„\(word)“ ist kein Wort, das chime kennt" + (nearest.map { "; meinten Sie „\($0)“?" } ?? "")
        case .atWhatTime(let example): "um welche Uhrzeit? z. B. „\(example)“"
        case .hasPassed(let date, let time): "\(date) \(time) ist vorbei"
        case .sayWhen(let once, let repeating): "sagen Sie, wann, z. B. „\(once)“ oder „\(repeating)“"
        case .second(.time): "eine zweite Uhrzeit"
        case .second(.day): "ein zweiter Tag"
        case .second(.repetition): "eine zweite Wiederholung"
        case .second(.start): "ein zweiter Beginn"
        case .notUnderstoodHere(let word): "„\(word)“ ergibt hier keinen Sinn"
        }
    }

    let dayNames = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
    static let months = ["Jan", "Feb", "März", "Apr", "Mai", "Juni", "Juli", "Aug", "Sep", "Okt", "Nov", "Dez"]
    let and = " und "

    func date(_ day: CivilTime) -> String { "\(dayNames[day.weekday - 1].prefix(2)) \(day.day). \(Self.months[day.month - 1]) \(day.year)" }
    func at(_ hour: Int, _ minute: Int) -> String { "um " + clock(hour, minute) }
    func once(_ date: CivilTime) -> String { "am " + self.date(date) + " " + at(date.hour, date.minute) }

    let unitNames: [(one: String, many: String)] = [("Tag", "Tage"), ("Stunde", "Stunden"), ("Minute", "Minuten"), ("Sekunden", "Sekunden")]

    func after(_ duration: String) -> String { "in " + duration }
    func every(_ duration: String) -> String { "alle " + duration }
    func since(_ date: CivilTime) -> String { ", ab " + self.date(date) }
    let exampleOnce = "morgen um 07:00"
    let exampleRepeating = "jeden Montag um 09:00"

    func ordinal(_ n: Int) -> String { n == -1 ? "letzten" : ["ersten", "zweiten", "dritten", "vierten", "fünften"][max(0, min(4, n - 1))] }

    func repeating(_ repeating: PhraseMeaning.Repeat, at: String, from: String) -> String {
        switch repeating {
        case .days(let n):
            return (n == 1 ? "jeden Tag " : "alle \(n) Tage ") + at + from
        case .weekdays(let days, let n):
            let sorted = days.sorted()
            if n == 2 { return "jeden zweiten " + list(sorted) + " " + at + from }
            if n > 1 { return "alle \(n) Wochen am " + list(sorted) + " " + at + from }
            if sorted == [1, 2, 3, 4, 5] { return "werktags " + at + from }
            if sorted == [6, 7] { return "am Wochenende " + at + from }
            return "jeden " + list(sorted) + " " + at + from
        case .monthlyWeekdays(let ordinals, let weekday, let n):
            let which = "\(ordinals.map(ordinal).joined(separator: and)) \(dayNames[weekday - 1])"
            return n == 1 ? "am \(which) jedes Monats \(at)\(from)" : "alle \(n) Monate am \(which) \(at)\(from)"
        case .monthDay(let day, let n):
            let which = day == -1 ? "letzten Tag" : "\(day)."
            return n == 1 ? "am \(which) jedes Monats \(at)\(from)" : "alle \(n) Monate am \(which) \(at)\(from)"
        case .yearly(let month, let day):
            return "jedes Jahr am \(day).\(month). \(at)"
        case .everyUnit(let unit, let n):
            return "alle \(n) \(unit == .week ? "Wochen" : unit == .month ? "Monate" : "Jahre") " + at + from
        case .interval:
            return at
        }
    }
}
