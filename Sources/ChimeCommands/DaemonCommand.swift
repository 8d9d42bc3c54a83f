import ArgumentParser
import ChimeCenter
import ChimeDaemon
import DBus
import Logging

/// `chime daemon`: the scheduler, in the foreground (for a systemd user unit or `chime daemon &`).
public struct DaemonCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the alarm scheduler in the foreground.",
        discussion: """
            Owns \(SchedulerInterface.busName) on the session bus and exports \(SchedulerInterface.interface) at \
            \(SchedulerInterface.path) (introspectable: try `busctl --user introspect \(SchedulerInterface.busName) \
            \(SchedulerInterface.path)`). Keeps its alarms in $XDG_STATE_HOME/chime (default ~/.local/state/chime); \
            every change is on disk before it is acknowledged, in one SQLite file (chime.sqlite3). Logs to standard             error. SIGTERM or SIGINT stop it.

            Sounds: where the notification server does not play sounds, chime plays them with the first of             canberra-gtk-play, pw-play, paplay or aplay on PATH (theme names are looked up under             $XDG_DATA_DIRS/sounds/freedesktop).
            """)

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Keep the state here instead.", valueName: "DIR"))
    var stateDirectory: String?

    @Option(help: ArgumentHelp("How long a sound player may run before it is stopped (default 30s).", valueName: "DURATION"))
    var playerTimeLimit: String?

    public func run() throws {
        var logger = Logger(label: "chime.daemon") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        let connection = reportingErrors { try openSessionBus() }
        let store: Store
        do {
            store = try Store(directory: stateDirectory ?? Store.defaultDirectory(), now: wallClockNow().seconds)
        } catch {
            ExitStatus.daemonFailed.exit("cannot open the state: \(error)")
        }
        do {
            let daemon = try SchedulerDaemon(connection: connection, store: store, logger: logger)
            if let playerTimeLimit { daemon.playerTimeLimit = AlarmOptions.seconds(playerTimeLimit, option: "--player-time-limit") }
            try daemon.run()
        } catch let error as DaemonError {
            ExitStatus.daemonFailed.exit(error.description)
        } catch {
            ExitStatus.fail(error)
        }
    }
}
