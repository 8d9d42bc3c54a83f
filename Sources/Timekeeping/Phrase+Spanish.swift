// Spanish: the words the grammar reads (`PhraseVocabulary`, each with what it means) and the words
// said back (`PhraseBook`). `mañana a las 7`, `cada lunes a las 9`, `el 15 de cada mes a mediodía`,
// `dentro de 2 horas`, `de lunes a viernes a las 6:45`, `el último viernes de cada mes a las 16:35`.

extension PhraseVocabulary {
    static let spanish = PhraseVocabulary(.spanish) { w in
        w.ordinalSuffixes = ["º", "ª", ".º", ".ª"]
        w.numbered([["lunes", "lun", "lun."], ["martes", "mar", "mar."], ["miércoles", "mié", "mié."], ["jueves", "jue", "jue."],
                    ["viernes", "vie", "vie."], ["sábado", "sáb", "sáb."], ["domingo", "dom", "dom."]], PhraseWord.weekday)
        // (`los lunes`: the plural of lunes to viernes is the singular.)
        w.numbered([[], [], [], [], [], ["sábados"], ["domingos"]], PhraseWord.weekdays)
        w.numbered([["enero", "ene", "ene."], ["febrero", "feb."], ["marzo"], ["abril", "abr", "abr."], ["mayo"], ["junio"], ["julio"],
                    ["agosto", "ago", "ago."], ["septiembre", "setiembre", "sept.", "sep."], ["octubre", "oct."], ["noviembre", "nov."],
                    ["diciembre", "dic", "dic."]], PhraseWord.monthName)
        w.numbered([["primer", "primero", "primera"], ["segundo", "segunda"], ["tercer", "tercero", "tercera"], ["cuarta"], ["quinto", "quinta"]],
                   PhraseWord.ordinal)
        // `las 7 y cuarto`, and `el cuarto jueves`: a quarter, or the fourth.
        w.add(["cuarto"], .quarter, or: .ordinal(4))
        w.numbered([["un", "una", "uno"], ["dos"], ["tres"], ["cuatro"], ["cinco"], ["seis"], ["siete"], ["ocho"], ["nueve"], ["diez"],
                    ["once"], ["doce"]], PhraseWord.number)
        w.add(["minuto", "minutos", "min"], .unit(.minute))
        w.add(["hora", "horas"], .unit(.hour), or: .oclock)
        w.add(["días"], .unit(.day))
        w.add(["semanas"], .unit(.week))
        w.add(["meses"], .unit(.month))
        w.add(["años"], .unit(.year))
        w.add(["día"], .day)
        w.add(["semana"], .week)
        w.add(["mes"], .month)
        w.add(["año"], .year)
        w.add(["hoy"], .today)
        // `mañana a las 7`, and `por la mañana`, `cada mañana`: tomorrow, or the morning.
        w.add(["mañana"], .tomorrow, or: .morning)
        w.add(["pasado mañana"], .dayAfterTomorrow)
        w.add(["próximo", "próxima", "que viene"], .next)
        w.add(["cada", "todos", "todas"], .every)
        w.add(["último", "última"], .last)
        w.add(["diario", "diaria", "diariamente", "a diario"], .daily)
        w.add(["semanal", "semanalmente"], .weekly)
        w.add(["mensual", "mensualmente"], .monthly)
        w.add(["anual", "anualmente"], .yearly)
        w.add(["entre semana", "días laborables", "días hábiles", "días de semana", "laborables"], .workdays)
        w.add(["fin de semana", "fines de semana", "finde", "findes"], .weekend)
        w.part(["mañanas", "madrugada", "esta mañana"], .morning, at: 9)
        w.part(["tarde", "tardes", "esta tarde"], .evening, at: 12)
        w.part(["noche", "noches", "esta noche"], .evening, at: 22)
        w.add(["mediodía", "medio día"], .noon)
        w.add(["medianoche"], .midnight)
        w.add(["en punto"], .oclock)
        w.add(["a", "por"], .at)
        w.add(["el", "la", "los", "las", "lo", "este", "esta"], .the)
        w.add(["de", "del"], .of)
        w.add(["en", "dentro de"], .inWord)
        w.add(["y"], .and)
        w.add(["ahora"], .now)
        w.add(["media", "medio"], .half)
        w.add(["menos"], .minus)
        w.add(["al", "hasta"], .to)
        w.add(["desde", "a partir de", "a partir del"], .from)
    }
}

struct SpanishBook: PhraseBook {
    func say(_ problem: PhraseProblem) -> String {
        switch problem {
        case .notAWord(let word, let nearest): "«\(word)» no es una palabra que chime conozca" + (nearest.map { "; ¿quiso decir «\($0)»?" } ?? "")
        case .atWhatTime(let example): "¿a qué hora? p. ej. «\(example)»"
        case .hasPassed(let date, let time): "el \(date) \(time) ya pasó"
        case .sayWhen(let once, let repeating): "diga cuándo, p. ej. «\(once)» o «\(repeating)»"
        case .second(.time): "una segunda hora"
        case .second(.day): "un segundo día"
        case .second(.repetition): "una segunda repetición"
        case .second(.start): "un segundo comienzo"
        case .notUnderstoodHere(let word): "«\(word)» no tiene sentido aquí"
        }
    }

    let dayNames = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
    static let plural = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábados", "domingos"]
    static let months = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre",
                         "diciembre"]
    let and = " y "

    func date(_ day: CivilTime) -> String { "\(dayNames[day.weekday - 1]) \(day.day) de \(Self.months[day.month - 1]) de \(day.year)" }
    func at(_ hour: Int, _ minute: Int) -> String { (hour == 1 ? "a la " : "a las ") + clock(hour, minute) }
    func once(_ date: CivilTime) -> String { "el " + self.date(date) + " " + at(date.hour, date.minute) }

    let unitNames: [(one: String, many: String)] = [("día", "días"), ("hora", "horas"), ("minuto", "minutos"), ("segundo", "segundos")]

    func after(_ duration: String) -> String { "dentro de " + duration }
    func every(_ duration: String) -> String { "cada " + duration }
    func since(_ date: CivilTime) -> String { ", desde el " + self.date(date) }
    let exampleOnce = "mañana a las 07:00"
    let exampleRepeating = "cada lunes a las 09:00"

    func ordinal(_ n: Int) -> String { n == -1 ? "último" : ["primer", "segundo", "tercer", "cuarto", "quinto"][max(0, min(4, n - 1))] }

    func repeating(_ repeating: PhraseMeaning.Repeat, at: String, from: String) -> String {
        switch repeating {
        case .days(let n):
            return (n == 1 ? "todos los días " : "cada \(n) días ") + at + from
        case .weekdays(let days, let n):
            let sorted = days.sorted()
            if n > 1 { return "cada \(n) semanas el " + list(sorted) + " " + at + from }
            if sorted == [1, 2, 3, 4, 5] { return "de lunes a viernes " + at + from }
            if sorted == [6, 7] { return "los fines de semana " + at + from }
            return "todos los " + list(sorted, names: Self.plural) + " " + at + from
        case .monthlyWeekdays(let ordinals, let weekday, let n):
            let which = "el " + ordinals.map(ordinal).joined(separator: and) + " " + dayNames[weekday - 1]
            return n == 1 ? "\(which) de cada mes \(at)\(from)" : "cada \(n) meses \(which) \(at)\(from)"
        case .monthDay(let day, let n):
            let which = day == -1 ? "el último día" : "el \(day)"
            return n == 1 ? "\(which) de cada mes \(at)\(from)" : "cada \(n) meses \(which) \(at)\(from)"
        case .yearly(let month, let day):
            return "cada año el \(day) de \(Self.months[month - 1]) \(at)"
        case .everyUnit(let unit, let n):
            return "cada \(n) \(unit == .week ? "semanas" : unit == .month ? "meses" : "años") " + at + from
        case .interval:
            return at
        }
    }
}
