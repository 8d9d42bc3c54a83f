import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import ChimeConfig
import Timekeeping
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// `chime config check|path`: the alarm file.
public struct ConfigCommand: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the alarm file, say which one is used, have the daemon read it again, or leave GNOME's reminders to chime.",
        discussion: """
            The file is --config FILE, else $CHIME_CONFIG, else $XDG_CONFIG_HOME/chime/alarms.toml \
            (~/.config/chime/alarms.toml). See config/alarms.toml for every key. The running daemon \
            follows the file by itself; `chime status` shows what it made of it.

            Examples:
              chime config check
              chime config check ~/alarms-draft.toml
              $EDITOR "$(chime config path)"
              chime config reload
              chime config gnome-reminders off
            """,
        subcommands: [Check.self, Path.self, Reload.self, GNOMEReminders.self])

    /// `chime config check [FILE]`.
    public struct Check: ParsableCommand {
        public init() {}
        public static let configuration = CommandConfiguration(
            abstract: "Validate the alarm file and show each alarm's next three fire times.",
            discussion: """
                Every problem is printed at once as file:line:col: message; the exit status is then 78.

                Examples:
                  chime config check
                  chime config check config/school-day.toml
                """)

        @Argument(help: "The file (default: the one in use).")
        var file: String?

        @Option(help: ArgumentHelp("The file (same as FILE).", valueName: "FILE"))
        var config: String?

        @Flag(name: .customLong("json"), help: "Print JSON.")
        var json = false

        public func run() throws {
            let path = AlarmConfig.path(option: file ?? config)
            let now = WallClock.system.now()
            let loaded = AlarmConfig.load(path: path, anchor: now)
            if !loaded.isValid {
                for diagnostic in loaded.diagnostics { printError(diagnostic.description) }
                if json {
                    RecordReport(fields: [Field("file", "", .text(path)), Field("valid", "", .flag(false)),
                                          Field("errors", "", .list(loaded.diagnostics.map { .text($0.description) }))]).print(json: true)
                }
                ExitStatus.configError.exit("\(path): \(loaded.diagnostics.count) error\(loaded.diagnostics.count == 1 ? "" : "s")")
            }
            // What the followed calendars hold that chime leaves out: said, without failing the check.
            for note in loaded.calendarNotes { printError("note: " + note) }
            Self.report(loaded, path: path, now: now).print(json: json)
            if !json { warnOfWakeAlarms(loaded) }
        }

        /// A valid file: `{file, valid, alarms: [{id, when, title, enabled, next}], timers: [{name,
        /// duration, title}], errors}`; in text, each alarm with its next three times.
        static func report(_ loaded: AlarmFile, path: String, now: Instant) -> ConfigCheckReport {
            func nextThree(_ trigger: Trigger) -> [Instant] {
                var times: [Instant] = []
                var after = now
                while times.count < 3, let next = trigger.nextFire(after: after) {
                    times.append(next)
                    after = next
                }
                return times
            }
            return ConfigCheckReport(path: path, alarms: loaded.alarms.map { alarm in
                [Field("id", "", .text(alarm.id)), Field("when", "", .text(alarm.when)), Field("title", "", .text(alarm.request.content.title)),
                 Field("enabled", "", .flag(alarm.enabled)),
                 nextField(nextThree(alarm.request.trigger), in: alarm.request.trigger.zone)]
            }, timers: loaded.timers.map { timer in
                [Field("name", "", .text(timer.name)), Field("duration", "", .duration(timer.duration)), Field("title", "", .text(timer.content.title))]
            })
        }

        /// Says when the file has wake alarms and the running daemon cannot wake the machine (a
        /// daemon that does not run is not started to ask).
        func warnOfWakeAlarms(_ loaded: AlarmFile) {
            let waking = loaded.alarms.filter { $0.enabled && $0.request.content.wake }
            guard !waking.isEmpty, let connection = try? openSessionBus(),
                (try? connection.nameHasOwner(SchedulerInterface.busName)) == true
            else { return }
            let ids = waking.map(\.id).joined(separator: ", ")
            warnIfCannotWake(center: UserNotificationCenter(connection: connection), what: "\(ids) (wake = true)",
                             rings: waking.count == 1 ? "It rings" : "They ring")
        }
    }

    /// `chime config path`.
    public struct Path: ParsableCommand {
        public init() {}
        public static let configuration = CommandConfiguration(
            abstract: "Print the alarm file in use (it need not exist yet).",
            discussion: """
                Examples:
                  chime config path
                  mkdir -p "$(dirname "$(chime config path)")" && cp /usr/share/doc/chime/examples/alarms.toml "$(chime config path)"
                """)

        @Option(help: ArgumentHelp("The file to use instead.", valueName: "FILE"))
        var config: String?

        public func run() throws {
            printLine(AlarmConfig.path(option: config))
        }
    }
}

extension ConfigCommand {
    /// `chime config reload`.
    public struct Reload: ParsableCommand {
        public init() {}
        public static let configuration = CommandConfiguration(
            abstract: "Have the running daemon read its alarm file now.",
            discussion: """
                The daemon reads the file by itself after every saved edit and on SIGHUP; this does the same \
                and waits for the outcome. On errors they are printed as file:line:col: message, the alarms \
                of the file's last good version keep running, and the exit status is 78.

                Examples:
                  chime config reload
                  chime config reload --json
                """)

        @Flag(name: .customLong("json"), help: "Print the daemon's view of the file as JSON.")
        var json = false

        public func run() throws {
            let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
            let status = reportingErrors { try center.reloadAlarmFile() }
            if json { printLine(alarmFileDatum(status).jsonText) }
            for problem in status.problems + status.conflicts { printError(problem) }
            if !status.problems.isEmpty {
                ExitStatus.configError.exit("\(status.path) has errors; the alarms from its last good version keep running")
            }
            if !json { printLine(alarmFileSummary(status)) }
        }
    }
}

/// One line on the daemon's alarm file: which file, how many alarms, since when.
func alarmFileSummary(_ status: AlarmFileStatus) -> String {
    let zone = Zone.system()
    let loaded = status.loaded.map { " (loaded \(Next.iso8601($0, in: zone)))" } ?? ""
    let counts = "\(status.alarms) alarm\(status.alarms == 1 ? "" : "s")" + (status.disabled > 0 ? ", \(status.disabled) disabled" : "")
        + (status.reading ? "; reading it now" : "")
    if status.path.isEmpty { return "none (the daemon was started with --no-config)" }
    if !status.exists, status.problems.isEmpty { return "\(status.path) (no such file: no alarms from a file)" }
    if !status.problems.isEmpty {
        return "\(status.path): \(status.problems.count) problem\(status.problems.count == 1 ? "" : "s"); "
            + (status.loaded == nil ? "no alarms loaded from it" : "still running the last good version: \(counts)\(loaded)")
    }
    return "\(status.path): \(counts)\(loaded)"
}

/// The daemon's view of its alarm file: `{path, exists, alarms, disabled, loaded, problems, conflicts}`;
/// its text is `alarmFileSummary` and the problems, one per line.
func alarmFileDatum(_ status: AlarmFileStatus) -> Datum {
    .record([
        Field("path", "", .text(status.path)), Field("exists", "", .flag(status.exists)),
        Field("alarms", "", .count(Int64(status.alarms))), Field("disabled", "", .count(Int64(status.disabled))),
        Field("loaded", "", .optional(status.loaded) { .instant($0, Zone.system()) }),
        Field("problems", "", .list(status.problems.map { .text($0) })),
        Field("conflicts", "", .list(status.conflicts.map { .text($0) })),
        Field("reading", "", .flag(status.reading)),
        Field("calendars", "", .list(status.calendars.map { .text($0) })),
    ])
}

/// `chime timer NAME | --list`: the file's `[[timer]]` presets.
public struct Timer: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        abstract: "Start a timer preset from the alarm file: chime timer eggs",
        discussion: """
            Presets are the [[timer]] tables of the alarm file (see chime config path). Needs `chime daemon` running.

            Each start is a timer of its own, with an identifier of its own (eggs-12, then eggs-13): starting \
            `chime timer eggs` for a second pot while the first runs gives two timers, and neither replaces the \
            other. To restart one instead, cancel it (chime cancel eggs-12) or give --id.

            Examples:
              chime timer eggs
              chime timer --list
              chime timer tea --id tea
              chime timer eggs --ring 2m --auto-snooze
            """)

    @Argument(help: "The preset's name.")
    var name: String?

    @Flag(help: "List the presets.")
    var list = false

    @Option(help: ArgumentHelp("The alarm file to use.", valueName: "FILE"))
    var config: String?

    @Option(name: .customLong("id"), help: "An identifier: replaces a pending alarm with the same one (without it, each start is a new timer).")
    var identifier: String?

    @Option(help: ArgumentHelp("How long the sound repeats until answered (default: the preset's 'ring', else 5m; 0: once).",
                               valueName: "DURATION"))
    var ring: String?

    @Flag(help: "When the timer rings out unanswered, snooze it.")
    var autoSnooze = false

    @Flag(name: .customLong("json"), help: "Print JSON: the new timer's {\"id\", \"nextFire\"}, or with --list the presets (docs/json.md).")
    var json = false

    public func validate() throws {
        if list == (name != nil) { throw ValidationError("give a preset name or --list") }
    }

    public func run() throws {
        let path = AlarmConfig.path(option: config)
        let now = WallClock.system.now()
        let loaded = AlarmConfig.load(path: path, anchor: now)
        if !loaded.isValid {
            for diagnostic in loaded.diagnostics { printError(diagnostic.description) }
            ExitStatus.configError.exit("\(path) has errors; see chime config check")
        }
        if list {
            TableReport(rows: loaded.timers.map { timer in
                [Field("name", "", .text(timer.name)), Field("duration", "", .duration(timer.duration)),
                 Field("title", "", .text(timer.content.title))]
            }, line: { row in "\(row["name"])  \(row["duration"])  \(row["title"])" }, empty: "no timers in \(path)").print(json: json)
            return
        }
        guard let timer = loaded.timers.first(where: { $0.name == name }) else {
            let known = loaded.timers.map(\.name)
            ExitStatus.unknownIdentifier.exit(
                "no timer '\(name ?? "")' in \(path)" + (known.isEmpty ? "" : "; there are: \(known.joined(separator: ", "))"))
        }
        // The preset as the file gave it, with this start's changes, built as every alarm is.
        var draft = AlarmDraft(kind: .timer, content: timer.content, anchor: now)
        // The label names the timer in `chime list`, and the identifier the daemon makes (eggs-12).
        if timer.content.label.isEmpty { draft.label = timer.name }
        draft.identifier = identifier
        draft.when = .rule("in \(timer.duration)")
        if let ring {
            guard timer.content.sound != nil else { ExitStatus.usage.exit("--ring \(ring): the preset '\(timer.name)' has no sound to ring") }
            draft.ring = ["0", "0s"].contains(ring) ? .zero : AlarmOptions.duration(ring, option: "--ring")
        }
        if autoSnooze { draft.autoSnooze = true }
        let request: NotificationRequest
        do throws(RequestError) { request = try draft.build(now: now) } catch {
            let option = switch error.field {
            case .id?: "--id \(quotedForMessage(identifier ?? ""))"
            case .autoSnooze?: "--auto-snooze"
            default: "--ring \(ring ?? "")"
            }
            ExitStatus.usage.exit("\(option): \(error.message)")
        }
        let content = request.content
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let added = reportingErrors { try center.add(request) }
        AddedReport(identifier: added.identifier, nextFire: added.nextFire, zone: Zone.system()).print(json: json)
        warnIfUnplayable(content.sound, center: center)
    }
}

/// An alarm's next occurrences: ISO 8601 in JSON; in text, a line each with its weekday and zone.
func nextField(_ times: [Instant], in zone: Zone) -> Field {
    Field("next", "", .list(times.map { .instant($0, zone) })) { _ in times.map { Next.human($0.seconds, in: zone) }.joined(separator: "\n") }
}

/// What `chime config check` prints for a valid file.
struct ConfigCheckReport: Report {
    var path: String
    var alarms: [[Field]]
    var timers: [[Field]]

    func writeJSON(to out: inout PrintedOutput) {
        Datum.writeRecord([Field("file", "", .text(path)), Field("valid", "", .flag(true)), Field("alarms", "", .list(alarms.map { .record($0) })),
                           Field("timers", "", .list(timers.map { .record($0) })), Field("errors", "", .list([]))], to: &out)
    }

    var lines: [String] {
        var lines = ["\(path): \(alarms.count) alarm\(alarms.count == 1 ? "" : "s"), \(timers.count) timer\(timers.count == 1 ? "" : "s"), no errors"]
        for alarm in alarms {
            let row = TableReport.Row(fields: alarm)
            lines.append("\(row["id"])  \"\(row["when"])\"  \(row["title"])" + (row.value("enabled").text == "yes" ? "" : " (disabled)"))
            let next = row["next"]
            lines += next.isEmpty ? ["  never fires again"] : next.split(separator: "\n").map { "  " + $0 }
        }
        for timer in timers {
            let row = TableReport.Row(fields: timer)
            lines.append("timer \(row["name"])  \(row["duration"])  \(row["title"])")
        }
        return lines
    }
}

extension ConfigCommand {
    /// `chime config gnome-reminders [on|off]`: GNOME's own reminders for the calendars chime follows
    /// through Evolution Data Server.
    public struct GNOMEReminders: ParsableCommand {
        public init() {}
        public static let configuration = CommandConfiguration(
            commandName: "gnome-reminders",
            abstract: "Show, or switch off or on, GNOME's own reminders for the GNOME calendars chime follows.",
            discussion: """
                A calendar the alarm file follows through Evolution Data Server ([[calendar]] eds = "Personal", \
                or "*" for all) rings through chime; GNOME's own reminder popups (evolution-alarm-notify) ring it \
                too unless they leave it out. `off` leaves those calendars out of GNOME's reminders, so each \
                reminder rings once, through chime; `on` puts them back. This is GNOME's own switch, the one \
                Evolution's preferences show as the calendars selected for reminder notifications (each \
                calendar's "include in reminders" setting, which Evolution Data Server keeps for each \
                calendar on this machine): chime changes it only when told to here. Without an argument, \
                it says where each stands.

                Exits 0; 78 when the alarm file follows none of GNOME's calendars; 72 when chime-eds (which \
                speaks to Evolution Data Server) is not installed; 1 when Evolution Data Server cannot be \
                reached or a calendar cannot be changed.

                Examples:
                  chime config gnome-reminders
                  chime config gnome-reminders off
                """)

        @Argument(help: ArgumentHelp("on or off (nothing: show)", valueName: "on|off"))
        var state: String?

        @Option(help: ArgumentHelp("The alarm file to read the calendars from.", valueName: "FILE"))
        var config: String?

        public func validate() throws {
            if let state, state != "on", state != "off" { throw ValidationError("say on or off (or nothing, to show where they stand), not '\(state)'") }
        }

        public func run() throws {
            let path = AlarmConfig.path(option: config)
            let file = AlarmConfig.load(path: path, anchor: WallClock.system.now())
            let names = file.edsMirrors.filter(\.enabled).map(\.eds)
            guard !names.isEmpty else {
                ExitStatus.configError.exit("\(path) follows none of GNOME's calendars ([[calendar]] with eds = \"Personal\", or \"*\" for every one)")
            }
            let program = Sys.besideThisProgram("chime-eds")
            guard Sys.isExecutable(program) else {
                ExitStatus.missingPart.exit("\(program) is missing: chime-eds, which speaks to Evolution Data Server, is not installed beside chime")
            }
            var failed = false
            // "*" covers every calendar: the others need no asking of their own.
            for name in names.contains("*") ? ["*"] : names {
                let (status, lines) = Self.run(program, ["reminders", name, state ?? "show"])
                for line in lines {
                    let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                    guard fields.count == 3 else { continue }
                    printLine("\(fields[1]): " + (fields[2] == "on" ? "GNOME's reminders ring it too" : "rings through chime alone (GNOME's reminders leave it out)"))
                }
                if status != 0 { failed = true }
            }
            if failed { ExitStatus.serverError.exit("Evolution Data Server could not be asked, or a calendar could not be changed (said above)") }
        }

        /// Runs `program` with `arguments`; its exit status and its standard output's lines (its
        /// standard error is the user's).
        static func run(_ program: String, _ arguments: [String]) -> (Int32, [String]) {
            guard let pipe = try? Sys.pipe() else { return (1, []) }
            let pid: pid_t
            do {
                pid = try Spawn.start(program, arguments: ([program] + arguments).map { Array($0.utf8) }, stdout: .descriptor(pipe.write))
            } catch {
                try? Sys.close(pipe.read)
                try? Sys.close(pipe.write)
                printError("cannot start \(program): \(error)")
                return (1, [])
            }
            try? Sys.close(pipe.write)
            var output: [UInt8] = []
            while output.count < 1 << 20, let chunk = try? Sys.read(pipe.read, upTo: 65536), !chunk.isEmpty { output += chunk }
            try? Sys.close(pipe.read)
            let status = (try? Sys.wait(pid)) ?? 0x100
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 1
            return (code, String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init))
        }
    }
}
