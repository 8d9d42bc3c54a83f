import NotifyTool
import ArgumentParser
import ChimeCenter
import Posix
import ChimeConfig
import ChimeDaemon
import DBus
import Logging
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime daemon`: the scheduler, in the foreground (for a systemd user unit or `chime daemon &`).
public struct DaemonCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the alarm scheduler in the foreground.",
        discussion: """
            Owns \(SchedulerInterface.busName) on the session bus and exports \(SchedulerInterface.interface) at \
            \(SchedulerInterface.path) (introspectable: try `busctl --user introspect \(SchedulerInterface.busName) \
            \(SchedulerInterface.path)`). Keeps its alarms in $XDG_STATE_HOME/chime (default ~/.local/state/chime; \
            with neither HOME nor XDG_STATE_HOME set it refuses to start rather than use a shared place); the \
            directory must be the user's and writable by nobody else. Every change is on disk before it is \
            acknowledged, in one SQLite file (chime.sqlite3). Logs to standard error. SIGTERM or SIGINT stop it.

            Environment of its children (body commands, sound players): PATH, HOME, USER, LOGNAME, LANG, \
            LANGUAGE, the LC_ variables, TZ, DISPLAY, WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS, PULSE_SERVER, \
            PULSE_SINK, XDG_RUNTIME_DIR, XDG_CURRENT_DESKTOP, XDG_SESSION_TYPE, GSETTINGS_BACKEND and the XDG_*_HOME and \
            XDG_*_DIRS folders, as the daemon has them; nothing else it was started with.

            Time: the daemon sleeps until the next alarm is due. A jump of the wall clock (the kernel tells \
            it) and a change of the system time zone (/etc/localtime re-pointed, as timedatectl does) each \
            re-plan every alarm at once: a wall-clock rule (16:35 mon-fri) keeps its wall time in the new \
            zone, a timer (in 5m) its length.

            The alarm file: the daemon loads the file `chime config path` names (or --config) at start and \
            follows it: every saved edit is applied within a second (new alarms added, changed ones replaced, \
            removed ones cancelled; unchanged ones are not touched), and so is SIGHUP or `chime config reload`. \
            A file with errors changes nothing: the alarms of its last good version keep running and \
            `chime status` shows the errors. Alarms added from the command line or over D-Bus are never \
            touched by a reload.

            Every request is checked with the same bounds at every door (command line, alarm file, D-Bus, \
            and the store when a request is read back). If the daemon ever crashes twice while firing the same \
            alarm, that alarm is quarantined: kept but not fired, shown by `chime list` and `chime status`, \
            removed with `chime cancel ID`. The alarm file and the calendars it follows are read by a child \
            of the daemon (at nice 10, within 120 s), never by the daemon itself: it answers and rings \
            while a big calendar is read, and takes in what was read a few milliseconds at a time \
            (`chime status` says "reading it now" meanwhile). A file, calendar or alarm that crashes or \
            hangs the reader twice is left out (said by `chime status` and the log) until it changes, and \
            everything else runs. The interface is documented in docs/dbus-interface.md \
            (installed with the package's documentation).

            Sounds: chime plays alarms' sounds itself through the sound server (PulseAudio, or PipeWire's \
            pipewire-pulse; libpulse and libsndfile are opened at the first sound), with each alarm's \
            volume and fade, looping without a break until answered, and stops them with a 5 ms ramp. Each \
            file is decoded by a process of its own (the daemon's program again, with nothing of its \
            environment but PATH): a file that crashes the decoder, or stalls it for 2 s, ends that sound with \
            why, and the ring goes on with the default sound. An \
            alarm with --insist unmutes and raises the output for its ring and puts it back afterwards (what \
            to put back is stored first, so a daemon killed meanwhile puts it back at its next start). Where \
            no sound server answers (tried again after 30 s) or with --no-sound-server, the first of \
            canberra-gtk-play, pw-play, paplay or aplay on PATH plays them, without volume or fade, or the \
            notification server where it plays sounds. Theme names are looked up under \
            $XDG_DATA_HOME and $XDG_DATA_DIRS/sounds/freedesktop. `chime status` says which way sounds go.

            Examples:
              chime daemon &
              systemctl --user enable --now chime
              chime daemon --config ~/alarms-test.toml
              chime daemon --no-config
            """)

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Keep the state here instead.", valueName: "DIR"))
    var stateDirectory: String?

    @Option(help: ArgumentHelp("How long a sound player may run before it is stopped (default 30s).", valueName: "DURATION"))
    var playerTimeLimit: String?

    @Option(help: ArgumentHelp("Follow this alarm file instead (default: $CHIME_CONFIG, else $XDG_CONFIG_HOME/chime/alarms.toml).",
                               valueName: "FILE"))
    var config: String?

    @Flag(help: "Follow no alarm file: only alarms added from the command line or over D-Bus.")
    var noConfig = false

    @Flag(help: "Do not play sounds through the sound server: player programs only (no volume, fade or insist).")
    var noSoundServer = false

    // The daemon's own reader of the alarm file (it starts itself again with these): not for people.
    @Option(help: .hidden) var readAlarmFile: String?
    @Option(help: .hidden) var now: Int64?
    @Flag(help: .hidden) var careful = false
    @Option(help: .hidden) var edsRoot: String?
    @Option(help: .hidden) var only: [String] = []
    @Option(help: .hidden) var calendarAlarms: Int = 0
    @Option(help: .hidden) var refuse: [String] = []
    @Option(help: .hidden) var noNext: [String] = []
    @Option(help: .hidden) var away: [String] = []
    // The daemon's own decoder of sound files (it starts itself again with these): not for people.
    @Option(help: .hidden) var decodeSound: String?
    @Flag(help: .hidden) var loop = false

    public func validate() throws {
        if noConfig, config != nil { throw ValidationError("give --config or --no-config, not both") }
    }

    public func run() throws {
        if let decodeSound { Glibc.exit(runSoundDecoder(path: decodeSound, looping: loop)) }
        if let readAlarmFile {
            var request = AlarmFileReader.Request(path: readAlarmFile, now: now.map(Instant.init(nanosecondsSinceEpoch:)) ?? WallClock.system.now())
            request.careful = careful
            request.edsRoot = edsRoot
            request.only = only
            request.calendarAlarmsBefore = max(0, calendarAlarms)
            for refusal in refuse {
                let parts = refusal.split(separator: "\t", maxSplits: 1).map(String.init)
                if parts.count == 2 { request.refused[parts[0]] = parts[1] }
            }
            for quarantined in noNext {
                let parts = quarantined.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                request.noNext[parts[0]] = parts.count == 2 ? parts[1] : ""
            }
            for stretch in away {
                let parts = stretch.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 3, let from = Int64(parts[0]), let until = Int64(parts[1]) else { continue }
                request.away.append(DaysOff.Away(from: Instant(nanosecondsSinceEpoch: from), until: Instant(nanosecondsSinceEpoch: until),
                                                 alarms: parts[2] == "*" ? nil : Set(parts[2].split(separator: ",").map(String.init))))
            }
            Glibc.exit(AlarmFileReader.run(request))
        }
        var logger = Logger(label: "chime.daemon") { StreamLogHandler.standardError(label: $0) }
        // CHIME_TRACE (as the app has it): what each part does, step by step.
        logger.logLevel = Sys.environment("CHIME_TRACE") == nil ? .info : .debug
        let connection = reportingErrors { try openSessionBus() }
        // The name first: of two daemons started at once, the second stops here, before it
        // opens (and could contend for) the store.
        do {
            try SchedulerDaemon.claimBusName(on: connection)
        } catch let error as DaemonError {
            ExitStatus.daemonFailed.exit(error.description)
        } catch {
            ExitStatus.fail(error)
        }
        let store: Store
        guard let directory = stateDirectory ?? Store.defaultDirectory() else {
            ExitStatus.daemonFailed.exit("no place for the state: HOME is not set (set HOME or XDG_STATE_HOME, or give --state-dir)")
        }
        do {
            store = try Store(directory: directory, now: WallClock.system.now())
        } catch {
            ExitStatus.daemonFailed.exit("cannot open the state: \(error)")
        }
        do {
            // What the popups say (Snooze, Dismiss, "Late: due at"), in the session's language.
            Localization.setUp()
            let daemon = try SchedulerDaemon(connection: connection, store: store, logger: logger, soundServer: !noSoundServer)
            if !noConfig { daemon.configPath = absolutePath(AlarmConfig.path(option: config)) }
            if let playerTimeLimit { daemon.playerTimeLimit = AlarmOptions.duration(playerTimeLimit, option: "--player-time-limit") }
            try daemon.run()
        } catch let error as DaemonError {
            ExitStatus.daemonFailed.exit(error.description)
        } catch {
            ExitStatus.fail(error)
        }
    }
}

/// `path` from the working directory, as the daemon keeps it (it may outlive that directory).
func absolutePath(_ path: String) -> String {
    guard !path.hasPrefix("/") else { return path }
    guard let directory = Sys.workingDirectory else { return path }
    return (directory == "/" ? "" : directory) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
}
