import ArgumentParser
import ChimeCenter
import DBus
import ChimeConfig
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime config check|path`: the alarm file.
public struct ConfigCommand: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the alarm file, say which one is used, or have the daemon read it again.",
        discussion: """
            The file is --config FILE, else $CHIME_CONFIG, else $XDG_CONFIG_HOME/chime/alarms.toml \
            (~/.config/chime/alarms.toml). See config/alarms.toml for every key. The running daemon \
            follows the file by itself; `chime status` shows what it made of it.

            Examples:
              chime config check
              chime config check ~/alarms-draft.toml
              $EDITOR "$(chime config path)"
              chime config reload
            """,
        subcommands: [Check.self, Path.self, Reload.self])

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
                    printLine(JSON.object([("file", .string(path)), ("valid", .bool(false)),
                                           ("errors", .array(loaded.diagnostics.map { .string($0.description) }))]).text)
                }
                ExitStatus.configError.exit("\(path): \(loaded.diagnostics.count) error\(loaded.diagnostics.count == 1 ? "" : "s")")
            }
            func nextThree(_ trigger: Trigger) -> [Instant] {
                var times: [Instant] = []
                var after = now
                while times.count < 3, let next = trigger.nextFire(after: after) {
                    times.append(next)
                    after = next
                }
                return times
            }
            if json {
                printLine(JSON.object([
                    ("file", .string(path)), ("valid", .bool(true)),
                    ("alarms", .array(loaded.alarms.map { alarm in
                        .object([("id", .string(alarm.id)), ("when", .string(alarm.when)), ("title", .string(alarm.request.content.title)),
                                 ("enabled", .bool(alarm.enabled)),
                                 ("next", .array(nextThree(alarm.request.trigger).map { .string(Next.iso8601($0, in: alarm.request.trigger.zone)) }))])
                    })),
                    ("timers", .array(loaded.timers.map { .object([("name", .string($0.name)), ("seconds", .number($0.duration.seconds)),
                                                                   ("title", .string($0.content.title))]) })),
                ]).text)
                return
            }
            printLine("\(path): \(loaded.alarms.count) alarm\(loaded.alarms.count == 1 ? "" : "s"), \(loaded.timers.count) timer\(loaded.timers.count == 1 ? "" : "s"), no errors")
            for alarm in loaded.alarms {
                let state = alarm.enabled ? "" : " (disabled)"
                printLine("\(alarm.id)  \"\(alarm.when)\"  \(alarm.request.content.title)\(state)")
                let times = nextThree(alarm.request.trigger)
                if times.isEmpty { printLine("  never fires again") }
                for time in times { printLine("  " + Next.human(time.seconds, in: alarm.request.trigger.zone)) }
            }
            for timer in loaded.timers {
                printLine("timer \(timer.name)  \(timer.duration)  \(timer.content.title)")
            }
            warnOfWakeAlarms(loaded)
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
            if json { printLine(alarmFileJSON(status).text) }
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
    if !status.exists, status.problems.isEmpty { return "\(status.path) (no such file: no alarms from a file)" }
    if !status.problems.isEmpty {
        return "\(status.path): \(status.problems.count) problem\(status.problems.count == 1 ? "" : "s"); "
            + (status.loaded == nil ? "no alarms loaded from it" : "still running the last good version: \(counts)\(loaded)")
    }
    return "\(status.path): \(counts)\(loaded)"
}

func alarmFileJSON(_ status: AlarmFileStatus) -> JSON {
    var fields: [(String, JSON)] = [("path", .string(status.path)), ("exists", .bool(status.exists)),
                                    ("alarms", .number(Int64(status.alarms))), ("disabled", .number(Int64(status.disabled)))]
    if let loaded = status.loaded { fields.append(("loaded", .string(Next.iso8601(loaded, in: Zone.system())))) }
    fields.append(("problems", .array(status.problems.map { .string($0) })))
    fields.append(("conflicts", .array(status.conflicts.map { .string($0) })))
    return .object(fields)
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
            if loaded.timers.isEmpty { printLine("no timers in \(path)") }
            for timer in loaded.timers { printLine("\(timer.name)  \(timer.duration)  \(timer.content.title)") }
            return
        }
        guard let timer = loaded.timers.first(where: { $0.name == name }) else {
            let known = loaded.timers.map(\.name)
            ExitStatus.unknownIdentifier.exit(
                "no timer '\(name ?? "")' in \(path)" + (known.isEmpty ? "" : "; there are: \(known.joined(separator: ", "))"))
        }
        if let identifier {
            do throws(RequestError) { try NotificationRequest.validateIdentifier(identifier) } catch {
                ExitStatus.usage.exit("--id \(quotedForMessage(identifier)): \(error.message)")
            }
        }
        var content = timer.content
        // The label names the timer in `chime list`, and the identifier the daemon makes (eggs-12).
        if content.label.isEmpty { content.label = timer.name }
        if let ring {
            guard content.sound != nil else { ExitStatus.usage.exit("--ring \(ring): the preset '\(timer.name)' has no sound to ring") }
            content.ring = ["0", "0s"].contains(ring) ? .zero : AlarmOptions.duration(ring, option: "--ring")
        }
        if autoSnooze { content.autoSnooze = true }
        do throws(RequestError) { try content.validate() } catch {
            ExitStatus.usage.exit("\(error.field == .autoSnooze ? "--auto-snooze" : "--ring \(ring ?? "")"): \(error.message)")
        }
        let request = NotificationRequest(identifier: identifier ?? "", content: content, trigger: .timeInterval(timer.duration, anchor: now))
        let center = UserNotificationCenter(connection: reportingErrors { try openSessionBus() })
        let added = reportingErrors { try center.add(request) }
        printLine("\(added.identifier): \(Next.iso8601(added.nextFire, in: Zone.system()))")
        warnIfUnplayable(content.sound, center: center)
    }
}
