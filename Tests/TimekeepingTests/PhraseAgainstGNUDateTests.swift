import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// The one-off English phrases GNU `date -d` reads too, read by it at the same moment (under
/// Debian's faketime, in Berlin): an independent reading of what a person means.
@Suite struct PhraseAgainstGNUDateTests {
    static let phrases = ["tomorrow 7am", "7am tomorrow", "tomorrow 7:30pm", "friday 16:35", "next friday 16:35", "next thursday 16:35",
                          "thursday 16:35", "today 18:00", "2026-12-24 18:00", "December 24 6pm", "12/24/2026 6pm", "now + 2 hours",
                          "4pm + 3 days", "next week", "2027-03-28 03:30", "saturday 9am", "next sunday 10:00", "tomorrow 12am",
                          "tomorrow 12pm"]

    @Test func oneOffPhrasesAreWhereGNUDatePutsThem() throws {
        // All at once: one shell, one faketime per phrase, its clock stopped at that moment (-f: a
        // clock that ran on would put `now + 2 hours` a second late on a busy machine).
        let script = Self.phrases.map { "faketime -f '2026-11-26 10:00:00' date -d '\($0)' '+%s' || echo fail" }.joined(separator: "\n")
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Europe/Berlin"
        let result = try runProgram("/bin/sh", ["-c", script].map { Array($0.utf8) }, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let theirs = result.stdout.split(separator: "\n").map { Int64($0) }
        try #require(theirs.count == Self.phrases.count, "faketime and date (Debian's faketime package): \(result.stderr)")
        let context = PhraseContext(said: PhraseTests.said, zone: PhraseTests.berlin)
        for (phrase, their) in zip(Self.phrases, theirs) {
            let reading = try Rule.reading(phrase, context)
            let ours = reading.rule.nextFire(after: context.said, anchor: context.said, repeats: false, in: context.zone)?.seconds
            #expect(ours != nil && ours == their, "\(phrase): chime \(ours.map { context.zone.iso8601($0) } ?? "never"), GNU date \(their.map { context.zone.iso8601($0) } ?? "nothing")")
        }
    }
}
