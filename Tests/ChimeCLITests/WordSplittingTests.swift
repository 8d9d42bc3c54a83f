@testable import ChimeCommands
import Foundation
import Testing
import TestSupport

/// `--body-command` is split into an argument vector the way a shell would, and never run by one.
@Suite struct WordSplittingTests {
    @Test(arguments: [
        ("date +%H:%M", ["date", "+%H:%M"]),
        ("  curl   -s  https://school.example/count  ", ["curl", "-s", "https://school.example/count"]),
        ("printf 'today: %s students' 23", ["printf", "today: %s students", "23"]),
        (#"echo "a \"quoted\" \$word \\ and \n""#, ["echo", #"a "quoted" $word \ and \n"#]),
        (#"one\ word 'it''s' "" ''"#, ["one word", "its", "", ""]),
        ("no $HOME *.txt | pipes > here", ["no", "$HOME", "*.txt", "|", "pipes", ">", "here"]),
        ("ünï ⏰", ["ünï", "⏰"]),
        ("", []),
    ])
    func splitsLikeAShell(_ text: String, _ words: [String]) throws {
        #expect(try splitWords(text) == words)
    }

    @Test(arguments: ["echo 'open", #"echo "open"#, "echo trailing\\"])
    func unterminatedQuotesAreErrors(_ text: String) {
        #expect(throws: WordSplitError.self) { try splitWords(text) }
    }

    /// Checked against the shell itself on the same strings.
    @Test func agreesWithSh() throws {
        let samples = [#"a "b c" 'd e' f\ g"#, #""x\"y" 'p\q' r\\s"#, "  lead trail  ", #"mix"ed"'qu'otes"#]
        for sample in samples {
            let result = try runProgram("/bin/sh", [Array("-c".utf8), Array(("printf '%s\\n' " + sample).utf8)], environment: [:])
            let expected = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(try splitWords(sample) == expected, "\(sample)")
        }
    }

    @Test func badAlarmOptionsAreUsageErrors() throws {
        let cases: [([String], String)] = [
            (["in", "5m", "--body-command", "echo 'open", "T"], "chime: --body-command: a single quote is not closed\n"),
            (["in", "5m", "--body-timeout", "3s", "T"], "chime: --body-timeout needs --body-command\n"),
            (["in", "5m", "--body-command", "date", "--body-timeout", "2m", "T"], "chime: --body-timeout 2m: must be 1s-1m, got 2m\n"),
            (["in", "5m", "--expire", "soon", "T"], "chime: --expire soon: use a duration such as 5m or 90s\n"),
            (["in", "5m", "--grace", "0s", "T"], "chime: --grace 0s: use a duration such as 5m or 90s\n"),
            (["in", "5m", "--sound", "bell", "--fade-from", "20%", "T"], "chime: --fade-from 20%: needs a fade (the level a fade starts from)\n"),
            (["in", "5m", "--sound", "bell", "--fade", "30s", "--fade-from", "100%", "T"],
             "chime: --fade-from 100%: must be at most 99 percent of the volume, got 100\n"),
            (["in", "5m", "--sound", "bell", "--fade", "30s", "--fade-from", "loud", "T"],
             "chime: --fade-from loud: give a percentage such as 20 or 20%\n"),
            (["in", "5m", "--fade", "30s", "--fade-from", "20%", "T"], "chime: --fade 30s: give --sound too\n"),
            // Rough edges a new user met (issue 14): each a one-line error that says what to write.
            (["in", "5m", "--tz", "Europe/Berlin", "T"],
             "chime: --tz Europe/Berlin: \"in 5m\" counts elapsed time, which has no time zone; a zone is for clock times such as 16:35\n"),
            (["in", "-5m", "T"], "chime: in -5m: a duration cannot be negative; give how long from now, e.g. 5m\n"),
            (["in", "99999999999m", "T"], "chime: in 99999999999m: 99999999999 is too large (at most 10000000 of a unit)\n"),
            // (`9`, `9pm` and `Jan 5 10:00`, refused once, are phrases now: NextCommandTests.)
            (["at", "25pm", "T"], "chime: 25pm: 25 is not an hour of the afternoon or evening\n"),
            (["at", "tomorow 7am", "T"], "chime: tomorow 7am: 'tomorow' is not a word chime knows; did you mean 'tomorrow'?\n"),
            (["in", "5m", "--id", "", "T"], "chime: --id \"\": must not be empty\n"),
        ]
        for (arguments, message) in cases {
            let result = try runChime(arguments, environment: ["PATH": "/usr/bin:/bin"])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr == message, "\(arguments)")
        }
        // A sound file that is not there is bad input (65), in one line.
        let missing = try runChime(["in", "5m", "--sound", "/no/such.oga", "T"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(missing.status == 65)
        #expect(missing.stderr == "chime: --sound /no/such.oga: no readable sound file there\n")
    }
}
