// German's words for phrases, and what each means (`PhraseWord`): what the grammar reads in German.
// (`am` is English's a.m. too: before a day, the grammar reads it as `on`.)

extension PhraseVocabulary {
    static let german = PhraseVocabulary(.german) { w in
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
        w.add(["morgen"], .tomorrow)
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
        w.add(["morgens", "früh", "frueh", "vormittags"], .morning)
        w.add(["abends", "abend", "nachmittag", "nachmittags", "nacht", "nachts"], .evening)
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
