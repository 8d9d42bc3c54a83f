// French: the words the grammar reads (`PhraseVocabulary`, each with what it means) and the words
// said back (`PhraseBook`). `demain à 7h`, `tous les lundis et jeudis à 18h`, `le 15 de chaque mois
// à midi`, `dans 10 minutes`, `chaque dernier vendredi du mois à 16h35`, `en semaine à 6h45`.

extension PhraseVocabulary {
    static let french = PhraseVocabulary(.french) { w in
        w.ordinalSuffixes = ["er", "re", "e", "ème", "eme"]
        w.numbered([["lundi", "lun", "lun."], ["mardi", "mar", "mar."], ["mercredi", "mer", "mer."], ["jeudi", "jeu", "jeu."],
                    ["vendredi", "ven", "ven."], ["samedi", "sam", "sam."], ["dimanche", "dim", "dim."]], PhraseWord.weekday)
        w.numbered([["lundis"], ["mardis"], ["mercredis"], ["jeudis"], ["vendredis"], ["samedis"], ["dimanches"]], PhraseWord.weekdays)
        w.numbered([["janvier", "janv", "janv."], ["février", "févr", "févr.", "fév"], ["mars"], ["avril", "avr", "avr."], ["mai"], ["juin"],
                    ["juillet", "juil", "juil."], ["août"], ["septembre", "sept."], ["octobre", "oct."], ["novembre", "nov."],
                    ["décembre", "déc", "déc."]], PhraseWord.monthName)
        w.numbered([["premier", "première"], ["deuxième", "second", "seconde"], ["troisième"], ["quatrième"], ["cinquième"]], PhraseWord.ordinal)
        w.numbered([["un", "une"], ["deux"], ["trois"], ["quatre"], ["cinq"], ["six"], ["sept"], ["huit"], ["neuf"], ["dix"], ["onze"],
                    ["douze"]], PhraseWord.number)
        w.add(["minute", "minutes", "min"], .unit(.minute))
        // `dans 2 heures`, and `à 7 heures`: o'clock after an hour.
        w.add(["heure", "heures", "h"], .unit(.hour), or: .oclock)
        w.add(["jours"], .unit(.day))
        w.add(["semaines"], .unit(.week))
        w.add(["ans", "années"], .unit(.year))
        w.add(["jour", "journée"], .day)
        w.add(["semaine"], .week)
        w.add(["mois"], .month)
        w.add(["an", "année"], .year)
        w.add(["aujourd'hui"], .today)
        w.add(["demain"], .tomorrow)
        w.add(["après-demain"], .dayAfterTomorrow)
        w.add(["prochain", "prochaine"], .next)
        w.add(["chaque", "tous", "toutes"], .every)
        w.add(["dernier", "dernière"], .last)
        w.add(["quotidien", "quotidienne", "quotidiennement"], .daily)
        w.add(["hebdomadaire", "hebdomadairement"], .weekly)
        w.add(["mensuel", "mensuelle", "mensuellement"], .monthly)
        w.add(["annuel", "annuelle", "annuellement"], .yearly)
        w.add(["en semaine", "jours ouvrables", "jours ouvrés", "jours de semaine"], .workdays)
        w.add(["week-end", "week-ends", "weekend", "weekends", "fin de semaine", "fins de semaine"], .weekend)
        w.part(["matin", "matins", "matinée", "ce matin"], .morning, at: 9)
        w.part(["après-midi", "l'après-midi", "cet après-midi"], .evening, at: 12)
        w.part(["soir", "soirs", "soirée", "ce soir"], .evening, at: 19)
        w.part(["nuit", "nuits", "cette nuit"], .evening, at: 22)
        w.add(["midi"], .noon)
        w.add(["minuit"], .midnight)
        w.add(["pile"], .oclock)
        w.add(["à", "a"], .at)
        w.add(["le", "la", "les", "l'", "ce", "cet", "cette"], .the)
        w.add(["de", "du", "des", "d'"], .of)
        w.add(["dans", "d'ici", "en"], .inWord)
        w.add(["et"], .and)
        w.add(["maintenant"], .now)
        w.add(["demi", "demie"], .half)
        w.add(["quart"], .quarter)
        w.add(["moins"], .minus)
        w.add(["au", "jusqu'au"], .to)
        w.add(["à partir du", "à partir de", "dès", "depuis"], .from)
    }
}

struct FrenchBook: PhraseBook {
    func say(_ problem: PhraseProblem) -> String {
        switch problem {
        case .notAWord(let word, let nearest): "« \(word) » n'est pas un mot que chime connaît" + (nearest.map { " ; vouliez-vous dire « \($0) » ?" } ?? "")
        case .atWhatTime(let example): "à quelle heure ? p. ex. « \(example) »"
        case .hasPassed(let date, let time): "\(date) \(time) est passé"
        case .sayWhen(let once, let repeating): "dites quand, p. ex. « \(once) » ou « \(repeating) »"
        case .second(.time): "une deuxième heure"
        case .second(.day): "un deuxième jour"
        case .second(.repetition): "une deuxième répétition"
        case .second(.start): "un deuxième début"
        case .notUnderstoodHere(let word): "« \(word) » n'a pas de sens ici"
        }
    }

    let dayNames = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"]
    static let plural = ["lundis", "mardis", "mercredis", "jeudis", "vendredis", "samedis", "dimanches"]
    static let months = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"]
    let and = " et "

    /// `1er`, `2`, `15`: a day of the month.
    static func day(_ n: Int) -> String { n == 1 ? "1er" : "\(n)" }

    func date(_ day: CivilTime) -> String { "\(dayNames[day.weekday - 1]) \(Self.day(day.day)) \(Self.months[day.month - 1]) \(day.year)" }
    func at(_ hour: Int, _ minute: Int) -> String { "à " + clock(hour, minute) }
    func once(_ date: CivilTime) -> String { "le " + self.date(date) + " " + at(date.hour, date.minute) }

    let unitNames: [(one: String, many: String)] = [("jour", "jours"), ("heure", "heures"), ("minute", "minutes"), ("seconde", "secondes")]

    func after(_ duration: String) -> String { "dans " + duration }
    func every(_ duration: String) -> String { (duration.contains("jour") ? "tous les " : "toutes les ") + duration }
    func since(_ date: CivilTime) -> String { ", à partir du " + self.date(date) }
    let exampleOnce = "demain à 07:00"
    let exampleRepeating = "tous les lundis à 09:00"

    func ordinal(_ n: Int) -> String { n == -1 ? "dernier" : ["premier", "deuxième", "troisième", "quatrième", "cinquième"][max(0, min(4, n - 1))] }

    func repeating(_ repeating: PhraseMeaning.Repeat, at: String, from: String) -> String {
        switch repeating {
        case .days(let n):
            return (n == 1 ? "tous les jours " : "tous les \(n) jours ") + at + from
        case .weekdays(let days, let n):
            let sorted = days.sorted()
            if n > 1 { return "toutes les \(n) semaines le " + list(sorted) + " " + at + from }
            if sorted == [1, 2, 3, 4, 5] { return "en semaine " + at + from }
            if sorted == [6, 7] { return "le week-end " + at + from }
            return "tous les " + list(sorted, names: Self.plural) + " " + at + from
        case .monthlyWeekdays(let ordinals, let weekday, let n):
            let which = "le " + ordinals.map(ordinal).joined(separator: and) + " " + dayNames[weekday - 1]
            return n == 1 ? "\(which) de chaque mois \(at)\(from)" : "tous les \(n) mois \(which) \(at)\(from)"
        case .monthDay(let day, let n):
            let which = day == -1 ? "le dernier jour" : "le \(Self.day(day))"
            return n == 1 ? "\(which) de chaque mois \(at)\(from)" : "tous les \(n) mois \(which) \(at)\(from)"
        case .yearly(let month, let day):
            return "tous les ans le \(Self.day(day)) \(Self.months[month - 1]) \(at)"
        case .everyUnit(let unit, let n):
            return (unit == .week ? "toutes les \(n) semaines " : unit == .month ? "tous les \(n) mois " : "tous les \(n) ans ") + at + from
        case .interval:
            return at
        }
    }
}
