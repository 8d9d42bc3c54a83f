import ChimeCommands
import NotifyTool
import Foundation
import Notifications
import PropertyBased
import Testing

/// `chime notify` parses its common command lines by hand, for start-up speed;
/// wherever that parser answers, it must agree with ArgumentParser.
@Suite struct ParserEquivalenceTests {
    static let tokens: [[String]] = [
        ["-u", "low"], ["-u", "CRITICAL"], ["--urgency", "normal"], ["--urgency=low"], ["-t", "5000"], ["-t", "-1"],
        ["--expire-time=0"], ["-t5000"], ["-a", "app"], ["--app-name", ""], ["-i", "icon"], ["--icon=/x.png"],
        ["-c", "a,b"], ["--category", ""], ["-e"], ["--transient"], ["-h", "int:x:1"], ["--hint", "string:s:-v"],
        ["-p"], ["--print-id"], ["-r", "5"], ["--replace-id=-2"], ["-w"], ["--wait"], ["-A", "yes=Yes"],
        ["--action", "No"], ["-v"], ["--sound", "bell"], ["--wait-timeout", "3"], ["--json"], ["-pe"], ["-ew"],
        ["-et", "100"], ["Summary"], ["Body"], ["-"], ["--"], ["-x"], ["--bogus"], ["-u", "loud"], ["-t", "soon"],
        ["-u"], ["--wait-timeout", "-4"], ["-?"], ["Ü ✓"], ["-A", "-dash"],
    ]

    @Test func handPickedLinesAgree() throws {
        let lines: [[String]] = [
            ["S"], ["S", "B"], ["-u", "low", "S"], ["-t", "-1", "S"], ["-pe", "S"], ["-et", "5", "S"], ["-t5000", "S"],
            ["--", "-S", "-B"], ["-A", "a=b", "-A", "c", "-w", "S"], ["-v"], ["--json", "--sound", "/x", "S", "B"],
            ["-h", "string:a:b", "--hint=int:c:1", "S"], ["S", "-u", "critical"],
        ]
        for line in lines {
            let fast = try #require(NotifyOptions(fastParsing: line), "\(line)")
            #expect(fast == (try Notify.parseOptions(line)), "\(line)")
        }
        for unusual in [["-x", "S"], ["S", "B", "C"], [], ["-u", "loud", "S"], ["-?"], ["--help"], ["-u"]] {
            #expect(NotifyOptions(fastParsing: unusual) == nil, "\(unusual)")
        }
    }

    @Test func randomLinesAgree() async {
        let compared = Counter()
        await propertyCheck(count: 2000, input: Gen.int(in: 0...(Self.tokens.count - 1)).array(of: 0...6)) { picks in
            let line = picks.flatMap { Self.tokens[$0] }
            guard let fast = NotifyOptions(fastParsing: line) else { return }
            compared.increment()
            do {
                #expect(fast == (try Notify.parseOptions(line)), "\(line)")
            } catch {
                Issue.record("fast parser accepted \(line), ArgumentParser refused: \(error)")
            }
        }
        // Not a vacuous check: a good share of the random lines take the fast path.
        #expect(compared.value > 200)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
