// A phrase's words: what each means (`PhraseWord`), every language's words in one table
// (`PhraseLexicon`, built from each language's `PhraseVocabulary`), and the tokens a phrase is split
// into (`PhraseTokenizer`). The grammar (Phrase.swift) reads tokens, never a language's words.

// MARK: - Words

/// A word's meaning, whichever language it is in.
enum PhraseWord: Hashable {
    case weekday(Int)  // 1 Monday ... 7 Sunday
    case weekdays(Int)  // "mondays", "montags": that day every week
    case monthName(Int)
    case today, tomorrow, dayAfterTomorrow
    case next, every, other, last
    case ordinal(Int)
    case number(Int)
    case unit(PhraseUnit)
    case daily, workdays, weekend
    /// `weekly`, `monatlich`: every week, month or year (what follows says on which day).
    case weekly, monthly, yearly
    /// `anderthalb`, `eineinhalb`: one and a half (of the unit that follows).
    case oneAndAHalf
    case am, pm, morning, evening, noon, midnight, teatime, oclock
    case at, on, inWord, of, the, and, now, plus, day, half, quarter, threeQuarters, past, to, year, month, week, after, from
    /// `moins`, `menos`: before the hour (`8 heures moins le quart`, `las 8 menos cuarto`).
    case minus
}

enum PhraseUnit: Hashable {
    case minute, hour, day, week, month, year
    var seconds: Int64? {
        switch self {
        case .minute: 60
        case .hour: 3600
        default: nil
        }
    }
}

/// Every language's words, in one table: a word is looked up once, whatever the number of
/// languages. Where two languages give one word different meanings, the phrase's language decides
/// (its context), else the first language that has it (`PhraseVocabulary.all`'s order). Words are
/// found with or without their accents (`a` for `à`, `proximo`, `decembre`).
struct PhraseLexicon: Sendable {
    struct Meaning: Sendable {
        var language: PhraseLanguage
        var word: PhraseWord
        /// A second meaning within the language, which the grammar takes where the first cannot be
        /// (`mañana` after `la`: the morning; `cuarto` before a weekday: the fourth).
        var alternative: PhraseWord?
    }

    /// Every language's: what phrases are read with.
    static let all = PhraseLexicon(PhraseVocabulary.all)

    let languages: [PhraseLanguage]
    let table: [String: [Meaning]]
    /// The first words of the entries of more than one word (`en semaine`, `fin de semana`).
    let startsOfSeveral: Set<String>
    /// A part of the day's documented time (`afternoon`: 12), for `every afternoon` said without one.
    let partHours: [String: Int]
    /// The known words, for "did you mean", by language.
    let vocabularies: [PhraseLanguage: [String]]
    /// What follows a number that makes it an ordinal (`st`, `.`, `er`, `º`), longest first.
    let ordinalSuffixes: [String]

    init(_ vocabularies: [PhraseVocabulary]) {
        languages = vocabularies.map(\.language)
        var table: [String: [Meaning]] = [:]
        func add(_ text: String, _ meaning: Meaning) {
            if !(table[text]?.contains { $0.language == meaning.language } ?? false) { table[text, default: []].append(meaning) }
        }
        for vocabulary in vocabularies {
            let alternatives = Dictionary(vocabulary.alternatives, uniquingKeysWith: { first, _ in first })
            for (text, word) in vocabulary.words { add(text, Meaning(language: vocabulary.language, word: word, alternative: alternatives[text])) }
        }
        // Then each word without its accents, where that spelling is not a word of its own language.
        for vocabulary in vocabularies {
            for (text, _) in vocabulary.words {
                let plain = Self.foldedAccents(text)
                if plain != text, let meaning = table[text]?.first(where: { $0.language == vocabulary.language }) { add(plain, meaning) }
            }
        }
        self.table = table
        startsOfSeveral = Set(table.keys.filter { $0.contains(" ") }.map { String($0.prefix { $0 != " " }) })
        var hours: [String: Int] = [:]
        for vocabulary in vocabularies {
            for (text, hour) in vocabulary.partHours {
                hours[text] = hours[text] ?? hour
                hours[Self.foldedAccents(text)] = hours[Self.foldedAccents(text)] ?? hour
            }
        }
        partHours = hours
        var known: [PhraseLanguage: [String]] = [:]
        for vocabulary in vocabularies {
            known[vocabulary.language] = Set(vocabulary.words.map(\.0).filter { $0.count > 2 && !$0.contains(" ") }).sorted()
        }
        self.vocabularies = known
        ordinalSuffixes = Set(vocabularies.flatMap(\.ordinalSuffixes)).sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// What `text` means, said in `language`; `ambiguous` when languages read it differently.
    func meaning(_ text: String, in language: PhraseLanguage) -> (meaning: Meaning, ambiguous: Bool)? {
        guard let meanings = table[text] ?? (text.unicodeScalars.allSatisfy(\.isASCII) ? nil : table[Self.foldedAccents(text)]) else { return nil }
        if meanings.count == 1 { return (meanings[0], false) }
        let chosen = meanings.first { $0.language == language } ?? meanings[0]
        return (chosen, meanings.contains { $0.word != chosen.word || $0.alternative != chosen.alternative })
    }

    /// What `text` means, said in `language`.
    func word(_ text: String, in language: PhraseLanguage) -> PhraseWord? { meaning(text, in: language)?.meaning.word }

    /// `à` → `a`, `é` → `e`, `ñ` → `n`, `ü` → `u`: the spelling without accents.
    static func foldedAccents(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar {
            case "à", "á", "â", "ä": "a"
            case "è", "é", "ê", "ë": "e"
            case "ì", "í", "î", "ï": "i"
            case "ò", "ó", "ô", "ö": "o"
            case "ù", "ú", "û", "ü": "u"
            case "ñ": "n"
            case "ç": "c"
            default: scalar
            }
        }))
    }
}

/// One language's words for phrases, and what each means: the data a language is (with the words it
/// says back in, its `PhraseBook`). Each language has a file of its own (`Phrase+English.swift`).
struct PhraseVocabulary {
    let language: PhraseLanguage
    let words: [(String, PhraseWord)]
    /// Second meanings (`PhraseLexicon.Meaning.alternative`).
    let alternatives: [(String, PhraseWord)]
    /// Parts of the day and their documented times (`every afternoon`: 12:00).
    let partHours: [(String, Int)]
    /// `24/12`: the day first when neither number says (`5/6` is 5 June). (A number over 12 says.)
    let dayFirst: Bool
    /// What follows a number that makes it an ordinal: `st`, `nd` (`1st`); German `.` (`24.`).
    let ordinalSuffixes: [String]

    struct Builder {
        var words: [(String, PhraseWord)] = []
        var alternatives: [(String, PhraseWord)] = []
        var partHours: [(String, Int)] = []
        var dayFirst = true
        var ordinalSuffixes: [String] = []

        /// Each of `names` means `word`.
        mutating func add(_ names: [String], _ word: PhraseWord) { for name in names { words.append((name, word)) } }
        /// Each of `names` means `word`, or where the grammar cannot take that, `alternative`.
        mutating func add(_ names: [String], _ word: PhraseWord, or alternative: PhraseWord) {
            add(names, word)
            for name in names { alternatives.append((name, alternative)) }
        }
        /// The nth list of names (from 1) means `make(n)`: weekdays, months, numbers.
        mutating func numbered(_ lists: [[String]], _ make: (Int) -> PhraseWord) {
            for (index, names) in lists.enumerated() { add(names, make(index + 1)) }
        }
        /// A part of the day (`.morning` or `.evening` for a time said with it) and its documented
        /// time when none is said (`every night`: 22:00).
        mutating func part(_ names: [String], _ word: PhraseWord, at hour: Int) {
            add(names, word)
            for name in names { partHours.append((name, hour)) }
        }
    }

    init(_ language: PhraseLanguage, _ build: (inout Builder) -> Void) {
        self.language = language
        var builder = Builder()
        build(&builder)
        words = builder.words
        alternatives = builder.alternatives
        partHours = builder.partHours
        dayFirst = builder.dayFirst
        ordinalSuffixes = builder.ordinalSuffixes
    }

    static let all: [PhraseVocabulary] = PhraseLanguage.allCases.map(\.vocabulary)
}

extension PhraseLanguage {
    var vocabulary: PhraseVocabulary {
        switch self {
        case .english: .english
        case .german: .german
        case .french: .french
        case .spanish: .spanish
        }
    }
}

// MARK: - Tokens

struct PhraseToken {
    enum Kind {
        case word(PhraseWord)
        case integer(Int)
        /// `24th`, `1st`, German `24.`, French `1er`, Spanish `1º`
        case ordinalNumber(Int)
        case clock(hour: Int, minute: Int, meridiem: PhraseWord?)
        case date(year: Int?, month: Int, day: Int)
        case unknown
    }
    var kind: Kind
    var text: String
    var offset: Int
    var length: Int
    /// A word's second meaning in its language (`PhraseLexicon.Meaning.alternative`).
    var alternative: PhraseWord?
    /// Another language reads this word differently.
    var ambiguous = false
}

enum PhraseTokenizer {
    /// `language`: the phrase's, which decides a word two languages read differently. Words are
    /// split at spaces, tabs, commas and new lines (a `+` is a word of its own); an entry of two or
    /// three words (`en semaine`, `fin de semana`) is one token.
    static func tokens(_ text: String, language: PhraseLanguage = .english, lexicon: PhraseLexicon = .all) -> [PhraseToken] {
        var pieces: [(text: String, offset: Int)] = []
        var current = ""
        var start = 0
        var index = 0
        func flush() {
            if !current.isEmpty { pieces.append((current, start)) }
            current = ""
        }
        for character in text.lowercased() {
            if character == " " || character == "\t" || character == "," || character == "\n" {
                flush()
            } else if character == "+" {
                flush()
                pieces.append(("+", index))
            } else {
                if current.isEmpty { start = index }
                current.append(character)
            }
            index += 1
        }
        flush()
        var out: [PhraseToken] = []
        out.reserveCapacity(pieces.count)
        var i = 0
        while i < pieces.count {
            if lexicon.startsOfSeveral.contains(pieces[i].text) {
                var joined: PhraseToken?
                for count in [3, 2] where joined == nil && i + count <= pieces.count {
                    let words = pieces[i..<(i + count)].map(\.text).joined(separator: " ")
                    if let (meaning, ambiguous) = lexicon.meaning(words, in: language) {
                        let last = pieces[i + count - 1]
                        joined = PhraseToken(kind: .word(meaning.word), text: words, offset: pieces[i].offset,
                                             length: last.offset + last.text.count - pieces[i].offset, alternative: meaning.alternative,
                                             ambiguous: ambiguous)
                        i += count
                    }
                }
                if let joined {
                    out.append(joined)
                    continue
                }
            }
            out.append(token(pieces[i].text, offset: pieces[i].offset, language: language, lexicon: lexicon))
            i += 1
        }
        return out
    }

    static func token(_ text: String, offset: Int, language: PhraseLanguage = .english, lexicon: PhraseLexicon = .all) -> PhraseToken {
        func make(_ kind: PhraseToken.Kind) -> PhraseToken { PhraseToken(kind: kind, text: text, offset: offset, length: text.count) }
        if let (meaning, ambiguous) = lexicon.meaning(text, in: language) {
            return PhraseToken(kind: .word(meaning.word), text: text, offset: offset, length: text.count, alternative: meaning.alternative,
                               ambiguous: ambiguous)
        }
        if let value = Int(text), text.count <= 4 { return make(.integer(value)) }
        // 1st 2nd 3rd 24th; German 24.; French 1er 1re 2e 2ème; Spanish 1º 1ª 1.º: each language's suffixes
        for suffix in lexicon.ordinalSuffixes where text.hasSuffix(suffix) {
            if let value = Int(text.dropLast(suffix.count)), (1...31).contains(value), text.count - suffix.count <= 2 { return make(.ordinalNumber(value)) }
        }
        // Dates: 2026-12-24, 24.12., 24.12.2026, 12/24/2026, 24/12/2026.
        if let date = date(text, dayFirst: language.vocabulary.dayFirst) { return make(.date(year: date.0, month: date.1, day: date.2)) }
        // Times: 7am 7:30pm 19:30 7.30 19h30
        if let clock = clock(text) { return make(.clock(hour: clock.0, minute: clock.1, meridiem: clock.2)) }
        return make(.unknown)
    }

    /// `dayFirst`: which of two slashed numbers is the day when neither is over 12.
    static func date(_ text: String, dayFirst: Bool = false) -> (Int?, Int, Int)? {
        let dashed = text.split(separator: "-", omittingEmptySubsequences: false)
        if dashed.count == 3, dashed[0].count == 4, let y = Int(dashed[0]), let m = Int(dashed[1]), let d = Int(dashed[2]),
           dashed[1].count <= 2, dashed[2].count <= 2 {
            return (y, m, d)
        }
        let dotted = text.split(separator: ".", omittingEmptySubsequences: false)
        if dotted.count == 3, dotted[0].count <= 2, dotted[1].count <= 2, let d = Int(dotted[0]), let m = Int(dotted[1]) {
            if dotted[2].isEmpty { return (nil, m, d) }
            if let y = Int(dotted[2]), dotted[2].count == 4 || dotted[2].count == 2 { return (dotted[2].count == 2 ? 2000 + y : y, m, d) }
        }
        let slashed = text.split(separator: "/", omittingEmptySubsequences: false)
        if slashed.count >= 2, slashed.count <= 3, slashed[0].count <= 2, slashed[1].count <= 2, let a = Int(slashed[0]), let b = Int(slashed[1]) {
            // The month is the one that can be: 24/12 and 12/24 are both 24 December.
            let (m, d) = a > 12 && b <= 12 ? (b, a) : b > 12 && a <= 12 ? (a, b) : dayFirst ? (b, a) : (a, b)
            if slashed.count == 2 { return (nil, m, d) }
            if let y = Int(slashed[2]), slashed[2].count == 4 || slashed[2].count == 2 { return (slashed[2].count == 2 ? 2000 + y : y, m, d) }
        }
        return nil
    }

    static func clock(_ text: String) -> (Int, Int, PhraseWord?)? {
        var body = Substring(text)
        var meridiem: PhraseWord?
        for (suffix, word) in [("a.m.", PhraseWord.am), ("p.m.", .pm), ("am", .am), ("pm", .pm), ("h", .oclock)] where body.hasSuffix(suffix) {
            body = body.dropLast(suffix.count)
            meridiem = word == .oclock ? nil : word
            break
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        let pieces = parts.count > 1 ? parts : body.split(separator: ".", omittingEmptySubsequences: false).count == 2
            ? body.split(separator: ".", omittingEmptySubsequences: false) : body.split(separator: "h", omittingEmptySubsequences: false)
        if pieces.count == 2, pieces[0].count <= 2, pieces[1].count == 2, let h = Int(pieces[0]), let m = Int(pieces[1]), (0...59).contains(m) {
            return (h, m, meridiem)
        }
        if pieces.count == 1, meridiem != nil || text.hasSuffix("h"), body.count <= 2, let h = Int(body) { return (h, 0, meridiem) }
        return nil
    }
}
