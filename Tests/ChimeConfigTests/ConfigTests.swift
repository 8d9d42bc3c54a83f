import ChimeCenter
@testable import ChimeConfig
import Foundation
import PropertyBased
import Testing
import TestSupport
import Timekeeping

/// The repository's folder of example configs.
let configDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("config")

func load(_ text: String, anchor: Instant = Instant(seconds: 1_800_000_000)) -> AlarmFile {
    AlarmConfig.parse(Array(text.utf8), path: "alarms.toml", anchor: anchor)
}

@Suite struct ExampleConfigTests {
    func example(_ name: String) throws -> AlarmFile {
        let file = AlarmConfig.load(path: configDirectory.appendingPathComponent(name).path, anchor: 1_800_000_000)
        #expect(file.diagnostics.isEmpty, "\(file.diagnostics.map(\.description))")
        return file
    }

    @Test func theReferenceFileUsesEveryKey() throws {
        let file = try example("alarms.toml")
        let alarm = try #require(file.alarms.first)
        #expect(alarm.id == "homeroom")
        #expect(alarm.when == "16:35 mon-fri")
        #expect(alarm.request.content.title == "Homeroom")
        #expect(alarm.request.content.sound == .named("bell"))
        #expect(alarm.request.content.snooze == 300)
        #expect(alarm.request.content.grace == 1800)
        #expect(alarm.request.content.expiry == .after(.seconds(60)))
        #expect(alarm.request.content.bodyCommand == BodyCommand(arguments: ["date", "+%A"], timeLimit: 5))
        #expect(alarm.request.trigger.timeZone == "Europe/Berlin")
        #expect(alarm.request.content.ring == .seconds(180))
        #expect(alarm.request.content.autoSnooze)
        #expect(!alarm.request.content.wake)
        #expect(alarm.request.content.doNotDisturb == .breakThrough)
        #expect(file.timers.map(\.name) == ["eggs"])
        #expect(file.timers.first?.content.ring == .seconds(60))
        #expect(file.timers.first?.content.doNotDisturb == .defer)
        // Every key the loader knows appears in the reference.
        let text = try String(contentsOf: configDirectory.appendingPathComponent("alarms.toml"), encoding: .utf8)
        for key in Set(AlarmConfig.alarmKeys + AlarmConfig.defaultKeys + AlarmConfig.timerKeys) {
            #expect(text.contains("\n\(key) = "), "\(key) is not in config/alarms.toml")
        }
    }

    @Test func aSchoolDay() throws {
        let file = try example("school-day.toml")
        #expect(file.alarms.map(\.id) == ["homeroom", "first-period", "lunch-duty"])
        let homeroom = file.alarms[0].request
        #expect(homeroom.content.sound == .named("bell"))
        #expect(homeroom.content.bodyCommand?.arguments.first == "sh")
        // 2027-01-15 is a Friday: 16:35 in Berlin is 15:35 UTC.
        let friday = Instant(seconds: 1_800_014_400)  // 2027-01-15 12:00 UTC
        #expect(homeroom.trigger.nextFire(after: friday).map { Zone.utc.civil(at: $0.seconds).hour } == 15)
    }

    @Test func weeklyHabits() throws {
        let file = try example("weekly-habits.toml")
        #expect(file.alarms.map(\.id) == ["habit-check", "run", "water-plants", "stretch"])
        #expect(file.alarms.map(\.enabled) == [true, true, true, false])
        #expect(file.alarms.allSatisfy { $0.request.content.actions == [.dismiss] && $0.request.content.urgency == .normal })
    }

    @Test func kitchenTimers() throws {
        let file = try example("kitchen-timers.toml")
        #expect(file.timers.map(\.name) == ["eggs", "tea", "pasta", "bread"])
        #expect(file.timers.map(\.duration) == [420, 240, 660, 3600])
        #expect(file.timers[0].content.title == "Wait!" && file.timers[0].content.body == "Your eggs are almost done!")
        #expect(file.timers[0].content.sound == .named("complete"))
    }
}

@Suite struct DiagnosticTests {
    @Test func everyProblemAtOnceWithItsPlace() {
        let file = load("""
            [defualts]
            sound = "bell"

            [[alarm]]
            label = "homeroom"
            when = "16:65 mon-fri"
            snoze = "5m"
            urgency = "loud"

            [[alarm]]
            id = "second"
            when = "daily 07:00"
            title = 3
            grace = true
            sound = "/no/such/file.oga"
            body-command = []
            tz = "Mars/Olympus"

            [[alarm]]
            title = "Nameless"
            body-timeout = "5s"

            [alarm2]
            x = 1
            """)
        #expect(file.diagnostics.map(\.description) == [
            "alarms.toml:1:1: unknown table 'defualts'; did you mean [defaults]?",
            "alarms.toml:6:12: minute 65 is out of range 0-59 in \"16:65 mon-fri\"",
            "alarms.toml:7:1: unknown key 'snoze' in [[alarm]]; did you mean 'snooze'?",
            "alarms.toml:8:11: 'urgency' must be \"low\", \"normal\" or \"critical\", found \"loud\"",
            "alarms.toml:13:9: 'title' must be a string, found an integer",
            "alarms.toml:14:9: 'grace' must be a duration such as \"5m\" or a number of seconds, found a boolean",
            "alarms.toml:15:9: sound file \"/no/such/file.oga\" cannot be read: No such file or directory",
            "alarms.toml:16:16: 'body-command' must be an array of strings, the program first, e.g. [\"date\", \"+%H:%M\"]",
            "alarms.toml:17:6: unknown time zone \"Mars/Olympus\" (no such zone in /usr/share/zoneinfo)",
            "alarms.toml:19:1: this alarm needs an 'id' or a 'label' to name it",
            "alarms.toml:19:1: this alarm needs 'when', e.g. when = \"16:35 mon-fri\"",
            "alarms.toml:21:1: 'body-timeout' needs a 'body-command'",
            "alarms.toml:23:1: unknown table 'alarm2'; did you mean [[alarm]]?",
        ])
        #expect(file.alarms.isEmpty)
    }

    @Test func duplicatesAndShapes() {
        let file = load("""
            alarm = "x"
            [[timer]]
            name = "eggs"
            duration = "7m"
            [[timer]]
            name = "eggs"
            duration = 0
            """)
        #expect(file.diagnostics.map(\.description) == [
            "alarms.toml:1:1: write each alarm as [[alarm]], not [alarm]",
            "alarms.toml:7:12: 'duration' must be 1s-3650d, found 0s",
        ])
        let dup = load("""
            [[alarm]]
            label = "Tea"
            when = "16:00"
            [[alarm]]
            label = "tea"
            when = "17:00"
            """)
        #expect(dup.diagnostics.map(\.description) == ["alarms.toml:5:9: duplicate id 'tea' (first used on line 1); give one of them an 'id'"])
        #expect(dup.alarms.map(\.id) == ["tea"])
        let explicit = load("""
            [[alarm]]
            id = "tea"
            when = "16:00"
            title = "Tea"
            [[alarm]]
            when = "17:00"
            title = "More tea"
            id = "tea"
            """)
        #expect(explicit.diagnostics.map(\.description) == ["alarms.toml:8:6: duplicate id 'tea' (first used on line 1); give one of them an 'id'"])
        let shouted = load("""
            [[alarm]]
            label = "!!!"
            when = "16:00"
            """)
        #expect(shouted.diagnostics.map(\.description) == [#"alarms.toml:2:9: the label "!!!" has no letters or digits to make an id of; give this alarm an 'id'"#])
    }

    /// An alarm with a sound rings 5 minutes unless it says otherwise; ring, auto-snooze, wake and dnd
    /// are checked like every other key.
    @Test func ringingWakingAndDoNotDisturb() {
        let file = load("""
            [defaults]
            dnd = "defer"
            [[alarm]]
            label = "quiet"
            when = "07:00"
            [[alarm]]
            label = "loud"
            when = "07:00"
            sound = "bell"
            wake = true
            [[alarm]]
            label = "once"
            when = "07:00"
            sound = "bell"
            ring = 0
            dnd = "silent"
            """)
        #expect(file.diagnostics.isEmpty, "\(file.diagnostics.map(\.description))")
        let content = file.alarms.map(\.request.content)
        #expect(content.map(\.ring) == [nil, .seconds(300), .zero])
        #expect(content.map(\.wake) == [false, true, false])
        #expect(content.map(\.doNotDisturb) == [.defer, .defer, .silent])
        let bad = load("""
            [[alarm]]
            label = "a"
            when = "07:00"
            ring = "5m"
            [[alarm]]
            label = "b"
            when = "07:00"
            sound = "bell"
            ring = "2h"
            dnd = "sometimes"
            wake = "yes"
            [[alarm]]
            label = "c"
            when = "07:00"
            sound = "bell"
            ring = "0s"
            auto-snooze = true
            """)
        #expect(bad.diagnostics.map(\.description) == [
            "alarms.toml:4:8: 'ring' needs a 'sound' (an alarm without a sound has nothing to ring)",
            "alarms.toml:9:8: 'ring' must be 0s-1h, found 2h",
            "alarms.toml:10:7: 'dnd' must be \"break-through\", \"defer\" or \"silent\", found \"sometimes\"",
            "alarms.toml:11:8: 'wake' must be true or false, found a string",
            "alarms.toml:17:15: 'auto-snooze': needs a sound that rings (a sound and a ring time above 0)",
        ])
    }

    /// volume, fade and insist: from [defaults] for alarms with a sound, each alarm's own over them,
    /// and checked like every other key.
    @Test func theSoundsVolumeFadeAndInsist() {
        let file = load("""
            [defaults]
            sound = "bell"
            volume = "60%"
            fade = "20s"
            fade-from = "20%"
            [[alarm]]
            label = "gentle"
            when = "07:00"
            [[alarm]]
            label = "wake"
            when = "07:00"
            volume = 90
            fade = 0
            insist = true
            [[timer]]
            name = "eggs"
            duration = "7m"
            insist = true
            """)
        #expect(file.diagnostics.isEmpty, "\(file.diagnostics.map(\.description))")
        let content = file.alarms.map(\.request.content)
        #expect(content.map(\.volume) == [60, 90])
        #expect(content.map(\.fade) == [.seconds(20), .zero])
        #expect(content.map(\.fadeFrom) == [20, nil], "a default fade-from goes with a fade only")
        #expect(content.map(\.insist) == [false, true])
        let soft = load("""
            [[alarm]]
            label = "soft"
            when = "07:00"
            sound = "bell"
            fade = "30s"
            fade-from = 35
            [[alarm]]
            label = "nofade"
            when = "07:00"
            sound = "bell"
            fade-from = "35%"
            [[alarm]]
            label = "over"
            when = "07:00"
            sound = "bell"
            fade = "30s"
            fade-from = "100%"
            """)
        #expect(soft.alarms.first?.request.content.fadeFrom == 35)
        #expect(soft.diagnostics.map(\.description) == [
            "alarms.toml:11:13: 'fade-from': needs a fade (the level a fade starts from)",
            "alarms.toml:17:13: 'fade-from' must be a percentage 0-99 such as 70 or \"70%\", found \"100%\"",
        ], "\(soft.diagnostics.map(\.description))")
        #expect(file.timers.first?.content.insist == true)
        #expect(file.timers.first?.content.volume == 60)
        let bad = load("""
            [[alarm]]
            label = "a"
            when = "07:00"
            sound = "bell"
            volume = 0
            fade = "soon"
            [[alarm]]
            label = "b"
            when = "07:00"
            volume = "loud"
            insist = "yes"
            [[alarm]]
            label = "c"
            when = "07:00"
            insist = true
            [[alarm]]
            label = "d"
            when = "07:00"
            sound = "bell"
            ring = "1m"
            fade = "2m"
            """)
        #expect(bad.diagnostics.map(\.description) == [
            "alarms.toml:5:10: 'volume' must be a percentage 1-100 such as 70 or \"70%\", found 0",
            "alarms.toml:6:8: 'fade' must be a duration such as \"5m\", \"90s\" or \"1h30m\", found \"soon\"",
            "alarms.toml:10:10: 'volume' must be a percentage 1-100 such as 70 or \"70%\", found \"loud\"",
            "alarms.toml:11:10: 'insist' must be true or false, found a string",
            "alarms.toml:15:10: 'insist': needs a sound",
            "alarms.toml:21:8: 'fade': must be at most the ring time (1m), got 2m: the ring would end before the sound is at its volume",
        ])
    }

    /// Days off as the file says them: what is wrong is said at its place.
    @Test func holidaysAndTimeAwayAreChecked() {
        let file = load("""
            [defaults]
            working-days = "someday"
            on-holiday = "skipp"

            [[holidays]]
            label = "none"

            [[holidays]]
            path = "calendars/holidays"

            [[off]]
            from = "2027-01-10"
            until = "2027-01-04"

            [[alarm]]
            label = "Wake"
            when = "07:00"
            on-holiday = 3
            """)
        #expect(file.diagnostics.map(\.description) == [
            "alarms.toml:2:16: 'working-days' must be a list of days such as mon-fri, mon,tue,thu or weekdays, found \"someday\"",
            "alarms.toml:3:14: 'on-holiday' must be \"ring\", \"skip\", \"before\" or \"after\", found \"skipp\"; did you mean \"skip\"?",
            "alarms.toml:5:1: this holiday calendar needs 'path': an .ics file or a directory of them",
            "alarms.toml:9:8: holiday calendar path \"calendars/holidays\" must be absolute (or start with ~/)",
            "alarms.toml:13:9: 'until' must come after 'from'",
            "alarms.toml:18:14: 'on-holiday' must be a string, found an integer",
        ])
        let good = load("""
            [defaults]
            working-days = "sun-thu"
            on-holiday = "before"

            [[off]]
            until = 2027-02-04T12:00:00

            [[off]]
            until = "2027-01-04"

            [[alarm]]
            label = "Wake"
            when = "07:00"
            """)
        #expect(good.diagnostics.isEmpty, "\(good.diagnostics)")
        #expect(good.workingDays == [7, 1, 2, 3, 4])
        #expect(good.alarms.first?.request.trigger.onHoliday == .before)
        #expect(good.away.count == 1)
        #expect(good.away.first?.from == Instant(seconds: 1_800_000_000))
    }

    /// Calendars chime writes to and syncs, as the file says them: what is wrong is said at its place.
    @Test func calendarsChimeWritesToAreChecked() {
        let file = load("""
            [[calendar]]
            path = "/cal/work.ics"
            write = true

            [[calendar]]
            path = "/cal/home"
            write = true
            own = false
            sync-interval = "5s"

            [[calendar]]
            path = "/cal/team"
            label = "home"
            write = true
            sync = 3
            """)
        #expect(file.diagnostics.map(\.description) == [
            "alarms.toml:2:8: a calendar chime writes to is a directory of events (a vdir, as vdirsyncer keeps one), not one .ics file",
            "alarms.toml:8:7: a calendar chime writes to is yours: 'own' cannot be false with 'write'",
            "alarms.toml:9:17: 'sync-interval' must be 10s-1d, found 5s",
            "alarms.toml:11:1: another calendar chime writes to is named 'home' (line 5); give one a 'label'",
            "alarms.toml:15:8: 'sync' must be a command, e.g. [\"vdirsyncer\", \"sync\", \"work\"]",
        ])
        let good = load("""
            [[calendar]]
            path = "/cal/home"
            write = true
            sync = "vdirsyncer sync home"
            sync-interval = "1m"
            """)
        #expect(good.diagnostics.isEmpty, "\(good.diagnostics)")
        let calendar = good.calendars.first
        #expect(calendar?.write == true && calendar?.own == true && calendar?.name == "home")
        #expect(calendar?.sync == ["vdirsyncer", "sync", "home"])
        #expect(calendar?.syncInterval == .seconds(60))
    }

    /// `ring = true` on a calendar: its reminders ring as alarms (the default sound where the event
    /// gives none, the default ring time); without it they are popups.
    @Test func aCalendarWhoseRemindersRing() throws {
        let directory = try makeTemporaryDirectory("chime-ring")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ics = directory.appendingPathComponent("shared.ics")
        try Data("""
            BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20270601T090000Z\r\n\
            SUMMARY:Standup\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n
            """.utf8).write(to: ics)
        for ring in [false, true] {
            let file = load("[[calendar]]\npath = \"\(ics.path)\"\nring = \(ring)\n")
            #expect(file.diagnostics.isEmpty, "\(file.diagnostics)")
            let content = try #require(file.alarms.first?.request.content)
            #expect(content.sound == (ring ? .default : nil))
            #expect(content.ring == (ring ? AlarmDefaults.ring : nil))
        }
        #expect(load("[[calendar]]\npath = \"\(ics.path)\"\nring = \"yes\"\n").diagnostics.map(\.message) == ["'ring' must be true or false, found a string"])
    }

    @Test func theFileItselfIsChecked() throws {
        #expect(load("x = \"\u{FFFD}\"").diagnostics.map(\.description) == ["alarms.toml:1:1: unknown key 'x'; the file holds [defaults], [[alarm]], [[timer]], [[calendar]], [[holidays]] and [[off]]"])
        var bytes = Array("[[alarm]]\nlabel = \"caf".utf8) + [0xC3, 0x28] + Array("\"\n".utf8)
        #expect(AlarmConfig.parse(bytes, path: "f", anchor: 0).diagnostics.map(\.description) == ["f:2:13: not valid UTF-8"])
        bytes = Array("when = 1\n\0".utf8)
        #expect(AlarmConfig.parse(bytes, path: "f", anchor: 0).diagnostics.map(\.description) == ["f:2:1: a NUL byte; is this a text file?"])
        #expect(load("[[alarm]\n").diagnostics.first?.description.hasPrefix("alarms.toml:1:") == true)
        #expect(AlarmConfig.load(path: "/no/such/dir/alarms.toml", anchor: 0).diagnostics.map(\.description)
            == ["/no/such/dir/alarms.toml: cannot read the file: No such file or directory"])
        let big = try makeTemporaryDirectory("chime-config").appendingPathComponent("big.toml")
        try Data(repeating: UInt8(ascii: "#"), count: AlarmConfig.maximumSize + 1).write(to: big)
        #expect(AlarmConfig.load(path: big.path, anchor: 0).diagnostics.first?.message.hasPrefix("the file is larger than 16 MiB") == true)
    }
}

@Suite struct ConfigPropertyTests {
    static let rules = ["16:35 mon-fri", "weekdays 08:00", "Mon 07:00", "2030-12-24 18:00", "*:0/15", "every 25m", "in 7m", "*-*-01 09:00"]
    static let words = ["Homeroom", "Tea \"hot\"", "línea ⏰", "back\\slash", "tab\there", "a'b", ""]

    /// Random valid files, written as TOML, load back as what was written.
    @Test func randomValidFilesRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var r = SplitMix(seed: UInt64(seed))
            var text = ""
            var expected: [(id: String, when: String, title: String, body: String, snooze: Int64?, enabled: Bool)] = []
            for i in 0..<(1 + r.below(6)) {
                let when = Self.rules[r.below(Self.rules.count)]
                let title = Self.words[r.below(Self.words.count)] + "\(i)"
                let body = Self.words[r.below(Self.words.count)]
                let snooze: Int64? = r.below(2) == 0 ? nil : Int64(1 + r.below(3600))
                let enabled = r.below(4) != 0
                text += "[[alarm]]\nid = \(tomlString("a\(i)"))\nwhen = \(tomlString(when))\ntitle = \(tomlString(title))\n"
                text += "body = \(tomlString(body))\n"
                if let snooze { text += r.below(2) == 0 ? "snooze = \(snooze)\n" : "snooze = \"\(snooze)s\"\n" }
                if !enabled { text += "enabled = false\n" }
                text += "\n"
                expected.append(("a\(i)", when, title, body, snooze, enabled))
            }
            let file = load(text)
            #expect(file.diagnostics.isEmpty, "seed \(seed): \(file.diagnostics)")
            #expect(file.alarms.map(\.id) == expected.map(\.id), "seed \(seed)")
            for (alarm, want) in zip(file.alarms, expected) {
                #expect(alarm.when == want.when && alarm.request.content.title == want.title && alarm.request.content.body == want.body
                        && alarm.request.content.snooze == want.snooze.map { TimeSpan.seconds($0) } && alarm.enabled == want.enabled, "seed \(seed)")
            }
        }
    }

    /// Random bytes and mutated valid files never crash the loader; problems are diagnostics.
    @Test func randomAndMutatedInputNeverCrashes() async throws {
        let valid = try ["alarms.toml", "school-day.toml", "weekly-habits.toml", "kitchen-timers.toml"].map {
            Array(try Data(contentsOf: configDirectory.appendingPathComponent($0)))
        }
        await propertyCheck(count: 1000, input: Gen.int(in: 0...Int.max)) { seed in
            var r = SplitMix(seed: UInt64(seed))
            var bytes: [UInt8]
            if r.below(4) == 0 {
                bytes = (0..<r.below(400)).map { _ in UInt8(r.below(256)) }
            } else {
                bytes = valid[r.below(valid.count)]
                for _ in 0..<(1 + r.below(8)) {
                    let at = r.below(max(1, bytes.count))
                    switch r.below(3) {
                    case 0: if !bytes.isEmpty { bytes.remove(at: at) }
                    case 1: bytes.insert(Array("[]=\"'#\n{},.x0 \\".utf8)[r.below(15)], at: min(at, bytes.count))
                    default: if !bytes.isEmpty { bytes[at] = UInt8(r.below(256)) }
                    }
                }
            }
            let file = AlarmConfig.parse(bytes, path: "m.toml", anchor: 1_800_000_000)
            for diagnostic in file.diagnostics { #expect(!diagnostic.message.isEmpty) }
            #expect(file.isValid == file.diagnostics.isEmpty)
        }
    }
}

/// A TOML basic string.
func tomlString(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
        switch c {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\t": out += "\\t"
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(c)
        }
    }
    return out + "\""
}

/// `[[calendar]] eds`: GNOME's calendars through Evolution Data Server (issue 47).
@Suite struct EDSCalendarConfigTests {
    func parse(_ text: String, root: String = "/state/chime/eds") -> AlarmFile {
        var reading = CalendarReading.plain
        reading.edsRoot = root
        return AlarmConfig.parse(Array(text.utf8), path: "alarms.toml", anchor: 1_800_000_000, calendars: reading)
    }

    @Test func aCalendarOfEDSIsFollowedInAFolderOfTheStateDirectory() {
        let file = parse("[[calendar]]\neds = \"Personal\"\nwrite = true\n")
        #expect(file.diagnostics.isEmpty, "\(file.diagnostics.map(\.description))")
        #expect(file.edsMirrors.map(\.eds) == ["Personal"])
        let calendar = file.calendars.first
        #expect(calendar?.eds == "Personal" && calendar?.name == "Personal" && calendar?.write == true && calendar?.own == true)
        #expect(calendar?.path == "/state/chime/eds/personal-" + AlarmConfig.shortHash("Personal"), "\(calendar?.path ?? "")")
        #expect(file.edsMirrors.first?.folder == calendar?.path)
        // The label names it for --calendar, as for a vdir.
        #expect(parse("[[calendar]]\neds = \"system-calendar\"\nlabel = \"home\"\n").calendars.first?.name == "home")
        // "*": a folder of its own; a name of no letters keeps a hash alone.
        #expect(parse("[[calendar]]\neds = \"*\"\n").edsMirrors.first?.folder == "/state/chime/eds/all")
        #expect(FollowedCalendar.edsFolder("!!!", root: "/r") == "/r/" + AlarmConfig.shortHash("!!!"))
    }

    @Test func whatAnEDSCalendarCannotBeIsSaidWhereItIsWritten() {
        func errors(_ text: String) -> [String] { parse(text).diagnostics.map(\.description) }
        #expect(errors("[[calendar]]\neds = \"Personal\"\npath = \"/cal\"\n")
            == ["alarms.toml:1:1: a calendar is either a 'path' (a file or a vdir) or 'eds' (a calendar of GNOME's Evolution Data Server), not both"])
        #expect(errors("[[calendar]]\neds = \"Personal\"\nsync = \"vdirsyncer sync\"\n")
            == ["alarms.toml:3:1: Evolution Data Server syncs its calendars with their servers itself: leave out 'sync' and 'sync-interval'"])
        #expect(errors("[[calendar]]\neds = \"\"\n").first?.hasSuffix("'eds' must be the name of a calendar as GNOME Calendar shows it (or its UID), or \"*\" for all of them") == true)
        #expect(errors("[[calendar]]\neds = \"a\\u0001b\"\n").count == 1)
        #expect(errors("[[calendar]]\neds = \"" + String(repeating: "x", count: 300) + "\"\n").count == 1)
        #expect(errors("[[calendar]]\neds = 3\n") == ["alarms.toml:2:7: 'eds' must be a string, found an integer"])
        #expect(errors("[[calendar]]\neds = \"Work\"\n[[calendar]]\neds = \"Work\"\nlabel = \"w2\"\n")
            == ["alarms.toml:4:7: the file already follows the EDS calendar \"Work\" (line 1)"])
    }

    @Test func everyCalendarIsEachOfTheCalendarsChimeEDSListed() throws {
        let root = try makeTemporaryDirectory("chime-eds-config")
        defer { try? FileManager.default.removeItem(at: root) }
        let all = root.appendingPathComponent("all")
        try FileManager.default.createDirectory(at: all, withIntermediateDirectories: true)
        // Before chime-eds ever ran: no calendar yet, and an alarm may name one it has not listed.
        let before = parse("[[calendar]]\neds = \"*\"\nwrite = true\n[[alarm]]\nlabel = \"Gym\"\nwhen = \"07:00\"\ncalendar = \"Work\"\n", root: root.path)
        #expect(before.diagnostics.isEmpty, "\(before.diagnostics.map(\.description))")
        #expect(before.calendars.isEmpty && before.edsMirrors.count == 1)
        // As chime-eds lists them (one EDS keeps read-only, a line that is not one of its own, a folder that is no name).
        try ("system-calendar\tsystem-calendar\trw\tPersonal\nbirthdays\tbirthdays\tro\tBirthdays & Anniversaries\n"
             + "garbage\n../up\tx\trw\tEscape\nabc123\tabc123\trw\tWork\n").write(to: all.appendingPathComponent("calendars"), atomically: true, encoding: .utf8)
        let file = parse("[[calendar]]\neds = \"*\"\nwrite = true\n[[calendar]]\neds = \"abc123\"\nlabel = \"job\"\n", root: root.path)
        #expect(file.diagnostics.isEmpty, "\(file.diagnostics.map(\.description))")
        let names = file.calendars.map(\.name)
        // Work is followed as its own entry says (by UID, labelled job), not twice.
        #expect(names == ["job", "Personal", "Birthdays & Anniversaries"], "\(names)")
        #expect(file.calendars.first { $0.name == "Personal" }?.path == all.path + "/system-calendar")
        #expect(file.calendars.first { $0.name == "Personal" }?.write == true)
        #expect(file.calendars.first { $0.name.hasPrefix("Birthdays") }?.write == false)
    }
}
