import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// The phrase corpus (Tests/phrases/corpus.tsv): over 300 phrases in English, German, French and
/// Spanish as people type them into task and calendar apps, each with the times a person means,
/// written out by hand.
@Suite struct PhraseCorpusTests {
    struct Entry: CustomStringConvertible, Sendable {
        var language: PhraseLanguage
        var phrase: String
        var times: [String]
        var description: String { "\(language.rawValue): \(phrase)" }
    }

    static let entries: [Entry] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let text = (try? String(contentsOf: root.appendingPathComponent("phrases/corpus.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line -> Entry? in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let language = PhraseLanguage(rawValue: fields[0]) else { return nil }
            return Entry(language: language, phrase: fields[1], times: fields[2].split(separator: ",").map(String.init))
        }
    }()

    /// Local wall-clock time, to the minute ("2026-11-27 07:00").
    static func local(_ instant: Instant, _ zone: Zone) -> String {
        let c = zone.civil(at: instant.seconds)
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2)) \(pad(c.hour, 2)):\(pad(c.minute, 2))"
    }

    /// The times a reading rings, from when it is said: all of `count` for a repetition; for a
    /// phrase said once, its one time (and none after it).
    static func times(_ reading: PhraseReading, count: Int, _ context: PhraseContext) -> [String] {
        var out: [String] = []
        var t = context.said
        while out.count < max(count, reading.repeats ? count : 2),
              let next = reading.rule.nextFire(after: t, anchor: context.said, repeats: reading.repeats, in: context.zone) {
            out.append(local(next, context.zone))
            t = next
        }
        return out
    }

    @Test func theCorpusIsThere() {
        #expect(Self.entries.count >= 300)
        for language in PhraseLanguage.allCases {
            #expect(Self.entries.filter { $0.language == language }.count >= 70, "\(language)")
        }
    }

    /// Each phrase, read in its language, rings at the times written beside it, and repeats when
    /// two are written.
    @Test(arguments: entries)
    func eachPhraseRingsWhenMeant(_ entry: Entry) throws {
        let context = PhraseContext(said: PhraseTests.said, zone: PhraseTests.berlin, language: entry.language)
        let reading = try Phrase.read(entry.phrase, context)
        #expect(reading.repeats == (entry.times.count > 1), "\(entry): \(reading.words)")
        #expect(Self.times(reading, count: entry.times.count, context) == entry.times, "\(entry): \(reading.words)")
    }

    /// Read in any of the four languages (a person's phrase need not be in their locale's), each
    /// phrase is what it is in its own, and what is said back in that language reads again as the
    /// same times.
    @Test func eachPhraseSaidBackInEveryLanguageReadsAgainTheSame() throws {
        var checked = 0
        for entry in Self.entries {
            for language in PhraseLanguage.allCases {
                let context = PhraseContext(said: PhraseTests.said, zone: PhraseTests.berlin, language: language)
                let reading = try Phrase.read(entry.phrase, context)
                #expect(Self.times(reading, count: entry.times.count, context) == entry.times, "\(entry) read in \(language)")
                let again = try Phrase.read(reading.words, context)
                #expect(Self.times(again, count: 4, context) == Self.times(reading, count: 4, context),
                        "\(entry) in \(language): \(reading.words) → \(again.words)")
                checked += 1
            }
        }
        #expect(checked == Self.entries.count * PhraseLanguage.allCases.count)
    }
}

/// python's dateparser (Debian's python3-dateparser, which reads all four languages) as an
/// independent reading of the corpus's one-off phrases: where it reads one at another time than
/// the hand-written one, the difference must be one looked at and listed, with why
/// (Tests/phrases/dateparser-differs.tsv); any other is a hand-written time to look at again.
@Suite struct PhraseAgainstDateparserTests {
    @Test func whereDateparserReadsAPhraseItAgreesOrTheDifferenceIsKnown() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let result = try runProgram("/usr/bin/python3", [root.appendingPathComponent("phrases/dateparser_oracle.py").path,
                                                         root.appendingPathComponent("phrases/corpus.tsv").path].map { Array($0.utf8) },
                                    environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0, "dateparser (Debian's python3-dateparser): \(result.stderr)")
        let known = try String(contentsOf: root.appendingPathComponent("phrases/dateparser-differs.tsv"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t").prefix(3).joined(separator: "\t") }
        let hand = Dictionary(PhraseCorpusTests.entries.map { ("\($0.language.rawValue)\t\($0.phrase)", $0.times) }, uniquingKeysWith: { a, _ in a })
        var agreed = 0, differed: [String] = [], unread = 0
        for line in result.stdout.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 3, let times = hand[fields[0] + "\t" + fields[1]] else {
                Issue.record("\(line): not a phrase of the corpus")
                continue
            }
            if fields[2] == "-" {
                unread += 1
            } else if times == [fields[2]] {
                agreed += 1
            } else {
                differed.append(String(line))
            }
        }
        #expect(Set(differed) == Set(known), "not known: \(Set(differed).subtracting(known)); known but gone: \(Set(known).subtracting(differed))")
        #expect(agreed + differed.count + unread == PhraseCorpusTests.entries.filter { $0.times.count == 1 }.count)
        print("dateparser: \(agreed) agree, \(differed.count) differ (each known), \(unread) not read")
    }
}
