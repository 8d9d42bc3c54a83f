import Testing
import TestSupport

/// `chime next`, run as a person would.
@Suite struct NextCommandTests {
    let environment = ["PATH": "/usr/bin:/bin", "TZ": ":Europe/Berlin"]

    @Test func printsTheNextFireTimes() throws {
        let result = try runChime(["next", "16:35 mon-fri", "--after", "2026-11-20 17:00", "--count", "2"], environment: environment)
        #expect(result.status == 0)
        #expect(result.stdout == "every weekday at 16:35\nMon 2026-11-23 16:35:00 CET (+01:00)\nTue 2026-11-24 16:35:00 CET (+01:00)\n")
    }

    /// What a new user typed and was once refused (issue 14) reads as they meant it.
    @Test func whatWasOnceRefusedIsReadAsMeant() throws {
        for (rule, first) in [("9", "Fri 2026-11-27 09:00:00 CET (+01:00)"), ("9pm", "Thu 2026-11-26 21:00:00 CET (+01:00)"),
                              ("Jan 5 10:00", "Tue 2027-01-05 10:00:00 CET (+01:00)")] {
            let result = try runChime(["next", rule, "--after", "2026-11-26 10:00", "--count", "1"], environment: environment)
            #expect(result.status == 0, "\(rule): \(result.stderr)")
            #expect(result.stdout.hasSuffix(first + "\n"), "\(rule): \(result.stdout)")
        }
    }

    /// A phrase is read as said at --after, and what was understood is said first, in the user's language.
    @Test func aPhraseIsSaidBackInTheUsersLanguage() throws {
        let english = try runChime(["next", "every other tuesday 09:00", "--after", "2026-11-26 10:00", "--count", "2"], environment: environment)
        #expect(english.stdout == "every 2 weeks on Tuesday at 09:00, from Tue 1 Dec 2026\nTue 2026-12-01 09:00:00 CET (+01:00)\nTue 2026-12-15 09:00:00 CET (+01:00)\n")
        var german = environment
        german["LANG"] = "de_DE.UTF-8"
        let said = try runChime(["next", "every other tuesday 09:00", "--after", "2026-11-26 10:00", "--count", "1"], environment: german)
        #expect(said.stdout.hasPrefix("jeden zweiten Dienstag um 09:00, ab Di 1. Dez 2026\n"))
        // French and Spanish: LC_TIME before LANG; a phrase in any language, said back in the user's.
        var french = environment
        french["LANG"] = "es_ES.UTF-8"
        french["LC_TIME"] = "fr_FR.UTF-8"
        let dit = try runChime(["next", "cada 2 semanas el martes a las 9", "--after", "2026-11-26 10:00", "--count", "1"], environment: french)
        #expect(dit.stdout == "toutes les 2 semaines le mardi à 09:00, à partir du mardi 1er décembre 2026\nTue 2026-12-01 09:00:00 CET (+01:00)\n",
                "\(dit.stdout)\(dit.stderr)")
        var spanish = environment
        spanish["LANG"] = "es_MX.UTF-8"
        let dicho = try runChime(["next", "le 15 de chaque mois à midi", "--after", "2026-11-26 10:00", "--count", "1"], environment: spanish)
        #expect(dicho.stdout == "el 15 de cada mes a las 12:00\nTue 2026-12-15 12:00:00 CET (+01:00)\n", "\(dicho.stdout)\(dicho.stderr)")
        // The word not understood is pointed at, with the nearest of the user's language.
        let pointed = try runChime(["next", "el proxmo lunes", "--after", "2026-11-26 10:00"], environment: spanish)
        #expect(pointed.status == 64 && pointed.stderr.contains("«proxmo» no es una palabra que chime conozca; ¿quiso decir «próximo»?"), "\(pointed.stderr)")
        // On a 12-hour clock, `at 9` is asked about (a usage error, status 64).
        var american = environment
        american["LC_TIME"] = "en_US.UTF-8"
        let asked = try runChime(["next", "tomorrow at 9", "--after", "2026-11-26 10:00"], environment: american)
        #expect(asked.status == 64)
        #expect(asked.stderr.contains("09:00 or 21:00"))
    }

    /// A time said alone in words is once, in `chime next` as in `chime at`; a clock time alone
    /// (`16:35`, a systemd expression) is every day, as systemd reads it.
    @Test func aTimeSaidAloneIsOnce() throws {
        for (rule, first) in [("noon", "Fri 2026-11-27 12:00:00 CET (+01:00)"), ("5:30pm", "Thu 2026-11-26 17:30:00 CET (+01:00)"),
                              ("teatime", "Thu 2026-11-26 16:00:00 CET (+01:00)")] {
            let result = try runChime(["next", rule, "--after", "2026-11-26 12:00", "--count", "3"], environment: environment)
            #expect(result.status == 0, "\(rule): \(result.stderr)")
            #expect(result.stdout.split(separator: "\n").dropFirst().map(String.init) == [first], "\(rule): \(result.stdout)")
        }
        let daily = try runChime(["next", "16:35", "--after", "2026-11-26 12:00", "--count", "3"], environment: environment)
        #expect(daily.stdout.split(separator: "\n").count == 4, "\(daily.stdout)")
    }

    @Test func jsonHasUTCOffsets() throws {
        let result = try runChime(["next", "02:30", "--after", "2026-03-28 12:00", "--json"], environment: environment)
        #expect(result.stdout == "[\"2026-03-29T03:00:00+02:00\",\"2026-03-30T02:30:00+02:00\",\"2026-03-31T02:30:00+02:00\"]\n")
        let zoned = try runChime(["next", "09:00", "--tz", "Asia/Kathmandu", "--after", "@0", "--count", "1", "--json"], environment: environment)
        #expect(zoned.stdout == "[\"1970-01-01T09:00:00+05:30\"]\n")
    }

    @Test func badRulesAreOneLineErrors() throws {
        let result = try runChime(["next", "16:65 mon-fri"], environment: environment)
        #expect(result.status == 64)
        #expect(result.stderr == "chime: 16:65 mon-fri: minute 65 is out of range 0-59 (at \"65\")\n")
        let zone = try runChime(["next", "10:00", "--tz", "Nowhere/Town"], environment: environment)
        #expect(zone.status == 64)
        #expect(zone.stderr.hasPrefix("chime: --tz Nowhere/Town: unknown time zone"))
    }
}

/// `chime status`, against a server and without one.
@Suite struct StatusCommandTests {
    @Test func reportsTheServersSettings() throws {
        let session = try RecorderSession(capabilities: ["actions", "body", "sound"])
        defer { session.stop() }
        let table = try runChime(["status"], environment: session.environment)
        #expect(table.status == 0)
        #expect(table.stdoutLines.first == "Authorization:  authorized")
        #expect(table.stdoutLines.contains("Sound:          yes (played by the server)"))
        #expect(table.stdoutLines.contains("Badges:         no (not on this desktop)"))
        #expect(table.stdoutLines.last?.hasPrefix("Daemon:         not running (") == true)
        let json = try runChime(["status", "--json"], environment: session.environment)
        #expect(json.stdout.hasPrefix("{\"authorization\":\"authorized\",\"reason\":null,\"server\":{\"name\":\"chime-recorder\""))
        #expect(json.stdout.contains("\"actions\":true,\"bodyMarkup\":false"))
    }

    @Test func withoutAServerItIsDenied() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let result = try runChime(["status", "--json"], environment: bus.environment())
        #expect(result.status == 69)
        #expect(result.stdout.hasPrefix("{\"authorization\":\"denied\",\"reason\":\"no notification server is running"))
    }

    @Test func insideTheRepeatedHourTheNextIsTomorrows() throws {
        // @1793513400 is 01:10 EST on 2026-11-01, inside the repeated hour: 01:30 EDT already rang.
        let result = try runChime(["next", "01:30", "--count", "2", "--after", "@1793513400", "--tz", "America/New_York", "--json"],
                                  environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == #"["2026-11-02T01:30:00-05:00","2026-11-03T01:30:00-05:00"]"# + "\n")
    }
}

/// Every subcommand's --help ends with examples a user can copy.
@Suite struct HelpExamplesTests {
    @Test(arguments: [["notify"], ["in"], ["at"], ["list"], ["show"], ["cancel"], ["delivered"], ["close"], ["next"], ["timer"],
                      ["config"], ["config", "check"], ["config", "path"], ["config", "reload"], ["status"], ["capabilities"],
                      ["server-info"], ["daemon"]])
    func everyHelpHasExamples(_ command: [String]) throws {
        let help = try runChime(command + ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(help.status == 0)
        let examples = help.stdout.components(separatedBy: "Examples:\n").dropFirst().first ?? ""
        let lines = examples.split(separator: "\n").prefix { $0.hasPrefix("  ") }
        #expect(!lines.isEmpty, "chime \(command.joined(separator: " ")) --help has no examples")
        #expect(lines.allSatisfy { $0.contains("chime") || $0.contains("$EDITOR") }, "\(lines)")
    }
}
